package forest

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/gotrain/gotrain/data"
)

// The predictor.
//
// Prediction bins each input row once (Binner.Code) and walks compact trees
// over the codes. Each tree is compiled into 8-byte nodes laid out
// depth-first, so a node's left child is the next node. A leaf tests a
// padding column whose code (255) never goes left, and its right child is
// itself: every row can take exactly Depth steps without testing for leaves,
// and each step picks the child without a branch. Rows go through a tree in
// large blocks (so the tree stays in cache) and several at a time (so their
// walks overlap in the CPU). Since code(x) <= b exactly when x <= Edges[j][b],
// this gives the same leaves as comparing raw values with Tree.Threshold
// (tested).

// cnode is a compiled node: a row whose code c at feature satisfies c <= bin
// or c == missing goes to the next node (the left child), others to right.
type cnode struct {
	right   int32
	feature uint16
	bin     uint8
	missing uint8
}

// ctree is a compiled tree.
type ctree struct {
	nodes []cnode
	// vals holds the leaf values. With one output (regression) it holds
	// each compiled node's value, in the compiled (depth-first) order,
	// next to each other as the walk leaves them. With several (the
	// class probabilities) it is the tree's own Value, not copied (it
	// would double the forest's size: 80 bytes a node for ten classes),
	// and src gives each compiled node's index in the tree.
	vals  []float64
	src   []int32
	depth int
	// set is, for a tree with categorical splits, the index in sets of
	// each compiled node's category set (-1: a numeric split or a leaf);
	// nil for the other trees.
	set  []int32
	sets []CategorySet
}

// compiled is the predictor built from a forest's trees.
type compiled struct {
	trees []ctree
	// stride is the number of codes per binned row: the features plus the
	// padding column that leaves test.
	stride int
}

// compileMu guards the lazy compilation of forests built without Fit or Load.
var compileMu sync.Mutex

// compiledTrees returns the forest's predictor, building it on first use.
func (f *Forest) compiledTrees() (*compiled, error) {
	compileMu.Lock()
	defer compileMu.Unlock()
	if f.pred != nil {
		return f.pred, nil
	}
	c, err := compile(f)
	if err != nil {
		return nil, err
	}
	f.pred = c
	return c, nil
}

// compile builds the predictor of f.
func compile(f *Forest) (*compiled, error) {
	if f.NumFeatures >= 1<<16-1 {
		return nil, fmt.Errorf("forest: %d features is too many for the predictor", f.NumFeatures)
	}
	f.Binner.prepare()
	pad := uint16(f.NumFeatures) // the padding column, always code 255
	c := &compiled{trees: make([]ctree, len(f.Trees)), stride: f.NumFeatures + 1}
	d := int32(f.Outputs())
	for t := range f.Trees {
		tr := &f.Trees[t]
		nn := tr.NumNodes()
		if err := tr.Check(); err != nil {
			return nil, fmt.Errorf("forest: tree %d: %w", t, err)
		}
		if len(tr.Value) != nn*int(d) {
			return nil, fmt.Errorf("forest: tree %d: %d values for %d nodes of %d outputs", t, len(tr.Value), nn, d)
		}
		ct := ctree{nodes: make([]cnode, 0, nn), depth: tr.Depth()}
		if d == 1 {
			ct.vals = make([]float64, 0, nn)
		} else {
			ct.vals, ct.src = tr.Value[:nn*int(d):nn*int(d)], make([]int32, 0, nn)
		}
		if tr.Category != nil {
			ct.set = make([]int32, 0, nn)
		}
		// Depth-first order with an explicit stack (trees can be deep): the
		// left child follows its parent; the parent learns its right child
		// when that is placed.
		type item struct{ src, parent int32 }
		stack := []item{{0, -1}}
		for len(stack) > 0 {
			it := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			at := int32(len(ct.nodes))
			if it.parent >= 0 {
				ct.nodes[it.parent].right = at
			}
			i := it.src
			if d == 1 {
				ct.vals = append(ct.vals, tr.Value[i])
			} else {
				ct.src = append(ct.src, i)
			}
			if tr.Feature[i] < 0 {
				ct.nodes = append(ct.nodes, cnode{right: at, feature: pad, bin: 254, missing: 0})
				continue
			}
			j := tr.Feature[i]
			nd := cnode{right: -1, feature: uint16(j), bin: tr.Bin(int(i)), missing: tr.Bin(int(i))}
			if tr.MissingLeft(int(i)) {
				nd.missing = f.Binner.MissingCode(int(j))
			}
			ct.nodes = append(ct.nodes, nd)
			if tr.Category != nil {
				for len(ct.set) < len(ct.nodes) {
					ct.set = append(ct.set, -1)
				}
				ct.set[at] = tr.Category[i]
			}
			// The right child is pushed first so the left one is placed next.
			stack = append(stack, item{tr.Left[i] + 1, at}, item{tr.Left[i], -1})
		}
		if tr.Category != nil {
			for len(ct.set) < len(ct.nodes) {
				ct.set = append(ct.set, -1)
			}
			ct.sets = tr.Sets
		}
		c.trees[t] = ct
	}
	return c, nil
}

