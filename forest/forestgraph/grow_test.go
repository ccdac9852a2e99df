package forestgraph

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/backends"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/forest"
)

// sameFloat tells whether two float64 values have the same bits (NaN equal to NaN).
func sameFloat(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
}

// diffTrees returns a description of the first difference between two
// forests' trees, or "" when they are equal node for node.
func diffTrees(want, got *forest.Forest) string {
	if len(want.Trees) != len(got.Trees) {
		return fmt.Sprintf("%d trees, want %d", len(got.Trees), len(want.Trees))
	}
	d := want.Outputs()
	for t := range want.Trees {
		a, b := &want.Trees[t], &got.Trees[t]
		if a.NumNodes() != b.NumNodes() {
			return fmt.Sprintf("tree %d: %d nodes, want %d", t, b.NumNodes(), a.NumNodes())
		}
		for i := range a.Feature {
			node := func(tr *forest.Tree) string {
				return fmt.Sprintf("feature %d bin %d threshold %v missingLeft %v left %d samples %d weight %d gain %v value %v",
					tr.Feature[i], tr.Bin(i), tr.Threshold(i), tr.MissingLeft(i), tr.Left[i], tr.Samples(i), tr.Weight(i), tr.Gain(i), tr.Value[i*d:(i+1)*d])
			}
			same := a.Feature[i] == b.Feature[i] && a.Bin(i) == b.Bin(i) && sameFloat(a.Threshold(i), b.Threshold(i)) &&
				a.MissingLeft(i) == b.MissingLeft(i) && a.Left[i] == b.Left[i] && a.Samples(i) == b.Samples(i) &&
				a.Weight(i) == b.Weight(i) && sameFloat(a.Gain(i), b.Gain(i))
			for k := 0; k < d; k++ {
				same = same && sameFloat(a.Value[i*d+k], b.Value[i*d+k])
			}
			if !same {
				return fmt.Sprintf("tree %d node %d:\n  graph:  %s\n  native: %s", t, i, node(b), node(a))
			}
		}
	}
	if !sameFloat(want.OOBScore, got.OOBScore) || want.OOBRows != got.OOBRows {
		return fmt.Sprintf("OOB score %v (%d rows), want %v (%d rows)", got.OOBScore, got.OOBRows, want.OOBScore, want.OOBRows)
	}
	return ""
}

// growCase is one data set and option set.
type growCase struct {
	name string
	ds   *data.Dataset
	opt  forest.Options
	gopt GrowOptions
}

// weighted returns ds with sample weights: 0 to 2.5 in steps of 0.5 (so
// fractional, in fixed point, and some rows left out).
func weighted(ds *data.Dataset) *data.Dataset {
	w := *ds
	w.Weights = make([]float64, ds.Rows)
	for i := range w.Weights {
		w.Weights[i] = float64(i%6) / 2
	}
	return &w
}

