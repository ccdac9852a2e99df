package cpubackend

import (
	"math"
	"slices"
	"sync/atomic"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/pkg/errors"
)

// One-hot selection rewrites.
//
// Graphs written for backends without a Slice gradient select a block of a
// tensor with a constant one-hot mask: gate k of z [B, G, H] is
// ReduceSum(z * onehot_k, axis 1) (onehot_k of shape [1, G, 1]), and the
// gradient of the G selections is Σ_k Broadcast(g_k) * Broadcast(onehot_k),
// which assembles [B, G, H] from the G gradients. The LSTM of
// models/charlstm does this for its four gates. Executed as written, every
// selection multiplies and reduces the whole [B, G, H] tensor and the
// gradient materialises 2·G broadcasts of it.
//
// At Compile, before fusion, rewriteOneHotSelections turns
//
//   - ReduceSum(Mul(x, c), a), with c a constant that is one-hot at index k
//     along axis a (and constant along every other axis), into a pick of
//     index k along axis a (a copy of x's block k), and
//   - a tree of single-use Adds whose leaves are Mul(Broadcast(g_k), c_k),
//     with the c_k one-hot at distinct indices k covering axis a and each
//     g_k of size 1 on axis a, into Concatenate(g_0, ..., g_{G-1}, a).
//
// For finite values the results are the same numbers: x·1 plus zeros is x,
// and g_k·1 plus zeros is g_k; only the sign of a zero may differ (the
// reduction's +0 start turns −0 into +0) and an infinity or NaN in one block
// no longer turns the other blocks into NaN (∞·0). Config "no_rewrite" turns
// these rewrites and those of rewrite_dotsum.go off.

// rewrittenSelections and rewrittenDotSums count the rewrites since the
// process started (tests).
var rewrittenSelections, rewrittenDotSums atomic.Int64

// pickNode is the data of a Slice node that rewriteOneHotSelections made out
// of a one-hot reduction: the output is index of axis axis of the input,
// with that axis removed.
type pickNode struct {
	axis, index int
}

// rewriteGraph runs the Compile-time rewrites: one-hot selections, then
// sums of products (rewrite_dotsum.go), then transposed products
// (rewrite_transpose.go).
func rewriteGraph(b *Builder) {
	uses, isOutput, seen := countUses(b)
	rewriteOneHotSelections(b, uses, isOutput, seen)
	uses, isOutput, seen = countUses(b)
	rewriteDotSums(b, uses, isOutput, seen)
	uses, isOutput, seen = countUses(b)
	rewriteTransposedProducts(b, uses, isOutput, seen)
}

// countUses returns, for the nodes reachable from b's outputs, how many
// reachable nodes use each one, which are outputs, and which are reachable.
func countUses(b *Builder) (uses []int, isOutput, seen []bool) {
	uses = make([]int, len(b.nodes))
	isOutput = make([]bool, len(b.nodes))
	seen = make([]bool, len(b.nodes))
	var visit func(n *Node)
	visit = func(n *Node) {
		if seen[n.builderIdx] {
			return
		}
		seen[n.builderIdx] = true
		for _, in := range n.inputs {
			uses[in.builderIdx]++
			visit(in)
		}
	}
	for _, o := range b.outputs {
		isOutput[o.builderIdx] = true
		visit(o)
	}
	return uses, isOutput, seen
}

// rewriteOneHotSelections applies the one-hot rewrites to the reachable nodes.
func rewriteOneHotSelections(b *Builder, uses []int, isOutput, seen []bool) {
	// Visit from the last node down, so that a whole Add tree is rewritten
	// from its root before its inner Adds are considered (they become dead).
	for i := len(b.nodes) - 1; i >= 0; i-- {
		n := b.nodes[i]
		if !seen[i] || n.fused != nil || n.multiOutputsShapes != nil || n.isNodeSelectOutput {
			continue
		}
		switch n.opType {
		case backends.OpTypeReduceSum:
			if rewritePick(n) {
				rewrittenSelections.Add(1)
			}
		case backends.OpTypeAdd:
			if rewriteAssemble(n, uses, isOutput) {
				rewrittenSelections.Add(1)
			}
		}
	}
}

