//go:build amd64 && !purego && !noasm

package cpubackend

// widenBF16AVX512 sets dst[i] to the float32 of the bfloat16 bits src[i]
// for i < n, a multiple of 16 (bf16vec_amd64.s).
//
//go:noescape
func widenBF16AVX512(dst *float32, src *uint16, n int)

// narrowBF16AVX512 sets dst[i] to the top 16 bits of src[i] for i < n, a
// multiple of 16.
//
//go:noescape
func narrowBF16AVX512(dst *uint16, src *float32, n int)

// truncBF16AVX512 clears the low 16 bits of x[i] for i < n, a multiple of
// 16.
//
//go:noescape
func truncBF16AVX512(x *float32, n int)

// vecWidenBF16, vecNarrowBF16 and vecTruncBF16 run the AVX-512 loops over
// the multiples of 16 when GOTRAIN_CPU and the CPU allow them, and return
// how many elements they did.
func vecWidenBF16(dst []float32, src []uint16) int {
	k := len(src) &^ 15
	if !hasVecAVX512 || k == 0 {
		return 0
	}
	_ = dst[k-1]
	widenBF16AVX512(&dst[0], &src[0], k)
	return k
}

func vecNarrowBF16(dst []uint16, src []float32) int {
	k := len(src) &^ 15
	if !hasVecAVX512 || k == 0 {
		return 0
	}
	_ = dst[k-1]
	narrowBF16AVX512(&dst[0], &src[0], k)
	return k
}

func vecTruncBF16(x []float32) int {
	k := len(x) &^ 15
	if !hasVecAVX512 || k == 0 {
		return 0
	}
	truncBF16AVX512(&x[0], k)
	return k
}