func growCases(t testing.TB) []growCase {
	diab := embedded(t, "diabetes")
	digits := embedded(t, "digits")
	// Small subsets keep the unit tests fast.
	sub := func(ds *data.Dataset, rows int) *data.Dataset {
		s := *ds
		s.Rows = rows
		s.X = s.X[:rows*s.Cols]
		s.Y = s.Y[:rows]
		s.Classes = nil
		return &s
	}
	diabS := sub(diab, 200)
	digitsS := sub(digits, 300)
	synR := synthetic(300, 7, false, 3)
	synC := synthetic(300, 7, true, 4)
	reg, cls := forest.Regression, forest.Classification
	var cases []growCase
	add := func(name string, ds *data.Dataset, opt forest.Options, gopt GrowOptions) {
		cases = append(cases, growCase{name, ds, opt, gopt})
	}
	for _, seed := range []uint64{1, 7} {
		s := fmt.Sprintf("seed%d/", seed)
		add(s+"diabetes/default", diabS, forest.Options{Task: reg, Trees: 4, Seed: seed, OOB: true}, GrowOptions{})
		add(s+"diabetes/sqrt-depth3-leaf3", diabS, forest.Options{Task: reg, Trees: 4, Seed: seed, MaxFeatures: "sqrt", MaxDepth: 3, MinSamplesLeaf: 3}, GrowOptions{})
		add(s+"diabetes/half-bins16-maxsamples", diabS, forest.Options{Task: reg, Trees: 3, Seed: seed, MaxFeatures: "0.5", Bins: 16, MaxSamples: 0.5, KeepLeafSamples: true}, GrowOptions{TreesPerBatch: 2})
		add(s+"digits/gini-sqrt", digitsS, forest.Options{Task: cls, Trees: 3, Seed: seed, OOB: true}, GrowOptions{})
		add(s+"digits/gini-all-depth3-nobootstrap", digitsS, forest.Options{Task: cls, Trees: 2, Seed: seed, MaxFeatures: "all", MaxDepth: 3, NoBootstrap: true}, GrowOptions{})
		add(s+"digits/gini-half-leaf3-bins16", digitsS, forest.Options{Task: cls, Trees: 2, Seed: seed, MaxFeatures: "0.5", MinSamplesLeaf: 3, Bins: 16}, GrowOptions{})
		add(s+"synthetic-reg/all", synR, forest.Options{Task: reg, Trees: 3, Seed: seed, OOB: true}, GrowOptions{})
		add(s+"synthetic-reg/sqrt-leaf3-nobootstrap-bins16", synR, forest.Options{Task: reg, Trees: 3, Seed: seed, MaxFeatures: "sqrt", MinSamplesLeaf: 3, NoBootstrap: true, Bins: 16, KeepLeafSamples: true}, GrowOptions{})
		add(s+"synthetic-cls/gini-sqrt-maxsamples", synC, forest.Options{Task: cls, Trees: 3, Seed: seed, MaxSamples: 0.5}, GrowOptions{})
		add(s+"digits/entropy-sqrt", digitsS, forest.Options{Task: cls, Criterion: forest.Entropy, Trees: 2, Seed: seed}, GrowOptions{})
		add(s+"synthetic-cls/entropy-all-leaf3", synC, forest.Options{Task: cls, Criterion: forest.Entropy, Trees: 2, Seed: seed, MaxFeatures: "all", MinSamplesLeaf: 3}, GrowOptions{})
		add(s+"diabetes/sample-weights", weighted(diabS), forest.Options{Task: reg, Trees: 3, Seed: seed}, GrowOptions{})
		add(s+"digits/class-weights-balanced", digitsS, forest.Options{Task: cls, Trees: 3, Seed: seed, ClassWeight: "balanced"}, GrowOptions{})
		add(s+"synthetic-cls/fractional-weights-nobootstrap", weighted(synC), forest.Options{Task: cls, Trees: 2, Seed: seed, NoBootstrap: true, MaxFeatures: "all"}, GrowOptions{})
		add(s+"diabetes/min-weight-fraction", weighted(diabS), forest.Options{Task: reg, Trees: 3, Seed: seed, MinWeightFractionLeaf: 0.02}, GrowOptions{})
		add(s+"synthetic-cls/min-weight-fraction-random", synC, forest.Options{Task: cls, Trees: 3, Seed: seed, MinWeightFractionLeaf: 0.05, Splitter: forest.Random}, GrowOptions{})
		add(s+"diabetes/random-splitter", diabS, forest.Options{Task: reg, Trees: 3, Seed: seed, Splitter: forest.Random}, GrowOptions{})
		add(s+"synthetic-cls/random-splitter-sqrt", synC, forest.Options{Task: cls, Trees: 3, Seed: seed, Splitter: forest.Random, NoBootstrap: true}, GrowOptions{})
		add(s+"synthetic-cls/gini-all-depth3-leaf3", synC, forest.Options{Task: cls, Trees: 3, Seed: seed, MaxFeatures: "all", MaxDepth: 3, MinSamplesLeaf: 3, MinSamplesSplit: 8}, GrowOptions{})
	}
	// Small device limits force several chunks of node slots per level.
	add("chunks/diabetes", diabS, forest.Options{Task: reg, Trees: 3, Seed: 5}, GrowOptions{MaxDeviceBytes: 8 << 20, TreesPerBatch: 1})
	add("chunks/synthetic-cls", synC, forest.Options{Task: cls, Trees: 3, Seed: 5}, GrowOptions{MaxDeviceBytes: 4 << 20})
	// Chunks of a few slots with the last level's histograms kept: some
	// siblings fall in different chunks, parents in several kept chunks.
	add("chunks/synthetic-reg-16MiB", synR, forest.Options{Task: reg, Trees: 4, Seed: 6, MinSamplesLeaf: 2}, GrowOptions{MaxDeviceBytes: 16 << 20})
	add("onehot/diabetes", diabS, forest.Options{Task: reg, Trees: 2, Seed: 2, MaxDepth: 6}, GrowOptions{Histogram: OneHotHistogram})
	add("onehot/synthetic-cls", synC, forest.Options{Task: cls, Trees: 2, Seed: 2}, GrowOptions{Histogram: OneHotHistogram})
	return cases
}

