package forestgraph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/forest"
)

// testSet is a training set and the rows to predict.
type testSet struct {
	name string
	ds   *data.Dataset
	task forest.Task
}

// embedded returns an embedded data set.
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
				v = float64(r.IntN(5)) - 2 // includes 0 (and −0 below)
			}
			if j == 1 && v == 0 {
				v = math.Copysign(0, -1)
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

// queryRows returns n rows to predict: training rows, perturbed copies,
// values outside the training range, exact bin edges (and their neighbours),
// NaNs, and ±0.
func queryRows(f *forest.Forest, ds *data.Dataset, n int, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 7))
	p := ds.Cols
	x := make([]float64, n*p)
	for i := range n {
		src := ds.X[(i%ds.Rows)*p : (i%ds.Rows+1)*p]
		row := x[i*p : (i+1)*p]
		copy(row, src)
		if i < ds.Rows {
			continue
		}
		for j := range row {
			edges := f.Binner.Edges[j]
			switch k := r.IntN(10); {
			case k == 0:
				row[j] = math.NaN()
			case k == 1 && len(edges) > 0:
				e := edges[r.IntN(len(edges))]
				row[j] = []float64{e, math.Nextafter(e, math.Inf(1)), math.Nextafter(e, math.Inf(-1))}[r.IntN(3)]
			case k == 2:
				row[j] = []float64{0, math.Copysign(0, -1), 1e300, -1e300, math.Inf(1), math.Inf(-1)}[r.IntN(6)]
			case k < 6:
				row[j] += r.NormFloat64()
			}
		}
	}
	return x
}

// sameBits reports the first index where got and want differ in their bits.
func sameBits(got, want []float64) (int, bool) {
	if len(got) != len(want) {
		return -1, false
	}
	for i := range got {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			return i, false
		}
	}
	return 0, true
}

// checkPredictor compares the graph predictor of f with the CPU one on x.
func checkPredictor(t *testing.T, name string, p *Predictor, f *forest.Forest, x []float64, rows int) {
	t.Helper()
	want, err := f.PredictValues(x, rows)
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.PredictValues(x, rows)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if i, ok := sameBits(got, want); !ok {
		if i < 0 {
			t.Fatalf("%s: %d values, want %d", name, len(got), len(want))
		}
		t.Fatalf("%s: value %d (row %d) is %v (%#x) on the graph, %v (%#x) on the CPU", name, i, i/f.Outputs(),
			got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]))
	}
	wantP, err := f.Predict(x, rows)
	if err != nil {
		t.Fatal(err)
	}
	gotP, err := p.Predict(x, rows)
	if err != nil {
		t.Fatalf("%s: Predict: %v", name, err)
	}
	if i, ok := sameBits(gotP, wantP); !ok {
		t.Fatalf("%s: Predict differs at row %d", name, i)
	}
}

func TestPredictorMatchesCPU(t *testing.T) {
	b := openTestBackend(t)
	// The issue asks for 10,000 rows; each set checks them once (the first
	// options and seed), and 2,000 rows otherwise and under -short.
	sets := []testSet{
		{"diabetes", embedded(t, "diabetes"), forest.Regression},
		{"digits", embedded(t, "digits"), forest.Classification},
		{"nan-regression", synthetic(600, 8, false, 3), forest.Regression},
		{"nan-classification", synthetic(600, 8, true, 4), forest.Classification},
	}
	opts := []struct {
		name string
		opt  forest.Options
	}{
		{"depth8", forest.Options{Trees: 20, MaxDepth: 8}},
		{"depth5-bins16-entropy", forest.Options{Trees: 13, MaxDepth: 5, Bins: 16, MaxFeatures: "0.5", MinSamplesLeaf: 3}},
	}
	for _, s := range sets {
		for oi, o := range opts {
			for _, seed := range []uint64{1, 2} {
				opt := o.opt
				opt.Task, opt.Seed, opt.Threads = s.task, seed+uint64(oi)*10, 2
				if oi == 1 && s.task == forest.Classification {
					opt.Criterion = forest.Entropy
				}
				f, err := forest.Fit(s.ds, opt)
				if err != nil {
					t.Fatal(err)
				}
				rows := 2000
				if oi == 0 && seed == 1 && !testing.Short() {
					rows = 10000
				}
				x := queryRows(f, s.ds, rows, seed)
				for _, st := range []Strategy{Gather, Perfect} {
					name := fmt.Sprintf("%s/%s/seed=%d/%s", s.name, o.name, opt.Seed, st)
					p, err := NewPredictorWithOptions(b, f, 4096, Options{Strategy: st})
					if err != nil {
						t.Fatal(err)
					}
					checkPredictor(t, name, p, f, x, rows)
					p.Close()
				}
			}
		}
	}
}

