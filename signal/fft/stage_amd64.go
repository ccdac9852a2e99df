//go:build amd64 && !purego

package fft

import "github.com/gotrain/gotrain/internal/cpufeat"

// kernelsBuilt tells whether this build has the assembly kernels.
const kernelsBuilt = true

// useAVX2 selects the AVX2+FMA stage kernels where the CPU and GOTRAIN_CPU
// (package internal/cpufeat) allow them; tests turn it off to compare.
var useAVX2 = cpufeat.HasAVX2FMA

// radix4AVX2 is a radix-4 Stockham pass over runs of s elements (s even):
// for p < m it reads x[s·(p+i·m) : +s] for i < 4, and writes the butterfly
// outputs times tw[3p+i−1] (i > 0) to y[s·(4p+i) : +s].
//
//go:noescape
func radix4AVX2(y, x *complex128, m, s int, tw *complex128)

// radix2AVX2 is the last radix-2 pass (l == 2) over runs of s elements
// (s even): y[q] = x[q] + x[q+s], y[q+s] = x[q] − x[q+s].
//
//go:noescape
func radix2AVX2(y, x *complex128, s int)

// powerUnpackAVX2 is the loop of PowerPackedInterleaved over bins
// k = 1..h/2 (h ≥ 2) for batch a multiple of 4, with the scalar code's
// operations in its order (no fused multiply-adds), four sequences per
// vector.
//
//go:noescape
func powerUnpackAVX2(dst *float64, z, tw *complex128, h, batch int, c *[2][4]float64)

// halfFirstAVX2 is halfFirst: the first radix-4 pass of a transform whose
// input is x[0:2m] (complex64) and zeros, one butterfly per iteration in
// 128-bit registers, with halfFirst's operations (no fused multiply-add).
//
//go:noescape
func halfFirstAVX2(y *complex128, x *complex64, m int, tw *complex128)

// radix4LastAVX2 is the last radix-4 pass (l == 4): radix4AVX2 without
// the unit twiddles' products (s even).
//
//go:noescape
func radix4LastAVX2(y, x *complex128, s int)
