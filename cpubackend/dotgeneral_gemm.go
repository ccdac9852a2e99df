package cpubackend

import (
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"

	"github.com/gotrain/gotrain/gemm"
)

// gemmLayout describes a DotGeneral whose operands are, in memory, batches
// of row-major matrices, so that it runs as one strided-batch SGEMM
// without copies: lhs is [batch, M, K] (or [batch, K, M] with transA),
// rhs is [batch, K, N] (or [batch, N, K] with transB) and the output is
// [batch, M, N].
type gemmLayout struct {
	transA, transB bool
	batch, m, n, k int
}

// dotGeneralGEMM classifies a DotGeneral node: ok is false when its
// operands are not laid out as gemmLayout needs (batch axes not leading,
// contracting axes not one block in matching order, or not float32).
func dotGeneralGEMM(params *dotGeneralNodeData, lhs, rhs shapes.Shape) (l gemmLayout, ok bool) {
	if lhs.DType != dtypes.Float32 || rhs.DType != dtypes.Float32 {
		return l, false
	}
	return dotGeneralLayout(params, lhs, rhs)
}

// dotGeneralLayout is dotGeneralGEMM for operands of any one dtype.
func dotGeneralLayout(params *dotGeneralNodeData, lhs, rhs shapes.Shape) (l gemmLayout, ok bool) {
	lt, lok := matrixView(lhs.Rank(), params.lhsBatchAxes, params.lhsContractingAxes)
	rt, rok := matrixView(rhs.Rank(), params.rhsBatchAxes, params.rhsContractingAxes)
	if !lok || !rok {
		return l, false
	}
	// lhs has the contracting block last when not transposed; rhs has it
	// first (right after the batch axes) when not transposed.
	return gemmLayout{
		transA: lt == contractFirst,
		transB: rt == contractLast,
		batch:  params.batchSize,
		m:      params.lhsCrossSize,
		n:      params.rhsCrossSize,
		k:      params.contractingSize,
	}, true
}

type contractPos int

const (
	contractLast  contractPos = iota // [batch, cross, contracting]
	contractFirst                    // [batch, contracting, cross]
)

// matrixView tells whether an operand of the given rank is [batch...,
// cross..., contracting...] or [batch..., contracting..., cross...] in
// memory, with the batch axes leading in order and the contracting axes
// one increasing block (so that the flattened contraction index of both
// operands runs in the same order).
func matrixView(rank int, batch, contracting []int) (contractPos, bool) {
	for i, a := range batch {
		if a != i {
			return 0, false
		}
	}
	nb, nc := len(batch), len(contracting)
	for i := 1; i < nc; i++ {
		if contracting[i] != contracting[i-1]+1 {
			return 0, false
		}
	}
	if nc == 0 || rank-nb == nc {
		// No contraction or no cross axes: both views hold.
		return contractLast, true
	}
	switch contracting[0] {
	case rank - nc:
		return contractLast, true
	case nb:
		return contractFirst, true
	}
	return 0, false
}

// execDotGeneralGEMM runs a float32 DotGeneral with gotrain's SGEMM when
// its layout allows; ok is false (and nothing is computed) otherwise.
func execDotGeneralGEMM(backend *Backend, node *Node, lhs, rhs *Buffer) (out *Buffer, ok bool, err error) {
	params := node.data.(*dotGeneralNodeData)
	if _, ok := dotGeneralGEMM(params, lhs.shape, rhs.shape); !ok {
		return nil, false, nil
	}
	out = backend.getBufferForShape(node.shape)
	if _, err = gemmInto(params, lhs.shape, rhs.shape, lhs.flat.([]float32), rhs.flat.([]float32), out.flat.([]float32)); err != nil {
		backend.putBuffer(out)
		return nil, true, err
	}
	return out, true, nil
}

// gemmInto computes the DotGeneral of float32 operands a (shape lhs) and b
// (shape rhs) into c, [batch, M, N], with one strided-batch SGEMM when the
// layout allows; ok is false (nothing computed) otherwise.
func gemmInto(params *dotGeneralNodeData, lhs, rhs shapes.Shape, a, b, c []float32) (ok bool, err error) {
	l, ok := dotGeneralGEMM(params, lhs, rhs)
	if !ok {
		return false, nil
	}
	lda, ldb := l.k, l.n
	if l.transA {
		lda = l.m
	}
	if l.transB {
		ldb = l.k
	}
	return true, gemm.SgemmBatch(l.transA, l.transB, l.m, l.n, l.k, 1, a, lda, b, ldb, 0, c, l.n,
		l.batch, l.m*l.k, l.k*l.n, l.m*l.n)
}

var _ = backends.OpTypeDotGeneral
