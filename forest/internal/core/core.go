// Package core holds what package forest shares with package forestgraph
// and with nothing else: the counter-based random streams both learners
// draw from (stream.go), and the host-side preparation of a training set
// (Prepared) that both grow trees from. Users call forest.Fit or
// forestgraph.Fit; nothing here is API.
//
// Prepared is generic because core cannot import forest (forest imports
// core): O is forest.Options and F is *forest.Forest. Package forest
// registers its preparation with Register when it is initialised, and
// Prepare calls it.
package core

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/gotrain/gotrain/data"
)

// Prepared is the host-side preparation of a training set that every
// learner shares: validated options, bin codes, the fixed-point target or
// the class labels, and the feature subsampling size.
type Prepared[O, F any] struct {
	// Options are the options with defaults filled in.
	Options O
	// Rows and Cols are the training set's dimensions.
	Rows, Cols int
	// Codes are the bin codes, row-major Rows x Cols; nil when only
	// CodesByColumn holds them (a data set binned a column at a time, for
	// the native learner, which makes these only if it reads by row).
	// Prepare always gives them.
	Codes []uint8
	// CodesByColumn, when not nil, holds the codes column-major (Cols x
	// Rows), the way binning a column at a time makes them. Prepare drops
	// them (the other learners read Codes).
	CodesByColumn []uint8
	// Columns is what package forest's learner keeps of the codes when it
	// keeps neither Codes nor CodesByColumn (its own column store), for
	// Finish; nil otherwise.
	Columns any
	// Edges are each feature's bin edges (the forest's Binner.Edges): a
	// split on bin b of feature j has threshold Edges[j][b].
	Edges [][]float64
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
	// Class is each row's class index (classification); nil for regression.
	Class []int32
	// Outputs is the number of sums per node: 1 (regression) or len(Classes).
	Outputs int
	// K is the number of features each node examines.
	K int
	// Draws is the number of bootstrap draws per tree.
	Draws int
	// Y is the training target, kept for the out-of-bag score.
	Y []float64
	// W is each row's sample weight in fixed point (docs/FOREST.md,
	// "Sample and class weights"), nil when every row weighs 1: a row's
	// weight in a tree is its bootstrap count times W. Sample holds the
	// same weights as given (sample times class weight), nil likewise.
	W      []int64
	Sample []float64
	// Copies tells that W holds the sample weights as given, integers
	// (no fixed-point scaling) summing to at most 2^24: a row then counts
	// as W copies of it in the target's mean.
	Copies bool
	// WeightBound bounds the weight of any node of any tree: the number
	// of rows (unweighted), else the total weight without bootstrap or the
	// draws times the largest W with it.
	WeightBound int64

	// NewForest returns the forest the trees are grown into: trees empty
	// trees and no out-of-bag score yet.
	NewForest func(trees int) F
	// Finish completes a forest whose trees are grown: it computes the
	// out-of-bag score when the options ask for it, from inbag (one bit
	// mask of drawn rows per tree, as from InBagMask), and keeps the leaf
	// samples when asked (the predictor is built on first use).
	Finish func(f F, inbag [][]uint64) error
}

// Stride is the number of int64 statistics per histogram entry: the distinct
// rows n, the bootstrap weight w, and Outputs sums.
func (p *Prepared[O, F]) Stride() int { return 2 + p.Outputs }

// LeafValue appends the value of a node with statistics st (n, w, sums) to
// vals, exactly as forest.Fit computes it: the mean target (regression) or
// the class probabilities.
func (p *Prepared[O, F]) LeafValue(vals []float64, st []int64) []float64 {
	w := float64(st[1])
	if p.Class == nil {
		return append(vals, float64(st[2])/w/p.Scale+p.YMean)
	}
	for _, s := range st[2:p.Stride()] {
		vals = append(vals, float64(s)/w)
	}
	return vals
}

// prepare is package forest's preparation function, a
// func(*data.Dataset, O) (*Prepared[O, F], error).
var prepare any

// Register records package forest's preparation function; forest calls it
// when it is initialised.
func Register[O, F any](fn func(d *data.Dataset, opt O) (*Prepared[O, F], error)) {
	prepare = fn
}

// Prepare validates d and opt and prepares d for growing trees, with the
// function package forest registered.
func Prepare[O, F any](d *data.Dataset, opt O) (*Prepared[O, F], error) {
	fn, ok := prepare.(func(*data.Dataset, O) (*Prepared[O, F], error))
	if !ok {
		return nil, fmt.Errorf("forest/internal/core: no preparation registered for %T (package forest is not initialised)", opt)
	}
	pr, err := fn(d, opt)
	if pr != nil && pr.CodesByColumn != nil {
		if pr.Codes == nil {
			pr.Codes = RowMajor(pr.CodesByColumn, pr.Rows, pr.Cols, 0)
		}
		pr.CodesByColumn = nil
	}
	return pr, err
}

