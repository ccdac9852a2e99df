package forest

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/rng"

	"github.com/gotrain/gotrain/data"
)

func toDS(d *data.Dataset, idx []int) *data.Dataset { return d.Subset(idx) }

func loadEmbedded(t testing.TB, name string) *data.Dataset {
	t.Helper()
	d, err := data.Embedded(name)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func all(n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return idx
}

// cols builds a row-major matrix from columns.
func cols(c ...[]float64) *data.Dataset {
	n, p := len(c[0]), len(c)
	x := make([]float64, n*p)
	for j, col := range c {
		for i, v := range col {
			x[i*p+j] = v
		}
	}
	return &data.Dataset{X: x, Rows: n, Cols: p}
}

var nan = math.NaN()

// stump fits a single unbootstrapped depth-1 tree.
func stump(t *testing.T, ds *data.Dataset, opt Options) *Tree {
	t.Helper()
	opt.Trees, opt.NoBootstrap, opt.MaxDepth = 1, true, 1
	if opt.MaxFeatures == "" {
		opt.MaxFeatures = "all"
	}
	f, err := Fit(ds, opt)
	if err != nil {
		t.Fatal(err)
	}
	return &f.Trees[0]
}

func TestExactSplits(t *testing.T) {
	tests := []struct {
		name        string
		ds          *data.Dataset
		y           []float64
		opt         Options
		feature     int32
		threshold   float64
		missingLeft bool      // with no missing value seen: the heavier side, left on a tie
		left, right []float64 // leaf values
	}{
		{"regression midpoint", cols([]float64{1, 2, 3, 10, 11, 12}), []float64{0, 0, 0, 5, 5, 5}, Options{}, 0, 6.5, true, []float64{0}, []float64{5}},
		{"better second feature", cols([]float64{1, 2, 3, 4, 5, 6}, []float64{0, 0, 1, 0, 1, 1}), []float64{0, 0, 9, 0, 9, 9}, Options{}, 1, 0.5, true, []float64{0}, []float64{9}},
		{"tie goes to lowest feature", cols([]float64{1, 2, 3, 4}, []float64{1, 2, 3, 4}), []float64{0, 0, 1, 1}, Options{}, 0, 2.5, true, []float64{0}, []float64{1}},
		{"tie goes to lowest bin", cols([]float64{1, 2, 3, 4}), []float64{0, 1, 1, 0}, Options{}, 0, 1.5, false, []float64{0}, []float64{2.0 / 3}},
		{"min samples leaf", cols([]float64{1, 2, 3, 4, 5, 6}), []float64{0, 10, 10, 10, 10, 10}, Options{MinSamplesLeaf: 2}, 0, 2.5, false, []float64{5}, []float64{10}},
		{"missing goes right", cols([]float64{1, 2, 10, 11, nan, nan}), []float64{0, 0, 5, 5, 5, 5}, Options{}, 0, 6, false, []float64{0}, []float64{5}},
		{"missing goes left", cols([]float64{1, 2, 10, 11, nan, nan}), []float64{0, 0, 5, 5, 0, 0}, Options{}, 0, 6, true, []float64{0}, []float64{5}},
		{"gini", cols([]float64{5, 6, 7, 1, 2, 3}), []float64{1, 1, 1, 0, 0, 0}, Options{Task: Classification}, 0, 4, true, []float64{1, 0}, []float64{0, 1}},
		{"entropy three classes", cols([]float64{1, 2, 3, 4, 5, 6}), []float64{0, 0, 1, 1, 2, 2}, Options{Task: Classification, Criterion: Entropy}, 0, 2.5, false, []float64{1, 0, 0}, []float64{0, 0.5, 0.5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ds := tt.ds
			ds.Y = tt.y
			tr := stump(t, ds, tt.opt)
			if tr.NumNodes() != 3 {
				t.Fatalf("want a stump of 3 nodes, got %d: %+v", tr.NumNodes(), tr)
			}
			if tr.Feature[0] != tt.feature || tr.Threshold(0) != tt.threshold || tr.MissingLeft(0) != tt.missingLeft {
				t.Errorf("split feature %d threshold %v missingLeft %v, want %d %v %v", tr.Feature[0], tr.Threshold(0), tr.MissingLeft(0), tt.feature, tt.threshold, tt.missingLeft)
			}
			d := len(tt.left)
			l, r := tr.Left[0], tr.Left[0]+1
			if !closeTo(tr.Value[int(l)*d:int(l+1)*d], tt.left) || !closeTo(tr.Value[int(r)*d:int(r+1)*d], tt.right) {
				t.Errorf("leaf values %v / %v, want %v / %v", tr.Value[int(l)*d:int(l+1)*d], tr.Value[int(r)*d:int(r+1)*d], tt.left, tt.right)
			}
		})
	}
}

func closeTo(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-9 {
			return false
		}
	}
	return true
}

