package forest

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gotrain/gotrain/forest/internal/core"
)

// LeafSamples are the training rows each leaf of each tree was grown
// from, kept (Options.KeepLeafSamples) for quantile predictions
// (Forest.PredictQuantiles, Meinshausen's quantile regression forests).
type LeafSamples struct {
	// Y holds the training targets, one per training row.
	Y []float64
	// Rows[t] lists tree t's in-bag training rows (indices into Y),
	// grouped by leaf, the leaves in node order, each group in increasing
	// row order; Weights[t] holds each row's weight in the tree: its
	// bootstrap count (1 without bootstrap) times its fixed-point sample
	// weight (1 without weights). Leaf i's group has Tree.Samples(i) rows
	// whose weights sum to Tree.Weight(i).
	Rows    [][]int32
	Weights [][]int64
}

// keepLeafSamples sets f.LeafSamples from the training set: its binned
// rows codes (row-major, NumFeatures a row), targets y, fixed-point
// sample weights w (nil: 1 each) and each tree's bootstrap counts (draws
// draws, or every row once without bootstrap), routing every row of
// positive weight through every tree. It depends on the trees only, so
// both learners get the same samples.
func (f *Forest) keepLeafSamples(codes []uint8, y []float64, w []int64, draws int) {
	n, p := len(y), f.NumFeatures
	miss := make([]uint8, p)
	for j := range miss {
		miss[j] = f.Binner.MissingCode(j)
	}
	ls := &LeafSamples{Y: slices.Clone(y), Rows: make([][]int32, len(f.Trees)), Weights: make([][]int64, len(f.Trees))}
	parallelBlocks(len(f.Trees), f.Options.Threads, 1, func(lo, hi int) {
		counts := make([]int32, n)
		rw := make([]int64, n)
		leaf := make([]int32, n)
		for t := lo; t < hi; t++ {
			if f.Options.NoBootstrap {
				for i := range counts {
					counts[i] = 1
				}
			} else {
				core.BootstrapCounts(f.Options.Seed, t, draws, counts)
			}
			for i, c := range counts {
				rw[i] = int64(c)
				if w != nil {
					rw[i] *= w[i]
				}
			}
			tr := &f.Trees[t]
			start := make([]int32, tr.NumNodes()+1) // rows of each node, then where its group starts
			k := 0
			for i, c := range rw {
				if c > 0 {
					leaf[i] = int32(tr.leafCodes(codes[i*p:(i+1)*p], miss))
					start[leaf[i]+1]++
					k++
				}
			}
			for i := 1; i < len(start); i++ {
				start[i] += start[i-1]
			}
			rows, cnt := make([]int32, k), make([]int64, k)
			for i, c := range rw {
				if c > 0 {
					s := start[leaf[i]]
					rows[s], cnt[s] = int32(i), c
					start[leaf[i]]++
				}
			}
			ls.Rows[t], ls.Weights[t] = rows, cnt
		}
	})
	f.LeafSamples = ls
}

// leafStarts returns, for each node of tree t, where its group of leaf
// samples starts in LeafSamples.Rows[t] (nodes that are not leaves get
// the start of the next leaf's group).
func (f *Forest) leafStarts(t int) []int32 {
	tr := &f.Trees[t]
	start := make([]int32, tr.NumNodes())
	var s int32
	for i, feat := range tr.Feature {
		start[i] = s
		if feat < 0 {
			s += tr.Samples(i)
		}
	}
	return start
}

// sample is one training target with its weight in a quantile prediction.
type sample struct {
	y, w float64
}

// PredictQuantiles returns, for each row of the row-major matrix x, the
// quantiles qs (each in [0, 1]) of the forest's conditional distribution
// of the target (Meinshausen, "Quantile regression forests", 2006): each
// tree gives its leaf's training rows, the rows' weights in the tree
// (bootstrap counts times sample weights) normalised to 1/Trees per tree; the q quantile is the smallest
// of those targets whose cumulative weight, in increasing target order,
// reaches q (the inverse of the weighted empirical distribution, without
// interpolation: every quantile is a training target). The result holds
// len(qs) values per row. It needs a regression forest fitted with
// Options.KeepLeafSamples; the values do not depend on Options.Threads.
func (f *Forest) PredictQuantiles(x []float64, rows int, qs []float64) ([]float64, error) {
	if err := f.checkQuantiles(qs); err != nil {
		return nil, err
	}
	if err := f.check(x, rows); err != nil {
		return nil, err
	}
	p, nq, nt := f.NumFeatures, len(qs), len(f.Trees)
	miss := make([]uint8, p)
	for j := range miss {
		miss[j] = f.Binner.MissingCode(j)
	}
	starts := make([][]int32, nt)
	for t := range f.Trees {
		starts[t] = f.leafStarts(t)
	}
	ls := f.LeafSamples
	out := make([]float64, rows*nq)
	parallelBlocks(rows, f.Options.Threads, 64, func(lo, hi int) {
		codes := make([]uint8, p)
		var buf []sample
		for i := lo; i < hi; i++ {
			for j, v := range x[i*p : (i+1)*p] {
				codes[j] = f.Binner.Code(j, v)
			}
			buf = buf[:0]
			for t := range f.Trees {
				tr := &f.Trees[t]
				leaf := tr.leafCodes(codes, miss)
				s := starts[t][leaf]
				w := float64(tr.Weight(leaf))
				for k := s; k < s+tr.Samples(leaf); k++ {
					buf = append(buf, sample{ls.Y[ls.Rows[t][k]], float64(ls.Weights[t][k]) / w})
				}
			}
			slices.SortStableFunc(buf, func(a, b sample) int { return cmp.Compare(a.y, b.y) })
			var total float64
			for _, s := range buf {
				total += s.w
			}
			o := out[i*nq : (i+1)*nq]
			for k, q := range qs {
				target, cum := q*total, 0.0
				o[k] = buf[len(buf)-1].y
				for _, s := range buf {
					if cum += s.w; cum >= target {
						o[k] = s.y
						break
					}
				}
			}
		}
	})
	return out, nil
}

// checkQuantiles checks that f can predict the quantiles qs.
func (f *Forest) checkQuantiles(qs []float64) error {
	switch {
	case f.Options.Task != Regression:
		return fmt.Errorf("forest: quantiles need a regression forest, not %s", f.Options.Task)
	case f.LeafSamples == nil:
		return errors.New("forest: quantiles need the forest's leaf samples: fit it with Options.KeepLeafSamples (forest train --keep-leaf-samples)")
	case len(qs) == 0:
		return errors.New("forest: no quantile asked for")
	}
	for _, q := range qs {
		if !(q >= 0 && q <= 1) {
			return fmt.Errorf("forest: quantile %v: want a number in [0, 1]", q)
		}
	}
	return nil
}

// ParseQuantiles reads a comma-separated list of quantiles in [0, 1], as
// `forest predict --quantiles` takes them ("0.05,0.5,0.95").
func ParseQuantiles(s string) ([]float64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("forest: no quantile given")
	}
	var qs []float64
	for _, field := range strings.Split(s, ",") {
		field = strings.TrimSpace(field)
		q, err := strconv.ParseFloat(field, 64)
		if err != nil || !(q >= 0 && q <= 1) {
			return nil, fmt.Errorf("forest: quantile %q: want a number in [0, 1]", field)
		}
		qs = append(qs, q)
	}
	return qs, nil
}
