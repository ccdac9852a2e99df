//go:build amd64 && !purego && !noasm

package cpubackend

import "github.com/gomlx/gomlx/backends"

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

// The one-pass bfloat16 operations (bf16vec_amd64.s): dst[i] = a[i] op
// b[i] for i < n, a multiple of 16, with a nil a or b standing for the
// scalar *as or *bs.
//
//go:noescape
func addBF16AVX512(dst, a, b *uint16, as, bs *float32, n int)

//go:noescape
func subBF16AVX512(dst, a, b *uint16, as, bs *float32, n int)

//go:noescape
func mulBF16AVX512(dst, a, b *uint16, as, bs *float32, n int)

//go:noescape
func divBF16AVX512(dst, a, b *uint16, as, bs *float32, n int)

// vecBinaryBF16 runs the one-pass AVX-512 loop of op over the multiples of
// 16 of dst when GOTRAIN_CPU and the CPU allow it, and returns how many
// elements it did; a or b is nil for a scalar operand, *as or *bs.
func vecBinaryBF16(op backends.OpType, dst, a, b []uint16, as, bs *float32) int {
	k := len(dst) &^ 15
	if !hasVecAVX512 || k == 0 {
		return 0
	}
	var f func(dst, a, b *uint16, as, bs *float32, n int)
	switch op {
	case backends.OpTypeAdd:
		f = addBF16AVX512
	case backends.OpTypeSub:
		f = subBF16AVX512
	case backends.OpTypeMul:
		f = mulBF16AVX512
	case backends.OpTypeDiv:
		f = divBF16AVX512
	default:
		return 0
	}
	var ap, bp *uint16
	if a != nil {
		ap = &a[:k][0]
	}
	if b != nil {
		bp = &b[:k][0]
	}
	f(&dst[0], ap, bp, as, bs, k)
	return k
}

// logisticForBF16AVX512 is logisticForBF16Go's loop over n elements, a
// positive multiple of 16; c points to logisticBF16Consts.
//
//go:noescape
func logisticForBF16AVX512(dst, src *float32, n int, c *float32)

// vecLogisticForBF16 runs the AVX-512 loop of logisticForBF16 over the
// multiples of 16 when GOTRAIN_CPU and the CPU allow it, and returns how
// many elements it did.
func vecLogisticForBF16(dst, a []float32) int {
	k := len(dst) &^ 15
	if !hasVecAVX512 || k == 0 {
		return 0
	}
	_ = a[k-1]
	logisticForBF16AVX512(&dst[0], &a[0], k, &logisticBF16Consts[0])
	return k
}
