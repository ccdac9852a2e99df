package forestgraph

import (
	"fmt"
	"math"

	"github.com/gotrain/gotrain/forest"
)

// The host side of the predictor: a forest's trees turned into flat tables
// that the graphs gather from.
//
// The CPU predictor (forest.Forest.PredictValues) bins each value with
// Binner.Code and sends a row left at a node on feature j, bin b when
// code(x) <= b or code(x) is the node's missing code. Code(x) counts the
// edges below x in the order of the integer keys of package forest
// (orderKey), in which −0 sorts just below +0 (Code also turns an input −0
// into +0). For a non-NaN x that makes "code(x) <= b" the same as
// "x <= Edges[j][b]" in that key order, which is float order except that
// −0 < +0. The graphs compare raw float64 values with thresholds in float
// order, where −0 == +0, after one rewrite that restores the key order
// exactly: a threshold of −0 becomes −2^−1074 (the negative float nearest
// zero; in key order −0 lies between it and ±0 inputs, and no float lies
// between them). An input ±0 then compares as Code's +0 does. A bin at or
// past the last edge sends every non-NaN value left (threshold +Inf). A NaN
// goes left when the node sends missing values left or its bin is at or
// past the missing code (the CPU's "code == missing" or "code <= bin").

// nodeTable is the forest in flat arrays, one entry per node of all trees
// (tree after tree, each laid out depth-first as the CPU predictor's
// compiled trees: an internal node's left child is the next node).
type nodeTable struct {
	trees, outputs, features int
	depth                    int       // the deepest leaf of any tree
	root                     []int32   // each tree's root node
	feature                  []int32   // split feature (0 at leaves)
	right                    []int32   // right child; a leaf's is itself
	nanLeft                  []bool    // whether a NaN goes left
	thr                      []float64 // threshold; NaN at leaves (never left)
	value                    []float64 // outputs values per node
}

// leaf reports whether node i is a leaf.
func (nt *nodeTable) leaf(i int32) bool { return nt.right[i] == i }

// code is the feature of node i with its NaN direction, as the graphs read
// it: j when a NaN goes right, −(j+1) when it goes left.
func (nt *nodeTable) code(i int32) float64 {
	if nt.nanLeft[i] {
		return -float64(nt.feature[i]) - 1
	}
	return float64(nt.feature[i])
}

// negZeroThreshold replaces a threshold of −0 (see above).
var negZeroThreshold = -math.SmallestNonzeroFloat64

// threshold returns the float threshold and NaN direction of a split on
// feature j at bin b.
func threshold(bn *forest.Binner, j int, b uint8, missingLeft bool) (float64, bool) {
	edges := bn.Edges[j]
	thr := math.Inf(1)
	if int(b) < len(edges) {
		thr = edges[b]
		if thr == 0 && math.Signbit(thr) {
			thr = negZeroThreshold
		}
	}
	return thr, missingLeft || b >= bn.MissingCode(j)
}