func TestNoSplitOnPureOrConstant(t *testing.T) {
	ds := cols([]float64{1, 2, 3, 4})
	ds.Y = []float64{7, 7, 7, 7}
	if tr := stump(t, ds, Options{}); tr.NumNodes() != 1 || tr.Value[0] != 7 {
		t.Errorf("pure node was split: %+v", tr)
	}
	ds = cols([]float64{3, 3, 3, 3})
	ds.Y = []float64{1, 2, 3, 4}
	if tr := stump(t, ds, Options{}); tr.NumNodes() != 1 {
		t.Errorf("constant feature was split: %+v", tr)
	}
}

func TestMissingAtPredictionGoesToHeavierSide(t *testing.T) {
	ds := cols([]float64{1, 2, 3, 10, 11})
	ds.Y = []float64{0, 0, 0, 5, 5}
	f, err := Fit(ds, Options{Trees: 1, NoBootstrap: true, MaxDepth: 1})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := f.Predict([]float64{nan, 2, 12}, 3)
	if want := []float64{0, 0, 5}; !closeTo(got, want) {
		t.Errorf("predictions %v, want %v (NaN goes to the 3-row side)", got, want)
	}
}

func fitOrFail(t testing.TB, ds *data.Dataset, opt Options) *Forest {
	t.Helper()
	f, err := Fit(ds, opt)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func withNaNs(ds *data.Dataset, every int) *data.Dataset {
	ds = ds.Clone()
	for i := 0; i < len(ds.X); i += every {
		ds.X[i] = math.NaN()
	}
	return ds
}

func TestDeterministicAcrossThreads(t *testing.T) {
	diab := loadEmbedded(t, "diabetes")
	dig := loadEmbedded(t, "digits")
	// Fractional sample weights: fixed-point weights beyond the table of
	// reciprocals, so the sorted scan divides (recip's fallback).
	weighted := toDS(diab, all(diab.Rows))
	weighted.Weights = make([]float64, weighted.Rows)
	for i := range weighted.Weights {
		weighted.Weights[i] = 0.5 + float64(i%7)/3
	}
	cases := []struct {
		name string
		ds   *data.Dataset
		opt  Options
	}{
		{"diabetes", toDS(diab, all(diab.Rows)), Options{Trees: 12, MaxDepth: 8, Seed: 3, OOB: true}},
		{"diabetes nan sqrt", withNaNs(toDS(diab, all(diab.Rows)), 7), Options{Trees: 12, MaxFeatures: "sqrt", Seed: 5}},
		{"digits", toDS(dig, all(600)), Options{Task: Classification, Trees: 8, Seed: 9, OOB: true}},
		{"digits entropy", toDS(dig, all(600)), Options{Task: Classification, Criterion: Entropy, Trees: 6, MaxSamples: 0.5, Seed: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var ref *Forest
			for _, th := range []int{1, 2, 3} {
				opt := c.opt
				opt.Threads = th
				f := fitOrFail(t, c.ds, opt)
				if ref == nil {
					ref = f
					continue
				}
				if !reflect.DeepEqual(ref.Trees, f.Trees) {
					t.Fatalf("threads=%d grew different trees than threads=1", th)
				}
				if ref.OOBScore != f.OOBScore && !(math.IsNaN(ref.OOBScore) && math.IsNaN(f.OOBScore)) {
					t.Errorf("threads=%d OOB %v, threads=1 %v", th, f.OOBScore, ref.OOBScore)
				}
			}
			opt := c.opt
			opt.Seed++
			if other := fitOrFail(t, c.ds, opt); reflect.DeepEqual(ref.Trees, other.Trees) {
				t.Error("a different seed grew the same forest")
			}
		})
	}
}

// TestSplitPathsAgree forces every node through the dense histogram path,
// the per-feature histogram (rows) path on each of its layouts (row-major,
// column-major, a local block), the sorted path, and lets Fit choose:
// the split rules promise the same trees.
func TestSplitPathsAgree(t *testing.T) {
	diab := loadEmbedded(t, "diabetes")
	dig := loadEmbedded(t, "digits")
	// Fractional sample weights: fixed-point weights beyond the table of
	// reciprocals, so the sorted scan divides (recip's fallback).
	weighted := toDS(diab, all(diab.Rows))
	weighted.Weights = make([]float64, weighted.Rows)
	for i := range weighted.Weights {
		weighted.Weights[i] = 0.5 + float64(i%7)/3
	}
	cases := []struct {
		name string
		ds   *data.Dataset
		opt  Options
	}{
		{"regression", toDS(diab, all(diab.Rows)), Options{Trees: 6, Seed: 11}},
		{"regression fractional weights", weighted, Options{Trees: 4, Seed: 12}},
		{"regression nan log2 leaf3", withNaNs(toDS(diab, all(diab.Rows)), 5), Options{Trees: 6, MaxFeatures: "log2", MinSamplesLeaf: 3, Seed: 2}},
		{"gini", toDS(dig, all(500)), Options{Task: Classification, Trees: 4, Seed: 4}},
		{"gini all features", toDS(dig, all(300)), Options{Task: Classification, Trees: 3, MaxFeatures: "all", Seed: 8}},
		{"entropy nan", withNaNs(toDS(dig, all(500)), 11), Options{Task: Classification, Criterion: Entropy, Trees: 4, Seed: 4}},
		{"few bins", toDS(diab, all(diab.Rows)), Options{Trees: 4, Bins: 8, Seed: 1}},
		{"sparse wide gini nan", sparseWide(800, 200, 5, true), Options{Task: Classification, Trees: 3, Seed: 5}},
		{"sparse wide regression 0.1", sparseWide(800, 200, 0, false), Options{Trees: 3, Seed: 6, MaxFeatures: "0.1"}},
		{"random splitter regression nan", withNaNs(toDS(diab, all(diab.Rows)), 7), Options{Trees: 4, Seed: 3, Splitter: Random}},
		{"min weight fraction regression nan", withNaNs(toDS(diab, all(diab.Rows)), 7), Options{Trees: 4, Seed: 9, MinWeightFractionLeaf: 0.02}},
		{"min weight fraction gini sparse", sparseWide(800, 200, 5, true), Options{Task: Classification, Trees: 3, Seed: 10, MinWeightFractionLeaf: 0.01}},
		{"random splitter sparse wide gini nan", sparseWide(800, 200, 5, true), Options{Task: Classification, Trees: 3, Seed: 5, Splitter: Random}},
	}
	defer func() { pathOverride = "" }()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var ref *Forest
			for _, path := range []string{"dense", "rows", "columns", "local", "sorted", ""} {
				pathOverride = path
				f := fitOrFail(t, c.ds, c.opt)
				pathOverride = ""
				if ref == nil {
					ref = f
					continue
				}
				for i := range ref.Trees {
					if !reflect.DeepEqual(ref.Trees[i], f.Trees[i]) {
						t.Fatalf("tree %d differs between the dense path and path %q", i, path)
					}
				}
			}
		})
	}
}

