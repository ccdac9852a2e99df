package forest

// The reference predictor the compiled one is tested against.

// leafRaw returns the leaf a raw feature row reaches.
func (t *Tree) leafRaw(row []float64) int {
	i := int32(0)
	for {
		f := t.Feature[i]
		if f < 0 {
			return int(i)
		}
		v := row[f]
		if v <= t.Threshold(int(i)) || (v != v && t.MissingLeft(int(i))) {
			i = t.Left[i]
		} else {
			i = t.Left[i] + 1
		}
	}
}

// predictRaw is the reference predictor: it walks Tree's arrays comparing raw
// values with thresholds, one row and one tree at a time.
func (f *Forest) predictRaw(x []float64, rows int) []float64 {
	p, d := f.NumFeatures, f.Outputs()
	out := make([]float64, rows*d)
	for i := 0; i < rows; i++ {
		for t := range f.Trees {
			tr := &f.Trees[t]
			leaf := tr.leafRaw(x[i*p : (i+1)*p])
			for q := 0; q < d; q++ {
				out[i*d+q] += tr.Value[leaf*d+q]
			}
		}
	}
	inv := 1 / float64(len(f.Trees))
	for i := range out {
		out[i] *= inv
	}
	return out
}
