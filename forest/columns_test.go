package forest

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"weak"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/forest/internal/core"
)

// memColumns is a data.ColumnSource over a data set in memory.
type memColumns struct {
	d     *data.Dataset
	reads []int
	fail  int // the column whose read fails, -1 for none
}

func (m *memColumns) ReadColumn(j int, dst []float64) ([]float64, []string, error) {
	m.reads = append(m.reads, j)
	if j == m.fail {
		return nil, nil, errors.New("read failed")
	}
	var dict []string
	if m.d.IsCategorical(j) {
		dict = m.d.Categories[j]
	}
	return m.d.Column(j, dst), dict, nil
}

// lazy returns d without X, its columns read from a memColumns.
func lazy(d *data.Dataset) (*data.Dataset, *memColumns) {
	src := &memColumns{d: d, fail: -1}
	l := *d
	l.X, l.Categories, l.Source = nil, nil, src
	return &l, src
}

// TestFitFromColumns: a data set read one column at a time (Source) gives
// the model file that the same data in memory gives, each column read
// once; a failed read is the fit's error.
func TestFitFromColumns(t *testing.T) {
	for _, c := range []struct {
		name string
		d    *data.Dataset
		opt  Options
	}{
		{"diabetes nans", withNaNs(loadEmbedded(t, "diabetes"), 7), Options{Trees: 5, Seed: 1, OOB: true}},
		{"digits weighted", withWeights(loadEmbedded(t, "digits")), Options{Task: Classification, Trees: 3, Seed: 2}},
		{"categorical", catData(1000, 3, 3, true), Options{Task: Classification, Trees: 4, Seed: 3}},
		{"few bins", loadEmbedded(t, "diabetes"), Options{Trees: 3, Bins: 8, Seed: 4}},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := fitOrFail(t, c.d, c.opt)
			l, src := lazy(c.d)
			got := fitOrFail(t, l, c.opt)
			var a, b bytes.Buffer
			if err := want.Save(&a); err != nil {
				t.Fatal(err)
			}
			if err := got.Save(&b); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Error("the model fitted from columns differs from the one fitted in memory")
			}
			if len(src.reads) != c.d.Cols {
				t.Errorf("%d column reads for %d columns", len(src.reads), c.d.Cols)
			}
		})
	}
	l, src := lazy(loadEmbedded(t, "diabetes"))
	src.fail = 3
	if _, err := Fit(l, Options{Trees: 1}); err == nil || err.Error() != "read failed" {
		t.Errorf("Fit = %v, want the read's error", err)
	}
	// Columns are binned on several goroutines; the error is still the
	// first column's, whichever goroutine finds its own first.
	for _, threads := range []int{1, 2, 4} {
		d := loadEmbedded(t, "diabetes")
		d.X[7*d.Cols+6] = math.Inf(1)
		d.X[2*d.Cols+2] = math.Inf(-1)
		l, src := lazy(d)
		src.fail = 8
		_, err := Fit(l, Options{Trees: 1, Threads: threads})
		if want := "forest: row 2, feature 2: infinite value"; err == nil || err.Error() != want {
			t.Errorf("%d threads: Fit = %v, want %q", threads, err, want)
		}
	}
}

