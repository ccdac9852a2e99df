package forest

import (
	"bytes"
	"fmt"
	"math"
	"math/bits"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/data"
	"math/rand/v2"
)

// inRule is the categorical rule of catData: the categories whose rows
// have the high target (or class 1), scattered through the codes so that
// no single threshold on the codes separates them.
var inRule = map[int]bool{1: true, 4: true, 6: true, 9: true, 11: true}

// catData returns n rows of a categorical feature of 12 categories
// ("c00".."c11", column 0, with a few missing values when nans) and a
// numeric noise feature, the target 10 (class 1) for the categories of
// inRule and 0 (class 0) otherwise, plus noise for regression. Missing
// values of the category have target 5 (class 2 when classes > 2).
// With classes > 2, category c%3 of the other categories decides class
// 2 + c%3 % (classes-2)... kept simple: categories 0, 3 and 8 have class 2.
func catData(n int, seed uint64, classes int, nans bool) *data.Dataset {
	r := rand.New(rand.NewPCG(seed, 0))
	d := &data.Dataset{Rows: n, Cols: 2, X: make([]float64, 2*n), Y: make([]float64, n),
		FeatureNames: []string{"cat", "noise"}, TargetName: "y"}
	d.Categories = [][]string{make([]string, 12), nil}
	for c := range 12 {
		d.Categories[0][c] = fmt.Sprintf("c%02d", c)
	}
	for i := range n {
		c := r.IntN(12)
		d.X[2*i], d.X[2*i+1] = float64(c), r.Float64()
		y := 0.0
		switch {
		case nans && i%17 == 0:
			d.X[2*i] = math.NaN()
			y = 5
			if classes > 0 {
				y = 1
			}
		case inRule[c]:
			y = 10
			if classes > 0 {
				y = 1
			}
		case classes > 2 && (c == 0 || c == 3 || c == 8):
			y = 2
		}
		if classes == 0 {
			// Noise from integers: the same data on every architecture
			// (float products may be fused into FMAs off amd64).
			y += float64(r.IntN(201)-100) / 1000
		}
		d.Y[i] = y
	}
	return d
}

// numericCodes returns d with its categorical column read as numbers (the
// codes), as a learner without categorical support would see it.
func numericCodes(d *data.Dataset) *data.Dataset {
	c := d.Clone()
	c.Categories = nil
	return c
}

// oneHot returns d with its categorical column replaced by one 0/1 column
// per category.
func oneHot(d *data.Dataset) *data.Dataset {
	k := len(d.Categories[0])
	p := d.Cols - 1 + k
	o := &data.Dataset{Rows: d.Rows, Cols: p, X: make([]float64, d.Rows*p), Y: d.Y}
	for i := range d.Rows {
		row := o.X[i*p : (i+1)*p]
		v := d.X[i*d.Cols]
		for c := range k {
			row[c] = 0
			if v == float64(c) {
				row[c] = 1
			}
			if math.IsNaN(v) {
				row[c] = math.NaN()
			}
		}
		copy(row[k:], d.X[i*d.Cols+1:(i+1)*d.Cols])
	}
	return o
}

