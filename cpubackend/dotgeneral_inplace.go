package cpubackend

import (
	"sync"
	"sync/atomic"

	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// DotGenerals whose batch axes are not leading, but whose operands are
// otherwise matrices in memory: attention's heads. A query [batch, time,
// heads, dim] multiplied by a key of the same layout over dim, with batch
// and heads as batch axes, holds for each (batch, head) a [time, dim]
// matrix with rows heads·dim apart, starting at batch·time·heads·dim +
// head·dim. Such operands are read in place (gemm's SgemmBatchAt and
// GemmBF16BatchTo16At take each item's start) instead of being copied into
// a strided batch first; the products and their sums are the ones the copy
// would have fed to the strided call, bit for bit.

// inPlaceDots counts the DotGenerals run on operands read in place (tests).
var inPlaceDots atomic.Int64

// inPlaceOperand is an operand read in place: its items start at offs,
// each a matrix with leading dimension ld, stored [cross, contracting]
// (trans false for lhs, true for rhs) or [contracting, cross].
type inPlaceOperand struct {
	contractLast bool
	ld           int
	offs         []int
}

// inPlaceView tells whether an operand of shape s, with the given batch
// and contracting axes, is a batch of matrices in memory: its cross axes
// one block of consecutive axes and its contracting axes another, each in
// increasing order, the one nearer the end ending at the last axis (so
// that it is contiguous), with batch axes anywhere else. It returns the
// items' starts, in the order of the batch axes as given (the output's
// order), and the leading dimension. Operands with no cross or no
// contracting axes are left to the other paths.
func inPlaceView(s shapes.Shape, batch, contracting []int) (op inPlaceOperand, ok bool) {
	rank := s.Rank()
	isBatch := make([]bool, rank)
	for _, a := range batch {
		isBatch[a] = true
	}
	isContracting := make([]bool, rank)
	for i, a := range contracting {
		if i > 0 && a != contracting[i-1]+1 {
			return op, false
		}
		isContracting[a] = true
	}
	var cross []int
	for a := range rank {
		if !isBatch[a] && !isContracting[a] {
			if len(cross) > 0 && a != cross[len(cross)-1]+1 {
				return op, false
			}
			cross = append(cross, a)
		}
	}
	if len(cross) == 0 || len(contracting) == 0 {
		return op, false
	}
	stride := make([]int, rank)
	st := 1
	for a := rank - 1; a >= 0; a-- {
		stride[a] = st
		st *= s.Dimensions[a]
	}
	// The inner block ends at the last axis; the outer one's rows are its
	// last axis's stride apart.
	switch rank - 1 {
	case contracting[len(contracting)-1]:
		op.contractLast, op.ld = true, stride[cross[len(cross)-1]]
	case cross[len(cross)-1]:
		op.ld = stride[contracting[len(contracting)-1]]
	default:
		return op, false
	}
	n := 1
	for _, a := range batch {
		n *= s.Dimensions[a]
	}
	op.offs = make([]int, n)
	idx := make([]int, len(batch))
	for i := range op.offs {
		off := 0
		for j, a := range batch {
			off += idx[j] * stride[a]
		}
		op.offs[i] = off
		for j := len(batch) - 1; j >= 0; j-- {
			idx[j]++
			if idx[j] < s.Dimensions[batch[j]] {
				break
			}
			idx[j] = 0
		}
	}
	return op, true
}

// inPlaceViews caches a DotGeneral's in-place views (dotGeneralInPlace).
type inPlaceViews struct {
	once sync.Once
	a, b inPlaceOperand
	ok   bool
}

// dotGeneralInPlace returns the in-place views of both operands of a
// DotGeneral of operand shapes lhs and rhs (its node's, always the same),
// ok false when either is not one. They are found on the first call and
// kept in p: every execution of the product reads the same offsets.
func dotGeneralInPlace(p *dotGeneralNodeData, lhs, rhs shapes.Shape) (a, b inPlaceOperand, ok bool) {
	v := &p.inPlace
	v.once.Do(func() {
		if v.a, v.ok = inPlaceView(lhs, p.lhsBatchAxes, p.lhsContractingAxes); v.ok {
			v.b, v.ok = inPlaceView(rhs, p.rhsBatchAxes, p.rhsContractingAxes)
		}
	})
	return v.a, v.b, v.ok
}