func TestDiabetesQualityBand(t *testing.T) {
	d := loadEmbedded(t, "diabetes")
	// 5-fold CV, as scikit-learn's cross_val_score(cv=5) (no shuffle):
	// scikit-learn's RandomForestRegressor gets 3338 ± 273 here.
	var cv float64
	for _, fold := range data.KFold(d.Rows, 5, false, 0) {
		f := fitOrFail(t, toDS(d, fold[0]), Options{Trees: 100, MaxDepth: 16, Seed: 1})
		test := toDS(d, fold[1])
		pred, _ := f.Predict(test.X, test.Rows)
		cv += MeanSquaredError(pred, test.Y) / 5
	}
	if cv < 2900 || cv > 3600 {
		t.Errorf("5-fold CV MSE %.1f outside [2900, 3600]", cv)
	}
	t.Logf("5-fold CV MSE %.1f", cv)
}

func TestDigitsAccuracyAndOOB(t *testing.T) {
	d := loadEmbedded(t, "digits")
	tr, te := data.TrainTestSplit(d.Rows, 0.2, 42)
	f := fitOrFail(t, toDS(d, tr), Options{Task: Classification, Trees: 100, Seed: 1, OOB: true})
	test := toDS(d, te)
	acc, err := f.Score(test.X, test.Rows, test.Y)
	if err != nil {
		t.Fatal(err)
	}
	if acc < 0.95 {
		t.Errorf("digits accuracy %.3f < 0.95", acc)
	}
	if f.OOBScore < 0.93 || f.OOBScore > 1 || f.OOBRows < len(tr)*9/10 {
		t.Errorf("OOB score %.3f over %d rows", f.OOBScore, f.OOBRows)
	}
	probs, _ := f.PredictValues(test.X[:3*test.Cols], 3)
	for i := 0; i < 3; i++ {
		var s float64
		for _, p := range probs[i*10 : (i+1)*10] {
			s += p
		}
		if math.Abs(s-1) > 1e-9 {
			t.Errorf("row %d probabilities sum to %v", i, s)
		}
	}
}