// withSubtract returns the cases once per subtraction mode (the scatter
// ones; the one-hot ones have no subtraction), each named after its mode;
// with short, the full scatter only for the seed-1 cases.
func withSubtract(cases []growCase, short bool) []growCase {
	var out []growCase
	for _, c := range cases {
		if c.gopt.Histogram == OneHotHistogram {
			out = append(out, c)
			continue
		}
		for _, m := range []Subtract{SubtractOn, SubtractCompact, SubtractOff} {
			if short && m == SubtractOff && strings.HasPrefix(c.name, "seed7/") {
				continue
			}
			cm := c
			cm.name = fmt.Sprintf("subtract-%s/%s", m, c.name)
			cm.gopt.Subtract = m
			out = append(out, cm)
		}
	}
	return out
}

func TestFitMatchesNative(t *testing.T) {
	be := openTestBackend(t)
	for _, c := range withSubtract(growCases(t), testing.Short()) {
		t.Run(c.name, func(t *testing.T) {
			if c.opt.Criterion == forest.Entropy && testDevice() != "go" {
				t.Skipf("entropy grows on simplego only (Go's math.Log), not on %s", testDevice())
			}
			want, err := forest.Fit(c.ds, c.opt)
			if err != nil {
				t.Fatal(err)
			}
			got, rep, err := Fit(be, c.ds, c.opt, c.gopt)
			if err != nil {
				t.Fatal(err)
			}
			if d := diffTrees(want, got); d != "" {
				t.Fatalf("graph forest differs from the native forest: %s", d)
			}
			if !reflect.DeepEqual(want.LeafSamples, got.LeafSamples) || (c.opt.KeepLeafSamples && got.LeafSamples == nil) {
				t.Fatal("graph forest's leaf samples differ from the native forest's")
			}
			if rep.Levels == 0 || rep.PeakHistogramBytes <= 0 || rep.Compiles == 0 {
				t.Errorf("report %+v: want levels, compiles and histogram bytes", rep)
			}
			if c.gopt.MaxDeviceBytes > 0 && rep.PeakHistogramBytes*8 > c.gopt.MaxDeviceBytes/2 {
				t.Errorf("peak histogram %d bytes exceeds the budget of %d", rep.PeakHistogramBytes, c.gopt.MaxDeviceBytes)
			}
			wp, err := want.PredictValues(c.ds.X, c.ds.Rows)
			if err != nil {
				t.Fatal(err)
			}
			gp, err := got.PredictValues(c.ds.X, c.ds.Rows)
			if err != nil {
				t.Fatal(err)
			}
			for i := range wp {
				if !sameFloat(wp[i], gp[i]) {
					t.Fatalf("prediction %d: %v, want %v", i, gp[i], wp[i])
				}
			}
		})
	}
}

func TestFitRefusesInvalid(t *testing.T) {
	be := openTestBackend(t)
	ds := synthetic(50, 3, true, 1)
	tests := []struct {
		name string
		opt  forest.Options
		gopt GrowOptions
		want string
	}{
		{"bad criterion", forest.Options{Task: forest.Classification, Criterion: "mse", Trees: 1}, GrowOptions{}, "criterion"},
		{"bad bins", forest.Options{Task: forest.Classification, Bins: 300, Trees: 1}, GrowOptions{}, "Bins 300: want 2 to 256"},
		{"bad histogram", forest.Options{Task: forest.Classification, Trees: 1}, GrowOptions{Histogram: "dense"}, "histogram"},
		{"bad subtract", forest.Options{Task: forest.Classification, Trees: 1}, GrowOptions{Subtract: "yes"}, "subtract mode"},
		{"subtract with one-hot", forest.Options{Task: forest.Classification, Trees: 1}, GrowOptions{Histogram: OneHotHistogram, Subtract: SubtractOn}, "needs the scatter histogram"},
		{"negative batch", forest.Options{Task: forest.Classification, Trees: 1}, GrowOptions{TreesPerBatch: -1}, "trees per batch"},
		{"negative memory", forest.Options{Task: forest.Classification, Trees: 1}, GrowOptions{MaxDeviceBytes: -5}, "max device bytes"},
		{"tiny memory", forest.Options{Task: forest.Classification, Trees: 1}, GrowOptions{MaxDeviceBytes: 1000}, "device limit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Fit(be, ds, tc.opt, tc.gopt)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one mentioning %q", err, tc.want)
			}
		})
	}
	if _, _, err := Fit(nil, ds, forest.Options{Task: forest.Classification}, GrowOptions{}); err == nil {
		t.Error("nil backend: no error")
	}
	// Entropy needs Go's math.Log: refused on a backend that is not simplego.
	other := renamedBackend{be}
	_, _, err := Fit(other, ds, forest.Options{Task: forest.Classification, Criterion: forest.Entropy, Trees: 1}, GrowOptions{})
	if err == nil || !strings.Contains(err.Error(), "entropy") || !strings.Contains(err.Error(), "math.Log") {
		t.Errorf("entropy on %s: err = %v, want a refusal naming math.Log", other.Name(), err)
	}
	if _, _, err := Fit(other, ds, forest.Options{Task: forest.Classification, Trees: 1}, GrowOptions{}); err != nil {
		t.Errorf("gini on %s: %v", other.Name(), err)
	}
}

