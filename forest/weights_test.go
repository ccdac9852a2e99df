package forest

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/data"
)

// duplicated returns d with row i repeated w[i] times in its place (rows
// of weight 0 dropped), without weights.
func duplicated(d *data.Dataset, w []float64) *data.Dataset {
	var idx []int
	for i, k := range w {
		for range int(k) {
			idx = append(idx, i)
		}
	}
	s := d.Subset(idx)
	s.Weights = nil
	return s
}

// TestWeightsEqualDuplication checks issue #20's rule: without bootstrap,
// integer sample weights (0 included) give bit for bit the predictions
// of the rows repeated that many times, for regression and
// classification, both splitters, missing values included.
func TestWeightsEqualDuplication(t *testing.T) {
	diab := withNaNs(loadEmbedded(t, "diabetes"), 9)
	dig := toDS(loadEmbedded(t, "digits"), all(600))
	synth := data.MakeRegression(500, 6, 3) // fractional targets: their sums round
	r := rand.New(rand.NewPCG(3, 4))
	weights := func(n int) []float64 {
		w := make([]float64, n)
		for i := range w {
			w[i] = float64(r.IntN(7)) // 0..6
		}
		return w
	}
	for _, c := range []struct {
		name string
		d    *data.Dataset
		opt  Options
	}{
		{"regression", diab, Options{Trees: 6, Seed: 1, NoBootstrap: true}},
		{"regression sqrt depth8", diab, Options{Trees: 6, Seed: 2, NoBootstrap: true, MaxFeatures: "sqrt", MaxDepth: 8}},
		{"regression random splitter", diab, Options{Trees: 6, Seed: 3, NoBootstrap: true, Splitter: Random}},
		{"regression fractional targets bins16", synth, Options{Trees: 6, Seed: 6, NoBootstrap: true, Bins: 16}},
		{"regression 40 bins", diab, Options{Trees: 4, Seed: 7, NoBootstrap: true, Bins: 40}},
		{"gini bins8", dig, Options{Task: Classification, Trees: 4, Seed: 8, NoBootstrap: true, Bins: 8}},
		{"gini", dig, Options{Task: Classification, Trees: 6, Seed: 4, NoBootstrap: true}},
		{"gini min weight fraction", dig, Options{Task: Classification, Trees: 4, Seed: 9, NoBootstrap: true, MinWeightFractionLeaf: 0.01}},
		{"entropy all features", dig, Options{Task: Classification, Trees: 4, Seed: 5, NoBootstrap: true, Criterion: Entropy, MaxFeatures: "all"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			wd := *c.d
			wd.Weights = weights(c.d.Rows)
			fw := fitOrFail(t, &wd, c.opt)
			fd := fitOrFail(t, duplicated(c.d, wd.Weights), c.opt)
			pw, err := fw.PredictValues(c.d.X, c.d.Rows)
			if err != nil {
				t.Fatal(err)
			}
			pd, _ := fd.PredictValues(c.d.X, c.d.Rows)
			for i := range pw {
				if math.Float64bits(pw[i]) != math.Float64bits(pd[i]) {
					t.Fatalf("value %d: %v with weights, %v with duplicated rows", i, pw[i], pd[i])
				}
			}
		})
	}
}

// TestUnitWeightsChangeNothing checks that weights of 1 given explicitly
// give the model file of no weights, bootstrap and out-of-bag score
// included.
func TestUnitWeightsChangeNothing(t *testing.T) {
	for _, task := range []Task{Regression, Classification} {
		d := loadEmbedded(t, "diabetes")
		if task == Classification {
			d = loadEmbedded(t, "digits")
		}
		opt := Options{Task: task, Trees: 5, Seed: 2, OOB: true}
		plain := saveBytes(t, fitOrFail(t, d, opt))
		w := *d
		w.Weights = make([]float64, d.Rows)
		for i := range w.Weights {
			w.Weights[i] = 1
		}
		if !bytes.Equal(plain, saveBytes(t, fitOrFail(t, &w, opt))) {
			t.Errorf("%s: unit weights change the model file", task)
		}
	}
}

