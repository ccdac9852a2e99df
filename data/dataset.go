package data

import (
	"fmt"
	"math"
	"slices"
)

// A Dataset is a table of numeric and categorical features with one target
// per row.
//
// X holds the features in row-major order: the value of feature j in row i is
// X[i*Cols+j]. A NaN in X marks a missing value. Y holds one target per row.
//
// For a classification target read from text labels, Classes lists the label
// of each class and Y holds class indices 0..len(Classes)-1. Classes is nil
// for regression targets and for classification targets whose labels are
// themselves the class indices (such as digits 0..9).
type Dataset struct {
	// Name identifies the data set, typically the file name it came from.
	Name string
	// FeatureNames holds the name of each of the Cols feature columns.
	FeatureNames []string
	// TargetName is the name of the target column.
	TargetName string
	// X is the Rows×Cols feature matrix in row-major order; NaN = missing.
	X []float64
	// Y holds the Rows target values.
	Y []float64
	// Rows is the number of rows (samples); Cols the number of features.
	Rows, Cols int
	// Classes names the classes of a classification target read from text
	// labels; Y then holds indices into Classes. Nil otherwise.
	Classes []string
	// Weights holds one sample weight per row (finite, >= 0), as a weight
	// column gives them (CSVOptions.Weight); nil means every row weighs 1.
	Weights []float64
	// Categories holds, for each categorical feature column, its
	// dictionary: the category names in increasing bytewise order, X
	// holding indices into it (see CategoryKey and Unseen). It is nil
	// when no column is categorical, else it has Cols entries, nil for
	// the numeric columns.
	Categories [][]string
	// Source, when not nil, reads the feature columns of a data set whose
	// X is not in memory (X is nil): a learner that bins one column at a
	// time (forest.Fit) reads them from it, and Materialize reads them all
	// into X. Categories is then filled as the columns are read.
	Source ColumnSource
}

// ColumnSource reads the feature columns of a data set one at a time.
type ColumnSource interface {
	// ReadColumn reads feature column j into dst (grown to Rows values
	// when too small) and returns the values: numbers with NaN for
	// missing values, or for a categorical column the indices into its
	// dictionary dict (sorted bytewise; nil for a numeric column).
	ReadColumn(j int, dst []float64) (vals []float64, dict []string, err error)
}

// ByteColumnSource is a ColumnSource whose numeric columns are bytes, each
// standing for one of at most 256 values (MNIST's pixels): a learner that
// bins a column can count its bytes instead of reading its values.
type ByteColumnSource interface {
	ColumnSource
	// ByteColumn returns feature column j's bytes, not to be modified:
	// row i's value, the one ReadColumn returns, is values[col[i]].
	ByteColumn(j int) (col []uint8, values *[256]float64, err error)
}

// Materialize reads the columns of a data set that has a Source into X
// (and Categories), and drops the Source; it does nothing when d has
// none.
func (d *Dataset) Materialize() error {
	if d.Source == nil {
		return nil
	}
	x := make([]float64, d.Rows*d.Cols)
	var col []float64
	var cats [][]string
	for j := 0; j < d.Cols; j++ {
		vals, dict, err := d.Source.ReadColumn(j, col)
		if err != nil {
			return err
		}
		if len(vals) != d.Rows {
			return fmt.Errorf("data: %s: column %d has %d values, want %d", d.Name, j+1, len(vals), d.Rows)
		}
		for i, v := range vals {
			x[i*d.Cols+j] = v
		}
		if dict != nil {
			if cats == nil {
				cats = make([][]string, d.Cols)
			}
			cats[j] = dict
		}
		col = vals
	}
	d.X, d.Categories, d.Source = x, cats, nil
	return nil
}

// Row returns the features of row i as a slice of X, without copying.
// Changing the returned slice changes the data set. Its capacity is limited
// to the row, so appending to it never overwrites the next row.
// Row panics if i is out of range, as indexing a slice does.
func (d *Dataset) Row(i int) []float64 {
	start := i * d.Cols
	return d.X[start : start+d.Cols : start+d.Cols]
}