// selectableDType tells whether selections of dtype are rewritten.
func selectableDType(dt dtypes.DType) bool {
	return dt == dtypes.Float32 || dt == dtypes.Float64
}

// rewritePick turns ReduceSum(Mul(x, onehot), a) into a pick of x.
func rewritePick(n *Node) bool {
	axes, ok := n.data.([]int)
	if !ok || len(axes) != 1 || !selectableDType(n.shape.DType) {
		return false
	}
	m := n.inputs[0]
	if m.opType != backends.OpTypeMul || len(m.inputs) != 2 || m.fused != nil {
		return false
	}
	a := axes[0]
	for side := 0; side < 2; side++ {
		x, c := m.inputs[side], m.inputs[1-side]
		if !x.shape.Equal(m.shape) {
			continue
		}
		k, ok := oneHotIndex(c, m.shape.Dimensions, a)
		if !ok {
			continue
		}
		n.opType = backends.OpTypeSlice
		n.inputs = []*Node{x}
		n.data = &pickNode{axis: a, index: k}
		return true
	}
	return false
}

// rewriteAssemble turns a tree of Adds of one-hot placements rooted at n
// into a Concatenate.
func rewriteAssemble(n *Node, uses []int, isOutput []bool) bool {
	if !selectableDType(n.shape.DType) || n.shape.Rank() == 0 {
		return false
	}
	var leaves []*Node
	var collect func(x *Node) bool
	collect = func(x *Node) bool {
		if x.opType == backends.OpTypeAdd && len(x.inputs) == 2 && x.fused == nil && x.shape.Equal(n.shape) &&
			(x == n || (uses[x.builderIdx] == 1 && !isOutput[x.builderIdx])) {
			return collect(x.inputs[0]) && collect(x.inputs[1])
		}
		leaves = append(leaves, x)
		return true
	}
	if !collect(n) || len(leaves) < 2 {
		return false
	}
	axis := -1
	parts := make([]*Node, 0, len(leaves))
	for _, leaf := range leaves {
		if leaf.opType != backends.OpTypeMul || len(leaf.inputs) != 2 || leaf.fused != nil || !leaf.shape.Equal(n.shape) {
			return false
		}
		found := false
		for side := 0; side < 2 && !found; side++ {
			p, c := leaf.inputs[side], leaf.inputs[1-side]
			g := placedOperand(p, n.shape.Dimensions)
			if g == nil {
				continue
			}
			// The axis is the one where g has size 1 and the output does not.
			a := -1
			for d, dim := range g.shape.Dimensions {
				if dim == 1 && n.shape.Dimensions[d] != 1 {
					if a >= 0 {
						a = -2
						break
					}
					a = d
				}
			}
			if a < 0 || (axis >= 0 && a != axis) {
				continue
			}
			k, ok := oneHotIndex(c, n.shape.Dimensions, a)
			if !ok {
				continue
			}
			axis = a
			for len(parts) <= k {
				parts = append(parts, nil)
			}
			if parts[k] != nil {
				return false
			}
			parts[k] = g
			found = true
		}
		if !found {
			return false
		}
	}
	if axis < 0 || len(parts) != n.shape.Dimensions[axis] || slices.Contains(parts, nil) {
		return false
	}
	n.opType = backends.OpTypeConcatenate
	n.inputs = parts
	n.data = axis
	return true
}

// placedOperand returns g when p is g broadcast to dims on the axes where g
// has size 1 (BroadcastInDim with the identity axis map, or g itself when the
// multiply broadcasts it), or nil.
func placedOperand(p *Node, dims []int) *Node {
	g := p
	if p.opType == backends.OpTypeBroadcastInDim {
		axes, ok := p.data.([]int)
		if !ok || len(p.inputs) != 1 {
			return nil
		}
		g = p.inputs[0]
		if len(axes) != g.shape.Rank() {
			return nil
		}
		for i, ax := range axes {
			if ax != i {
				return nil
			}
		}
	}
	if g.shape.Rank() != len(dims) || g.shape.DType != p.shape.DType {
		return nil
	}
	for d, dim := range g.shape.Dimensions {
		if dim != 1 && dim != dims[d] {
			return nil
		}
	}
	return g
}

