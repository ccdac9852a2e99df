package forest

import (
	"fmt"
	"math"

	"github.com/gotrain/gotrain/forest/internal/core"
	"github.com/gotrain/gotrain/rng"
)

// ImpurityImportance returns the mean decrease in impurity of each feature:
// per tree, the split gains of each feature divided by their total, then
// averaged over trees and normalised to sum to 1 (scikit-learn's
// feature_importances_). Trees without a split count as all zero.
func (f *Forest) ImpurityImportance() []float64 {
	imp := make([]float64, f.NumFeatures)
	per := make([]float64, f.NumFeatures)
	for t := range f.Trees {
		tr := &f.Trees[t]
		clear(per)
		var total float64
		for i, j := range tr.Feature {
			if j >= 0 {
				per[j] += tr.Gain(i)
				total += tr.Gain(i)
			}
		}
		if total <= 0 {
			continue
		}
		for j := range per {
			imp[j] += per[j] / total
		}
	}
	var s float64
	for _, v := range imp {
		s += v
	}
	if s > 0 {
		for j := range imp {
			imp[j] /= s
		}
	}
	return imp
}

// Score returns R² (regression) or accuracy (classification) of the forest
// on the row-major matrix x with targets y.
func (f *Forest) Score(x []float64, rows int, y []float64) (float64, error) {
	pred, err := f.Predict(x, rows)
	if err != nil {
		return 0, err
	}
	if len(y) != rows {
		return 0, fmt.Errorf("forest: %w: %d targets for %d rows", ErrShape, len(y), rows)
	}
	return score(f.Options.Task, pred, y), nil
}

// PermutationImportance returns, for each feature, the mean drop of Score
// over repeats when that feature's column of x is shuffled (rows fixed
// otherwise), and its standard deviation. Shuffles come from the forest's
// random stream keyed by seed, so results are reproducible.
func (f *Forest) PermutationImportance(x []float64, rows int, y []float64, repeats int, seed uint64) (mean, std []float64, err error) {
	if repeats < 1 {
		return nil, nil, fmt.Errorf("forest: permutation importance needs repeats >= 1, got %d", repeats)
	}
	base, err := f.Score(x, rows, y)
	if err != nil {
		return nil, nil, err
	}
	p := f.NumFeatures
	mean, std = make([]float64, p), make([]float64, p)
	xp := make([]float64, len(x))
	perm := make([]int, rows)
	for j := 0; j < p; j++ {
		drops := make([]float64, repeats)
		for rep := 0; rep < repeats; rep++ {
			copy(xp, x)
			for i := range perm {
				perm[i] = i
			}
			key := core.StreamKey(seed, j*repeats+rep, core.PurposePermute)
			for i := rows - 1; i > 0; i-- {
				k := rng.Below(rng.At(key, uint64(i)), i+1)
				perm[i], perm[k] = perm[k], perm[i]
			}
			for i := 0; i < rows; i++ {
				xp[i*p+j] = x[perm[i]*p+j]
			}
			s, err := f.Score(xp, rows, y)
			if err != nil {
				return nil, nil, err
			}
			drops[rep] = base - s
		}
		for _, d := range drops {
			mean[j] += d
		}
		mean[j] /= float64(repeats)
		for _, d := range drops {
			std[j] += float64((d - mean[j]) * (d - mean[j])) // no FMA: see R2
		}
		std[j] = math.Sqrt(std[j] / float64(repeats))
	}
	return mean, std, nil
}
