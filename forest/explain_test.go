package forest

import (
	"bytes"
	"encoding/csv"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/data"
)

// bruteCondExp is a tree's expected output given the features in set:
// at a node on a feature of set the row's branch, else both branches
// weighted by their rows' weights (the path-dependent value function of
// TreeSHAP, computed directly).
func bruteCondExp(t *Tree, node int, codes, miss []uint8, set uint, d int) []float64 {
	f := int(t.Feature[node])
	if f < 0 {
		return t.Value[node*d : (node+1)*d]
	}
	l := int(t.Left[node])
	if set&(1<<f) != 0 {
		c := codes[f]
		left := c <= t.Bin(node) || (c == miss[f] && t.MissingLeft(node))
		if t.Category != nil && t.Category[node] >= 0 {
			left = t.Sets[t.Category[node]][c/64]>>(c%64)&1 == 1
		}
		if left {
			return bruteCondExp(t, l, codes, miss, set, d)
		}
		return bruteCondExp(t, l+1, codes, miss, set, d)
	}
	a, b := bruteCondExp(t, l, codes, miss, set, d), bruteCondExp(t, l+1, codes, miss, set, d)
	wl, wr, w := float64(t.Weight(l)), float64(t.Weight(l+1)), float64(t.Weight(node))
	out := make([]float64, d)
	for q := range out {
		out[q] = (wl*a[q] + wr*b[q]) / w
	}
	return out
}

// bruteSHAP returns the Shapley values (p x d, feature j's to output q at
// [q*p+j]) and the empty set's value of the forest's mean output for one
// row, by enumerating every subset of the p features.
func bruteSHAP(f *Forest, row []float64) (phi, base []float64) {
	p, d := f.NumFeatures, f.Outputs()
	codes, miss := make([]uint8, p), make([]uint8, p)
	for j := range codes {
		codes[j], miss[j] = f.Binner.Code(j, row[j]), f.Binner.MissingCode(j)
	}
	v := make([][]float64, 1<<p) // v[S]: the forest's mean output given S
	for s := range v {
		v[s] = make([]float64, d)
		for k := range f.Trees {
			for q, x := range bruteCondExp(&f.Trees[k], 0, codes, miss, uint(s), d) {
				v[s][q] += x / float64(len(f.Trees))
			}
		}
	}
	fact := func(n int) float64 {
		r := 1.0
		for i := 2; i <= n; i++ {
			r *= float64(i)
		}
		return r
	}
	phi = make([]float64, p*d)
	for j := 0; j < p; j++ {
		for s := 0; s < 1<<p; s++ {
			if s&(1<<j) != 0 {
				continue
			}
			size := 0
			for b := s; b != 0; b &= b - 1 {
				size++
			}
			w := fact(size) * fact(p-size-1) / fact(p)
			for q := 0; q < d; q++ {
				phi[q*p+j] += w * (v[s|1<<j][q] - v[s][q])
			}
		}
	}
	return phi, v[0]
}

// shapData returns a small data set of p features with a target that
// depends on several of them (classes for classification), with some
// missing values.
func shapData(n, p int, classes int, seed uint64) *data.Dataset {
	r := rand.New(rand.NewPCG(seed, 7))
	d := &data.Dataset{Name: "shap", Rows: n, Cols: p, X: make([]float64, n*p), Y: make([]float64, n)}
	for j := 0; j < p; j++ {
		d.FeatureNames = append(d.FeatureNames, "x"+strconv.Itoa(j))
	}
	for i := 0; i < n; i++ {
		row := d.X[i*p : (i+1)*p]
		for j := range row {
			row[j] = math.Round(r.NormFloat64()*4) / 2
			if r.IntN(15) == 0 {
				row[j] = math.NaN()
			}
		}
		y := 2*row[0] - row[1] + row[0]*row[2] + r.NormFloat64()*0.3
		if math.IsNaN(y) {
			y = 1
		}
		if classes > 0 {
			y = float64(int(math.Abs(y)) % classes)
		}
		d.Y[i] = y
	}
	return d
}

