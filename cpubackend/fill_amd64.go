//go:build amd64 && !purego && !noasm

package cpubackend

// fillAVX512 sets dst[j] = v for j < n, a positive multiple of 16
// (fill_amd64.s).
//
//go:noescape
func fillAVX512(dst *float32, v float32, n int)

// vecFill fills the multiples of 16 of dst with v with AVX-512 where
// GOTRAIN_CPU and the CPU allow it, and returns how many it filled.
func vecFill(dst []float32, v float32) int {
	k := len(dst) &^ 15
	if !hasVecAVX512 || k == 0 {
		return 0
	}
	fillAVX512(&dst[0], v, k)
	return k
}
