package cpubackend

import (
	"runtime"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/dtypes/bfloat16"
	"github.com/gomlx/gomlx/pkg/core/shapes"

	"github.com/gotrain/gotrain/gemm"
	"github.com/gotrain/gotrain/internal/parallel"
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

// transposedDots and bf16Dots count the DotGenerals run by
// transposedGEMMInto and by execDotGeneralBF16 (tests).
var transposedDots, bf16Dots atomic.Int64

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
// dst's axis i is src's axis perm[i]. When src's last (contiguous) axis
// stays last, rows are copied; otherwise the two axes that swap contiguity
// are transposed in 16×16 tiles, so that reads and writes both stay within
// a few cache lines.
// transposeLayout returns the output's dimensions, the source stride of
// each output axis and q, the output axis of the source's contiguous
// (last) axis, of a transpose of dims by perm (rank at least 1).
func transposeLayout(dims, perm []int) (outDims, stride []int, q int) {
	r := len(dims)
	srcStride := make([]int, r)
	s := 1
	for a := r - 1; a >= 0; a-- {
		srcStride[a] = s
		s *= dims[a]
	}
	outDims, stride, q = make([]int, r), make([]int, r), -1
	for i, a := range perm {
		outDims[i], stride[i] = dims[a], srcStride[a]
		if a == r-1 {
			q = i
		}
	}
	return outDims, stride, q
}

func transposeFloat32(dst, src []float32, dims, perm []int) { transposeT(dst, src, dims, perm) }

// transposeT is transposeFloat32 for 32- or 16-bit elements (bfloat16's
// bits); the AVX2 8x8 tiles are float32's alone.
func transposeT[T float32 | uint16](dst, src []T, dims, perm []int) {
	r := len(dims)
	if r == 0 {
		copy(dst, src)
		return
	}
	outDims, stride, q := transposeLayout(dims, perm)
	if q == r-1 || outDims[q] == 1 || outDims[r-1] == 1 {
		transposeRows(dst, src, outDims, stride)
		return
	}
	dstStride := make([]int, r)
	s := 1
	for i := r - 1; i >= 0; i-- {
		dstStride[i] = s
		s *= outDims[i]
	}
	// Every position over the output axes but q and r−1 is a 2-D
	// transpose: dst[do + i·dstStride[q] + j] = src[so + i + j·stride[r−1]].
	rows, cols := outDims[q], outDims[r-1]
	colStride, rowStride := stride[r-1], dstStride[q]
	var pos [][2]int // so, do of each position
	idx := make([]int, r)
	for {
		so, do := 0, 0
		for i, v := range idx {
			so += v * stride[i]
			do += v * dstStride[i]
		}
		pos = append(pos, [2]int{so, do})
		a := r - 2
		for ; a >= 0; a-- {
			if a == q {
				continue
			}
			idx[a]++
			if idx[a] < outDims[a] {
				break
			}
			idx[a] = 0
		}
		if a < 0 {
			break
		}
	}
	// goTiles does rows [ilo, ihi) and columns [jlo, jhi) of a position in
	// 16x16 tiles of Go loops.
	const tile = 16
	goTiles := func(so, do, ilo, ihi, jlo, jhi int) {
		for i0 := ilo; i0 < ihi; i0 += tile {
			i1 := min(i0+tile, ihi)
			for j0 := jlo; j0 < jhi; j0 += tile {
				j1 := min(j0+tile, jhi)
				for i := i0; i < i1; i++ {
					d := dst[do+i*rowStride+j0 : do+i*rowStride+j1]
					sp := so + i + j0*colStride
					for j := range d {
						d[j] = src[sp]
						sp += colStride
					}
				}
			}
		}
	}
	// band does rows [ilo, ihi) of every position: 8x8 tiles in AVX2
	// registers where the CPU has them, the rest (or all) in Go.
	band := func(ilo, ihi int) {
		rows8, cols8 := (ihi-ilo)&^7, cols&^7
		for _, p := range pos {
			so, do := p[0], p[1]
			if d32, ok := any(dst).([]float32); ok && transposeTiles8(d32, any(src).([]float32), do+ilo*rowStride, so+ilo, rowStride, colStride, rows8, cols8) {
				goTiles(so, do, ilo, ilo+rows8, cols8, cols)
				goTiles(so, do, ilo+rows8, ihi, 0, cols)
			} else {
				goTiles(so, do, ilo, ihi, 0, cols)
			}
		}
	}
	// Large transposes are split over the CPUs by bands of rows (multiples
	// of 8), as fused chains are: memory moves faster from both cores.
	parts := min(runtime.GOMAXPROCS(0), len(dst)/fusedParallelMin, rows/8)
	if parts < 2 {
		band(0, rows)
		return
	}
	cut := func(k int) int { return min(rows, (rows/8*k/parts)*8) }
	parallel.For(parts, parts, func(k int) {
		hi := cut(k + 1)
		if k == parts-1 {
			hi = rows
		}
		band(cut(k), hi)
	})
}

// transposeRows writes the permuted tensor row by row: output rows (the
// last output axis) read src with the source stride of that axis.
func transposeRows[T float32 | uint16](dst, src []T, outDims, stride []int) {
	r := len(outDims)
	inner := outDims[r-1]
	rows := 0
	if inner > 0 {
		rows = len(dst) / inner
	}
	// Large copies are split over the CPUs by output rows, as the tiles are.
	parts := min(runtime.GOMAXPROCS(0), len(dst)/fusedParallelMin, rows)
	if parts < 2 {
		transposeRowRange(dst, src, outDims, stride, 0, rows)
		return
	}
	parallel.For(parts, parts, func(k int) {
		transposeRowRange(dst, src, outDims, stride, rows*k/parts, rows*(k+1)/parts)
	})
}

// transposeRowRange writes output rows [lo, hi) of transposeRows.
func transposeRowRange[T float32 | uint16](dst, src []T, outDims, stride []int, lo, hi int) {
	r := len(outDims)
	inner, innerStride := outDims[r-1], stride[r-1]
	idx := make([]int, r-1)
	for i, q := r-2, lo; i >= 0; i-- { // the index of row lo
		idx[i] = q % outDims[i]
		q /= outDims[i]
	}
	for o := lo * inner; o < hi*inner; o += inner {
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
	out = backend.getBufferForShape(node.shape)
	err = transposedGEMMInto(backend, node.data.(*dotGeneralNodeData), lhs.shape, rhs.shape,
		lhs.flat.([]float32), rhs.flat.([]float32), out.flat.([]float32))
	if err != nil {
		backend.putBuffer(out)
		return nil, true, err
	}
	return out, true, nil
}

// transposedGEMMInto computes the DotGeneral of float32 operands a (shape
// lhs) and b (shape rhs) of any layout into c, [batch, M, N]: read in place
// when both are batches of matrices with batch axes anywhere
// (dotgeneral_inplace.go), else each operand not already in the SGEMM's
// layout is copied into it first.
func transposedGEMMInto(backend *Backend, p *dotGeneralNodeData, lhs, rhs shapes.Shape, a, b, c []float32) error {
	m, n, k := p.lhsCrossSize, p.rhsCrossSize, p.contractingSize
	if va, vb, ok := dotGeneralInPlace(p, lhs, rhs); ok {
		inPlaceDots.Add(1)
		return gemm.SgemmBatchAt(!va.contractLast, vb.contractLast, m, n, k, 1, a, va.ld, va.offs, b, vb.ld, vb.offs, 0, c, n, m*n)
	}
	transposedDots.Add(1)
	var tmps []*Buffer
	normalize := func(s shapes.Shape, flat []float32, perm []int) []float32 {
		if isIdentity(perm) {
			return flat
		}
		t := backend.getBuffer(dtypes.Float32, len(flat))
		tmps = append(tmps, t)
		tf := t.flat.([]float32)
		transposeFloat32(tf, flat, s.Dimensions, perm)
		return tf
	}
	a = normalize(lhs, a, normalizedPerm(lhs.Rank(), p.lhsBatchAxes, p.lhsContractingAxes, true))
	b = normalize(rhs, b, normalizedPerm(rhs.Rank(), p.rhsBatchAxes, p.rhsContractingAxes, false))
	err := gemm.SgemmBatch(false, false, m, n, k, 1, a, k, b, n, 0, c, n, p.batchSize, m*k, k*n, m*n)
	for _, t := range tmps {
		backend.putBuffer(t)
	}
	return err
}

// execDotGeneralBF16 runs a bfloat16 DotGeneral on gemm's bfloat16 product
// (AVX-512 BF16's VDPBF16PS where the CPU has it, else the operands widened
// to float32 for the SGEMM, exactly), summed in float32 — as simplego's
// bfloat16 DotGeneral also accumulates — and truncated to bfloat16 as
// simplego narrows (bfloat16.FromFloat32). Operands that are not batches of
// row-major matrices are read in place when their batch axes alone are out
// of place (dotgeneral_inplace.go), else first copied into that layout on
// their 16-bit values, as float32 ones are (transposedGEMMInto). ok is false
// (nothing computed) for other dtypes.
func execDotGeneralBF16(backend *Backend, node *Node, lhs, rhs *Buffer) (out *Buffer, ok bool, err error) {
	if lhs.shape.DType != dtypes.BFloat16 || rhs.shape.DType != dtypes.BFloat16 || node.shape.DType != dtypes.BFloat16 {
		return nil, false, nil
	}
	bf16Dots.Add(1)
	p := node.data.(*dotGeneralNodeData)
	a, b := bf16Bits(lhs.flat.([]bfloat16.BFloat16)), bf16Bits(rhs.flat.([]bfloat16.BFloat16))
	l, ok := dotGeneralLayout(p, lhs.shape, rhs.shape)
	if !ok {
		if va, vb, ok := dotGeneralInPlace(p, lhs.shape, rhs.shape); ok {
			inPlaceDots.Add(1)
			m, n := p.lhsCrossSize, p.rhsCrossSize
			out = backend.getBufferForShape(node.shape)
			err = gemm.GemmBF16BatchTo16At(!va.contractLast, vb.contractLast, m, n, p.contractingSize, a, va.ld, va.offs,
				b, vb.ld, vb.offs, bf16Bits(out.flat.([]bfloat16.BFloat16)), n, m*n)
			if err != nil {
				backend.putBuffer(out)
				return nil, true, err
			}
			return out, true, nil
		}
		var tmps []*Buffer
		defer func() {
			for _, t := range tmps {
				backend.putBuffer(t)
			}
		}()
		normalize := func(s shapes.Shape, flat []uint16, perm []int) []uint16 {
			if isIdentity(perm) {
				return flat
			}
			t := backend.getBuffer(dtypes.BFloat16, len(flat))
			tmps = append(tmps, t)
			tf := bf16Bits(t.flat.([]bfloat16.BFloat16))
			transposeT(tf, flat, s.Dimensions, perm)
			return tf
		}
		a = normalize(lhs.shape, a, normalizedPerm(lhs.shape.Rank(), p.lhsBatchAxes, p.lhsContractingAxes, true))
		b = normalize(rhs.shape, b, normalizedPerm(rhs.shape.Rank(), p.rhsBatchAxes, p.rhsContractingAxes, false))
		l = gemmLayout{batch: p.batchSize, m: p.lhsCrossSize, n: p.rhsCrossSize, k: p.contractingSize}
	}
	lda, ldb := l.k, l.n
	if l.transA {
		lda = l.m
	}
	if l.transB {
		ldb = l.k
	}
	out = backend.getBufferForShape(node.shape)
	err = gemm.GemmBF16BatchTo16(l.transA, l.transB, l.m, l.n, l.k, a, lda, b, ldb,
		bf16Bits(out.flat.([]bfloat16.BFloat16)), l.n, l.batch, l.m*l.k, l.k*l.n, l.m*l.n)
	if err != nil {
		backend.putBuffer(out)
		return nil, true, err
	}
	return out, true, nil
}

// bf16Bits returns the bits of bfloat16 values, sharing their memory.
func bf16Bits(s []bfloat16.BFloat16) []uint16 {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*uint16)(unsafe.Pointer(&s[0])), len(s))
}