// TestSHAPMatchesBruteForce checks TreeSHAP against Shapley values
// computed by enumerating every subset of features on small forests:
// regression and three classes, rows with missing values included, and
// that the contributions plus the expected value give the prediction.
func TestSHAPMatchesBruteForce(t *testing.T) {
	cases := []struct {
		name    string
		classes int
		opt     Options
		cat     bool // feature 0 categorical
	}{
		{"regression", 0, Options{Trees: 4, MaxDepth: 6, Seed: 3}, false},
		{"regression-deep", 0, Options{Trees: 2, Seed: 5, MaxFeatures: "2"}, false},
		{"classification", 3, Options{Task: Classification, Trees: 4, MaxDepth: 5, Seed: 1}, false},
		{"categorical regression", 0, Options{Trees: 4, MaxDepth: 6, Seed: 3}, true},
		{"categorical classification", 3, Options{Task: Classification, Trees: 4, MaxDepth: 5, Seed: 1}, true},
	}
	categorical := func(d *data.Dataset) *data.Dataset {
		d.Categories = make([][]string, d.Cols)
		d.Categories[0] = []string{"a", "b", "c", "d", "e", "f"}
		for i := 0; i < d.Rows; i++ {
			if v := &d.X[i*d.Cols]; !math.IsNaN(*v) {
				*v = float64(int(math.Abs(*v)*1000) % 6)
			}
		}
		return d
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			const p = 5
			ds := shapData(300, p, tc.classes, 11)
			if tc.cat {
				ds = categorical(ds)
			}
			f, err := Fit(ds, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			test := shapData(25, p, tc.classes, 12)
			if tc.cat {
				test = categorical(test)
				sets := 0
				for k := range f.Trees {
					sets += len(f.Trees[k].Sets)
				}
				if sets == 0 {
					t.Fatal("no categorical split")
				}
			}
			ex, err := f.SHAP(test.X, test.Rows)
			if err != nil {
				t.Fatal(err)
			}
			pred, err := f.PredictValues(test.X, test.Rows)
			if err != nil {
				t.Fatal(err)
			}
			d := f.Outputs()
			for i := 0; i < test.Rows; i++ {
				phi, base := bruteSHAP(f, test.Row(i))
				for q := 0; q < d; q++ {
					if got := ex.Expected[q]; math.Abs(got-base[q]) > 1e-9*(1+math.Abs(base[q])) {
						t.Fatalf("expected value %d = %v, brute force %v", q, got, base[q])
					}
					sum := ex.Expected[q]
					for j := 0; j < p; j++ {
						got, want := ex.Values[(i*d+q)*p+j], phi[q*p+j]
						if math.Abs(got-want) > 1e-9*(1+math.Abs(want)) {
							t.Fatalf("row %d output %d feature %d: SHAP %v, brute force %v", i, q, j, got, want)
						}
						sum += got
					}
					if want := pred[i*d+q]; math.Abs(sum-want) > 1e-9*(1+math.Abs(want)) {
						t.Fatalf("row %d output %d: contributions + expected = %v, prediction %v", i, q, sum, want)
					}
				}
			}
		})
	}
}