// predictBlock is the number of rows binned and pushed through every tree at a time.
const predictBlock = 16384

// group is the number of rows walked through a tree together.
const group = 16

// leaves sets leaf[i] to the compiled node (a leaf) reached by row i of the binned
// block codes (n rows of stride codes) in tree ct. codes must have 3 bytes
// of slack after the last row (the vector kernel reads 4 bytes at a time).
func leaves(ct *ctree, codes []uint8, stride, n int, leaf []int32) {
	nodes := ct.nodes
	i := 0
	if ct.set != nil {
		// A tree with categorical splits: one row at a time, each node
		// testing its set or its bin.
		for ; i < n; i++ {
			row := codes[i*stride : (i+1)*stride]
			k := int32(0)
			for range ct.depth {
				nd := nodes[k]
				c := row[nd.feature]
				var left bool
				if s := ct.set[k]; s >= 0 {
					left = ct.sets[s].Has(c)
				} else {
					left = c <= nd.bin || c == nd.missing
				}
				if left {
					k++
				} else {
					k = nd.right
				}
			}
			leaf[i] = k
		}
		return
	}
	if useAVX512 && len(nodes) > 0 && len(codes) >= n*stride+3 {
		var offs, out [16]int32
		var out48 [48]int32
		for g := range offs {
			offs[g] = int32(g * stride)
		}
		for ; i+48 <= n; i += 48 {
			walk48(&nodes[0], &codes[i*stride], &offs, 16*stride, ct.depth, &out48, &walkPerm)
			copy(leaf[i:i+48], out48[:])
		}
		for ; i+16 <= n; i += 16 {
			walk16(&nodes[0], &codes[i*stride], &offs, ct.depth, &out, &walkPerm)
			for g, k := range out {
				leaf[i+g] = k
			}
		}
	}
	for ; i+group <= n; i += group {
		var idx [group]int32
		base := codes[i*stride : (i+group)*stride]
		for range ct.depth {
			for g := range idx {
				k := idx[g]
				nd := nodes[k]
				c := base[g*stride+int(nd.feature)]
				var l, m int32
				if c <= nd.bin {
					l = 1
				}
				if c == nd.missing {
					m = 1
				}
				// k+1 (the left child) when l|m, else right, without a branch.
				idx[g] = nd.right + (k+1-nd.right)&-(l|m)
			}
		}
		for g := range idx {
			leaf[i+g] = idx[g]
		}
	}
	for ; i < n; i++ {
		row := codes[i*stride : (i+1)*stride]
		k := int32(0)
		for range ct.depth {
			nd := nodes[k]
			c := row[nd.feature]
			if c <= nd.bin || c == nd.missing {
				k++
			} else {
				k = nd.right
			}
		}
		leaf[i] = k
	}
}

// accumulate adds, in tree order, the leaf values of rows [lo,hi) of the
// row-major matrix x into out (Outputs values per row).
func (f *Forest) accumulate(c *compiled, x []float64, lo, hi int, out []float64) {
	p, d, stride := f.NumFeatures, f.Outputs(), c.stride
	block := min(predictBlock, hi-lo)
	codes := make([]uint8, block*stride+3)
	leaf := make([]int32, block)
	for b := lo; b < hi; b += block {
		e := min(hi, b+block)
		n := e - b
		for i := 0; i < n; i++ {
			row, dst := x[(b+i)*p:(b+i+1)*p], codes[i*stride:(i+1)*stride]
			for j, v := range row {
				dst[j] = f.Binner.Code(j, v)
			}
			dst[p] = 255
		}
		c.addLeaves(codes, n, d, leaf[:n], out[b*d:e*d])
	}
}

