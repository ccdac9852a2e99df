//go:build amd64 && !purego && !noasm

package cpubackend

import "github.com/gotrain/gotrain/internal/cpufeat"

// logisticAVX512 and tanhAVX512 are the AVX-512 loops of fastmath.go
// (fastmath_amd64.s): n must be a positive multiple of 8 and c must point
// to fastmathConsts.
//
//go:noescape
func logisticAVX512(dst, src *float32, n int, c *float64)

//go:noescape
func tanhAVX512(dst, src *float32, n int, c *float64)

//go:noescape
func expAVX512(dst, src *float32, n int, c *float64)

// kernelsBuilt tells whether this build has the assembly loops.
const kernelsBuilt = true

// hasFastmathAVX512 tells whether the CPU runs the AVX-512 loops (F for the
// arithmetic, DQ for the float64 to int64 conversion) and GOTRAIN_CPU
// (package internal/cpufeat) allows them; tests turn it off to compare with
// the Go loops.
var hasFastmathAVX512 = cpufeat.HasAVX512F && cpufeat.HasAVX512DQ

// logisticFloat32 sets dst[j] = 1/(1 + e^−a[j]) (see logisticFloat32Go).
func logisticFloat32(dst, a []float32) {
	fastmathLoop(dst, a, logisticAVX512, logisticFloat32Go)
}

// expFloat32 sets dst[j] = e^a[j] (see expFloat32Go).
func expFloat32(dst, a []float32) {
	fastmathLoop(dst, a, expAVX512, expFloat32Go)
}

// tanhFloat32 sets dst[j] = tanh(a[j]) (see tanhFloat32Go).
func tanhFloat32(dst, a []float32) {
	fastmathLoop(dst, a, tanhAVX512, tanhFloat32Go)
}

// fastmathLoop runs vec over the multiples of 8 and over the rest padded to
// 8 lanes, or goFn everywhere without AVX-512.
func fastmathLoop(dst, a []float32, vec func(dst, src *float32, n int, c *float64), goFn func(dst, a []float32)) {
	a = a[:len(dst)]
	if !hasFastmathAVX512 {
		goFn(dst, a)
		return
	}
	n := len(dst) &^ 7
	if n > 0 {
		vec(&dst[0], &a[0], n, &fastmathConsts[0])
	}
	if rest := len(dst) - n; rest > 0 {
		var in, out [8]float32
		copy(in[:], a[n:])
		vec(&out[0], &in[0], 8, &fastmathConsts[0])
		copy(dst[n:], out[:rest])
	}
}
