package forest

import (
	"bytes"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/forest/internal/core"
)

// rawLeaf walks tree t with raw values (thresholds, NaN by MissingLeft):
// an independent route from the binned one of prediction.
func rawLeaf(t *Tree, row []float64) int {
	i := 0
	for t.Feature[i] >= 0 {
		v := row[t.Feature[i]]
		left := (math.IsNaN(v) && t.MissingLeft(i)) || (!math.IsNaN(v) && v <= t.Threshold(i))
		i = int(t.Left[i])
		if !left {
			i++
		}
	}
	return i
}

// refQuantile is Meinshausen's quantile computed directly: every training
// row's weight is summed over the trees (its bootstrap count over its
// leaf's weight when it shares x's leaf), and the q quantile is the
// smallest target whose cumulative weight reaches q of the total.
func refQuantile(f *Forest, train *data.Dataset, x []float64, draws int, qs []float64) (quant []float64, mean float64) {
	n := train.Rows
	w := make([]float64, n)
	counts := make([]int32, n)
	for t := range f.Trees {
		tr := &f.Trees[t]
		if f.Options.NoBootstrap {
			for i := range counts {
				counts[i] = 1
			}
		} else {
			core.BootstrapCounts(f.Options.Seed, t, draws, counts)
		}
		leaf := rawLeaf(tr, x)
		for i := 0; i < n; i++ {
			c := float64(counts[i])
			if train.Weights != nil {
				c *= train.Weights[i] // integers: the fixed point keeps them
			}
			if c > 0 && rawLeaf(tr, train.Row(i)) == leaf {
				w[i] += c / float64(tr.Weight(leaf)) / float64(len(f.Trees))
			}
		}
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return train.Y[idx[a]] < train.Y[idx[b]] })
	var total float64
	for i := range w {
		total += w[i]
		mean += w[i] * train.Y[i]
	}
	for _, q := range qs {
		var cum float64
		v := math.NaN()
		for _, i := range idx {
			if cum += w[i]; w[i] > 0 && cum >= q*total {
				v = train.Y[i]
				break
			}
		}
		quant = append(quant, v)
	}
	return quant, mean / total
}

// TestPredictQuantilesMatchesReference checks PredictQuantiles against the
// direct computation on diabetes rows (missing values included), with and
// without bootstrap, and that the weights' mean is the forest's prediction.
func TestPredictQuantilesMatchesReference(t *testing.T) {
	d := withNaNs(loadEmbedded(t, "diabetes"), 13)
	plain, test := toDS(d, all(350)), toDS(d, rangeIdx(350, d.Rows))
	weighted := *plain
	weighted.Weights = make([]float64, plain.Rows)
	for i := range weighted.Weights {
		weighted.Weights[i] = float64(i % 4) // 0..3: rows of weight 0 hold no leaf
	}
	for _, c := range []struct {
		train *data.Dataset
		opt   Options
	}{
		{plain, Options{Trees: 8, Seed: 1, MaxDepth: 6, KeepLeafSamples: true}},
		{plain, Options{Trees: 5, Seed: 2, NoBootstrap: true, MinSamplesLeaf: 5, KeepLeafSamples: true}},
		{plain, Options{Trees: 6, Seed: 3, MaxSamples: 0.5, KeepLeafSamples: true, Splitter: Random}},
		{&weighted, Options{Trees: 6, Seed: 4, KeepLeafSamples: true}},
	} {
		train, opt := c.train, c.opt
		f := fitOrFail(t, train, opt)
		draws, err := f.Options.draws(train.Rows)
		if err != nil {
			t.Fatal(err)
		}
		qs := []float64{0, 0.05, 0.25, 0.5, 0.9, 1}
		got, err := f.PredictQuantiles(test.X, test.Rows, qs)
		if err != nil {
			t.Fatal(err)
		}
		pred, err := f.PredictValues(test.X, test.Rows)
		if err != nil {
			t.Fatal(err)
		}
		const eps = 1e-9
		for i := 0; i < test.Rows; i++ {
			row := test.Row(i)
			for k, q := range qs {
				lo, _ := refQuantile(f, train, row, draws, []float64{max(0, q-eps)})
				hi, _ := refQuantile(f, train, row, draws, []float64{min(1, q+eps)})
				if v := got[i*len(qs)+k]; v < lo[0] || v > hi[0] {
					t.Fatalf("%+v: row %d quantile %v = %v, reference %v..%v", opt, i, q, v, lo[0], hi[0])
				}
			}
			if _, mean := refQuantile(f, train, row, draws, nil); math.Abs(mean-pred[i]) > 1e-9*(1+math.Abs(pred[i])) {
				t.Fatalf("%+v: row %d: the weights' mean %v, the prediction %v", opt, i, mean, pred[i])
			}
		}
	}
}

