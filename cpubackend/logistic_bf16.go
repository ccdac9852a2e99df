package cpubackend

import "math"

// The logistic function of bfloat16 programs and executors.
//
// A bfloat16 result keeps 8 bits of the float32 it is truncated from, so
// the float64 evaluation of logisticFloat32 (correctly rounded float32,
// for float32 graphs) buys bfloat16 nothing and costs the SwiGLU of a
// bfloat16 transformer more than its products' share. logisticForBF16
// evaluates 1/(1 + e^−x) in float32 — e^t as 2^k·e^r, r = t − k·ln2 in two
// parts, e^r by Cephes' expf polynomial (relative error about 1e-7) — in
// 16 AVX-512 lanes where the CPU has them, else in Go, with the same
// operations in the same order (no fused multiply-adds) and so the same
// bits. Its float32 result is within a few float32 units of the exact
// value, so its truncation is the exact value's truncation but for values
// within those units of a bfloat16 boundary, where it is the neighbouring
// bfloat16 (still within one bfloat16 unit, as truncation is). −x is
// clamped to [−87, 88], where 2^k stays a normal float32: below x = −88
// the result is logistic(−88), 6e−39, rather than a smaller subnormal.
// NaN stays NaN.

// logisticBF16Consts are the constants of logisticForBF16, in the order
// the AVX-512 loop reads them.
var logisticBF16Consts = [...]float32{
	-87, 88, 1.44269504088896341, 1.5 * (1 << 23), 0.693359375, -2.12194440e-4,
	1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1,
	1,
}

// logisticForBF16 sets dst[j] to 1/(1 + e^−a[j]) as above.
func logisticForBF16(dst, a []float32) {
	a = a[:len(dst)]
	k := vecLogisticForBF16(dst, a)
	logisticForBF16Go(dst[k:], a[k:])
}

// logisticForBF16Go is logisticForBF16's loop in Go: every product is
// converted to float32 before it is added, so that no multiply-add is
// fused and the bits are the AVX-512 loop's.
func logisticForBF16Go(dst, a []float32) {
	a = a[:len(dst)]
	c := &logisticBF16Consts
	lo, hi, log2e, magic, ln2hi, ln2lo := c[0], c[1], c[2], c[3], c[4], c[5]
	one := c[12]
	magicBits := math.Float32bits(magic)
	for j, x := range a {
		t := -x
		if t < lo {
			t = lo
		}
		if t > hi {
			t = hi
		}
		z := float32(t*log2e) + magic
		kf := z - magic
		r := t - float32(kf*ln2hi)
		r = r - float32(kf*ln2lo)
		r2 := float32(r * r)
		p := float32(c[6]*r) + c[7]
		p = float32(p*r) + c[8]
		p = float32(p*r) + c[9]
		p = float32(p*r) + c[10]
		p = float32(p*r) + c[11]
		e := float32(p*r2) + r
		e = e + one
		scale := math.Float32frombits((math.Float32bits(z) - (magicBits - 127)) << 23)
		e = float32(e * scale)
		dst[j] = one / (one + e)
	}
}