// TestPredictColumns: Train predicts a test set read one column at a time
// by binning each column (columnCodes, predictCodes) and scores it exactly as the
// same test set in memory; a categorical forest takes the materialized
// route, a failed read is the error.
func TestPredictColumns(t *testing.T) {
	diab, dig := withNaNs(loadEmbedded(t, "diabetes"), 7), loadEmbedded(t, "digits")
	for _, c := range []struct {
		name        string
		train, test *data.Dataset
		opt         Options
		columnsPath bool
	}{
		{"regression nans", toDS(diab, all(300)), toDS(diab, rangeRows(300, diab.Rows)), Options{Trees: 5, Seed: 1}, true},
		{"classification", toDS(dig, all(1200)), toDS(dig, rangeRows(1200, dig.Rows)), Options{Task: Classification, Trees: 4, Seed: 2}, true},
		{"categorical", catData(600, 3, 3, true), catData(200, 3, 3, true), Options{Task: Classification, Trees: 3, Seed: 3}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			want, err := Train(c.train, c.test, c.opt, TrainConfig{})
			if err != nil {
				t.Fatal(err)
			}
			l, src := lazy(c.test)
			got, err := Train(c.train, l, c.opt, TrainConfig{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.TestMSE, want.TestMSE) || !reflect.DeepEqual(got.TestAccuracy, want.TestAccuracy) {
				t.Errorf("scores from columns %v %v, in memory %v %v", got.TestMSE, got.TestAccuracy, want.TestMSE, want.TestAccuracy)
			}
			codes, _, ok, err := got.Forest.columnCodes(l)
			if err != nil || ok != c.columnsPath {
				t.Fatalf("columnCodes: ok %v, error %v; want ok %v", ok, err, c.columnsPath)
			}
			if ok {
				pred, err := got.Forest.predictCodes(codes, l.Rows)
				if err != nil {
					t.Fatal(err)
				}
				ref, err := got.Forest.Predict(c.test.X, c.test.Rows)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(pred, ref) {
					t.Error("predictions from columns differ from Predict's")
				}
				if len(src.reads) != 2*c.test.Cols {
					t.Errorf("%d column reads for %d columns, twice", len(src.reads), c.test.Cols)
				}
			}
		})
	}
	l, src := lazy(toDS(diab, rangeRows(300, diab.Rows)))
	src.fail = 3
	if _, err := Train(toDS(diab, all(300)), l, Options{Trees: 1}, TrainConfig{}); err == nil || !strings.Contains(err.Error(), "read failed") {
		t.Errorf("Train = %v, want the read's error", err)
	}
}

// rangeRows returns lo, lo+1, ..., hi-1.
func rangeRows(lo, hi int) []int {
	idx := make([]int, 0, hi-lo)
	for i := lo; i < hi; i++ {
		idx = append(idx, i)
	}
	return idx
}

// learnerFunc is a Learner from a function.
type learnerFunc func(d *data.Dataset, opt Options) (*Forest, FitStats, error)

func (l learnerFunc) Fit(d *data.Dataset, opt Options) (*Forest, FitStats, error) { return l(d, opt) }

// TestTrainLetsTheDataGo: once the native learner has binned a training
// set that its caller does not hold, nothing in Fit or Train holds it
// either, so that the garbage collector can take it during the fit (its
// values, 47 MB for MNIST's pixels, are not needed after binning). The
// check runs inside Train, just after the learner's fit returns, in two
// collections; it fails when Train or Fit keeps a reference.
func TestTrainLetsTheDataGo(t *testing.T) {
	for _, repeats := range []int{1, 2} {
		l, _ := lazy(sparseWide(600, 50, 3, false))
		wp := weak.Make(l.Source.(*memColumns))
		fits, freed := 0, false
		learner := learnerFunc(func(d *data.Dataset, opt Options) (*Forest, FitStats, error) {
			f, st, err := Native.Fit(d, opt)
			runtime.GC()
			runtime.GC()
			fits++
			freed = wp.Value() == nil
			return f, st, err
		})
		opt := Options{Task: Classification, Trees: 2, Seed: 1}
		r, err := Train(l, nil, opt, TrainConfig{Learner: learner, Repeats: repeats})
		if err != nil {
			t.Fatal(err)
		}
		if fits != repeats || !freed || r.TrainRows != 600 {
			t.Errorf("repeats %d: %d fits, training set freed after the last: %v, %d rows", repeats, fits, freed, r.TrainRows)
		}
	}
}

// TestPrepareGivesRowCodes: a data set binned a column at a time gives
// the other learners (core.Prepare) the row-major codes of the same data
// in memory, and no column-major copy.
func TestPrepareGivesRowCodes(t *testing.T) {
	d := withNaNs(loadEmbedded(t, "digits"), 3)
	opt := Options{Task: Classification, Trees: 2, Threads: 3}
	want, err := core.Prepare[Options, *Forest](d, opt)
	if err != nil {
		t.Fatal(err)
	}
	l, _ := lazy(d)
	got, err := core.Prepare[Options, *Forest](l, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Codes, want.Codes) || got.CodesByColumn != nil || len(want.Codes) != d.Rows*d.Cols {
		t.Errorf("codes from columns differ from those in memory (%d and %d codes), or a column-major copy is left (%d)", len(got.Codes), len(want.Codes), len(got.CodesByColumn))
	}
}