func TestPredictorSavedModel(t *testing.T) {
	b := openTestBackend(t)
	ds := synthetic(500, 6, true, 8)
	f, err := forest.Fit(ds, forest.Options{Task: forest.Classification, Trees: 20, MaxDepth: 8, Seed: 5, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "model.gtf")
	if err := f.SaveFile(path); err != nil {
		t.Fatal(err)
	}
	g, err := forest.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rows := 3000
	x := queryRows(f, ds, rows, 1)
	p, err := NewPredictor(b, g, 1000)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	checkPredictor(t, "loaded model vs loaded model", p, g, x, rows)
	checkPredictor(t, "loaded model vs fitted model", p, f, x, rows)
}

// TestPredictorEdgeCases uses a hand-made forest with a −0 edge, a split at
// the last real bin and one at the missing code, trees of different depths
// (one a lone leaf), −0 leaf values, batches that do not divide the rows, and
// an unlimited-depth forest.
func TestPredictorEdgeCases(t *testing.T) {
	b := openTestBackend(t)
	negZero := math.Copysign(0, -1)
	bn := &forest.Binner{Edges: [][]float64{{-1, negZero, 2}, {0.5}}}
	// tree returns a tree of the given values whose splits are
	// {node, feature, bin, missing left, left child}.
	tree := func(values []float64, splits ...[5]int) forest.Tree {
		tr, err := forest.NewTree(len(values), 1, bn.Edges)
		if err != nil {
			t.Fatal(err)
		}
		copy(tr.Value, values)
		for i := range values {
			tr.SetCounts(i, 1, 1)
		}
		for _, s := range splits {
			if err := tr.SetSplit(s[0], s[1], uint8(s[2]), s[3] == 1, s[4], 1); err != nil {
				t.Fatal(err)
			}
		}
		return tr
	}
	leaf := func(v float64) forest.Tree { return tree([]float64{v}) }
	split := func(feat int, bin int, missLeft bool, l, r float64) forest.Tree {
		ml := 0
		if missLeft {
			ml = 1
		}
		return tree([]float64{0, l, r}, [5]int{0, feat, bin, ml, 1})
	}
	// root on feature 0 bin 1 (edge −0); left child on feature 1 bin 0, missing left
	deep := tree([]float64{0, 0, 10, 0.25, negZero}, [5]int{0, 0, 1, 0, 1}, [5]int{1, 1, 0, 1, 3})
	f := &forest.Forest{
		Options:     forest.Options{Task: forest.Regression, Trees: 6, Threads: 1},
		NumFeatures: 2, Binner: bn, OOBScore: math.NaN(),
		Trees: []forest.Tree{
			split(0, 1, false, negZero, 1), // −0 leaf value first
			leaf(negZero),
			split(0, 3, false, 5, 7),  // bin 3 = the last real bin: every number goes left
			split(0, 4, false, 3, -3), // bin 4 = the missing code: NaN goes left too
			deep,
			split(1, 0, true, 0.125, 1e10),
		},
	}
	vals := []float64{math.NaN(), negZero, 0, -math.SmallestNonzeroFloat64, math.SmallestNonzeroFloat64,
		-1, math.Nextafter(-1, 0), 2, 3, 0.5, 0.6, math.Inf(1), math.Inf(-1), -5}
	var x []float64
	for _, a := range vals {
		for _, c := range vals {
			x = append(x, a, c)
		}
	}
	rows := len(x) / 2
	for _, st := range []Strategy{Gather, Perfect} {
		for _, batch := range []int{1, 7, rows, rows + 5} {
			p, err := NewPredictorWithOptions(b, f, batch, Options{Strategy: st})
			if err != nil {
				t.Fatal(err)
			}
			checkPredictor(t, fmt.Sprintf("%s/batch=%d", st, batch), p, f, x, rows)
			p.Close()
		}
	}

	// Every tree ends in −0: the CPU's sum starts from 0, so the mean is +0.
	z := &forest.Forest{Options: forest.Options{Task: forest.Regression, Trees: 3, Threads: 1}, NumFeatures: 2, Binner: bn,
		OOBScore: math.NaN(), Trees: []forest.Tree{leaf(negZero), split(1, 0, false, negZero, negZero), leaf(negZero)}}
	for _, st := range []Strategy{Gather, Perfect} {
		p, err := NewPredictorWithOptions(b, z, 4, Options{Strategy: st})
		if err != nil {
			t.Fatal(err)
		}
		checkPredictor(t, fmt.Sprintf("all −0/%s", st), p, z, x, rows)
		p.Close()
	}

	// An unlimited-depth forest: Auto must pick Gather when the perfect
	// trees would be too large.
	ds := embedded(t, "diabetes")
	fd, err := forest.Fit(ds, forest.Options{Task: forest.Regression, Trees: 10, Seed: 3, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPredictor(b, fd, 500)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.Depth() > 16 && p.Strategy() != Gather {
		t.Errorf("depth %d: strategy %s, want gather", p.Depth(), p.Strategy())
	}
	checkPredictor(t, "unlimited depth", p, fd, queryRows(fd, ds, 1500, 2), 1500)
}

func TestPredictorErrors(t *testing.T) {
	b := openTestBackend(t)
	ds := synthetic(100, 3, false, 1)
	f, err := forest.Fit(ds, forest.Options{Task: forest.Regression, Trees: 3, MaxDepth: 3, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewPredictor(nil, f, 10); err == nil {
		t.Error("nil backend accepted")
	}
	if _, err := NewPredictor(b, f, 0); err == nil {
		t.Error("0 rows per batch accepted")
	}
	if _, err := NewPredictor(b, &forest.Forest{}, 10); err == nil {
		t.Error("empty forest accepted")
	}
	if _, err := NewPredictorWithOptions(b, f, 10, Options{Strategy: "walk"}); err == nil {
		t.Error("unknown strategy accepted")
	}
	p, err := NewPredictor(b, f, 10)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.PredictValues(make([]float64, 5), 2); err == nil {
		t.Error("5 values for 2 rows of 3 features accepted")
	}
	if err := p.Compile(); err != nil {
		t.Fatal(err)
	}
	if got, err := p.PredictValues(nil, 0); err != nil || len(got) != 0 {
		t.Errorf("0 rows: %v, %v", got, err)
	}
	p.Close()
	if _, err := p.PredictValues(make([]float64, 3), 1); err == nil {
		t.Error("prediction after Close accepted")
	}
}
