//go:build !amd64 || purego || noasm

package cpubackend

import "github.com/gomlx/gomlx/backends"

// hasVecAVX512 is false where the AVX-512 loops are not built.
var hasVecAVX512 = false

// hasVecAVX2 is false where the AVX2 loops are not built.
var hasVecAVX2 = false

// vecBinary has no vector loops here: it computes nothing and returns 0.
func vecBinary(op backends.OpType, dst, a []float32, as *float32, aScalar bool, b []float32, bs *float32, bScalar bool) int {
	return 0
}

// vecSqrt has no vector loop here: it computes nothing and returns 0.
func vecSqrt(dst, a []float32) int { return 0 }

// vecSign has no vector loop here: it computes nothing and returns 0.
func vecSign(dst, a []float32) int { return 0 }

// vecBinaryTrunc has no vector loops here: it computes nothing and returns 0.
func vecBinaryTrunc(op backends.OpType, dst, a []float32, as *float32, aScalar bool, b []float32, bs *float32, bScalar bool) int {
	return 0
}

// hasWidenLoops is false where the AVX-512 loops are not built.
func hasWidenLoops(op backends.OpType) bool { return false }

// vecBinaryWiden has no vector loops here: it computes nothing and returns 0.
func vecBinaryWiden(op backends.OpType, trunc bool, dst []float32, a16 []uint16, a []float32, as *float32, b16 []uint16, b []float32, bs *float32) int {
	return 0
}
