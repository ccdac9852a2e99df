//go:build amd64 && !purego && !noasm

package cpubackend

import (
	"math"

	"github.com/gotrain/gotrain/internal/cpufeat"
)

// logisticAVX512, tanhAVX512 and expAVX512 are the AVX-512 loops of
// fastmath.go (fastmath_amd64.s): n must be a positive multiple of 8 and c
// must point to fastmathConsts. The *AVX2 loops are the same with four
// lanes: n a positive multiple of 4, c pointing to fastmathConstsAVX2.
//
//go:noescape
func logisticAVX512(dst, src *float32, n int, c *float64)

//go:noescape
func tanhAVX512(dst, src *float32, n int, c *float64)

//go:noescape
func expAVX512(dst, src *float32, n int, c *float64)

//go:noescape
func logisticAVX2(dst, src *float32, n int, c *float64)

//go:noescape
func tanhAVX2(dst, src *float32, n int, c *float64)

//go:noescape
func expAVX2(dst, src *float32, n int, c *float64)

// kernelsBuilt tells whether this build has the assembly loops.
const kernelsBuilt = true

// hasFastmathAVX512 tells whether the CPU runs the AVX-512 loops (F for the
// arithmetic, DQ for the float64 to int64 conversion) and GOTRAIN_CPU
// (package internal/cpufeat) allows them; tests turn it off to compare with
// the Go loops.
var hasFastmathAVX512 = cpufeat.HasAVX512F && cpufeat.HasAVX512DQ

// hasFastmathAVX2 tells whether the AVX2 loops run where the AVX-512 ones
// do not (cpufeat's AVX2 level, which has FMA too; the loops use none).
var hasFastmathAVX2 = cpufeat.HasAVX2FMA

// fastmathConstsAVX2 are the AVX2 loops' constants, four copies of each
// (32 bytes apart, in the order fastmath_amd64.s reads them):
// fastmathConsts, then the bits of 1.5·2^52 less 1023 (t + 1.5·2^52 less
// it is int64(kf) + 1023), the sign bit and the mask of the other bits.
var fastmathConstsAVX2 = func() (c [22 * 4]float64) {
	vals := append(fastmathConsts[:len(fastmathConsts):len(fastmathConsts)],
		math.Float64frombits(math.Float64bits(1.5*(1<<52))-1023),
		math.Float64frombits(1<<63),
		math.Float64frombits(1<<63-1))
	for i, v := range vals {
		for l := range 4 {
			c[4*i+l] = v
		}
	}
	return c
}()

// logisticFloat32 sets dst[j] = 1/(1 + e^−a[j]) (see logisticFloat32Go).
func logisticFloat32(dst, a []float32) {
	fastmathLoop(dst, a, logisticAVX512, logisticAVX2, logisticFloat32Go)
}

// expFloat32 sets dst[j] = e^a[j] (see expFloat32Go).
func expFloat32(dst, a []float32) {
	fastmathLoop(dst, a, expAVX512, expAVX2, expFloat32Go)
}

// tanhFloat32 sets dst[j] = tanh(a[j]) (see tanhFloat32Go).
func tanhFloat32(dst, a []float32) {
	fastmathLoop(dst, a, tanhAVX512, tanhAVX2, tanhFloat32Go)
}

// fastmathLoop runs the AVX-512 loop vec512 (else the AVX2 loop vec2) over
// the multiples of 8 and over the rest padded to 8 lanes, or goFn
// everywhere without either.
func fastmathLoop(dst, a []float32, vec512, vec2 func(dst, src *float32, n int, c *float64), goFn func(dst, a []float32)) {
	a = a[:len(dst)]
	vec, c := vec512, &fastmathConsts[0]
	switch {
	case hasFastmathAVX512:
	case hasFastmathAVX2:
		vec, c = vec2, &fastmathConstsAVX2[0]
	default:
		goFn(dst, a)
		return
	}
	n := len(dst) &^ 7
	if n > 0 {
		vec(&dst[0], &a[0], n, c)
	}
	if rest := len(dst) - n; rest > 0 {
		var in, out [8]float32
		copy(in[:], a[n:])
		vec(&out[0], &in[0], 8, c)
		copy(dst[n:], out[:rest])
	}
}