// Column copies the values of feature column j into dst, which is grown
// when its capacity is below Rows, and returns it with length Rows.
// Column panics if j is out of range, as indexing a slice does.
func (d *Dataset) Column(j int, dst []float64) []float64 {
	if j < 0 || j >= d.Cols {
		panic("data: Dataset.Column: column index out of range")
	}
	if cap(dst) < d.Rows {
		dst = make([]float64, d.Rows)
	}
	dst = dst[:d.Rows]
	for i := range dst {
		dst[i] = d.X[i*d.Cols+j]
	}
	return dst
}

// TakeColumn removes the feature column named name from d and returns
// its values (Rows of them); ok is false, and d unchanged, when d has no
// such column.
func (d *Dataset) TakeColumn(name string) (values []float64, ok bool) {
	j := slices.Index(d.FeatureNames, name)
	if j < 0 {
		return nil, false
	}
	values = d.Column(j, nil)
	p := d.Cols - 1
	for i := 0; i < d.Rows; i++ {
		row := d.X[i*d.Cols : (i+1)*d.Cols]
		dst := d.X[i*p : (i+1)*p]
		copy(dst[:j], row[:j]) // dst starts at or before row: forward copies are safe
		copy(dst[j:], row[j+1:])
	}
	d.X = d.X[:d.Rows*p]
	d.FeatureNames = slices.Delete(slices.Clone(d.FeatureNames), j, j+1)
	if d.Categories != nil {
		d.Categories = slices.Delete(slices.Clone(d.Categories), j, j+1)
	}
	d.Cols = p
	return values, true
}

// Subset returns a new data set holding copies of the rows listed in idx, in
// that order; an index may appear more than once (as in a bootstrap sample).
// The result shares nothing with d. Subset panics if an index is out of
// range, as indexing a slice does.
func (d *Dataset) Subset(idx []int) *Dataset {
	s := &Dataset{
		Name:         d.Name,
		FeatureNames: slices.Clone(d.FeatureNames),
		TargetName:   d.TargetName,
		X:            make([]float64, len(idx)*d.Cols),
		Y:            make([]float64, len(idx)),
		Rows:         len(idx),
		Cols:         d.Cols,
		Classes:      slices.Clone(d.Classes),
		Categories:   slices.Clone(d.Categories),
	}
	if d.Weights != nil {
		s.Weights = make([]float64, len(idx))
	}
	for k, i := range idx {
		copy(s.X[k*d.Cols:(k+1)*d.Cols], d.Row(i))
		s.Y[k] = d.Y[i]
		if d.Weights != nil {
			s.Weights[k] = d.Weights[i]
		}
	}
	return s
}

// Clone returns a deep copy of d.
func (d *Dataset) Clone() *Dataset {
	c := *d
	c.FeatureNames = slices.Clone(d.FeatureNames)
	c.X = slices.Clone(d.X)
	c.Y = slices.Clone(d.Y)
	c.Classes = slices.Clone(d.Classes)
	c.Weights = slices.Clone(d.Weights)
	c.Categories = slices.Clone(d.Categories)
	return &c
}

// NumClasses returns the number of classes of a classification target:
// len(Classes) when Classes is non-nil; otherwise, when every Y is a
// non-negative integer, the largest Y plus one; otherwise 0, meaning the
// target is not a class index (a regression target). A data set with no rows
// and nil Classes has 0 classes.
func (d *Dataset) NumClasses() int {
	if d.Classes != nil {
		return len(d.Classes)
	}
	if len(d.Y) == 0 {
		return 0
	}
	maxY := 0.0
	for _, y := range d.Y {
		if !(y >= 0) || y != math.Trunc(y) || y >= math.MaxInt32 {
			return 0
		}
		maxY = max(maxY, y)
	}
	return int(maxY) + 1
}
