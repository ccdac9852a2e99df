//go:build amd64 && !purego && !noasm

package cpubackend

import "github.com/gotrain/gotrain/internal/cpufeat"

// sum32AVX2 adds x[0:n] (n a positive multiple of 32) to the running sums
// s: element i to s[i mod 32] (sum_amd64.s).
//
//go:noescape
func sum32AVX2(s *[32]float32, x *float32, n int)

// sum32FinishAVX2 combines the running sums as sum32FinishGo does.
//
//go:noescape
func sum32FinishAVX2(s *[32]float32) float32

// hasSumAVX2 tells whether sum32Add and sum32Finish use the AVX2 loops: the
// CPU has AVX2 and GOTRAIN_CPU (package internal/cpufeat) allows it; tests
// turn it off to compare with the Go loops.
var hasSumAVX2 = cpufeat.HasAVX2FMA

// sum32Groups adds the whole groups of 32 of x to s with AVX2 when it can
// and returns how many elements it added.
func sum32Groups(s *[32]float32, x []float32) int {
	k := len(x) &^ 31
	if !hasSumAVX2 || k == 0 {
		return 0
	}
	sum32AVX2(s, &x[0], k)
	return k
}

// sum32Finish combines the running sums as sum32FinishGo does, with AVX2
// when it can.
func sum32Finish(s *[32]float32) float32 {
	if hasSumAVX2 {
		return sum32FinishAVX2(s)
	}
	return sum32FinishGo(s)
}
