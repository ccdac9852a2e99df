package forest

import (
	"fmt"
	"math"
)

// Prepared is the host-side preparation of a training set that every learner
// shares: validated options, bin codes, the fixed-point target or the class
// labels, and the feature subsampling size. forest.Fit grows trees from it on
// the CPU; package forestgraph grows the same trees as GoMLX graphs.
type Prepared struct {
	// Options are the options with defaults filled in.
	Options Options
	// Rows and Cols are the training set's dimensions.
	Rows, Cols int
	// Codes are the bin codes, row-major Rows x Cols.
	Codes []uint8
	// Binner holds the bin edges.
	Binner *Binner
	// NumBins is each feature's number of real bins; its missing code is NumBins[j].
	NumBins []int
	// Offsets is each feature's first histogram entry: feature j owns entries
	// Offsets[j] .. Offsets[j]+NumBins[j] (the last one for missing values).
	Offsets []int
	// Entries is the number of histogram entries of all features, Σ (NumBins[j]+1).
	Entries int
	// MissCode is each feature's missing-value code (NumBins[j]).
	MissCode []uint8
	// YQ is the regression target in centred fixed point: y ≈ YMean + YQ/Scale.
	YQ []int64
	// YMean and Scale define YQ.
	YMean, Scale float64
	// Classes are the class names (classification).
	Classes []string
	// Class is each row's class index (classification).
	Class []int32
	// Outputs is the number of sums per node: 1 (regression) or len(Classes).
	Outputs int
	// K is the number of features each node examines.
	K int
	// Draws is the number of bootstrap draws per tree.
	Draws int
	// Y is the training target, kept for the out-of-bag score.
	Y []float64

	features []string
	target   string
}

// Stride is the number of int64 statistics per histogram entry: the distinct
// rows n, the bootstrap weight w, and Outputs sums.
func (p *Prepared) Stride() int { return 2 + p.Outputs }

// Prepare validates the data and the options and computes the host-side
// preparation of Fit.
func Prepare(ds Dataset, opt Options) (*Prepared, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	n, p := ds.Rows, ds.Cols
	switch {
	case n < 1 || p < 1:
		return nil, fmt.Errorf("forest: need at least one row and one feature, got %d x %d", n, p)
	case n >= 1<<31-1:
		return nil, fmt.Errorf("forest: %d rows is too many", n)
	case p >= 1<<16-1:
		return nil, fmt.Errorf("forest: %d features is too many (at most %d)", p, 1<<16-2)
	case len(ds.X) != n*p:
		return nil, fmt.Errorf("forest: X has %d values, want rows*cols = %d", len(ds.X), n*p)
	case len(ds.Y) != n:
		return nil, fmt.Errorf("forest: Y has %d values, want %d", len(ds.Y), n)
	case ds.Features != nil && len(ds.Features) != p:
		return nil, fmt.Errorf("forest: %d feature names for %d features", len(ds.Features), p)
	}
	pr := &Prepared{Options: opt, Rows: n, Cols: p, Y: ds.Y, features: ds.Features, target: ds.Target}
	if pr.K, err = opt.featuresPerNode(p); err != nil {
		return nil, err
	}
	if opt.Task == Classification {
		if pr.Classes, pr.Class, err = classLabels(ds.Y, ds.Classes); err != nil {
			return nil, err
		}
		pr.Outputs = len(pr.Classes)
	} else {
		if pr.YQ, pr.YMean, pr.Scale, err = fixedPoint(ds.Y); err != nil {
			return nil, err
		}
		pr.Outputs = 1
	}
	if pr.Binner, err = newBinner(ds.X, n, p, opt.Bins, opt.Threads); err != nil {
		return nil, err
	}
	pr.Codes = pr.Binner.transform(ds.X, n, p, nil, opt.Threads)
	pr.NumBins = make([]int, p)
	pr.Offsets = make([]int, p)
	pr.MissCode = make([]uint8, p)
	for j := 0; j < p; j++ {
		pr.NumBins[j] = pr.Binner.NumBins(j)
		pr.Offsets[j] = pr.Entries
		pr.Entries += pr.NumBins[j] + 1
		pr.MissCode[j] = pr.Binner.MissingCode(j)
	}
	if pr.Draws, err = opt.draws(n); err != nil {
		return nil, err
	}
	return pr, nil
}

// NewForest returns the forest this preparation is fitted into, with trees
// trees and no OOB score yet.
func (p *Prepared) NewForest(trees int) *Forest {
	return &Forest{
		Options: p.Options, Features: p.features, Target: p.target, NumFeatures: p.Cols,
		Classes: p.Classes, Binner: p.Binner, Trees: make([]Tree, trees), OOBScore: math.NaN(),
	}
}

// LeafValue appends the value of a node with statistics st (n, w, sums) to
// vals, exactly as forest.Fit computes it.
func (p *Prepared) LeafValue(vals []float64, st []int64) []float64 {
	w := float64(st[1])
	if p.Class == nil {
		return append(vals, float64(st[2])/w/p.Scale+p.YMean)
	}
	for _, s := range st[2:p.Stride()] {
		vals = append(vals, float64(s)/w)
	}
	return vals
}

// Finish completes a forest whose trees are grown: it computes the
// out-of-bag score when the options ask for it, from inbag (one bit mask of
// drawn rows per tree, as from InBagMask), and builds the predictor.
func (p *Prepared) Finish(f *Forest, inbag [][]uint64) error {
	if p.Options.OOB {
		if len(inbag) != len(f.Trees) {
			return fmt.Errorf("forest: out-of-bag score: %d in-bag masks for %d trees", len(inbag), len(f.Trees))
		}
		f.computeOOB(p.Codes, p.Y, inbag, p.Class)
	}
	c, err := compile(f)
	if err != nil {
		return err
	}
	f.pred = c
	return nil
}

// InBagMask returns the bit mask of the rows with positive counts
// (bit i%64 of word i/64 for row i).
func InBagMask(counts []int32) []uint64 {
	mask := make([]uint64, (len(counts)+63)/64)
	for i, c := range counts {
		if c > 0 {
			mask[i/64] |= 1 << (i % 64)
		}
	}
	return mask
}