func rangeIdx(lo, hi int) []int {
	idx := make([]int, 0, hi-lo)
	for i := lo; i < hi; i++ {
		idx = append(idx, i)
	}
	return idx
}

// TestQuantileCoverage checks that the 5-95 % interval holds about 90 % of
// held-out targets on data with noise that grows with a feature.
func TestQuantileCoverage(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	mk := func(n int) *data.Dataset {
		d := &data.Dataset{Rows: n, Cols: 3, X: make([]float64, n*3), Y: make([]float64, n)}
		for i := 0; i < n; i++ {
			a, b, c := r.Float64()*4, r.Float64(), r.Float64()
			d.X[i*3], d.X[i*3+1], d.X[i*3+2] = a, b, c
			d.Y[i] = 3*math.Sin(a) + b + r.NormFloat64()*(0.2+a)
		}
		return d
	}
	train, test := mk(3000), mk(2000)
	f := fitOrFail(t, train, Options{Trees: 100, Seed: 1, MinSamplesLeaf: 5, KeepLeafSamples: true})
	q, err := f.PredictQuantiles(test.X, test.Rows, []float64{0.05, 0.95})
	if err != nil {
		t.Fatal(err)
	}
	in := 0
	for i := 0; i < test.Rows; i++ {
		if y := test.Y[i]; y >= q[2*i] && y <= q[2*i+1] {
			in++
		}
	}
	cov := float64(in) / float64(test.Rows)
	t.Logf("5-95 %% interval coverage on %d held-out rows: %.4f", test.Rows, cov)
	if cov < 0.85 || cov > 0.95 {
		t.Errorf("5-95 %% interval covers %.3f of held-out rows, want 0.85-0.95", cov)
	}
}

