package forest

import (
	"fmt"
	"sync"
)

// The predictor.
//
// Prediction bins each input row once (Binner.Code) and walks compact trees
// over the codes: a node is 8 bytes, laid out depth-first so that the left
// child is the next node, and rows go through each tree in interleaved groups
// so that the walks of several rows overlap in the CPU. Since code(x) <= b
// exactly when x <= Edges[j][b], this gives the same leaves as comparing raw
// values with Tree.Threshold (tested).

// cnode is a compact node. Leaves have feature == leafFeature and next holding
// the index of their first value in Tree.Value.
type cnode struct {
	next    int32  // right child (internal) or value offset (leaf)
	feature uint16 // split feature, or leafFeature
	bin     uint8  // codes <= bin go left
	missing uint8  // a code equal to this goes left too (the missing code when missing values go left)
}

const leafFeature = 0xFFFF

// compiled is the predictor built from a forest's trees.
type compiled struct {
	trees [][]cnode
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
	if f.NumFeatures >= leafFeature {
		return nil, fmt.Errorf("forest: %d features is too many for the predictor", f.NumFeatures)
	}
	c := &compiled{trees: make([][]cnode, len(f.Trees))}
	d := int32(f.Outputs())
	for t := range f.Trees {
		tr := &f.Trees[t]
		out := make([]cnode, 0, tr.NumNodes())
		var walk func(i int32)
		walk = func(i int32) {
			at := len(out)
			if tr.Feature[i] < 0 {
				out = append(out, cnode{next: i * d, feature: leafFeature})
				return
			}
			j := tr.Feature[i]
			nd := cnode{feature: uint16(j), bin: tr.Bin[i], missing: tr.Bin[i]}
			if tr.MissingLeft[i] {
				nd.missing = f.Binner.MissingCode(int(j))
			}
			out = append(out, nd)
			walk(tr.Left[i])
			out[at].next = int32(len(out))
			walk(tr.Left[i] + 1)
		}
		walk(0)
		c.trees[t] = out
	}
	return c, nil
}

// predictBlock is the number of rows binned and pushed through every tree at a time.
const predictBlock = 4096

// group is the number of rows walked through a tree together.
const group = 8

// leaves sets leaf[i] to the value offset reached by row i of the binned
// block codes (n rows of p codes) in tree nodes.
func leaves(nodes []cnode, codes []uint8, p, n int, leaf []int32) {
	i := 0
	for ; i+group <= n; i += group {
		var idx [group]int32
		var row [group][]uint8
		for g := range row {
			row[g] = codes[(i+g)*p : (i+g+1)*p]
		}
		for {
			done := 0
			for g := 0; g < group; g++ {
				nd := nodes[idx[g]]
				if nd.feature == leafFeature {
					done++
					continue
				}
				c := row[g][nd.feature]
				if c <= nd.bin || c == nd.missing {
					idx[g]++
				} else {
					idx[g] = nd.next
				}
			}
			if done == group {
				break
			}
		}
		for g := 0; g < group; g++ {
			leaf[i+g] = nodes[idx[g]].next
		}
	}
	for ; i < n; i++ {
		row := codes[i*p : (i+1)*p]
		k := int32(0)
		for {
			nd := nodes[k]
			if nd.feature == leafFeature {
				break
			}
			c := row[nd.feature]
			if c <= nd.bin || c == nd.missing {
				k++
			} else {
				k = nd.next
			}
		}
		leaf[i] = nodes[k].next
	}
}

// accumulate adds, in tree order, the leaf values of rows [lo,hi) of the
// row-major matrix x into out (Outputs values per row).
func (f *Forest) accumulate(c *compiled, x []float64, lo, hi int, out []float64) {
	p, d := f.NumFeatures, f.Outputs()
	codes := make([]uint8, predictBlock*p)
	leaf := make([]int32, predictBlock)
	for b := lo; b < hi; b += predictBlock {
		e := min(hi, b+predictBlock)
		n := e - b
		f.Binner.Transform(x[b*p:e*p], n, p, codes)
		for t := range c.trees {
			leaves(c.trees[t], codes, p, n, leaf[:n])
			vals := f.Trees[t].Value
			if d == 1 {
				o := out[b:e]
				for i, v := range leaf[:n] {
					o[i] += vals[v]
				}
				continue
			}
			for i, v := range leaf[:n] {
				o := out[(b+i)*d : (b+i+1)*d]
				for q, val := range vals[v : int(v)+d] {
					o[q] += val
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
	c, err := f.compiledTrees()
	if err != nil {
		return nil, err
	}
	d := f.Outputs()
	out := make([]float64, rows*d)
	parallelBlocks(rows, f.Options.Threads, predictBlock, func(lo, hi int) { f.accumulate(c, x, lo, hi, out) })
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
