//go:build amd64 && !purego && !noasm

package cpubackend

import (
	"github.com/gomlx/gomlx/backends"
	"github.com/gotrain/gotrain/internal/cpufeat"
)

//go:generate go run gen_vecops.go

// The AVX-512 loops of vecops_amd64.s (written by gen_vecops.go): dst = a op
// b over n floats, n a positive multiple of 16; in the VS forms b, and in the
// SV forms a, points to one scalar.

//go:noescape
func addVV(dst, a, b *float32, n int)

//go:noescape
func addVS(dst, a, b *float32, n int)

//go:noescape
func addSV(dst, a, b *float32, n int)

//go:noescape
func subVV(dst, a, b *float32, n int)

//go:noescape
func subVS(dst, a, b *float32, n int)

//go:noescape
func subSV(dst, a, b *float32, n int)

//go:noescape
func mulVV(dst, a, b *float32, n int)

//go:noescape
func mulVS(dst, a, b *float32, n int)

//go:noescape
func mulSV(dst, a, b *float32, n int)

//go:noescape
func divVV(dst, a, b *float32, n int)

//go:noescape
func divVS(dst, a, b *float32, n int)

//go:noescape
func divSV(dst, a, b *float32, n int)

//go:noescape
func maxVV(dst, a, b *float32, n int)

//go:noescape
func maxVS(dst, a, b *float32, n int)

//go:noescape
func maxSV(dst, a, b *float32, n int)

//go:noescape
func minVV(dst, a, b *float32, n int)

//go:noescape
func minVS(dst, a, b *float32, n int)

//go:noescape
func minSV(dst, a, b *float32, n int)

//go:noescape
func sqrtV(dst, a *float32, n int)

// vecSqrt computes the first k = len(dst) rounded down to 16 elements of
// dst = sqrt(a) with AVX-512 and returns k (0 without AVX-512).
func vecSqrt(dst, a []float32) int {
	k := len(dst) &^ 15
	if !hasVecAVX512 || k == 0 {
		return 0
	}
	sqrtV(&dst[0], &a[0], k)
	return k
}

//go:noescape
func signV(dst, a *float32, n int)

// vecSign computes the first k = len(dst) rounded down to 16 elements of
// dst = sign(a) (signFloat32's bits) with AVX-512 and returns k (0 without
// AVX-512).
func vecSign(dst, a []float32) int {
	k := len(dst) &^ 15
	if !hasVecAVX512 || k == 0 {
		return 0
	}
	signV(&dst[0], &a[0], k)
	return k
}

// hasVecAVX512 tells whether the CPU runs the AVX-512 loops and GOTRAIN_CPU
// (package internal/cpufeat) allows them; tests turn it off to compare with
// the Go loops.
var hasVecAVX512 = cpufeat.HasAVX512F

// vecLoops are the loops of each operation: vector-vector, vector-scalar,
// scalar-vector.
var vecLoops = map[backends.OpType][3]func(dst, a, b *float32, n int){
	backends.OpTypeAdd: {addVV, addVS, addSV},
	backends.OpTypeSub: {subVV, subVS, subSV},
	backends.OpTypeMul: {mulVV, mulVS, mulSV},
	backends.OpTypeDiv: {divVV, divVS, divSV},
	backends.OpTypeMax: {maxVV, maxVS, maxSV},
	backends.OpTypeMin: {minVV, minVS, minSV},
}

// vecBinary computes the first k = len(dst) rounded down to 16 elements of
// dst = a op b with AVX-512 (as, bs are the scalars when aScalar, bScalar)
// and returns k; 0 when the operation or the CPU has no loop.
func vecBinary(op backends.OpType, dst, a []float32, as *float32, aScalar bool, b []float32, bs *float32, bScalar bool) int {
	k := len(dst) &^ 15
	if !hasVecAVX512 || k == 0 || (aScalar && bScalar) {
		return 0
	}
	loops, ok := vecLoops[op]
	if !ok {
		return 0
	}
	switch {
	case bScalar:
		loops[1](&dst[0], &a[0], bs, k)
	case aScalar:
		loops[2](&dst[0], as, &b[0], k)
	default:
		loops[0](&dst[0], &a[0], &b[0], k)
	}
	return k
}
