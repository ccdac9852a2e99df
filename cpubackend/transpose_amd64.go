//go:build amd64 && !purego && !noasm

package cpubackend

import "github.com/gotrain/gotrain/internal/cpufeat"

// transposeRowAVX2 transposes n 8x8 tiles along a row of dst
// (transpose_amd64.s): dst[i*dstStride + 8b + j] = src[(8b+j)*srcStride + i]
// for i, j < 8 and b < n, strides in floats.
//
//go:noescape
func transposeRowAVX2(dst *float32, dstStride int, src *float32, srcStride int, n int)

// hasTransposeAVX2 tells whether transposeTiles uses transposeRowAVX2: the
// CPU has AVX2 and GOTRAIN_CPU (package internal/cpufeat) allows it; tests
// turn it off to compare with the Go loops.
var hasTransposeAVX2 = cpufeat.HasAVX2FMA

// transposeTiles8 sets dst[do + i*rowStride + j] = src[so + i + j*colStride]
// for i < rows8 and j < cols8, both multiples of 8, with the AVX2 tiles
// when the CPU has them, and reports whether it did.
func transposeTiles8(dst, src []float32, do, so, rowStride, colStride, rows8, cols8 int) bool {
	if !hasTransposeAVX2 || rows8 == 0 || cols8 == 0 {
		return false
	}
	// The last element each side touches, checked once: the kernel reads
	// and writes whole tiles without Go's bounds checks.
	_ = dst[do+(rows8-1)*rowStride+cols8-1]
	_ = src[so+rows8-1+(cols8-1)*colStride]
	for i := 0; i < rows8; i += 8 {
		transposeRowAVX2(&dst[do+i*rowStride], rowStride, &src[so+i], colStride, cols8/8)
	}
	return true
}