// r2Depth fits one unbootstrapped tree of the given depth on train and
// returns its R² (or accuracy) on test.
func scoreDepth(t *testing.T, train, test *data.Dataset, task Task, depth int) float64 {
	t.Helper()
	f := fitOrFail(t, train, Options{Task: task, Trees: 1, NoBootstrap: true, MaxDepth: depth, MaxFeatures: "all", Seed: 1})
	x, err := f.FeatureMatrix(test)
	if err != nil {
		t.Fatal(err)
	}
	s, err := f.Score(x, test.Rows, test.Y)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCategoricalRuleNeedsLessDepth: a rule on a set of categories is one
// categorical split, where a threshold on the codes or one-hot columns
// need a deeper tree.
func TestCategoricalRuleNeedsLessDepth(t *testing.T) {
	for _, c := range []struct {
		name    string
		task    Task
		classes int
	}{
		{"regression", Regression, 0},
		{"binary gini", Classification, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			train, test := catData(2000, 1, c.classes, false), catData(500, 2, c.classes, false)
			if s := scoreDepth(t, train, test, c.task, 1); s < 0.99 {
				t.Errorf("categorical, depth 1: score %.4f, want >= 0.99", s)
			}
			if s := scoreDepth(t, numericCodes(train), numericCodes(test), c.task, 1); s > 0.8 {
				t.Errorf("codes as numbers, depth 1: score %.4f, want < 0.8 (the rule is not one threshold)", s)
			}
			oh, ohTest := oneHot(train), oneHot(test)
			if s := scoreDepth(t, oh, ohTest, c.task, 1); s > 0.8 {
				t.Errorf("one-hot, depth 1: score %.4f, want < 0.8", s)
			}
			// One-hot columns isolate one category a level: five levels
			// for the rule's five categories.
			if s := scoreDepth(t, oh, ohTest, c.task, 4); s > 0.99 {
				t.Errorf("one-hot, depth 4: score %.4f, want < 0.99", s)
			}
			if s := scoreDepth(t, oh, ohTest, c.task, 5); s < 0.99 {
				t.Errorf("one-hot, depth 5: score %.4f, want >= 0.99", s)
			}
		})
	}
	t.Run("three classes", func(t *testing.T) {
		// One-vs-rest orderings: class 1's categories, then class 2's.
		train, test := catData(3000, 3, 3, false), catData(600, 4, 3, false)
		if s := scoreDepth(t, train, test, Classification, 2); s < 0.999 {
			t.Errorf("categorical, depth 2: accuracy %.4f, want 1", s)
		}
		if s := scoreDepth(t, oneHot(train), oneHot(test), Classification, 2); s > 0.8 {
			t.Errorf("one-hot, depth 2: accuracy %.4f, want < 0.8", s)
		}
	})
}

// bestSubsetScore returns, by enumeration of every subset of the present
// codes (an independent reference for the ordering rules), the best score
// proxy(left) + proxy(right) of a categorical split of ys by codes: the
// sum of squares over count (regression) or Gini's Σ c² / n per side.
func bestSubsetScore(codes []int, ys []float64, classes int) float64 {
	var present []int
	for _, c := range codes {
		if !slices.Contains(present, c) {
			present = append(present, c)
		}
	}
	slices.Sort(present)
	best := math.Inf(-1)
	for mask := 1; mask < 1<<len(present)-1; mask++ {
		var n [2]float64
		var s [2]float64
		cnt := [2][]float64{make([]float64, max(classes, 1)), make([]float64, max(classes, 1))}
		for i, c := range codes {
			k := slices.Index(present, c)
			side := mask >> k & 1
			n[side]++
			if classes == 0 {
				s[side] += ys[i]
			} else {
				cnt[side][int(ys[i])]++
			}
		}
		score := 0.0
		for side := range 2 {
			if classes == 0 {
				score += s[side] * s[side] / n[side]
			} else {
				sq := 0.0
				for _, v := range cnt[side] {
					sq += v * v
				}
				score += sq / n[side]
			}
		}
		best = max(best, score)
	}
	return best
}

