package forest

import "fmt"

// predictBlock is the number of rows each tree processes at a time: large
// enough that a tree's nodes stay in cache across rows.
const predictBlock = 512

// accumulate sums, in tree order, the leaf values of rows [lo,hi) of the
// row-major matrix x into out (Outputs values per row).
func (f *Forest) accumulate(x []float64, lo, hi int, out []float64) {
	p, d := f.NumFeatures, f.Outputs()
	for b := lo; b < hi; b += predictBlock {
		e := min(hi, b+predictBlock)
		for t := range f.Trees {
			tr := &f.Trees[t]
			if d == 1 {
				for i := b; i < e; i++ {
					out[i] += tr.Value[tr.leafRaw(x[i*p:(i+1)*p])]
				}
				continue
			}
			for i := b; i < e; i++ {
				leaf := tr.leafRaw(x[i*p : (i+1)*p])
				o := out[i*d : (i+1)*d]
				for q, v := range tr.Value[leaf*d : (leaf+1)*d] {
					o[q] += v
				}
			}
		}
	}
}

func (f *Forest) check(x []float64, rows int) error {
	if rows < 0 || len(x) != rows*f.NumFeatures {
		return fmt.Errorf("forest: %w: %d values for %d rows of %d features", ErrShape, len(x), rows, f.NumFeatures)
	}
	return nil
}

// PredictValues returns, for each row of the row-major matrix x, the mean over
// trees of the leaf values: the prediction for regression, the class
// probabilities (Outputs() per row) for classification.
func (f *Forest) PredictValues(x []float64, rows int) ([]float64, error) {
	if err := f.check(x, rows); err != nil {
		return nil, err
	}
	d := f.Outputs()
	out := make([]float64, rows*d)
	parallelRows(rows, f.Options.Threads, func(lo, hi int) { f.accumulate(x, lo, hi, out) })
	inv := 1 / float64(len(f.Trees))
	for i := range out {
		out[i] *= inv
	}
	return out, nil
}

// Predict returns one prediction per row: the regression value, or the index
// of the most probable class (the first one on a tie).
func (f *Forest) Predict(x []float64, rows int) ([]float64, error) {
	v, err := f.PredictValues(x, rows)
	if err != nil || f.Options.Task == Regression {
		return v, err
	}
	d := f.Outputs()
	out := make([]float64, rows)
	for i := range out {
		out[i] = float64(argmax(v[i*d : (i+1)*d]))
	}
	return out, nil
}
