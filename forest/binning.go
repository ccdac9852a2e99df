package forest

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// Binner maps raw feature values to bin codes. Feature j has NumBins(j) real
// bins 0..NumBins(j)-1; code NumBins(j) is its missing-value (NaN) bin. A value
// x falls in the first bin b with x <= Edges[j][b], or in the last real bin.
// Thus x <= Edges[j][b] exactly when code(x) <= b, and a split on bin b is the
// threshold Edges[j][b].
//
// A categorical feature (Categories[j] not nil) has a bin per category:
// code c is category c, its edges are the midpoints 0.5, 1.5, ... between
// the category indices, its missing code is the number of categories, and
// a value that is not a category index (data.Unseen: a category that the
// training data lacked) gets UnseenCode.
type Binner struct {
	// Edges are each feature's ascending upper bin edges (NumBins(j)-1 of them).
	Edges [][]float64
	// Categories holds the dictionary of each categorical feature (the
	// training data's, data.Dataset.Categories), nil for numeric ones;
	// Categories is nil when no feature is categorical.
	Categories [][]string

	keys [][]uint64 // orderKey of each edge, for a branch-free search (see prepare)
}

// orderKey maps a non-NaN float64 to a uint64 with the same order
// (−0 and +0 map to neighbouring keys; the edges never contain NaN).
func orderKey(x float64) uint64 {
	b := math.Float64bits(x)
	if b>>63 != 0 {
		return ^b
	}
	return b | 1<<63
}

// prepare computes the integer search keys of the edges. Code works without
// them, more slowly; NewBinner and the predictor call it.
func (bn *Binner) prepare() {
	if bn.keys != nil {
		return
	}
	keys := make([][]uint64, len(bn.Edges))
	for j, e := range bn.Edges {
		keys[j] = edgeKeys(e)
	}
	bn.keys = keys
}

// edgeKeys returns the orderKey of each edge.
func edgeKeys(edges []float64) []uint64 {
	keys := make([]uint64, len(edges))
	for i, v := range edges {
		keys[i] = orderKey(v)
	}
	return keys
}

// UnseenCode is the bin code of a categorical value that is not one of its
// feature's categories.
const UnseenCode = 255

// MaxCategories is the most categories a categorical feature may have: its
// codes, its missing code and UnseenCode fit in a byte.
const MaxCategories = 254

// IsCategorical reports whether feature j is categorical (false for a nil Binner).
func (bn *Binner) IsCategorical(j int) bool {
	return bn != nil && j < len(bn.Categories) && bn.Categories[j] != nil
}

// HasCategorical reports whether any feature is categorical (false for a nil Binner).
func (bn *Binner) HasCategorical() bool {
	if bn == nil {
		return false
	}
	for _, c := range bn.Categories {
		if c != nil {
			return true
		}
	}
	return false
}

// categoryEdges returns the edges of a categorical feature of k
// categories: the midpoints between the indices 0..k-1.
func categoryEdges(k int) []float64 {
	e := make([]float64, max(k-1, 0))
	for c := range e {
		e[c] = float64(c) + 0.5
	}
	return e
}

// NumBins returns feature j's number of real bins.
func (bn *Binner) NumBins(j int) int { return len(bn.Edges[j]) + 1 }

// MissingCode returns feature j's missing-value code.
func (bn *Binner) MissingCode(j int) uint8 { return uint8(len(bn.Edges[j]) + 1) }

// NewBinner computes quantile bins for each column of the row-major matrix x
// (rows x cols) with at most maxBins-1 real bins per feature (one code is kept
// for missing values). When a feature has fewer distinct values than that,
// each value gets its own bin and the edges are the midpoints between
// consecutive values, which are also the thresholds an exact learner tries.
func NewBinner(x []float64, rows, cols, maxBins int) (*Binner, error) {
	return newBinner(x, rows, cols, maxBins, 1, nil, nil)
}