// addLeaves adds, in tree order, the leaf values of the n binned rows of
// codes (c.stride codes a row, 3 bytes of slack after the last) into out
// (d values per row), with leaf as scratch.
func (c *compiled) addLeaves(codes []uint8, n, d int, leaf []int32, out []float64) {
	for t := range c.trees {
		leaves(&c.trees[t], codes, c.stride, n, leaf)
		vals, src := c.trees[t].vals, c.trees[t].src
		if d == 1 {
			for i, v := range leaf {
				out[i] += vals[v]
			}
			continue
		}
		for i, v := range leaf {
			o, s := out[i*d:(i+1)*d], int(src[v])
			for q, val := range vals[s*d : (s+1)*d] {
				o[q] += val
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
	c, err := f.compiledTrees()
	if err != nil {
		return nil, err
	}
	return f.sumLeaves(rows, func(lo, hi int, out []float64) { f.accumulate(c, x, lo, hi, out) }), nil
}

// sumLeaves returns the mean over trees of the leaf values of rows rows
// (Outputs() values a row), add(lo, hi, out) adding the leaf values of
// rows [lo,hi) into out (all rows' values) for each block of rows.
func (f *Forest) sumLeaves(rows int, add func(lo, hi int, out []float64)) []float64 {
	d := f.Outputs()
	out := make([]float64, rows*d)
	// Blocks of at most predictBlock rows, as many per thread, so that no
	// thread is left with one block more than the others.
	threads := f.Options.Threads
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	nb := (rows + predictBlock - 1) / predictBlock
	nb = (nb + threads - 1) / threads * threads
	block := max(1, (rows+nb-1)/max(nb, 1))
	parallelBlocks(rows, threads, block, func(lo, hi int) { add(lo, hi, out) })
	inv := 1 / float64(len(f.Trees))
	for i := range out {
		out[i] *= inv
	}
	return out
}

// classes turns PredictValues' values v into Predict's: the value
// (regression) or the index of the most probable class.
func (f *Forest) classes(v []float64, rows int) []float64 {
	if f.Options.Task == Regression {
		return v
	}
	d := f.Outputs()
	out := make([]float64, rows)
	for i := range out {
		out[i] = float64(argmax(v[i*d : (i+1)*d]))
	}
	return out
}

// columnCodes bins a data set read a column at a time (d.X nil, d.Source
// set) for prediction without reading it into a matrix of float64: each
// feature column is read and binned into every row's codes, one byte a
// value (MNIST's test set: 8 MB instead of 63), row-major with the
// predictor's padding column. Columns are found as FeatureMatrix finds
// them. binning is the time spent binning (the reads excluded). ok is
// false, and nothing binned, when a feature is categorical (the forest's
// or the data's): FeatureMatrix then maps the categories.
func (f *Forest) columnCodes(d *data.Dataset) (codes []uint8, binning time.Duration, ok bool, err error) {
	if d == nil || d.X != nil || d.Source == nil || f.Binner.HasCategorical() || d.HasCategories() {
		return nil, 0, false, nil
	}
	idx, err := f.columns(d)
	if err != nil {
		return nil, 0, false, err
	}
	rows, stride := d.Rows, f.NumFeatures+1
	if rows < 0 || uint64(rows)*uint64(stride) > math.MaxInt/2 {
		return nil, 0, false, fmt.Errorf("forest: %w: %d rows of %d features is too many", ErrShape, rows, f.NumFeatures)
	}
	f.Binner.prepare()
	codes = make([]uint8, rows*stride+3) // 3 bytes of slack: leaves
	var col []float64
	for k, j := range idx {
		vals, dict, err := d.Source.ReadColumn(j, col)
		switch {
		case err != nil:
			return nil, 0, false, err
		case dict != nil:
			return nil, 0, false, nil
		case len(vals) != rows:
			return nil, 0, false, fmt.Errorf("forest: %s: feature column %d has %d values, want %d", d.Name, j+1, len(vals), rows)
		}
		col = vals
		start := time.Now()
		last, code := math.NaN(), uint8(0)
		for i, v := range vals {
			if v != last { // also true for NaN, which Code handles
				last, code = v, f.Binner.Code(k, v)
			}
			codes[i*stride+k] = code
		}
		binning += time.Since(start)
	}
	for i := range rows {
		codes[i*stride+stride-1] = 255 // the padding column leaves test
	}
	return codes, binning, true, nil
}

// predictCodes is Predict for rows binned by columnCodes.
func (f *Forest) predictCodes(codes []uint8, rows int) ([]float64, error) {
	c, err := f.compiledTrees()
	if err != nil {
		return nil, err
	}
	if len(codes) != rows*c.stride+3 {
		return nil, fmt.Errorf("forest: %w: %d codes for %d rows of %d features", ErrShape, len(codes), rows, f.NumFeatures)
	}
	d, stride := f.Outputs(), c.stride
	v := f.sumLeaves(rows, func(lo, hi int, out []float64) {
		leaf := make([]int32, hi-lo)
		c.addLeaves(codes[lo*stride:], hi-lo, d, leaf, out[lo*d:hi*d])
	})
	return f.classes(v, rows), nil
}

// Predict returns one prediction per row: the regression value, or the index
// of the most probable class (the first one on a tie).
func (f *Forest) Predict(x []float64, rows int) ([]float64, error) {
	v, err := f.PredictValues(x, rows)
	if err != nil {
		return nil, err
	}
	return f.classes(v, rows), nil
}
