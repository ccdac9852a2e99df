//go:build amd64 && !purego && !noasm

package gemm

import "github.com/gotrain/gotrain/internal/cpufeat"

// narrowAVX512 sets dst[j] to the top 16 bits of src[j] for j < n, a
// positive multiple of 16 (narrow_amd64.s).
//
//go:noescape
func narrowAVX512(dst *uint16, src *float32, n int)

// vecNarrow narrows the multiples of 16 of src into dst with AVX-512 where
// the CPU and GOTRAIN_CPU allow it, and returns how many it did.
func vecNarrow(dst []uint16, src []float32) int {
	k := len(src) &^ 15
	if !cpufeat.HasAVX512F || k == 0 {
		return 0
	}
	_ = dst[k-1]
	narrowAVX512(&dst[0], &src[0], k)
	return k
}