// TestCategoricalSplitIsBestSubset checks the root split against every
// subset of the categories, for regression (Fisher) and two classes
// (Breiman), where the ordering holds the best subset.
func TestCategoricalSplitIsBestSubset(t *testing.T) {
	compared := 0
	defer func() {
		if compared < 30 {
			t.Errorf("compared %d splits of 40, want at least 30", compared)
		}
	}()
	for seed := uint64(1); seed <= 20; seed++ {
		for _, classes := range []int{0, 2} {
			r := rand.New(rand.NewPCG(seed, 0))
			k := 3 + r.IntN(6)
			n := 40 + r.IntN(40)
			d := &data.Dataset{Rows: n, Cols: 1, X: make([]float64, n), Y: make([]float64, n)}
			d.Categories = [][]string{make([]string, k)}
			for c := range k {
				d.Categories[0][c] = fmt.Sprint(c)
			}
			codes := make([]int, n)
			mean := make([]float64, k)
			for c := range mean {
				mean[c] = r.Float64()
			}
			for i := range n {
				codes[i] = r.IntN(k)
				d.X[i] = float64(codes[i])
				if classes == 0 {
					d.Y[i] = float64(int(100 * (mean[codes[i]] + r.Float64())))
				} else if r.Float64() < mean[codes[i]] {
					d.Y[i] = 1
				}
			}
			task := Regression
			if classes > 0 {
				task = Classification
			}
			f := fitOrFail(t, d, Options{Task: task, Trees: 1, NoBootstrap: true, MaxDepth: 1, MaxFeatures: "all"})
			tr := &f.Trees[0]
			if tr.NumNodes() != 3 || tr.Category == nil {
				continue // no split gains (rare): nothing to compare
			}
			set := tr.Sets[0]
			var got float64
			var n2 [2]float64
			var s2 [2]float64
			cnt := [2][2]float64{}
			for i, c := range codes {
				side := 1
				if set.Has(uint8(c)) {
					side = 0
				}
				n2[side]++
				if classes == 0 {
					s2[side] += d.Y[i]
				} else {
					cnt[side][int(d.Y[i])]++
				}
			}
			for side := range 2 {
				if classes == 0 {
					got += s2[side] * s2[side] / n2[side]
				} else {
					got += (cnt[side][0]*cnt[side][0] + cnt[side][1]*cnt[side][1]) / n2[side]
				}
			}
			compared++
			want := bestSubsetScore(codes, d.Y, classes)
			if math.Abs(got-want) > 1e-9*math.Abs(want) {
				t.Errorf("seed %d classes %d: the split scores %v, the best subset %v", seed, classes, got, want)
			}
		}
	}
}