// newBinner is NewBinner with features binned on up to threads goroutines
// and, when w is not nil, each row weighing w[i] (fixed point; a row of
// weight 0 is left out): the edges of a row of integer weight k are those
// of k copies of it. A feature with a dictionary in cats is categorical.
func newBinner(x []float64, rows, cols, maxBins, threads int, w []int64, cats [][]string) (*Binner, error) {
	if maxBins < 2 || maxBins > 256 {
		return nil, fmt.Errorf("forest: bins = %d, want 2..256", maxBins)
	}
	bn := &Binner{Edges: make([][]float64, cols), Categories: cats}
	errs := make([]error, cols)
	parallelBlocks(cols, threads, 1, func(lo, hi int) {
		var cb columnBinner
		for j := lo; j < hi; j++ {
			if bn.IsCategorical(j) {
				bn.Edges[j] = categoryEdges(len(cats[j]))
				continue
			}
			bn.Edges[j], errs[j] = cb.edges(x[j:], cols, rows, j, w, maxBins)
		}
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	bn.prepare()
	return bn, nil
}

// columnBinner computes the edges of one feature at a time, reusing its
// buffers.
type columnBinner struct {
	vals []float64
	wts  []int64
	set  distinctSet
	// codes caches the codes of a column of few distinct values
	// (binColumn), direct-mapped by the value's bits; an entry is the
	// current column's when its tag is gen.
	codes *[1 << codeCacheBits]cachedCode
	gen   uint32
}

// codeCacheBits sets the size of columnBinner's code cache: 1,024
// entries, for columns of at most maxDistinct distinct values.
const codeCacheBits = 10

// cachedCode is an entry of columnBinner's code cache.
type cachedCode struct {
	bits uint64
	tag  uint32
	code uint8
}

// edges returns the bin edges of feature j, whose value in row i is
// x[i*stride] (rows rows), each row weighing w[i] when w is not nil.
func (cb *columnBinner) edges(x []float64, stride, rows, j int, w []int64, maxBins int) ([]float64, error) {
	set := &cb.set
	set.reset()
	total := 0
	// Runs of one value (zeros, repeated levels) are counted once: the
	// set sees a value and its run's weight.
	run, runW := math.NaN(), 0
	for i := 0; i < rows; i++ {
		v := x[i*stride]
		if math.IsInf(v, 0) {
			return nil, fmt.Errorf("forest: row %d, feature %d: infinite value", i, j)
		}
		k := 1
		if w != nil {
			if w[i] <= 0 {
				continue
			}
			k = int(w[i])
		}
		if math.IsNaN(v) {
			continue
		}
		total += k
		if v == run { // −0 and +0 too: the set has them as one value
			runW += k
			continue
		}
		if runW > 0 {
			set.add(run, runW)
		}
		run, runW = v, k
	}
	if runW > 0 {
		set.add(run, runW)
	}
	if set.few() {
		// Few distinct values: their counts give the edges without
		// sorting every value.
		return set.edges(total, maxBins-1), nil
	}
	vals, wts := cb.vals[:0], cb.wts[:0]
	defer func() { cb.vals, cb.wts = vals, wts }()
	for i := 0; i < rows; i++ {
		v := x[i*stride]
		switch {
		case math.IsNaN(v):
		case w == nil:
			vals = append(vals, v)
		case w[i] > 0:
			vals, wts = append(vals, v), append(wts, w[i])
		}
	}
	if w == nil {
		return quantileEdges(vals, maxBins-1), nil
	}
	return weightedQuantileEdges(vals, wts, total, maxBins-1), nil
}

// distinctSet counts the distinct values of a feature while there are at
// most maxDistinct of them (an open-addressing hash set over their bits,
// −0 counted as +0, as the sort in quantileEdges has them equal).
type distinctSet struct {
	slots  []uint64 // bits+1 of a value, 0 for an empty slot
	index  []int32  // the slot's value in vals
	vals   []float64
	counts []int
	over   bool
}

// maxDistinct bounds the values a distinctSet counts; its table has twice
// as many slots.
const maxDistinct = 4096

func (s *distinctSet) reset() {
	if s.slots == nil {
		s.slots = make([]uint64, 2*maxDistinct)
		s.index = make([]int32, 2*maxDistinct)
	}
	clear(s.slots)
	s.vals, s.counts, s.over = s.vals[:0], s.counts[:0], false
}

// add counts v (not NaN) k times.
func (s *distinctSet) add(v float64, k int) {
	if s.over {
		return
	}
	if v == 0 {
		v = 0 // −0 and +0 are one value
	}
	key := math.Float64bits(v) + 1
	mask := uint64(len(s.slots) - 1)
	for i := (key * 0x9E3779B97F4A7C15) >> 40 & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case key:
			s.counts[s.index[i]] += k
			return
		case 0:
			if len(s.vals) == maxDistinct {
				s.over = true
				return
			}
			s.slots[i], s.index[i] = key, int32(len(s.vals))
			s.vals = append(s.vals, v)
			s.counts = append(s.counts, k)
			return
		}
	}
}

// few reports whether the values added were at most maxDistinct distinct ones.
func (s *distinctSet) few() bool { return !s.over }

// edges is quantileEdges of the n values counted.
func (s *distinctSet) edges(n, maxReal int) []float64 {
	order := make([]int, len(s.vals))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(s.vals[a], s.vals[b]) })
	distinct := make([]float64, len(order))
	counts := make([]int, len(order))
	for k, i := range order {
		distinct[k], counts[k] = s.vals[i], s.counts[i]
	}
	return distinctEdges(distinct, counts, n, maxReal)
}

// quantileEdges returns at most maxReal-1 edges splitting vals (modified:
// sorted) into bins of about equal counts, placed midway between distinct values.
func quantileEdges(vals []float64, maxReal int) []float64 {
	if len(vals) == 0 {
		return nil
	}
	slices.Sort(vals)
	// Distinct values and their counts.
	var distinct []float64
	var counts []int
	for i, v := range vals {
		if i == 0 || v != vals[i-1] {
			distinct = append(distinct, v)
			counts = append(counts, 0)
		}
		counts[len(counts)-1]++
	}
	return distinctEdges(distinct, counts, len(vals), maxReal)
}