// TestSHAPAdditivityDiabetes checks that the contributions plus the
// expected value equal the prediction within 1e-9 on every diabetes row,
// with trees too deep to enumerate, at 1 and 3 threads alike.
func TestSHAPAdditivityDiabetes(t *testing.T) {
	d, err := data.Diabetes()
	if err != nil {
		t.Fatal(err)
	}
	f, err := Fit(d, Options{Trees: 10, MaxDepth: 12, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := f.SHAP(d.X, d.Rows)
	if err != nil {
		t.Fatal(err)
	}
	pred, err := f.PredictValues(d.X, d.Rows)
	if err != nil {
		t.Fatal(err)
	}
	p := f.NumFeatures
	for i := 0; i < d.Rows; i++ {
		sum := ex.Expected[0]
		for _, v := range ex.Values[i*p : (i+1)*p] {
			sum += v
		}
		if math.Abs(sum-pred[i]) > 1e-9*(1+math.Abs(pred[i])) {
			t.Fatalf("row %d: contributions + expected = %v, prediction %v", i, sum, pred[i])
		}
	}
	// A weighted forest's covers are its weights in fixed point: the same
	// additivity.
	wd := *d
	wd.Weights = make([]float64, d.Rows)
	for i := range wd.Weights {
		wd.Weights[i] = 0.25 + float64(i%7)/3
	}
	fw, err := Fit(&wd, Options{Trees: 5, MaxDepth: 10})
	if err != nil {
		t.Fatal(err)
	}
	exw, err := fw.SHAP(d.X, d.Rows)
	if err != nil {
		t.Fatal(err)
	}
	predw, _ := fw.PredictValues(d.X, d.Rows)
	for i := 0; i < d.Rows; i++ {
		sum := exw.Expected[0]
		for _, v := range exw.Values[i*p : (i+1)*p] {
			sum += v
		}
		if math.Abs(sum-predw[i]) > 1e-9*(1+math.Abs(predw[i])) {
			t.Fatalf("weighted forest, row %d: contributions + expected = %v, prediction %v", i, sum, predw[i])
		}
	}
	f.Options.Threads = 3
	ex3, err := f.SHAP(d.X, d.Rows)
	if err != nil {
		t.Fatal(err)
	}
	for k := range ex.Values {
		if ex.Values[k] != ex3.Values[k] {
			t.Fatalf("value %d: %v with 1 thread, %v with 3", k, ex.Values[k], ex3.Values[k])
		}
	}
}

// TestExplanationCSV checks the header and values that WriteCSV writes
// and ExplainFile's reading of a model and a CSV file, and that WriteFile
// leaves an existing file alone when it cannot write.
func TestExplanationCSV(t *testing.T) {
	ds := shapData(200, 3, 2, 4)
	f, err := Fit(ds, Options{Task: Classification, Trees: 3, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	model := filepath.Join(dir, "m.gtf")
	if err := f.SaveFile(model); err != nil {
		t.Fatal(err)
	}
	csvFile := writeFile(t, dir, "d.csv", "x2,x0,x1\n1,-1,0.5\n,2,3\n")
	ex, err := ExplainFile(model, csvFile, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := ex.WriteCSV(&out); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&out).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := "x0:0,x1:0,x2:0,expected_value:0,x0:1,x1:1,x2:1,expected_value:1"
	if got := strings.Join(recs[0], ","); got != want {
		t.Fatalf("header %s, want %s", got, want)
	}
	if len(recs) != 3 {
		t.Fatalf("%d records, want a header and 2 rows", len(recs))
	}
	// Row 0 is x0=-1, x1=0.5, x2=1 (columns found by name).
	direct, err := f.SHAP([]float64{-1, 0.5, 1}, 1)
	if err != nil {
		t.Fatal(err)
	}
	for k, s := range recs[1] {
		q, j := k/4, k%4
		var want float64
		if j == 3 {
			want = direct.Expected[q]
		} else {
			want = direct.Values[q*3+j]
		}
		if got, err := strconv.ParseFloat(s, 64); err != nil || got != want {
			t.Fatalf("column %s = %q, want %v", recs[0][k], s, want)
		}
	}
	if _, err := ExplainFile(model, filepath.Join(dir, "none.csv"), 0); err == nil || !strings.Contains(err.Error(), "none.csv") {
		t.Fatalf("missing data file: %v", err)
	}
	if err := ex.WriteFile(filepath.Join(dir, "no", "such", "dir.csv")); err == nil {
		t.Fatal("WriteFile into a missing folder succeeded")
	}
}

// TestSHAPRefusesVeryDeepTrees checks that a tree deeper than SHAP's path
// buffers allow (a model file may hold one) is an error, not an
// allocation of its depth squared.
func TestSHAPRefusesVeryDeepTrees(t *testing.T) {
	// A chain of maxSHAPDepth+1 splits on feature 0, each sending rows
	// left to a leaf and right to the next split.
	d := maxSHAPDepth + 1
	ds := &data.Dataset{Rows: 2, Cols: 1, X: []float64{0, 1}, Y: []float64{0, 1}}
	f := fitOrFail(t, ds, Options{Trees: 1, NoBootstrap: true})
	n := 2*d + 1
	tr, err := NewTree(n, 1, f.Binner.Edges)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < d; i++ {
		// node 2i splits: left 2i+1 (a leaf), right 2i+2
		if err := tr.SetSplit(2*i, 0, 0, false, 2*i+1, 0); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		tr.SetCounts(i, 1, 1)
	}
	f.Trees = []Tree{tr}
	if got := tr.Depth(); got != d {
		t.Fatalf("test tree of depth %d, want %d", got, d)
	}
	if _, err := f.SHAP([]float64{0.5}, 1); err == nil || !strings.Contains(err.Error(), "depth at most 1023") {
		t.Fatalf("SHAP of a tree of depth %d: %v", d, err)
	}
}
