package forest

import (
	"bytes"
	"errors"
	"testing"

	"github.com/gotrain/gotrain/data"
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
}