// oneHotIndex reports k when c, broadcast to dims, is 1 at index k of axis a
// and 0 elsewhere, constant along every other axis. c is a Constant, a
// Reshape of one, or a BroadcastInDim (identity axis map) of either, with
// size 1 on every axis but a, possibly converted from another dtype.
func oneHotIndex(c *Node, dims []int, a int) (int, bool) {
	if c.opType == backends.OpTypeBroadcastInDim {
		axes, ok := c.data.([]int)
		if !ok || len(c.inputs) != 1 || len(axes) != c.inputs[0].shape.Rank() {
			return 0, false
		}
		for i, ax := range axes {
			if ax != i {
				return 0, false
			}
		}
		c = c.inputs[0]
	}
	if c.shape.Rank() != len(dims) || a < 0 || a >= len(dims) {
		return 0, false
	}
	for d, dim := range c.shape.Dimensions {
		if (d == a && dim != dims[a]) || (d != a && dim != 1) {
			return 0, false
		}
	}
	// Reshapes keep the flat order, and conversions keep 0 and 1 exactly.
	for (c.opType == backends.OpTypeReshape || c.opType == backends.OpTypeConvertDType) && len(c.inputs) == 1 {
		c = c.inputs[0]
	}
	if c.opType != backends.OpTypeConstant {
		return 0, false
	}
	buf, ok := c.data.(*Buffer)
	if !ok || buf.shape.Size() != dims[a] {
		return 0, false
	}
	k := -1
	check := func(i int, bits, one uint64) bool {
		switch {
		case bits == 0:
			return true
		case bits == one && k < 0:
			k = i
			return true
		}
		return false
	}
	switch flat := buf.flat.(type) {
	case []float32:
		for i, v := range flat {
			if !check(i, uint64(math.Float32bits(v)), uint64(math.Float32bits(1))) {
				return 0, false
			}
		}
	case []float64:
		for i, v := range flat {
			if !check(i, math.Float64bits(v), math.Float64bits(1)) {
				return 0, false
			}
		}
	case []int32:
		for i, v := range flat {
			if !check(i, uint64(uint32(v)), 1) {
				return 0, false
			}
		}
	case []int64:
		for i, v := range flat {
			if !check(i, uint64(v), 1) {
				return 0, false
			}
		}
	default:
		return 0, false
	}
	return k, k >= 0
}

// execPick copies block p.index of axis p.axis of the operand.
func execPick(backend *Backend, node *Node, operand *Buffer, p *pickNode) (*Buffer, error) {
	dims := operand.shape.Dimensions
	outer, inner := 1, 1
	for d := 0; d < p.axis; d++ {
		outer *= dims[d]
	}
	for d := p.axis + 1; d < len(dims); d++ {
		inner *= dims[d]
	}
	g := dims[p.axis]
	output := backend.getBuffer(node.shape.DType, node.shape.Size())
	output.shape = node.shape
	switch dst := output.flat.(type) {
	case []float32:
		pickBlocks(dst, operand.flat.([]float32), outer, g, inner, p.index)
	case []float64:
		pickBlocks(dst, operand.flat.([]float64), outer, g, inner, p.index)
	default:
		return nil, errors.Errorf("cpu backend: pick of dtype %s", node.shape.DType)
	}
	return output, nil
}

func pickBlocks[T float32 | float64](dst, src []T, outer, g, inner, k int) {
	for o := 0; o < outer; o++ {
		copy(dst[o*inner:(o+1)*inner], src[(o*g+k)*inner:(o*g+k+1)*inner])
	}
}