// renamedBackend is simplego under another name, as a backend whose Log is
// not known to be Go's math.Log.
type renamedBackend struct{ backends.Backend }

func (renamedBackend) Name() string { return "Other (test)" }

// TestFitMatchesNativeLarge compares the full embedded data sets with
// unlimited depth (skipped with -short).
func TestFitMatchesNativeLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("full data sets: skipped with -short")
	}
	be := openTestBackend(t)
	for _, c := range []struct {
		name string
		opt  forest.Options
	}{
		{"diabetes", forest.Options{Task: forest.Regression, Trees: 8, Seed: 11, OOB: true}},
		{"digits", forest.Options{Task: forest.Classification, Trees: 3, Seed: 11, OOB: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ds := embedded(t, c.name)
			want, err := forest.Fit(ds, c.opt)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range []Subtract{SubtractOn, SubtractCompact} {
				got, _, err := Fit(be, ds, c.opt, GrowOptions{Subtract: m})
				if err != nil {
					t.Fatal(err)
				}
				if d := diffTrees(want, got); d != "" {
					t.Fatalf("subtract %s: graph forest differs from the native forest: %s", m, d)
				}
			}
		})
	}
}

// TestFitMatchesNativeEdgeCases covers tiny and degenerate training sets:
// one row, constant features, a constant target, all values missing in a
// column, and more trees than fit in one batch.
func TestFitMatchesNativeEdgeCases(t *testing.T) {
	be := openTestBackend(t)
	nan := math.NaN()
	tests := []struct {
		name string
		ds   *data.Dataset
		opt  forest.Options
		gopt GrowOptions
	}{
		{"one row", &data.Dataset{X: []float64{1, 2}, Y: []float64{3}, Rows: 1, Cols: 2}, forest.Options{Trees: 2, Seed: 1}, GrowOptions{}},
		{"constant features", &data.Dataset{X: []float64{1, 1, 1, 1, 1, 1}, Y: []float64{1, 2, 3}, Rows: 3, Cols: 2}, forest.Options{Trees: 2, Seed: 1}, GrowOptions{}},
		{"constant target", &data.Dataset{X: []float64{1, 2, 3, 4, 5, 6}, Y: []float64{7, 7, 7}, Rows: 3, Cols: 2}, forest.Options{Trees: 2, Seed: 1}, GrowOptions{}},
		{"missing column", &data.Dataset{X: []float64{nan, 1, nan, 2, nan, 3, nan, 4}, Y: []float64{0, 1, 0, 1}, Rows: 4, Cols: 2}, forest.Options{Task: forest.Classification, Trees: 3, Seed: 2, MaxFeatures: "1"}, GrowOptions{}},
		{"batches of 2", synthetic(60, 4, true, 9), forest.Options{Task: forest.Classification, Trees: 5, Seed: 3}, GrowOptions{TreesPerBatch: 2}},
	}
	for _, tc := range tests {
		for _, m := range []Subtract{SubtractOn, SubtractCompact, SubtractOff} {
			t.Run(string(m)+"/"+tc.name, func(t *testing.T) {
				want, err := forest.Fit(tc.ds, tc.opt)
				if err != nil {
					t.Fatal(err)
				}
				gopt := tc.gopt
				gopt.Subtract = m
				got, _, err := Fit(be, tc.ds, tc.opt, gopt)
				if err != nil {
					t.Fatal(err)
				}
				if d := diffTrees(want, got); d != "" {
					t.Fatalf("graph forest differs from the native forest: %s", d)
				}
			})
		}
	}
}