// TestLeafSamplesFile checks the leaf samples' round trip through a model
// file (format version 2, the same quantiles after loading), that they do
// not depend on the thread count, and the loader's checks of them.
func TestLeafSamplesFile(t *testing.T) {
	d := loadEmbedded(t, "diabetes")
	f := fitOrFail(t, d, Options{Trees: 4, Seed: 1, KeepLeafSamples: true, Threads: 1})
	f3 := fitOrFail(t, d, Options{Trees: 4, Seed: 1, KeepLeafSamples: true, Threads: 3})
	if !reflect.DeepEqual(f.LeafSamples, f3.LeafSamples) {
		t.Fatal("leaf samples depend on the thread count")
	}
	b := saveBytes(t, f)
	if v := b[len(modelMagic)]; v != 2 {
		t.Fatalf("file version %d, want 2", v)
	}
	g, err := Load(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f.LeafSamples, g.LeafSamples) || !g.Options.KeepLeafSamples {
		t.Fatal("leaf samples differ after a round trip")
	}
	qs := []float64{0.1, 0.5, 0.9}
	a, _ := f.PredictQuantiles(d.X, d.Rows, qs)
	c, err := g.PredictQuantiles(d.X, d.Rows, qs)
	if err != nil || !slices.Equal(a, c) {
		t.Fatalf("quantiles differ after a round trip: %v", err)
	}
	// Damaged leaf samples, written without Save's checks.
	damage := func(edit func(ls *LeafSamples)) error {
		h := *f
		ls := *f.LeafSamples
		ls.Rows, ls.Weights = slices.Clone(ls.Rows), slices.Clone(ls.Weights)
		ls.Rows[1], ls.Weights[1] = slices.Clone(ls.Rows[1]), slices.Clone(ls.Weights[1])
		edit(&ls)
		h.LeafSamples = &ls
		var buf bytes.Buffer
		if err := h.encode(&buf); err != nil {
			t.Fatal(err)
		}
		_, err := Load(&buf)
		return err
	}
	for _, c := range []struct {
		name string
		edit func(ls *LeafSamples)
		want string
	}{
		{"row out of range", func(ls *LeafSamples) { ls.Rows[1][0] = int32(len(ls.Y)) }, "leaf sample row"},
		{"rows out of order", func(ls *LeafSamples) {
			k := 0 // the first leaf of tree 1 with two rows or more
			for i, feat := range f.Trees[1].Feature {
				if feat >= 0 {
					continue
				}
				if f.Trees[1].Samples(i) >= 2 {
					break
				}
				k += int(f.Trees[1].Samples(i))
			}
			ls.Rows[1][k], ls.Rows[1][k+1] = ls.Rows[1][k+1], ls.Rows[1][k]
		}, "increasing order"},
		{"count", func(ls *LeafSamples) { ls.Weights[1][0]++ }, "exceed"},
		{"zero count", func(ls *LeafSamples) { ls.Weights[1][0] = 0 }, "weight 0"},
		{"missing row", func(ls *LeafSamples) { ls.Rows[1], ls.Weights[1] = ls.Rows[1][1:], ls.Weights[1][1:] }, "leaf sample"},
	} {
		if err := damage(c.edit); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
	// Options and section must agree; version 1 cannot hold them.
	hdr, trees := splitModel(t, b)
	h1 := bytes.Replace(hdr, []byte(`"keep_leaf_samples":true`), []byte(`"keep_leaf_samples":false`), 1)
	if _, err := Load(bytes.NewReader(buildModel(2, uint64(len(h1)), h1, trees))); err == nil || !strings.Contains(err.Error(), "keep_leaf_samples is false but leaf_samples is present") {
		t.Errorf("options without leaf samples: %v", err)
	}
	if _, err := Load(bytes.NewReader(buildModel(1, uint64(len(hdr)), bytes.Replace(hdr, []byte(`"version":2`), []byte(`"version":1`), 1), trees))); err == nil || !strings.Contains(err.Error(), "need format version 2") {
		t.Errorf("leaf samples in version 1: %v", err)
	}
	if _, err := Fit(d, Options{Task: Classification, KeepLeafSamples: true}); err == nil || !strings.Contains(err.Error(), "needs a regression forest") {
		t.Errorf("classification with leaf samples: %v", err)
	}
	plain := fitOrFail(t, d, Options{Trees: 2})
	if _, err := plain.PredictQuantiles(d.X, d.Rows, qs); err == nil || !strings.Contains(err.Error(), "--keep-leaf-samples") {
		t.Errorf("quantiles without leaf samples: %v", err)
	}
	if _, err := f.PredictQuantiles(d.X, d.Rows, []float64{1.5}); err == nil {
		t.Error("quantile 1.5 accepted")
	}
	if qs, err := ParseQuantiles(" 0.05, 0.5 ,0.95"); err != nil || !slices.Equal(qs, []float64{0.05, 0.5, 0.95}) {
		t.Errorf("ParseQuantiles: %v %v", qs, err)
	}
	for _, s := range []string{"", "0.5,", "2", "a", "NaN"} {
		if _, err := ParseQuantiles(s); err == nil {
			t.Errorf("ParseQuantiles(%q) accepted", s)
		}
	}
}

// TestQuantileDefinition pins the definition on a tree of two leaves of
// two rows each (weights 1/2): the q quantile is the smallest target
// whose cumulative weight reaches q, so 0.5 is the lower of a leaf's two.
func TestQuantileDefinition(t *testing.T) {
	d := &data.Dataset{Rows: 4, Cols: 1, X: []float64{1, 2, 3, 4}, Y: []float64{10, 20, 30, 40}}
	f := fitOrFail(t, d, Options{Trees: 1, NoBootstrap: true, MinSamplesLeaf: 2, KeepLeafSamples: true})
	got, err := f.PredictQuantiles([]float64{1.5, 3.5}, 2, []float64{0, 0.25, 0.5, 0.51, 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := []float64{10, 10, 10, 20, 20, 30, 30, 30, 40, 40}; !slices.Equal(got, want) {
		t.Fatalf("quantiles %v, want %v", got, want)
	}
}