// TestCategoricalUnseenAndMissing: missing values are a category of
// their own; a category the training data lacks (and one absent from a
// node) goes to the side with more weight.
func TestCategoricalUnseenAndMissing(t *testing.T) {
	train := catData(3000, 5, 0, true)
	f := fitOrFail(t, train, Options{Trees: 1, NoBootstrap: true, MaxDepth: 2, MaxFeatures: "all"})
	tr := &f.Trees[0]
	if tr.Category == nil || tr.Category[0] != 0 {
		t.Fatalf("the root does not split the categorical feature: %+v", tr)
	}
	// Rows of the rule's categories, of the others, missing, and of an
	// unseen category (read from a file with its own dictionary).
	csv := "cat,noise\nc01,0.5\nc00,0.5\nNA,0.5\nzzz,0.5\n"
	d, err := data.ReadCSV(strings.NewReader(csv), "p.csv", data.CSVOptions{NoTarget: true})
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.PredictData(d, PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v := p.Values
	if math.Abs(v[0]-10) > 0.1 || math.Abs(v[1]) > 0.1 || math.Abs(v[2]-5) > 0.1 {
		t.Errorf("predictions %v, want about 10, 0, 5, ...", v)
	}
	// The unseen category follows the heavier side of each split: the
	// seven categories with target 0 (and their children) outweigh the rest.
	heavy := 0
	if 2*tr.Weight(int(tr.Left[0])) < tr.Weight(0) {
		heavy = 1
	}
	want := v[1]
	if heavy == 0 && tr.Sets[0].Has(1) || heavy == 1 && !tr.Sets[0].Has(1) {
		want = v[0]
	}
	if v[3] != want {
		t.Errorf("unseen category predicted %v, want %v (the heavier side)", v[3], want)
	}
	if !tr.Sets[0].Has(UnseenCode) == (heavy == 0) {
		t.Errorf("root set %x: unseen code on the light side", tr.Sets[0])
	}
}

// TestCategoricalModelRoundTrip: a categorical forest saves as format
// version 2 with its dictionaries and sets, loads back to the same forest
// and predictions, and is the same whatever the thread count and the
// split path.
func TestCategoricalModelRoundTrip(t *testing.T) {
	for _, c := range []struct {
		name string
		d    *data.Dataset
		opt  Options
	}{
		{"regression", catData(1500, 7, 0, true), Options{Trees: 5, Seed: 3, OOB: true}},
		{"gini 3 classes", catData(1500, 8, 3, true), Options{Task: Classification, Trees: 5, Seed: 4, OOB: true}},
		{"entropy", catData(1500, 9, 2, true), Options{Task: Classification, Criterion: Entropy, Trees: 4, Seed: 5}},
		{"random splitter", catData(1500, 10, 0, true), Options{Trees: 5, Seed: 6, Splitter: Random}},
		{"weighted min leaf", withWeights(catData(1500, 11, 3, true)), Options{Task: Classification, Trees: 4, Seed: 7, MinSamplesLeaf: 5}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var ref *Forest
			for _, th := range []int{1, 2, 3} {
				opt := c.opt
				opt.Threads = th
				f := fitOrFail(t, c.d, opt)
				if ref == nil {
					ref = f
					continue
				}
				if !reflect.DeepEqual(ref.Trees, f.Trees) {
					t.Fatalf("threads=%d grew different trees", th)
				}
			}
			defer func() { pathOverride = "" }()
			for _, path := range []string{"dense", "rows", "columns", "local", "sorted"} {
				pathOverride = path
				f := fitOrFail(t, c.d, c.opt)
				pathOverride = ""
				if !reflect.DeepEqual(ref.Trees, f.Trees) {
					t.Fatalf("path %q grew different trees", path)
				}
			}
			sets := 0
			for i := range ref.Trees {
				sets += len(ref.Trees[i].Sets)
			}
			if sets == 0 {
				t.Fatal("no categorical split")
			}
			var buf bytes.Buffer
			if err := ref.Save(&buf); err != nil {
				t.Fatal(err)
			}
			raw := buf.Bytes()
			if v := raw[len(modelMagic)]; v != 2 {
				t.Errorf("format version %d, want 2", v)
			}
			g, err := Load(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(ref.Trees, g.Trees) || !reflect.DeepEqual(ref.Binner.Categories, g.Binner.Categories) {
				t.Error("the loaded forest differs")
			}
			x, _ := ref.FeatureMatrix(c.d)
			p1, _ := ref.PredictValues(x, c.d.Rows)
			p2, _ := g.PredictValues(x, c.d.Rows)
			if !slices.Equal(p1, p2) {
				t.Error("the loaded forest predicts differently")
			}
			// The compiled predictor agrees with walking the trees.
			codes := ref.Binner.Transform(x, c.d.Rows, 2, nil)
			miss := ref.missCodes()
			d := ref.Outputs()
			for i := range c.d.Rows {
				sum := make([]float64, d)
				for ti := range ref.Trees {
					tr := &ref.Trees[ti]
					l := tr.leafCodes(codes[2*i:2*i+2], miss)
					for q := range d {
						sum[q] += tr.Value[l*d+q]
					}
				}
				for q := range d {
					if got := p1[i*d+q]; math.Abs(got-sum[q]/float64(len(ref.Trees))) > 1e-12 {
						t.Fatalf("row %d: predictor %v, tree walk %v", i, got, sum[q]/float64(len(ref.Trees)))
					}
				}
			}
			var again bytes.Buffer
			if err := g.Save(&again); err != nil || !bytes.Equal(raw, again.Bytes()) {
				t.Errorf("saving the loaded forest gives other bytes (err %v)", err)
			}
		})
	}
}

// withWeights gives d integer sample weights 1..3.
func withWeights(d *data.Dataset) *data.Dataset {
	d.Weights = make([]float64, d.Rows)
	for i := range d.Weights {
		d.Weights[i] = float64(1 + bits.OnesCount(uint(i))%3)
	}
	return d
}

// TestCategoricalModelErrors: damaged categorical parts of a model file
// are refused with a clear error.
func TestCategoricalModelErrors(t *testing.T) {
	f := fitOrFail(t, catData(500, 12, 0, false), Options{Trees: 2, Seed: 1})
	for _, c := range []struct {
		name   string
		mutate func(f *Forest)
		want   string
	}{
		{"unsorted dictionary", func(f *Forest) { f.Binner.Categories[0][0], f.Binner.Categories[0][1] = "c01", "c00" }, "not in increasing order"},
		{"edges", func(f *Forest) { f.Binner.Edges[0] = f.Binner.Edges[0][1:] }, "bin edges"},
		{"set missing", func(f *Forest) { f.Trees[0].Sets = nil }, "category sets"},
		{"missing left", func(f *Forest) {
			tr := &f.Trees[0]
			if err := tr.SetSplit(0, int(tr.Feature[0]), tr.Bin(0), !tr.MissingLeft(0), int(tr.Left[0]), tr.Gain(0)); err != nil {
				t.Fatal(err)
			}
		}, "missing_left"},
		{"index", func(f *Forest) {
			// Two nodes keep their sets but swap their indices: out of node order.
			tr := &f.Trees[0]
			n1 := slices.Index(tr.Category, 1)
			tr.Category[0], tr.Category[n1] = 1, 0
			tr.Sets[0], tr.Sets[1] = tr.Sets[1], tr.Sets[0]
		}, "node order"},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := *f
			g.Binner = &Binner{Edges: slices.Clone(f.Binner.Edges), Categories: [][]string{slices.Clone(f.Binner.Categories[0]), nil}}
			g.Trees = slices.Clone(f.Trees)
			g.Trees[0] = wideClone(f.Trees[0]).narrow(g.Binner.Edges)
			c.mutate(&g)
			err := g.Save(&bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Save = %v, want an error with %q", err, c.want)
			}
		})
	}
}