func TestImportances(t *testing.T) {
	// y depends on feature 1 only; feature 0 is noise.
	n := 400
	x0, x1, y := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range y {
		x0[i] = float64(rng.At(77, uint64(i)) % 1000)
		x1[i] = float64(i % 20)
		y[i] = 3 * x1[i]
	}
	ds := cols(x0, x1)
	ds.Y = y
	f := fitOrFail(t, ds, Options{Trees: 20, Seed: 1})
	imp := f.ImpurityImportance()
	if math.Abs(imp[0]+imp[1]-1) > 1e-9 || imp[1] < 0.9 {
		t.Errorf("impurity importances %v: want feature 1 dominant, sum 1", imp)
	}
	mean, std, err := f.PermutationImportance(ds.X, ds.Rows, ds.Y, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	if mean[1] < 0.5 || math.Abs(mean[0]) > 0.05 || len(std) != 2 {
		t.Errorf("permutation importances %v ± %v", mean, std)
	}
}

func TestOptionErrors(t *testing.T) {
	ds := cols([]float64{1, 2, 3})
	ds.Y = []float64{1, 2, 3}
	tests := []struct {
		opt  Options
		want string
	}{
		{Options{Task: "ranking"}, "unknown task"},
		{Options{Criterion: Gini}, "not valid for regression"},
		{Options{Task: Classification, Criterion: SquaredError}, "not valid for classification"},
		{Options{Trees: -1}, "Trees -1: want 1 to 1048576"},
		{Options{MaxDepth: -2}, "MaxDepth -2: want >= 0"},
		{Options{MinSamplesSplit: 1}, "MinSamplesSplit 1: want >= 2"},
		{Options{MinSamplesLeaf: -1}, "MinSamplesLeaf -1: want >= 1"},
		{Options{Bins: 300}, "Bins 300: want 2 to 256"},
		{Options{Bins: 1}, "Bins 1: want 2 to 256"},
		{Options{MaxFeatures: "half"}, "max features"},
		{Options{MaxFeatures: "0"}, "max features"},
		{Options{MaxFeatures: "1.5"}, "max features"},
		{Options{MaxSamples: 2.5}, "MaxSamples 2.5"},
		{Options{MaxSamples: math.Inf(1)}, "MaxSamples +Inf"},
		{Options{MaxSamples: math.NaN()}, "MaxSamples NaN"},
		{Options{Threads: -1}, "Threads -1: want 0 (all CPUs) to 4096"},
		{Options{Threads: 1 << 30}, "Threads 1073741824"},
		{Options{MaxSamples: 10}, "exceeds"},
		{Options{NoBootstrap: true, OOB: true}, "out-of-bag"},
	}
	for _, tt := range tests {
		if _, err := Fit(ds, tt.opt); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Fit with %+v: err = %v, want %q", tt.opt, err, tt.want)
		}
	}
	bad := []struct {
		ds   *data.Dataset
		want string
	}{
		{&data.Dataset{X: []float64{1, 2}, Y: []float64{1}, Rows: 1, Cols: 3}, "X has 2 values"},
		{&data.Dataset{X: []float64{1, 2}, Y: []float64{1}, Rows: 2, Cols: 1}, "Y has 1 values"},
		{&data.Dataset{X: []float64{1, 2}, Y: []float64{1, math.Inf(1)}, Rows: 2, Cols: 1}, "not a finite number"},
		{&data.Dataset{X: []float64{1, math.Inf(-1)}, Y: []float64{1, 2}, Rows: 2, Cols: 1}, "infinite value"},
		{&data.Dataset{Rows: 0, Cols: 1}, "at least one row"},
	}
	for _, tt := range bad {
		if _, err := Fit(tt.ds, Options{}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Fit(%+v): err = %v, want %q", tt.ds, err, tt.want)
		}
	}
	if _, err := Fit(&data.Dataset{X: []float64{1, 2}, Y: []float64{0, 1.5}, Rows: 2, Cols: 1}, Options{Task: Classification}); err == nil || !strings.Contains(err.Error(), "class label") {
		t.Errorf("fractional class label: err = %v", err)
	}
}

