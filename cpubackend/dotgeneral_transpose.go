package cpubackend

import (
	"slices"
	"sync/atomic"

	"github.com/gomlx/gomlx/pkg/core/dtypes"

	"github.com/gotrain/gotrain/gemm"
)

// DotGenerals whose operands are not batches of row-major matrices in
// memory (batch axes after other axes, cross axes on both sides of the
// contracting ones: attention heads, a stack of expert weights [E, K, H]
// contracted on K) would fall back to simplego's DotGeneral, 50-100x
// slower than the SGEMM. execDotGeneralTransposed copies each float32
// operand into the layout the SGEMM reads — lhs [batch, cross, contracting],
// rhs [batch, contracting, cross], every group of axes in the node's order
// — and runs one strided-batch SGEMM. The copy is linear in the operands'
// size, small next to the product.

// transposedDots counts the DotGenerals run by execDotGeneralTransposed (tests).
var transposedDots atomic.Int64

// normalizedPerm returns the axes of an operand of the given rank in the
// order batch, then cross (increasing), then contracting when crossFirst,
// else batch, contracting, cross.
func normalizedPerm(rank int, batch, contracting []int, crossFirst bool) []int {
	perm := append([]int(nil), batch...)
	var cross []int
	for a := 0; a < rank; a++ {
		if !slices.Contains(batch, a) && !slices.Contains(contracting, a) {
			cross = append(cross, a)
		}
	}
	if crossFirst {
		return append(append(perm, cross...), contracting...)
	}
	return append(append(perm, contracting...), cross...)
}

// transposeFloat32 writes src (dimensions dims) with its axes permuted:
// dst's axis i is src's axis perm[i].
func transposeFloat32(dst, src []float32, dims, perm []int) {
	r := len(dims)
	if r == 0 {
		copy(dst, src)
		return
	}
	srcStride := make([]int, r)
	s := 1
	for a := r - 1; a >= 0; a-- {
		srcStride[a] = s
		s *= dims[a]
	}
	outDims := make([]int, r)
	stride := make([]int, r) // source stride of each output axis
	for i, a := range perm {
		outDims[i], stride[i] = dims[a], srcStride[a]
	}
	inner, innerStride := outDims[r-1], stride[r-1]
	idx := make([]int, r-1)
	for o := 0; o < len(dst); o += inner {
		off := 0
		for i, v := range idx {
			off += v * stride[i]
		}
		row := dst[o : o+inner]
		if innerStride == 1 {
			copy(row, src[off:off+inner])
		} else {
			for j := range row {
				row[j] = src[off]
				off += innerStride
			}
		}
		for i := r - 2; i >= 0; i-- {
			idx[i]++
			if idx[i] < outDims[i] {
				break
			}
			idx[i] = 0
		}
	}
}

// isIdentity tells whether perm leaves every axis in place.
func isIdentity(perm []int) bool {
	for i, a := range perm {
		if a != i {
			return false
		}
	}
	return true
}

// execDotGeneralTransposed runs a float32 DotGeneral of any layout as
// copies into the SGEMM's layout and one strided-batch SGEMM; ok is false
// (nothing computed) for other dtypes.
func execDotGeneralTransposed(backend *Backend, node *Node, lhs, rhs *Buffer) (out *Buffer, ok bool, err error) {
	if lhs.shape.DType != dtypes.Float32 || rhs.shape.DType != dtypes.Float32 {
		return nil, false, nil
	}
	transposedDots.Add(1)
	p := node.data.(*dotGeneralNodeData)
	a, b := lhs.flat.([]float32), rhs.flat.([]float32)
	var tmps []*Buffer
	normalize := func(buf *Buffer, flat []float32, perm []int) []float32 {
		if isIdentity(perm) {
			return flat
		}
		t := backend.getBuffer(dtypes.Float32, len(flat))
		tmps = append(tmps, t)
		tf := t.flat.([]float32)
		transposeFloat32(tf, flat, buf.shape.Dimensions, perm)
		return tf
	}
	a = normalize(lhs, a, normalizedPerm(lhs.shape.Rank(), p.lhsBatchAxes, p.lhsContractingAxes, true))
	b = normalize(rhs, b, normalizedPerm(rhs.shape.Rank(), p.rhsBatchAxes, p.rhsContractingAxes, false))
	m, n, k := p.lhsCrossSize, p.rhsCrossSize, p.contractingSize
	out = backend.getBufferForShape(node.shape)
	err = gemm.SgemmBatch(false, false, m, n, k, 1, a, k, b, n, 0, out.flat.([]float32), n, p.batchSize, m*k, k*n, m*n)
	for _, t := range tmps {
		backend.putBuffer(t)
	}
	if err != nil {
		backend.putBuffer(out)
		return nil, true, err
	}
	return out, true, nil
}