// TestCategoricalThreshold: a categorical split's threshold in a model
// file must be 0 (a Tree reads none: its set decides).
func TestCategoricalThreshold(t *testing.T) {
	f := fitOrFail(t, catData(500, 12, 0, false), Options{Trees: 2, Seed: 1})
	w := wideClone(f.Trees[0])
	if w.Category == nil || w.Category[0] < 0 {
		t.Fatal("the root does not split the categorical feature")
	}
	if err := f.checkWide(0, w, maxTreeDepth); err != nil {
		t.Fatal(err)
	}
	w.Threshold[0] = 1
	var buf bytes.Buffer
	if err := f.encodeTrees(&buf, func(k int) (*wideTree, error) {
		if k == 0 {
			return w, nil
		}
		return f.Trees[k].widen()
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(&buf); err == nil || !strings.Contains(err.Error(), "tree 0 node 0: categorical split with threshold 1, want 0") {
		t.Errorf("Load = %v, want an error about the threshold", err)
	}
}

// TestCategoricalTrainErrors: bad categorical training data is refused.
func TestCategoricalTrainErrors(t *testing.T) {
	d := catData(100, 1, 0, false)
	d.X[0] = data.Unseen
	if _, err := Fit(d, Options{Trees: 1}); err == nil || !strings.Contains(err.Error(), `row 1, feature "cat"`) {
		t.Errorf("Unseen in training: %v", err)
	}
	d = catData(100, 1, 0, false)
	d.Categories[0] = make([]string, 300)
	for c := range d.Categories[0] {
		d.Categories[0][c] = fmt.Sprintf("%03d", c)
	}
	if _, err := Fit(d, Options{Trees: 1}); err == nil || !strings.Contains(err.Error(), "300 categories") {
		t.Errorf("300 categories: %v", err)
	}
	d = catData(100, 1, 0, false)
	d.X[2] = 12.5
	if _, err := Fit(d, Options{Trees: 1}); err == nil || !strings.Contains(err.Error(), "row 2") {
		t.Errorf("a value outside the dictionary: %v", err)
	}
}

// TestFeatureMatrixSourceAndText: FeatureMatrix reads a data set opened a
// column at a time, and refuses text in a numeric feature naming a value.
func TestFeatureMatrixSourceAndText(t *testing.T) {
	d := catData(100, 1, 0, true)
	f := fitOrFail(t, d, Options{Trees: 2, Seed: 1})
	want, err := f.FeatureMatrix(d)
	if err != nil {
		t.Fatal(err)
	}
	l, _ := lazy(d)
	got, err := f.FeatureMatrix(l)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(got, want, func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }) {
		t.Error("the matrix of the data set read a column at a time differs")
	}
	in, err := data.ReadCSV(strings.NewReader("cat,noise\nc01,0.5\nc02,12;5\n"), "in.csv", data.CSVOptions{NoTarget: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.FeatureMatrix(in); err == nil || !strings.Contains(err.Error(), `in.csv: column "noise" holds categories (values that are not numbers, such as "12;5")`) {
		t.Errorf("err = %v, want the refusal naming the text value", err)
	}
}

// TestCmpFractions checks the exact comparison of categorical ordering
// keys where float64 quotients would tie.
func TestCmpFractions(t *testing.T) {
	const big = 1 << 53
	for _, c := range []struct {
		a, b, c, d int64
		want       int
	}{
		{big + 1, 1, big, 1, 1},    // float64(2^53+1) == 2^53
		{-big - 1, 1, -big, 1, -1}, // negative sums: the larger magnitude is less
		{big + 1, 3, big, 3, 1},
		{1, 3, 2, 6, 0},
		{0, 5, -1, 7, 1},
		{-1, 7, 0, 5, -1},
		{0, 5, 0, 9, 0},
		{math.MinInt64, 1, math.MinInt64 + 1, 1, -1},
		{math.MaxInt64, 2, math.MaxInt64 - 1, 2, 1},
	} {
		if got := cmpFractions(c.a, c.b, c.c, c.d); got != c.want {
			t.Errorf("cmpFractions(%d/%d, %d/%d) = %d, want %d", c.a, c.b, c.c, c.d, got, c.want)
		}
		if got := cmpFractions(c.c, c.d, c.a, c.b); got != -c.want {
			t.Errorf("cmpFractions(%d/%d, %d/%d) = %d, want %d", c.c, c.d, c.a, c.b, got, -c.want)
		}
	}
}

// TestCategoricalAbsentCodesFollowHeavierSide routes the training rows of
// each tree through every categorical node: the codes no row of the node
// holds — other categories, the missing code when training had no
// missing value there, UnseenCode — must be on the side with more weight
// (left on a tie), and the codes present where the rows went.
func TestCategoricalAbsentCodesFollowHeavierSide(t *testing.T) {
	for _, c := range []struct {
		name string
		d    *data.Dataset
		opt  Options
	}{
		{"regression no missing", catData(1500, 41, 0, false), Options{Trees: 3, Seed: 1, NoBootstrap: true}},
		{"gini 3 classes missing", catData(1500, 42, 3, true), Options{Task: Classification, Trees: 3, Seed: 2, NoBootstrap: true}},
		{"random splitter", catData(1500, 43, 0, true), Options{Trees: 3, Seed: 3, Splitter: Random, NoBootstrap: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := fitOrFail(t, c.d, c.opt)
			x, err := f.FeatureMatrix(c.d)
			if err != nil {
				t.Fatal(err)
			}
			codes := f.Binner.Transform(x, c.d.Rows, c.d.Cols, nil)
			miss := f.missCodes()
			checked := 0
			for ti := range f.Trees {
				tr := &f.Trees[ti]
				// present[i]: the codes of the categorical feature among node i's rows.
				present := make([]CategorySet, tr.NumNodes())
				for r := 0; r < c.d.Rows; r++ {
					row := codes[r*c.d.Cols : (r+1)*c.d.Cols]
					for i := int32(0); tr.Feature[i] >= 0; {
						f := tr.Feature[i]
						if tr.Category != nil && tr.Category[i] >= 0 {
							present[i].add(row[f])
						}
						if tr.goesLeft(i, row[f], miss[f]) {
							i = tr.Left[i]
						} else {
							i = tr.Left[i] + 1
						}
					}
				}
				for i := range tr.Feature {
					if tr.Category == nil || tr.Category[i] < 0 {
						continue
					}
					set := tr.Sets[tr.Category[i]]
					heavyLeft := 2*tr.Weight(int(tr.Left[i])) >= tr.Weight(i)
					for code := 0; code < 256; code++ {
						if present[i].Has(uint8(code)) {
							continue
						}
						checked++
						if set.Has(uint8(code)) != heavyLeft {
							t.Fatalf("tree %d node %d: absent code %d goes left %v, the heavier side is left %v", ti, i, code, !heavyLeft, heavyLeft)
						}
					}
				}
			}
			if checked == 0 {
				t.Fatal("no categorical node checked")
			}
		})
	}
}

// TestTinyCategoricalPathAgrees: the stack-array scan of small regression
// nodes (scanTinyRegression) gives the trees of the general path, on
// targets with many equal category means (ties of the ordering), missing
// values, sample weights and minimum leaf sizes.
func TestTinyCategoricalPathAgrees(t *testing.T) {
	d := catData(1500, 31, 0, true)
	for i := range d.Y {
		d.Y[i] = float64(i % 3) // integer targets: many tied means
		if int(d.X[2*i])%4 == 0 {
			d.Y[i] = 2
		}
	}
	w := d.Clone()
	w.Weights = make([]float64, w.Rows)
	for i := range w.Weights {
		w.Weights[i] = float64(1 + i%4)
	}
	for _, c := range []struct {
		name string
		d    *data.Dataset
		opt  Options
	}{
		{"ties", d, Options{Task: Regression, Trees: 6, Seed: 1}},
		{"ties-leaf2", d, Options{Task: Regression, Trees: 6, Seed: 2, MinSamplesLeaf: 2}},
		{"weights", w, Options{Task: Regression, Trees: 6, Seed: 3, MinWeightFractionLeaf: 0.001}},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func() { tinyRows = tinyNode }()
			if !fitsAgree(t, c.d, c.opt, func(small bool) {
				tinyRows = 0 // the general path for every node
				if small {
					tinyRows = tinyNode
				}
			}) {
				t.Fatal("the small-node scan grows other trees than the general path")
			}
		})
	}
}

// TestCutsBoundKeepsTrees checks that skipping the categorical features
// whose bound (cutsBound) is below the best score so far grows the trees a
// scan of every feature grows: regression, two and three classes, weights,
// missing values, several categorical features competing with numeric
// ones.
func TestCutsBoundKeepsTrees(t *testing.T) {
	wide := func(classes int, seed uint64) *data.Dataset {
		// catData's rule column, plus three categorical columns of 2, 5
		// and 30 levels that carry part of the signal, and the noise.
		d := catData(3000, seed, classes, true)
		r := rand.New(rand.NewPCG(seed, 1))
		n, cols := d.Rows, 5
		x := make([]float64, n*cols)
		levels := []int{0, 2, 5, 30, 0}
		cats := make([][]string, cols)
		for j, k := range levels {
			for c := range k {
				cats[j] = append(cats[j], fmt.Sprintf("l%02d", c))
			}
		}
		cats[0] = d.Categories[0]
		for i := range n {
			x[i*cols] = d.X[2*i]
			y := int(d.Y[i])
			for j := 1; j <= 3; j++ {
				c := r.IntN(levels[j])
				if r.IntN(3) == 0 { // a third of the rows follow the target
					c = (y * 7) % levels[j]
				}
				x[i*cols+j] = float64(c)
			}
			x[i*cols+4] = d.X[2*i+1]
		}
		d.X, d.Cols, d.Categories = x, cols, cats
		d.FeatureNames = []string{"rule", "two", "five", "thirty", "noise"}
		return d
	}
	w := wide(3, 44)
	w.Weights = make([]float64, w.Rows)
	for i := range w.Weights {
		w.Weights[i] = float64(1+i%5) / 2
	}
	for _, c := range []struct {
		name string
		d    *data.Dataset
		opt  Options
	}{
		{"regression", wide(0, 41), Options{Task: Regression, Trees: 8, Seed: 1, MaxFeatures: "sqrt"}},
		{"regression-all-features", wide(0, 41), Options{Task: Regression, Trees: 4, Seed: 2}},
		{"two-classes", wide(2, 42), Options{Task: Classification, Trees: 8, Seed: 3}},
		{"three-classes", wide(3, 43), Options{Task: Classification, Trees: 8, Seed: 4}},
		{"three-classes-weighted", w, Options{Task: Classification, Trees: 8, Seed: 5, MinSamplesLeaf: 2}},
		{"digits", categoricalPixels(loadEmbedded(t, "digits"), 32), Options{Task: Classification, Trees: 6, Seed: 6}},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func() { cutsBounded = true }()
			if !fitsAgree(t, c.d, c.opt, func(on bool) { cutsBounded = on }) {
				t.Fatal("skipping features by their cut bound grows other trees than scanning them")
			}
		})
	}
}