func TestFeaturesPerNode(t *testing.T) {
	tests := []struct {
		s    string
		p    int
		want int
	}{{"all", 10, 10}, {"sqrt", 64, 8}, {"sqrt", 10, 3}, {"log2", 64, 6}, {"0.5", 10, 5}, {"0.01", 10, 1}, {"3", 10, 3}, {"30", 10, 10}, {"1.0", 7, 7}}
	for _, tt := range tests {
		got, err := Options{MaxFeatures: tt.s}.featuresPerNode(tt.p)
		if err != nil || got != tt.want {
			t.Errorf("featuresPerNode(%q, %d) = %d, %v; want %d", tt.s, tt.p, got, err, tt.want)
		}
	}
}

func TestBinnerThresholdsMatchCodes(t *testing.T) {
	n := 3000
	x := make([]float64, n)
	for i := range x {
		x[i] = float64(rng.At(5, uint64(i))%5000) / 7
		if i%97 == 0 {
			x[i] = math.NaN()
		}
	}
	for _, maxBins := range []int{2, 3, 16, 256} {
		bn, err := NewBinner(x, n, 1, maxBins)
		if err != nil {
			t.Fatal(err)
		}
		if bn.NumBins(0) > maxBins-1 {
			t.Errorf("maxBins %d: %d real bins", maxBins, bn.NumBins(0))
		}
		e := bn.Edges[0]
		for i := 1; i < len(e); i++ {
			if !(e[i] > e[i-1]) {
				t.Fatalf("edges not increasing at %d: %v", i, e)
			}
		}
		for _, v := range append(x, -1e9, 1e9, 0) {
			c := bn.Code(0, v)
			if math.IsNaN(v) {
				if c != bn.MissingCode(0) {
					t.Errorf("NaN code %d, want %d", c, bn.MissingCode(0))
				}
				continue
			}
			for b := range e {
				if (int(c) <= b) != (v <= e[b]) {
					t.Fatalf("value %v code %d edge[%d]=%v disagree", v, c, b, e[b])
				}
			}
		}
	}
	// Few distinct values: one bin each, edges at midpoints.
	bn, _ := NewBinner([]float64{3, 1, 2, 2, 1}, 5, 1, 256)
	if !closeTo(bn.Edges[0], []float64{1.5, 2.5}) {
		t.Errorf("edges %v, want [1.5 2.5]", bn.Edges[0])
	}
}

