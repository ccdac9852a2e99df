package cpubackend

import (
	"slices"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gotrain/gotrain/gemm"
	"github.com/pkg/errors"
)

// Sums of products rewrite.
//
// The gradient of a weight shared across the steps of a recurrent network
// is a sum over steps of products contracting the batch axis:
// Σ_t DotGeneral(x_t [K_t, M], d_t [K_t, N]) over axis 0 of both. Executed
// as written it is one thin matrix product per step (K_t = the batch, 64
// for the char-LSTM: far from the SGEMM's best blocking) plus a chain of
// additions of M×N matrices, each reading the whole sum again. At Compile,
// rewriteDotSums turns such a tree of single-use Adds (every leaf a
// single-use float32 DotGeneral of that form, possibly reshaped to the
// sum's shape) into one product of the operands stacked along the
// contracted axis: x = [x_0; x_1; ...] [ΣK_t, M], d likewise, and the sum
// is xᵀ·d, computed by one SGEMM call. The result is the same sum in a
// different order of additions: equal within float32 rounding, not bit for
// bit. Config "no_rewrite" turns it off.

// dotSumNode is the data of a DotGeneral node that rewriteDotSums made out
// of a sum of products: inputs are lhs_0, rhs_0, lhs_1, rhs_1, ..., each
// lhs_t [k_t, m] and rhs_t [k_t, n], and the output [m, n] (flat) is
// Σ_t lhs_tᵀ·rhs_t.
type dotSumNode struct {
	m, n, k int // k = Σ k_t
}

// rewriteDotSums applies the rewrite at every Add reachable from the
// outputs (roots first, so that inner Adds of a rewritten tree become dead).
func rewriteDotSums(b *Builder, uses []int, isOutput, seen []bool) {
	for i := len(b.nodes) - 1; i >= 0; i-- {
		n := b.nodes[i]
		if !seen[i] || uses[i] == 0 && !isOutput[i] || n.opType != backends.OpTypeAdd || n.fused != nil || n.multiOutputsShapes != nil || n.isNodeSelectOutput {
			continue
		}
		if rewriteDotSum(n, uses, isOutput) {
			rewrittenDotSums.Add(1)
		}
	}
}

// rewriteDotSum rewrites the tree of Adds rooted at root when its leaves are
// products of the form above.
func rewriteDotSum(root *Node, uses []int, isOutput []bool) bool {
	if root.shape.DType != dtypes.Float32 {
		return false
	}
	single := func(x *Node) bool { return uses[x.builderIdx] == 1 && !isOutput[x.builderIdx] }
	var leaves, inner []*Node
	var collect func(x *Node)
	collect = func(x *Node) {
		if x.opType == backends.OpTypeAdd && len(x.inputs) == 2 && x.fused == nil && x.shape.Equal(root.shape) && (x == root || single(x)) {
			if x != root {
				inner = append(inner, x)
			}
			collect(x.inputs[0])
			collect(x.inputs[1])
			return
		}
		leaves = append(leaves, x)
	}
	collect(root)
	if len(leaves) < 2 {
		return false
	}
	m, n, k := -1, -1, 0
	inputs := make([]*Node, 0, 2*len(leaves))
	for _, leaf := range leaves {
		if !single(leaf) || !leaf.shape.Equal(root.shape) {
			return false
		}
		d := leaf
		if d.opType == backends.OpTypeReshape && len(d.inputs) == 1 {
			d = d.inputs[0]
			if !single(d) {
				return false
			}
		}
		if d.opType != backends.OpTypeDotGeneral || len(d.inputs) != 2 || d.shape.DType != dtypes.Float32 {
			return false
		}
		p, ok := d.data.(*dotGeneralNodeData)
		if !ok || !slices.Equal(p.lhsContractingAxes, []int{0}) || !slices.Equal(p.rhsContractingAxes, []int{0}) ||
			len(p.lhsBatchAxes) != 0 || len(p.rhsBatchAxes) != 0 {
			return false
		}
		lhs, rhs := d.inputs[0], d.inputs[1]
		if lhs.shape.Rank() != 2 || rhs.shape.Rank() != 2 || lhs.shape.DType != dtypes.Float32 || rhs.shape.DType != dtypes.Float32 ||
			lhs.shape.Dimensions[0] != rhs.shape.Dimensions[0] {
			return false
		}
		lm, ln := lhs.shape.Dimensions[1], rhs.shape.Dimensions[1]
		if m < 0 {
			m, n = lm, ln
		}
		if lm != m || ln != n || root.shape.Size() != m*n {
			return false
		}
		k += lhs.shape.Dimensions[0]
		inputs = append(inputs, lhs, rhs)
	}
	// The inner Adds and the leaves are no longer used.
	for _, x := range inner {
		uses[x.builderIdx] = 0
	}
	root.opType = backends.OpTypeDotGeneral
	root.inputs = inputs
	root.data = &dotSumNode{m: m, n: n, k: k}
	return true
}

// execDotSum computes a dotSumNode: it stacks the operands along the
// contracted axis and runs one SGEMM.
func execDotSum(backend *Backend, node *Node, inputs []*Buffer, p *dotSumNode) (*Buffer, error) {
	a := backend.getBuffer(dtypes.Float32, p.k*p.m)
	b := backend.getBuffer(dtypes.Float32, p.k*p.n)
	af, bf := a.flat.([]float32), b.flat.([]float32)
	ra, rb := 0, 0
	for t := 0; t < len(inputs); t += 2 {
		ra += copy(af[ra:], inputs[t].flat.([]float32))
		rb += copy(bf[rb:], inputs[t+1].flat.([]float32))
	}
	output := backend.getBuffer(dtypes.Float32, node.shape.Size())
	output.shape = node.shape
	err := gemm.Sgemm(true, false, p.m, p.n, p.k, 1, af, p.m, bf, p.n, 0, output.flat.([]float32), p.n)
	backend.putBuffer(a)
	backend.putBuffer(b)
	if err != nil {
		backend.putBuffer(output)
		return nil, errors.Wrap(err, "cpu backend: sum of products")
	}
	return output, nil
}