// TestClassWeights checks that class weights act as the sample weights
// they stand for, scikit-learn's balanced rule, and the refusals.
func TestClassWeights(t *testing.T) {
	d := toDS(loadEmbedded(t, "digits"), all(500))
	opt := Options{Task: Classification, Trees: 4, Seed: 1, ClassWeight: "3=2.5, 7=0.5"}
	byClass := fitOrFail(t, d, opt)
	w := *d
	w.Weights = make([]float64, d.Rows)
	for i, y := range d.Y {
		w.Weights[i] = map[float64]float64{3: 2.5, 7: 0.5}[y]
		if w.Weights[i] == 0 {
			w.Weights[i] = 1
		}
	}
	opt.ClassWeight = ""
	bySample := fitOrFail(t, &w, opt)
	if !slices.EqualFunc(byClass.Trees, bySample.Trees, func(a, b Tree) bool {
		return slices.Equal(a.Value, b.Value) && slices.Equal(a.Feature, b.Feature) && slices.Equal(a.bin, b.bin)
	}) {
		t.Fatal("class weights differ from the sample weights they stand for")
	}
	cw, err := classWeights("balanced", []int32{0, 0, 0, 1}, []string{"a", "b", "c"})
	if err != nil || !slices.Equal(cw, []float64{4.0 / 6, 2, 0}) {
		t.Fatalf("balanced: %v %v, want [0.667 2 0] (rows / (classes present x rows of the class))", cw, err)
	}
	b := saveBytes(t, fitOrFail(t, d, Options{Task: Classification, Trees: 2, ClassWeight: "balanced"}))
	if b[len(modelMagic)] != 2 || !bytes.Contains(b, []byte(`"class_weight":"balanced"`)) {
		t.Fatal("a forest with class weights is not a version 2 file naming them")
	}
	if g, err := Load(bytes.NewReader(b)); err != nil || g.Options.ClassWeight != "balanced" {
		t.Fatalf("load: %v", err)
	}
	for _, c := range []struct {
		spec, want string
	}{
		{"3=2,3=1", "given twice"},
		{"x=2", `no class "x"`},
		{"3", "want LABEL=WEIGHT"},
		{"3=-1", "finite weight >= 0"},
	} {
		if _, err := Fit(d, Options{Task: Classification, Trees: 1, ClassWeight: c.spec}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ClassWeight %q: %v, want an error containing %q", c.spec, err, c.want)
		}
	}
	if _, err := Fit(loadEmbedded(t, "diabetes"), Options{ClassWeight: "balanced"}); err == nil || !strings.Contains(err.Error(), "needs a classification task") {
		t.Errorf("class weights for regression: %v", err)
	}
}

// TestSampleWeightErrors checks the refusals of bad sample weights.
func TestSampleWeightErrors(t *testing.T) {
	d := loadEmbedded(t, "diabetes")
	for _, c := range []struct {
		name string
		w    func(n int) []float64
		opt  Options
		want string
	}{
		{"negative", func(n int) []float64 { w := ones(n); w[5] = -1; return w }, Options{}, "row 5: sample weight -1"},
		{"NaN", func(n int) []float64 { w := ones(n); w[2] = math.NaN(); return w }, Options{}, "row 2: sample weight NaN"},
		{"length", func(n int) []float64 { return ones(n - 1) }, Options{}, "sample weights for"},
		{"all zero", func(n int) []float64 { return make([]float64, n) }, Options{}, "every row has weight 0"},
	} {
		w := *d
		w.Weights = c.w(d.Rows)
		c.opt.Trees = 1
		if _, err := Fit(&w, c.opt); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

func ones(n int) []float64 {
	w := make([]float64, n)
	for i := range w {
		w[i] = 1
	}
	return w
}

// TestFractionalWeights checks the fixed point of fractional weights:
// weights scaled by a constant change the forest's predictions by
// rounding only, and a row of tiny weight still counts.
func TestFractionalWeights(t *testing.T) {
	d := loadEmbedded(t, "diabetes")
	r := rand.New(rand.NewPCG(8, 9))
	w := *d
	w.Weights = make([]float64, d.Rows)
	for i := range w.Weights {
		w.Weights[i] = 0.1 + r.Float64()
	}
	opt := Options{Trees: 5, Seed: 3, NoBootstrap: true}
	a := fitOrFail(t, &w, opt)
	scaled := w
	scaled.Weights = slices.Clone(w.Weights)
	for i := range scaled.Weights {
		scaled.Weights[i] *= 1000
	}
	b := fitOrFail(t, &scaled, opt)
	pa, _ := a.PredictValues(d.X, d.Rows)
	pb, _ := b.PredictValues(d.X, d.Rows)
	for i := range pa {
		if math.Abs(pa[i]-pb[i]) > 1e-6*math.Abs(pa[i]) {
			t.Fatalf("row %d: %v with weights, %v with them x1000", i, pa[i], pb[i])
		}
	}
	plain := fitOrFail(t, d, opt)
	pp, _ := plain.PredictValues(d.X, d.Rows)
	if slices.Equal(pa, pp) {
		t.Fatal("fractional weights changed nothing")
	}
}

// TestMinWeightFractionLeaf checks that every leaf keeps at least the
// fraction of its tree's weight, that trees still split, and the range.
func TestMinWeightFractionLeaf(t *testing.T) {
	d := loadEmbedded(t, "diabetes")
	w := *d
	w.Weights = make([]float64, d.Rows)
	for i := range w.Weights {
		w.Weights[i] = float64(1 + i%5)
	}
	for _, frac := range []float64{0.01, 0.05, 0.2} {
		f := fitOrFail(t, &w, Options{Trees: 5, Seed: 1, MinWeightFractionLeaf: frac})
		for k, tr := range f.Trees {
			least := int64(math.Ceil(frac * float64(tr.Weight(0))))
			if tr.NumLeaves() < 2 {
				t.Fatalf("fraction %v: tree %d did not split", frac, k)
			}
			for i, feat := range tr.Feature {
				if feat < 0 && tr.Weight(i) < least {
					t.Fatalf("fraction %v: tree %d leaf %d weighs %d, below %d", frac, k, i, tr.Weight(i), least)
				}
			}
		}
	}
	for _, bad := range []float64{-0.1, 0.6, math.NaN()} {
		if _, err := Fit(d, Options{Trees: 1, MinWeightFractionLeaf: bad}); err == nil || !strings.Contains(err.Error(), "MinWeightFractionLeaf") {
			t.Errorf("MinWeightFractionLeaf %v: %v", bad, err)
		}
	}
}