// TestCutsBound checks cutsBound against every cut of random code
// statistics, scored by enumeration of the subsets: no cut, of any order,
// scores above the bound (regression and Gini).
func TestCutsBound(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for trial := range 300 {
		m := 2 + r.IntN(7)
		classes := []int{0, 2, 4}[trial%3]
		stride := 3
		b := &builder{}
		if classes > 0 {
			stride = 2 + classes
			b.cls = []int32{0}
			for q := range classes {
				b.catClasses = append(b.catClasses, 2+q)
			}
		}
		b.stride = stride
		b.catCodes = make([]uint8, m)
		b.catStats = make([]int64, m*stride)
		for i := range m {
			e := b.catStats[i*stride : (i+1)*stride]
			e[0] = 1 + r.Int64N(50)
			if classes == 0 {
				e[1] = e[0] * (1 + r.Int64N(3))
				e[2] = r.Int64N(2001) - 1000
			} else {
				for q := range classes {
					e[2+q] = r.Int64N(40)
					e[1] += e[2+q]
				}
				if e[1] == 0 {
					e[2], e[1] = 1, 1
				}
			}
		}
		bound := b.cutsBound(nil)
		for mask := 1; mask < 1<<m-1; mask++ {
			var score float64
			for _, left := range []bool{true, false} {
				sums := make([]float64, stride)
				for i := range m {
					if (mask>>i&1 == 1) == left {
						for x := range stride {
							sums[x] += float64(b.catStats[i*stride+x])
						}
					}
				}
				if classes == 0 {
					score += sums[2] * sums[2] / sums[1]
				} else {
					for q := range classes {
						score += sums[2+q] * sums[2+q] / sums[1]
					}
				}
			}
			if score > bound {
				t.Fatalf("trial %d: cut %b scores %v above the bound %v", trial, mask, score, bound)
			}
		}
	}
}

// fitsAgree fits d with opt after set(true) and again after set(false) (a
// switch of the learner's that a test turns) and reports whether the two
// model files are the same bytes.
func fitsAgree(t *testing.T, d *data.Dataset, opt Options, set func(on bool)) bool {
	t.Helper()
	var files [2][]byte
	for k, on := range []bool{true, false} {
		set(on)
		f, err := Fit(d, opt)
		if err != nil {
			t.Fatal(err)
		}
		files[k] = saveBytes(t, f)
	}
	return bytes.Equal(files[0], files[1])
}

// TestNumericSet checks numericSet's words against its definition: codes
// 0..bin, and the missing code when the split sends it left.
func TestNumericSet(t *testing.T) {
	for bin := 0; bin < 256; bin++ {
		for _, ml := range []bool{false, true} {
			mc := uint8(255 - bin%7)
			got := numericSet(uint8(bin), ml, mc)
			for c := 0; c < 256; c++ {
				want := c <= bin || (ml && c == int(mc))
				if got.Has(uint8(c)) != want {
					t.Fatalf("bin %d, missing left %v: code %d in the set %v, want %v", bin, ml, c, got.Has(uint8(c)), want)
				}
			}
		}
	}
}