// weightedQuantileEdges is quantileEdges of vals (modified: sorted with
// their weights wts, which sum to total), each value counted as often as
// its weight.
func weightedQuantileEdges(vals []float64, wts []int64, total, maxReal int) []float64 {
	if len(vals) == 0 {
		return nil
	}
	order := make([]int, len(vals))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(vals[a], vals[b]) })
	var distinct []float64
	var counts []int
	for k, i := range order {
		if k == 0 || vals[i] != vals[order[k-1]] {
			distinct = append(distinct, vals[i])
			counts = append(counts, 0)
		}
		counts[len(counts)-1] += int(wts[i])
	}
	return distinctEdges(distinct, counts, total, maxReal)
}

// distinctEdges is quantileEdges given the distinct values in increasing
// order, how many times each occurs, and n, the number of values.
func distinctEdges(distinct []float64, counts []int, n, maxReal int) []float64 {
	if len(distinct) == 0 {
		return nil
	}
	mid := func(a, b float64) float64 {
		m := a + (b-a)/2
		if m >= b { // a and b are adjacent floats
			m = a
		}
		return m
	}
	if len(distinct) <= maxReal {
		edges := make([]float64, len(distinct)-1)
		for i := range edges {
			edges[i] = mid(distinct[i], distinct[i+1])
		}
		return edges
	}
	// Greedy equal-frequency bins over the distinct values.
	edges := make([]float64, 0, maxReal-1)
	cum := 0
	for i := 0; i < len(distinct)-1 && len(edges) < maxReal-1; i++ {
		cum += counts[i]
		target := float64(n) * float64(len(edges)+1) / float64(maxReal)
		if float64(cum) >= target {
			edges = append(edges, mid(distinct[i], distinct[i+1]))
		}
	}
	return edges
}

// Code returns the bin code of value v for feature j.
func (bn *Binner) Code(j int, v float64) uint8 {
	e := bn.Edges[j]
	if math.IsNaN(v) {
		return uint8(len(e) + 1)
	}
	if bn.Categories != nil && bn.Categories[j] != nil {
		if k := len(bn.Categories[j]); v >= 0 && v < float64(k) && v == math.Trunc(v) {
			return uint8(v)
		}
		return UnseenCode
	}
	var keys []uint64
	if bn.keys != nil {
		keys = bn.keys[j]
	}
	return numericCode(e, keys, v)
}

// numericCode is Binner.Code of a numeric feature with edges e (and their
// search keys, edgeKeys(e), or nil) for a value v that is not NaN.
func numericCode(e []float64, keys []uint64, v float64) uint8 {
	// The number of edges below v, by a branch-free binary search over
	// integer keys: base only moves forward, by a conditional move.
	n := len(e)
	if n == 0 {
		return 0
	}
	if keys != nil {
		if v == 0 {
			v = 0 // −0 and +0 are equal: search for +0
		}
		k, ek := orderKey(v), keys[:n]
		base := 0
		for n > 1 {
			half := n >> 1
			_, lt := bits.Sub64(ek[base+half-1], k, 0) // 1 when edge < k
			base += half & -int(lt)
			n -= half
		}
		_, lt := bits.Sub64(ek[base], k, 0)
		return uint8(base + int(lt))
	}
	base := 0
	for n > 1 {
		half := n >> 1
		if e[base+half-1] < v {
			base += half
		}
		n -= half
	}
	if e[base] < v {
		base++
	}
	return uint8(base)
}

// Transform bins the row-major matrix x (rows x cols) into codes, row-major.
func (bn *Binner) Transform(x []float64, rows, cols int, dst []uint8) []uint8 {
	return bn.transform(x, rows, cols, dst, 1)
}

// transform is Transform on up to threads goroutines.
func (bn *Binner) transform(x []float64, rows, cols int, dst []uint8, threads int) []uint8 {
	if cap(dst) < rows*cols {
		dst = make([]uint8, rows*cols)
	}
	dst = dst[:rows*cols]
	parallelRows(rows, threads, func(lo, hi int) {
		// Remember each feature's last value and code: data sets often repeat
		// values (zeros, categories), and a repeat skips the search.
		last := make([]float64, cols)
		code := make([]uint8, cols)
		for j := range last {
			last[j] = math.NaN()
		}
		for i := lo; i < hi; i++ {
			row, out := x[i*cols:(i+1)*cols], dst[i*cols:(i+1)*cols]
			for j, v := range row {
				if v != last[j] { // also true for NaN, which Code handles
					last[j], code[j] = v, bn.Code(j, v)
				}
				out[j] = code[j]
			}
		}
	})
	return dst
}