func TestGroupFeatures(t *testing.T) {
	tests := []struct {
		name    string
		numBins []int
		k       int
		size    int // the least padded size Σ |group|·width
	}{
		{"one feature", []int{5}, 4, 6},
		{"equal widths", []int{7, 7, 7}, 4, 24},
		{"two widths", []int{1, 255, 1, 255}, 4, 2*2 + 2*256},
		{"one group", []int{1, 255, 1, 255}, 1, 4 * 256},
		{"diabetes", []int{58, 2, 163, 100, 141, 255, 63, 66, 184, 56}, 4, 5*67 + 2*142 + 2*185 + 256},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			groups := groupFeatures(tc.numBins, tc.k)
			if len(groups) > tc.k {
				t.Fatalf("%d groups, want at most %d", len(groups), tc.k)
			}
			seen := make([]bool, len(tc.numBins))
			off := 0
			for _, g := range groups {
				if g.off != off {
					t.Errorf("group %v: offset %d, want %d", g.feats, g.off, off)
				}
				off += len(g.feats) * g.b
				for i, j := range g.feats {
					if seen[j] || (i > 0 && g.feats[i-1] >= j) {
						t.Errorf("group %v: feature %d repeated or out of order", g.feats, j)
					}
					seen[j] = true
					if tc.numBins[j]+1 > g.b {
						t.Errorf("group %v: feature %d has %d bins, width %d", g.feats, j, tc.numBins[j], g.b)
					}
				}
			}
			for j, ok := range seen {
				if !ok {
					t.Errorf("feature %d in no group", j)
				}
			}
			if off != tc.size {
				t.Errorf("padded size %d, want %d", off, tc.size)
			}
		})
	}
}

// TestSubtractScattersFewerRows checks that the three scatter modes grow
// the same trees, that the full scatter walks trees × rows per split
// execution, the compacted list at most as many, and the parent-minus-sibling mode
// fewer still, with derived nodes only in that mode.
func TestSubtractScattersFewerRows(t *testing.T) {
	be := openTestBackend(t)
	synR := synthetic(300, 7, false, 3)
	synC := synthetic(300, 7, true, 4)
	tests := []struct {
		name string
		ds   *data.Dataset
		opt  forest.Options
		gopt GrowOptions
		// most is the largest ScatterRows(on)/ScatterRows(off) accepted.
		most float64
	}{
		{"regression", synR, forest.Options{Task: forest.Regression, Trees: 4, Seed: 3}, GrowOptions{}, 0.25},
		{"gini", synC, forest.Options{Task: forest.Classification, Trees: 4, Seed: 3}, GrowOptions{}, 0.25},
		{"depth2-nobootstrap", synC, forest.Options{Task: forest.Classification, Trees: 2, Seed: 3, MaxDepth: 2, NoBootstrap: true}, GrowOptions{}, 0.75},
		{"chunks", synC, forest.Options{Task: forest.Classification, Trees: 3, Seed: 5}, GrowOptions{MaxDeviceBytes: 8 << 20}, 0.25},
	}
	modes := []Subtract{SubtractOn, SubtractCompact, SubtractOff}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reps := make([]*GrowReport, len(modes))
			forests := make([]*forest.Forest, len(modes))
			for i, m := range modes {
				gopt := tc.gopt
				gopt.Subtract = m
				f, rep, err := Fit(be, tc.ds, tc.opt, gopt)
				if err != nil {
					t.Fatal(err)
				}
				reps[i], forests[i] = rep, f
			}
			for i := range 2 {
				if d := diffTrees(forests[2], forests[i]); d != "" {
					t.Fatalf("%s forest differs from the full scatter's: %s", modes[i], d)
				}
			}
			on, cmp, off := reps[0], reps[1], reps[2]
			if rows := int64(off.TreesPerBatch) * int64(tc.ds.Rows); off.ScatterRows <= 0 || off.ScatterRows%rows != 0 {
				t.Errorf("full scatter: %d rows scattered, want a multiple of trees × rows = %d", off.ScatterRows, rows)
			}
			if on.DerivedNodes == 0 || cmp.DerivedNodes != 0 || off.DerivedNodes != 0 {
				t.Errorf("derived nodes: on %d (want > 0), compact %d and off %d (want 0)", on.DerivedNodes, cmp.DerivedNodes, off.DerivedNodes)
			}
			t.Logf("scattered (tree, row) entries: on %d (%d nodes derived), compact %d, off %d", on.ScatterRows, on.DerivedNodes, cmp.ScatterRows, off.ScatterRows)
			if !(on.ScatterRows < cmp.ScatterRows && cmp.ScatterRows <= off.ScatterRows) {
				t.Errorf("scattered rows: on %d, compact %d, off %d: want on < compact <= off", on.ScatterRows, cmp.ScatterRows, off.ScatterRows)
			}
			if r := float64(on.ScatterRows) / float64(off.ScatterRows); r > tc.most {
				t.Errorf("subtraction scattered %d (tree, row) entries, full scatter %d: ratio %.3f, want <= %.2f", on.ScatterRows, off.ScatterRows, r, tc.most)
			}
		})
	}
}
