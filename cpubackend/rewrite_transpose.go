package cpubackend

import (
	"slices"
	"sync/atomic"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
)

// Transposed products rewrite.
//
// GoMLX's gradient of a dense layer's weight W [in, out] is a product that
// comes out as [out, in] — a DotGeneral, a Reshape to the matrix and a
// Transpose — so every step transposes each weight gradient in a pass of
// its own (for bfloat16 a loop of 16-bit moves slower than the product's
// own output). At Compile, rewriteTransposedProducts turns a Transpose of
// a matrix that is a single-use DotGeneral with one batch item, or a
// single-use Reshape of one, into the DotGeneral of the operands swapped: Cᵀ = op(B)ᵀ·op(A)ᵀ,
// written directly in the transposed layout. Each element of C is the same
// sum of the same products in the same order of k (a multiply-add and
// VDPBF16PS's pair sums do not depend on which operand is which, and the
// product's blocking of k depends on the sizes alone), so the result is the
// same bits. Config "no_rewrite" turns it off; it needs the GEMM paths
// (config "no_gemm" turns it off too), which every such product then takes.

// rewrittenTransposes counts the Transposes rewriteTransposedProducts has
// replaced since the process started (tests).
var rewrittenTransposes atomic.Int64

// rewriteTransposedProducts applies the rewrite at every reachable
// Transpose.
func rewriteTransposedProducts(b *Builder, uses []int, isOutput, seen []bool) {
	if !b.backend.useGEMM {
		return
	}
	for i, t := range b.nodes {
		if !seen[i] || t.opType != backends.OpTypeTranspose || t.fused != nil || t.multiOutputsShapes != nil || t.isNodeSelectOutput {
			continue
		}
		if rewriteTransposedProduct(t, uses, isOutput) {
			rewrittenTransposes.Add(1)
		}
	}
}

// rewriteTransposedProduct rewrites t when it transposes a product's
// matrix as above.
func rewriteTransposedProduct(t *Node, uses []int, isOutput []bool) bool {
	single := func(x *Node) bool { return uses[x.builderIdx] == 1 && !isOutput[x.builderIdx] }
	perm, ok := t.data.([]int)
	if !ok || t.shape.Rank() != 2 || !slices.Equal(perm, []int{1, 0}) || len(t.inputs) != 1 {
		return false
	}
	r := t.inputs[0] // the matrix: Reshapes of the product, or the product itself
	d := r
	var reshapes []*Node
	for d.opType == backends.OpTypeReshape {
		if len(d.inputs) != 1 || !single(d) || d.fused != nil {
			return false
		}
		reshapes = append(reshapes, d)
		d = d.inputs[0]
	}
	if d.opType != backends.OpTypeDotGeneral || len(d.inputs) != 2 || !single(d) || d.fused != nil {
		return false
	}
	p, ok := d.data.(*dotGeneralNodeData)
	if !ok || p.batchSize != 1 || p.packGroup != 0 {
		return false
	}
	dt := d.shape.DType
	if (dt != dtypes.Float32 && dt != dtypes.BFloat16) || d.inputs[0].shape.DType != dt || d.inputs[1].shape.DType != dt || t.shape.DType != dt {
		return false
	}
	if !slices.Equal(r.shape.Dimensions, []int{p.lhsCrossSize, p.rhsCrossSize}) {
		return false
	}
	swapped := &dotGeneralNodeData{
		lhsContractingAxes: p.rhsContractingAxes, lhsBatchAxes: p.rhsBatchAxes,
		rhsContractingAxes: p.lhsContractingAxes, rhsBatchAxes: p.lhsBatchAxes,
		batchSize: 1, lhsCrossSize: p.rhsCrossSize, rhsCrossSize: p.lhsCrossSize, contractingSize: p.contractingSize,
		lhsBlockedShape: p.rhsBlockedShape, rhsBlockedShape: p.lhsBlockedShape,
	}
	lhs, rhs := d.inputs[1], d.inputs[0]
	// The swapped product must take a GEMM path: float32 in a GEMM layout,
	// or bfloat16 (which runs any layout); never simplego's blocked one,
	// whose output blocks would need the shapes of a DotGeneral node.
	if dt == dtypes.Float32 {
		if _, ok := dotGeneralGEMM(swapped, lhs.shape, rhs.shape); !ok {
			return false
		}
	}
	for _, x := range reshapes {
		uses[x.builderIdx] = 0
	}
	uses[d.builderIdx] = 0
	t.opType = backends.OpTypeDotGeneral
	t.inputs = []*Node{lhs, rhs}
	t.data = swapped
	return true
}
