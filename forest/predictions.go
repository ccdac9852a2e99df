package forest

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/internal/atomicfile"
)

// A Predictor predicts the rows of a row-major matrix: a *Forest (the
// native predictor) or package forestgraph's Predictor, which gives the
// same values bit for bit.
type Predictor interface {
	// Predict returns one prediction per row: the value (regression) or
	// the most probable class's index (classification).
	Predict(x []float64, rows int) ([]float64, error)
	// PredictValues returns the value (regression) or the class
	// probabilities (Outputs per row) of each row.
	PredictValues(x []float64, rows int) ([]float64, error)
}

// PredictOptions configure Forest.PredictData.
type PredictOptions struct {
	// Predictor runs the trees; nil means the forest itself.
	Predictor Predictor
	// Proba asks for the class probabilities (classification only)
	// instead of one prediction per row.
	Proba bool
	// Quantiles asks for these quantiles of each row's conditional
	// distribution (Forest.PredictQuantiles: regression with leaf samples,
	// the forest itself as the predictor) instead of one prediction.
	Quantiles []float64
}

// Predictions are a forest's predictions for the rows of a data set, as
// Forest.PredictData returns them. Their JSON form is part of the report
// of `gotrain forest predict --json`.
type Predictions struct {
	// Forest is the forest that predicted.
	Forest *Forest `json:"-"`
	// Rows is the number of rows predicted.
	Rows int `json:"rows"`
	// Trees is the forest's number of trees.
	Trees int `json:"trees"`
	// Seconds is the time the predictor took.
	Seconds float64 `json:"predict_seconds"`
	// Proba tells whether Values are class probabilities (Forest.Outputs()
	// per row) rather than one prediction per row.
	Proba bool `json:"-"`
	// Quantiles are the quantiles Values hold, len(Quantiles) per row,
	// when asked for (PredictOptions.Quantiles).
	Quantiles []float64 `json:"quantiles,omitempty"`
	// Values are the predictions: values or class indices, or with Proba
	// the class probabilities.
	Values []float64 `json:"-"`
}

// PredictData predicts the rows of d, whose columns must include the
// forest's features, found by name (other columns are ignored); a forest
// without feature names takes d's columns in order. The data's targets, if
// any, are not used.
func (f *Forest) PredictData(d *data.Dataset, opt PredictOptions) (*Predictions, error) {
	if opt.Proba && f.Options.Task != Classification {
		return nil, fmt.Errorf("forest: class probabilities need a classification model, not %s", f.Options.Task)
	}
	if len(opt.Quantiles) > 0 {
		switch {
		case opt.Proba:
			return nil, errors.New("forest: quantiles and class probabilities are exclusive")
		case opt.Predictor != nil && opt.Predictor != Predictor(f):
			return nil, errors.New("forest: quantiles are predicted by the forest itself (the native predictor), not another Predictor")
		}
		if err := f.checkQuantiles(opt.Quantiles); err != nil {
			return nil, err
		}
	}
	x, err := f.FeatureMatrix(d)
	if err != nil {
		return nil, err
	}
	if len(opt.Quantiles) > 0 {
		start := time.Now()
		v, err := f.PredictQuantiles(x, d.Rows, opt.Quantiles)
		if err != nil {
			return nil, err
		}
		return &Predictions{Forest: f, Rows: d.Rows, Trees: len(f.Trees), Seconds: time.Since(start).Seconds(), Quantiles: opt.Quantiles, Values: v}, nil
	}
	p := opt.Predictor
	if p == nil {
		p = f
	}
	start := time.Now()
	var v []float64
	if opt.Proba {
		v, err = p.PredictValues(x, d.Rows)
	} else {
		v, err = p.Predict(x, d.Rows)
	}
	if err != nil {
		return nil, err
	}
	return &Predictions{Forest: f, Rows: d.Rows, Trees: len(f.Trees), Seconds: time.Since(start).Seconds(), Proba: opt.Proba, Values: v}, nil
}

// FeatureMatrix returns the row-major matrix (d.Rows × NumFeatures) of the
// forest's features, taken from d's columns by name; when the forest has
// no feature names, d must have NumFeatures columns, and FeatureMatrix
// returns d.X itself when no feature is categorical. The values of a
// categorical feature are mapped onto the forest's dictionary (from d's
// dictionary, or from numbers keyed by data.NumberKey), a category it
// lacks to data.Unseen. Errors name the data set and the column: a
// missing one, or a categorical one for a numeric feature.
func (f *Forest) FeatureMatrix(d *data.Dataset) ([]float64, error) {
	if d == nil {
		return nil, errors.New("forest: nil data set")
	}
	name := d.Name
	if name == "" {
		name = "the data"
	}
	if d.X == nil && d.Source != nil { // opened a column at a time: read it whole
		m := *d
		if err := m.Materialize(); err != nil {
			return nil, err
		}
		d = &m
	}
	idx, err := f.columns(d)
	if err != nil {
		return nil, err
	}
	for k, j := range idx {
		if d.IsCategorical(j) && !f.Binner.IsCategorical(k) {
			return nil, fmt.Errorf("forest: %s: column %q holds categories (values that are not numbers%s) but the model's feature is numeric", name, f.FeatureName(k), textExample(d.Categories[j]))
		}
	}
	if len(f.Features) == 0 && !f.Binner.HasCategorical() && !d.HasCategories() {
		return d.X, nil
	}
	p := len(idx)
	x := make([]float64, d.Rows*p)
	for i := 0; i < d.Rows; i++ {
		row := d.Row(i)
		for k, j := range idx {
			x[i*p+k] = row[j]
		}
	}
	for k, j := range idx {
		if !f.Binner.IsCategorical(k) {
			continue
		}
		// Recode column k of x as d's column j onto the forest's dictionary.
		col := &data.Dataset{Rows: d.Rows, Cols: p, X: x}
		if d.IsCategorical(j) {
			col.Categories = make([][]string, p)
			col.Categories[k] = d.Categories[j]
		}
		col.Recode(k, f.Binner.Categories[k])
	}
	return x, nil
}