// newNodeTable flattens f.
func newNodeTable(f *forest.Forest) (*nodeTable, error) {
	if f == nil || f.Binner == nil {
		return nil, fmt.Errorf("forestgraph: the forest has no binner")
	}
	if len(f.Trees) == 0 {
		return nil, fmt.Errorf("forestgraph: the forest has no trees")
	}
	if f.Binner.HasCategorical() {
		return nil, fmt.Errorf("forestgraph: the forest has categorical features, whose splits test sets of categories that the graph predictor's threshold tables cannot hold; predict on the CPU (--device cpu)")
	}
	if f.NumFeatures < 1 || len(f.Binner.Edges) != f.NumFeatures {
		return nil, fmt.Errorf("forestgraph: the forest has %d features and %d binned features", f.NumFeatures, len(f.Binner.Edges))
	}
	d := f.Outputs()
	if d < 1 {
		return nil, fmt.Errorf("forestgraph: the forest has %d outputs", d)
	}
	nt := &nodeTable{trees: len(f.Trees), outputs: d, features: f.NumFeatures}
	total := 0
	for t := range f.Trees {
		total += f.Trees[t].NumNodes()
	}
	if total >= math.MaxInt32 {
		return nil, fmt.Errorf("forestgraph: %d nodes is too many", total)
	}
	nt.feature = make([]int32, total)
	nt.right = make([]int32, total)
	nt.nanLeft = make([]bool, total)
	nt.thr = make([]float64, total)
	nt.value = make([]float64, total*d)
	at := int32(0)
	for t := range f.Trees {
		tr := &f.Trees[t]
		nn := tr.NumNodes()
		if err := tr.Check(); err != nil || len(tr.Value) != nn*d {
			return nil, fmt.Errorf("forestgraph: tree %d is malformed (%v)", t, err)
		}
		nt.root = append(nt.root, at)
		// Depth-first with an explicit stack: the right child is pushed
		// first, so the left one is placed next; a node learns its right
		// child's position when that is placed.
		type item struct{ src, parent int32 }
		stack := []item{{0, -1}}
		placed := 0
		for len(stack) > 0 {
			it := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if it.parent >= 0 {
				nt.right[it.parent] = at
			}
			i := it.src
			if placed++; placed > nn {
				return nil, fmt.Errorf("forestgraph: tree %d is malformed", t)
			}
			for q, x := range tr.Value[int(i)*d : (int(i)+1)*d] {
				if t == 0 && x == 0 {
					// The CPU sums from 0: 0 + x is x, except that −0 becomes +0.
					x = 0
				}
				nt.value[int(at)*d+q] = x
			}
			j := tr.Feature[i]
			if j < 0 {
				nt.right[at], nt.thr[at] = at, math.NaN()
				at++
				continue
			}
			l := tr.Left[i]
			if int(j) >= f.NumFeatures || l <= i || int(l)+1 >= nn {
				return nil, fmt.Errorf("forestgraph: tree %d node %d is malformed", t, i)
			}
			nt.feature[at] = j
			nt.thr[at], nt.nanLeft[at] = threshold(f.Binner, int(j), tr.Bin(int(i)), tr.MissingLeft(int(i)))
			stack = append(stack, item{l + 1, at}, item{l, -1})
			at++
		}
		td := tr.Depth()
		nt.depth = max(nt.depth, td)
	}
	return nt, nil
}

// perfectTables are the forest's trees as perfect binary trees of depth
// D = nodeTable.depth (Hummingbird's perfect tree traversal): level l of
// tree t has 2^l slots, slot k's children are slots 2k and 2k+1 of level
// l+1, and a leaf above the last level is continued by nodes that send
// every row right (threshold NaN) down to a bottom slot holding its value.
type perfectTables struct {
	rec   [][]float64 // per level: trees × 2^l × (code, threshold)
	value []float64   // trees × 2^D × outputs
}

// perfectSlots returns the number of bottom slots (trees × 2^depth).
func (nt *nodeTable) perfectSlots() int64 {
	if nt.depth >= 40 {
		return math.MaxInt64
	}
	return int64(nt.trees) << nt.depth
}

// perfect builds the perfect-tree tables of nt.
func (nt *nodeTable) perfect() *perfectTables {
	D, T, d := nt.depth, nt.trees, nt.outputs
	pt := &perfectTables{}
	for l := range D {
		rec := make([]float64, 2*(T<<l))
		for i := 1; i < len(rec); i += 2 {
			rec[i] = math.NaN() // code 0, threshold NaN: always right
		}
		pt.rec = append(pt.rec, rec)
	}
	pt.value = make([]float64, (T<<D)*d)
	type item struct {
		node  int32
		level int
		slot  int
	}
	for t := range T {
		stack := []item{{nt.root[t], 0, 0}}
		for len(stack) > 0 {
			it := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			n := it.node
			if nt.leaf(n) || it.level == D {
				// Always right below a leaf: its bottom slot is the last of its subtree.
				sh := D - it.level
				bottom := (it.slot+1)<<sh - 1
				copy(pt.value[((t<<D)+bottom)*d:((t<<D)+bottom+1)*d], nt.value[int(n)*d:(int(n)+1)*d])
				continue
			}
			k := (t << it.level) + it.slot
			pt.rec[it.level][2*k], pt.rec[it.level][2*k+1] = nt.code(n), nt.thr[n]
			stack = append(stack, item{n + 1, it.level + 1, 2 * it.slot}, item{nt.right[n], it.level + 1, 2*it.slot + 1})
		}
	}
	return pt
}
