package cpubackend

import (
	"math"

	"github.com/gomlx/gomlx/backends"
	"runtime"

	"github.com/gotrain/gotrain/internal/parallel"
)

// bfloat16 <-> float32 over slices, as GoMLX's bfloat16 package converts
// one value: a bfloat16 is the top half of a float32, so widening is exact
// and narrowing (bfloat16.FromFloat32) truncates. The AVX-512 loops
// (bf16vec_amd64.s) do the multiples of 16, these loops the rest.

// widenBF16 sets dst[i] to the float32 of the bfloat16 bits src[i].
func widenBF16(dst []float32, src []uint16) {
	dst = dst[:len(src)]
	k := vecWidenBF16(dst, src)
	for i, v := range src[k:] {
		dst[k+i] = math.Float32frombits(uint32(v) << 16)
	}
}

// narrowBF16Bits sets dst[i] to the bits of bfloat16.FromFloat32(src[i]).
func narrowBF16Bits(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	k := vecNarrowBF16(dst, src)
	for i, v := range src[k:] {
		dst[k+i] = uint16(math.Float32bits(v) >> 16)
	}
}

// truncBF16 rounds x[i] to bfloat16 as bfloat16.FromFloat32 does, keeping
// it a float32: x[i] becomes bfloat16.FromFloat32(x[i]).Float32().
func truncBF16(x []float32) {
	k := vecTruncBF16(x)
	for i, v := range x[k:] {
		x[k+i] = math.Float32frombits(math.Float32bits(v) &^ 0xffff)
	}
}

// convertParts runs f over [0, n) in parts of whole 16-lane steps, on all
// the CPUs when n is large (a layer's weights: 400k values took 31 µs on
// one core of the AVX-512 machine). f's parts are independent: the values do
// not depend on the split.
func convertParts(n int, f func(lo, hi int)) {
	parts := min(runtime.GOMAXPROCS(0), n/elementwiseParallelMin)
	if parts < 2 {
		f(0, n)
		return
	}
	bound := func(p int) int {
		if p == parts {
			return n
		}
		return (p * n / parts) &^ 15
	}
	parallel.For(parts, parts, func(p int) { f(bound(p), bound(p+1)) })
}

// elementwiseParallelMin is the number of elements per goroutine below
// which an unfused element-wise operation runs on one goroutine.
const elementwiseParallelMin = 1 << 16

// unaryParts runs the element-wise kernel fn (dst[i] from a[i] alone) over
// a in parts on all the CPUs when it is large (the softmax's Exp of
// [16, 4, 64, 64]: 130 µs on one core).
func unaryParts(fn func(dst, a []float32), dst, a []float32) {
	convertParts(len(a), func(lo, hi int) { fn(dst[lo:hi], a[lo:hi]) })
}

// oneBinaryBF16 are the operations binaryBF16 computes in one pass: those
// whose float32 executor is the IEEE operation itself.
var oneBinaryBF16 = map[backends.OpType]bool{
	backends.OpTypeAdd: true, backends.OpTypeSub: true, backends.OpTypeMul: true, backends.OpTypeDiv: true,
}

// binaryBF16 sets dst[i] to the bits of bfloat16.FromFloat32 of a[i] op
// b[i] on the widened values, op one of oneBinaryBF16; a nil a or b stands
// for the scalar *as or *bs (a widened bfloat16). These are the bits a
// bfloat16 program of this one operation computes with its widened
// temporaries, without them: one pass over memory instead of four.
func binaryBF16(op backends.OpType, dst, a, b []uint16, as, bs *float32) {
	k := vecBinaryBF16(op, dst, a, b, as, bs)
	for i := k; i < len(dst); i++ {
		var x, y float32
		if a != nil {
			x = math.Float32frombits(uint32(a[i]) << 16)
		} else {
			x = *as
		}
		if b != nil {
			y = math.Float32frombits(uint32(b[i]) << 16)
		} else {
			y = *bs
		}
		var z float32
		switch op {
		case backends.OpTypeAdd:
			z = x + y
		case backends.OpTypeSub:
			z = x - y
		case backends.OpTypeMul:
			z = x * y
		case backends.OpTypeDiv:
			z = x / y
		}
		dst[i] = uint16(math.Float32bits(z) >> 16)
	}
}