// RowMajor returns the codes xc, column-major (p columns of n rows),
// transposed to row-major (n rows of p), on up to threads goroutines (0:
// one per CPU).
func RowMajor(xc []uint8, n, p, threads int) []uint8 {
	xb := make([]uint8, n*p)
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	const block = 64 // rows at a time: their p codes stay in cache
	blocks := (n + block - 1) / block
	threads = max(1, min(threads, blocks))
	var wg sync.WaitGroup
	for w := range threads {
		wg.Go(func() {
			for k := w; k < blocks; k += threads {
				r0, r1 := k*block, min(k*block+block, n)
				RowsOf(xb[r0*p:r1*p], xc, n, p, r0, r1)
			}
		})
	}
	wg.Wait()
	return xb
}

// RowsOf writes rows [lo,hi) of the codes xc, column-major (p columns of
// n rows), into dst row-major ((hi-lo)·p codes).
func RowsOf(dst, xc []uint8, n, p, lo, hi int) {
	for j := 0; j < p; j++ {
		for i, c := range xc[j*n+lo : j*n+hi] {
			dst[i*p+j] = c
		}
	}
}

// Node is a node of a tree being grown by a level-wise learner (the level
// host, the graph learner) or of a subtree that package forest's learner
// grew for one (Subtrees: the subtree's nodes in breadth-first order,
// node 0 its root): a split node's children at Left and Left+1, Left −1
// at a leaf; Values are the node's Outputs values.
type Node struct {
	Feature     int32
	Bin         uint8
	MissingLeft bool
	Left        int32
	N           int32
	W           int64
	Gain        float64
	Values      []float64
}

// Subtrees grows the subtrees of a preparation's trees with package
// forest's learner, as forest.Fit grows them below a node. One value is
// used by one goroutine at a time.
type Subtrees interface {
	// Grow grows the subtree of tree t below a node with key key at depth
	// depth whose rows are rows (increasing indices), each weighing
	// weights[i] in the tree (its bootstrap count times its sample
	// weight); minW is the tree's least leaf weight. The node must not be
	// categorical-only material: categorical splits are not returned.
	Grow(t int, rows []int32, weights []int64, key uint64, depth int, minW int64) ([]Node, error)
}

// newSubtrees is package forest's constructor of Subtrees, a
// func(*Prepared[O, F]) Subtrees.
var newSubtrees any

// RegisterSubtrees records package forest's constructor of Subtrees.
func RegisterSubtrees[O, F any](fn func(*Prepared[O, F]) Subtrees) { newSubtrees = fn }

// NewSubtrees returns a Subtrees for pr, with the constructor package
// forest registered.
func NewSubtrees[O, F any](pr *Prepared[O, F]) (Subtrees, error) {
	fn, ok := newSubtrees.(func(*Prepared[O, F]) Subtrees)
	if !ok {
		return nil, fmt.Errorf("forest/internal/core: no subtree learner registered for %T (package forest is not initialised)", pr)
	}
	return fn(pr), nil
}

// XLogX is x·ln x with 0·ln 0 = 0 (the entropy proxy's terms).
func XLogX(x float64) float64 {
	if x <= 0 {
		return 0
	}
	return float64(x * math.Log(x))
}

// Proxy is the impurity proxy of a side of a split with statistics st
// (n, w, then the sums: one for regression, one a class otherwise), the
// expression every learner scores splits with (docs/FOREST.md, "Split
// rules"): s²/w for regression (classes false), Σ c_k²/w for Gini,
// Σ c_k·ln c_k − w·ln w for entropy, 0 for an empty side. Higher is purer.
func Proxy(st []int64, classes, entropy bool) float64 {
	w := float64(st[1])
	if w <= 0 {
		return 0
	}
	switch {
	case !classes:
		s := float64(st[2])
		return float64(s*s) / w
	case entropy:
		var s float64
		for _, v := range st[2:] {
			s += XLogX(float64(v))
		}
		return s - XLogX(w)
	}
	var sq int64
	for _, v := range st[2:] {
		sq += v * v
	}
	return float64(sq) / w
}

// Better reports whether the candidate split (score, feature j, bin, missing
// values left ml) beats the best so far (ok: there is one, with curScore,
// curJ, curBin, curML): a higher score, then the lower feature, the lower
// bin, missing values right before left — the tie rule of every learner.
func Better(ok bool, curScore float64, curJ, curBin int, curML bool, score float64, j, bin int, ml bool) bool {
	if !ok || score > curScore {
		return true
	}
	if score < curScore {
		return false
	}
	if j != curJ {
		return j < curJ
	}
	if bin != curBin {
		return bin < curBin
	}
	return !ml && curML
}