// columns returns, for each of the forest's features, the index of its
// column in d: by name, or in order when the forest has no feature names
// (d must then have NumFeatures columns). A missing column is an error
// naming it.
func (f *Forest) columns(d *data.Dataset) ([]int, error) {
	name := d.Name
	if name == "" {
		name = "the data"
	}
	idx := make([]int, f.NumFeatures)
	if len(f.Features) == 0 {
		if d.Cols != f.NumFeatures {
			return nil, fmt.Errorf("forest: %s has %d columns, the model wants %d", name, d.Cols, f.NumFeatures)
		}
		for k := range idx {
			idx[k] = k
		}
		return idx, nil
	}
	col := make(map[string]int, len(d.FeatureNames))
	for j, n := range d.FeatureNames {
		col[n] = j
	}
	for k, n := range f.Features {
		j, ok := col[n]
		if !ok {
			return nil, fmt.Errorf("forest: %s: column %q, which the model needs, is missing", name, n)
		}
		idx[k] = j
	}
	return idx, nil
}

// textExample quotes, after ", such as ", the first category of dict that
// is not a number; "" when there is none.
func textExample(dict []string) string {
	for _, c := range dict {
		if _, err := strconv.ParseFloat(c, 64); err != nil {
			return fmt.Sprintf(", such as %q", c)
		}
	}
	return ""
}

// WriteCSV writes the predictions as CSV: one column "prediction" (the
// class label for classification, else the value), or with Proba one
// column "proba_CLASS" per class, or with Quantiles one column
// "quantile_Q" per quantile. Numbers are written in the shortest form
// that reads back exactly.
func (p *Predictions) WriteCSV(w io.Writer) error {
	if err := p.writeCSV(w); err != nil {
		return fmt.Errorf("forest: writing predictions: %w", err)
	}
	return nil
}

// writeCSV is WriteCSV with unwrapped errors.
func (p *Predictions) writeCSV(w io.Writer) error {
	f := p.Forest
	cw := csv.NewWriter(w)
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	var err error
	if len(p.Quantiles) > 0 {
		nq := len(p.Quantiles)
		if len(p.Values) != p.Rows*nq {
			return fmt.Errorf("%w: %d values for %d rows of %d quantiles", ErrShape, len(p.Values), p.Rows, nq)
		}
		rec := make([]string, nq)
		for k, q := range p.Quantiles {
			rec[k] = "quantile_" + num(q)
		}
		err = cw.Write(rec)
		for i := 0; i < p.Rows && err == nil; i++ {
			for k := range rec {
				rec[k] = num(p.Values[i*nq+k])
			}
			err = cw.Write(rec)
		}
	} else if p.Proba {
		d := f.Outputs()
		if len(p.Values) != p.Rows*d {
			return fmt.Errorf("%w: %d probabilities for %d rows of %d classes", ErrShape, len(p.Values), p.Rows, d)
		}
		rec := make([]string, d)
		for q, c := range f.Classes {
			rec[q] = "proba_" + c
		}
		err = cw.Write(rec)
		for i := 0; i < p.Rows && err == nil; i++ {
			for q := range rec {
				rec[q] = num(p.Values[i*d+q])
			}
			err = cw.Write(rec)
		}
	} else {
		err = cw.Write([]string{"prediction"})
		for _, v := range p.Values {
			if err != nil {
				break
			}
			s := num(v)
			if f.Options.Task == Classification {
				if v < 0 || int(v) >= len(f.Classes) {
					return fmt.Errorf("prediction %v is not a class index (%d classes)", v, len(f.Classes))
				}
				s = f.Classes[int(v)]
			}
			err = cw.Write([]string{s})
		}
	}
	if err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

// WriteFile writes the predictions as WriteCSV does to the named file, or
// as WriteParquet does when its name ends in ".parquet" (in any case),
// atomically (internal/atomicfile): a temporary file in the same folder,
// synced and renamed over path, so that path never holds half-written
// predictions; on error an existing file is unchanged. A FIFO or character
// device is written through; a folder or other special file is refused.
func (p *Predictions) WriteFile(path string) error {
	write := p.writeCSV
	if strings.HasSuffix(strings.ToLower(path), ".parquet") {
		write = p.writeParquet
	}
	if err := atomicfile.Write(path, write); err != nil {
		return fmt.Errorf("forest: writing predictions to %s: %w", path, err)
	}
	return nil
}
