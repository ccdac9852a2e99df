package forestwgpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

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
				return fmt.Sprintf("tree %d node %d:\n  webgpu: %s\n  native: %s", t, i, node(b), node(a))
			}
		}
	}
	if !sameFloat(want.OOBScore, got.OOBScore) || want.OOBRows != got.OOBRows {
		return fmt.Sprintf("OOB score %v (%d rows), want %v (%d rows)", got.OOBScore, got.OOBRows, want.OOBScore, want.OOBRows)
	}
	return ""
}

func embedded(t testing.TB, name string) *data.Dataset {
	t.Helper()
	d, err := data.Embedded(name)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// synthetic returns rows × cols values with NaNs (about one value in seven),
// a few columns of repeated small integers, and a target that depends on
// whether values are missing: regression, or three classes.
func synthetic(rows, cols int, classify bool, seed uint64) *data.Dataset {
	r := rand.New(rand.NewPCG(seed, 99))
	x := make([]float64, rows*cols)
	y := make([]float64, rows)
	for i := range rows {
		s := 0.0
		for j := range cols {
			v := r.NormFloat64()
			if j%3 == 2 {
				v = float64(r.IntN(5)) - 2
			}
			if r.IntN(7) == 0 {
				v = math.NaN()
				s += 1.5
			} else {
				s += v * float64(j%4)
			}
			x[i*cols+j] = v
		}
		y[i] = s + 0.1*r.NormFloat64()
		if classify {
			y[i] = float64(min(2, max(0, int(s/2)+1)))
		}
	}
	return &data.Dataset{X: x, Y: y, Rows: rows, Cols: cols}
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

// growCase is one data set and option set; maxScatter > 0 caps the
// slots of a histogram pass (several chunks per level), window > 0 the
// frontier nodes the host searches at once (several windows per level).
type growCase struct {
	name       string
	ds         *data.Dataset
	opt        forest.Options
	maxScatter int
	window     int
}

func growCases(t testing.TB, seeds []uint64) []growCase {
	diab := embedded(t, "diabetes")
	digits := embedded(t, "digits")
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
	add := func(name string, ds *data.Dataset, opt forest.Options) {
		cases = append(cases, growCase{name: name, ds: ds, opt: opt})
	}
	for _, seed := range seeds {
		s := fmt.Sprintf("seed%d/", seed)
		add(s+"diabetes/default", diabS, forest.Options{Task: reg, Trees: 4, Seed: seed, OOB: true})
		add(s+"diabetes/sqrt-depth3-leaf3", diabS, forest.Options{Task: reg, Trees: 4, Seed: seed, MaxFeatures: "sqrt", MaxDepth: 3, MinSamplesLeaf: 3})
		add(s+"diabetes/half-bins16-maxsamples", diabS, forest.Options{Task: reg, Trees: 3, Seed: seed, MaxFeatures: "0.5", Bins: 16, MaxSamples: 0.5, KeepLeafSamples: true})
		add(s+"digits/gini-sqrt", digitsS, forest.Options{Task: cls, Trees: 3, Seed: seed, OOB: true})
		add(s+"digits/gini-all-depth3-nobootstrap", digitsS, forest.Options{Task: cls, Trees: 2, Seed: seed, MaxFeatures: "all", MaxDepth: 3, NoBootstrap: true})
		add(s+"digits/gini-half-leaf3-bins16", digitsS, forest.Options{Task: cls, Trees: 2, Seed: seed, MaxFeatures: "0.5", MinSamplesLeaf: 3, Bins: 16})
		add(s+"synthetic-reg/all", synR, forest.Options{Task: reg, Trees: 3, Seed: seed, OOB: true})
		add(s+"synthetic-reg/sqrt-leaf3-nobootstrap-bins16", synR, forest.Options{Task: reg, Trees: 3, Seed: seed, MaxFeatures: "sqrt", MinSamplesLeaf: 3, NoBootstrap: true, Bins: 16, KeepLeafSamples: true})
		add(s+"synthetic-cls/gini-sqrt-maxsamples", synC, forest.Options{Task: cls, Trees: 3, Seed: seed, MaxSamples: 0.5})
		add(s+"digits/entropy-sqrt", digitsS, forest.Options{Task: cls, Criterion: forest.Entropy, Trees: 2, Seed: seed})
		add(s+"synthetic-cls/entropy-all-leaf3", synC, forest.Options{Task: cls, Criterion: forest.Entropy, Trees: 2, Seed: seed, MaxFeatures: "all", MinSamplesLeaf: 3})
		add(s+"diabetes/sample-weights", weighted(diabS), forest.Options{Task: reg, Trees: 3, Seed: seed})
		add(s+"digits/class-weights-balanced", digitsS, forest.Options{Task: cls, Trees: 3, Seed: seed, ClassWeight: "balanced"})
		add(s+"synthetic-cls/fractional-weights-nobootstrap", weighted(synC), forest.Options{Task: cls, Trees: 2, Seed: seed, NoBootstrap: true, MaxFeatures: "all"})
		add(s+"diabetes/min-weight-fraction", weighted(diabS), forest.Options{Task: reg, Trees: 3, Seed: seed, MinWeightFractionLeaf: 0.02})
		add(s+"synthetic-cls/min-weight-fraction-random", synC, forest.Options{Task: cls, Trees: 3, Seed: seed, MinWeightFractionLeaf: 0.05, Splitter: forest.Random})
		add(s+"diabetes/random-splitter", diabS, forest.Options{Task: reg, Trees: 3, Seed: seed, Splitter: forest.Random})
		add(s+"synthetic-cls/random-splitter-sqrt", synC, forest.Options{Task: cls, Trees: 3, Seed: seed, Splitter: forest.Random, NoBootstrap: true})
		add(s+"synthetic-cls/gini-all-depth3-leaf3", synC, forest.Options{Task: cls, Trees: 3, Seed: seed, MaxFeatures: "all", MaxDepth: 3, MinSamplesLeaf: 3, MinSamplesSplit: 8})
	}
	// Histogram passes of a few slots: several chunks per level.
	cases = append(cases, growCase{name: "chunks/diabetes", ds: diabS, opt: forest.Options{Task: reg, Trees: 3, Seed: 5}, maxScatter: 3})
	cases = append(cases, growCase{name: "chunks/synthetic-cls", ds: synC, opt: forest.Options{Task: cls, Trees: 3, Seed: 5}, maxScatter: 2})
	// Windows of 3 nodes (a sibling pair across a boundary joins the
	// window) and of 2 with one-slot passes.
	cases = append(cases, growCase{name: "windows/diabetes", ds: diabS, opt: forest.Options{Task: reg, Trees: 3, Seed: 8, OOB: true}, window: 3})
	cases = append(cases, growCase{name: "windows/synthetic-cls", ds: synC, opt: forest.Options{Task: cls, Trees: 3, Seed: 8}, window: 2, maxScatter: 1})
	return cases
}