func TestVectorWalkMatchesScalar(t *testing.T) {
	if !useAVX512 {
		t.Skip("AVX-512 walk off (CPU, build or GOTRAIN_CPU): only the scalar walk runs")
	}
	ds := withNaNs(data.MakeRegression(3000, 7, 1), 9)
	f := fitOrFail(t, ds, Options{Trees: 5, Seed: 2})
	vec, err := f.PredictValues(ds.X, ds.Rows)
	if err != nil {
		t.Fatal(err)
	}
	useAVX512 = false
	defer func() { useAVX512 = true }()
	scalar, _ := f.PredictValues(ds.X, ds.Rows)
	if !reflect.DeepEqual(vec, scalar) {
		t.Fatal("AVX-512 walk and scalar walk disagree")
	}
	if raw := f.predictRaw(ds.X, ds.Rows); !reflect.DeepEqual(vec, raw) {
		t.Fatal("AVX-512 walk and raw thresholds disagree")
	}
}

// TestColumnOnlyCodes checks the learner that keeps only the column store
// of the codes (Fit drops the row-major ones when the rows path reads
// nothing else, columnCodes: sparse and dense columns): local blocks
// gathered from the columns and the out-of-bag score from blocks of rows
// transposed back give the trees and the score of the dense path, which
// reads the row-major codes.
func TestColumnOnlyCodes(t *testing.T) {
	dig := loadEmbedded(t, "digits")
	cases := []struct {
		name string
		ds   *data.Dataset
		opt  Options
	}{
		{"gini nan", sparseWide(900, 200, 5, true), Options{Task: Classification, Trees: 4, Seed: 5, OOB: true}},
		// A value in five missing: large nodes' scans of the column-major
		// copy weigh sending them left.
		{"gini many nan", withNaNs(toDS(dig, all(1200)), 5), Options{Task: Classification, Trees: 4, Seed: 7, OOB: true}},
		// The most common value the largest: sparse columns whose base
		// code is not 0.
		{"gini base not 0", func() *data.Dataset {
			d := toDS(dig, all(dig.Rows))
			for i, v := range d.X {
				if v == 0 {
					d.X[i] = 17
				}
			}
			return d
		}(), Options{Task: Classification, Trees: 3, Seed: 9, OOB: true}},
		{"entropy", sparseWide(900, 200, 3, false), Options{Task: Classification, Criterion: Entropy, Trees: 3, Seed: 2, OOB: true}},
		{"regression 0.1 nan", sparseWide(900, 200, 0, true), Options{Trees: 4, Seed: 6, MaxFeatures: "0.1", OOB: true}},
	}
	defer func(v int) { localBytes, pathOverride = v, "" }(localBytes)
	localBytes = 1           // local blocks of at most 256 rows: the 900 rows take the column-major copy
	kinds := map[bool]bool{} // the column store's sparse and dense columns met
	defer func() {
		if !kinds[true] || !kinds[false] {
			t.Errorf("the cases' column stores hold sparse columns %v, dense ones %v: both should be met", kinds[true], kinds[false])
		}
	}()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, pr, _, err := fitTrees(c.ds, c.opt, nil)
			if err != nil {
				t.Fatal(err)
			}
			cols, _ := pr.Columns.(*columnCodes)
			if pr.Codes != nil || pr.CodesByColumn != nil || cols == nil {
				t.Fatalf("the codes were kept otherwise than in the column store (%d codes, %d by column, store %v)", len(pr.Codes), len(pr.CodesByColumn), cols != nil)
			}
			for _, s := range cols.sparse {
				kinds[s >= 0] = true
			}
			pathOverride = "dense"
			want := fitOrFail(t, c.ds, c.opt)
			pathOverride = ""
			// With the sparse scans from 64 rows, most nodes of a block do
			// not look for the features of their base code (markBase): the
			// block's own constants keep them from the columns not copied.
			defer func(v int) { sparseAt = v }(sparseAt)
			for _, sparseAt = range []int{sparseAt, 64} {
				got := fitOrFail(t, c.ds, c.opt)
				for i := range want.Trees {
					if !reflect.DeepEqual(want.Trees[i], got.Trees[i]) {
						t.Fatalf("sparse scans from %d rows: tree %d differs from the dense path's", sparseAt, i)
					}
				}
				if math.Float64bits(got.OOBScore) != math.Float64bits(want.OOBScore) || math.IsNaN(got.OOBScore) {
					t.Fatalf("sparse scans from %d rows: out-of-bag score %v, want %v", sparseAt, got.OOBScore, want.OOBScore)
				}
			}
		})
	}
}
