package cpubackend

import "math"

// Float32 exp, logistic and tanh for the cpu backend (fused and unfused
// executors alike, so fusion stays bit-identical). simplego computes them
// with Go's float64 math.Exp and math.Tanh behind a sign branch, about
// 20 ns per element here; these evaluate exp in float64 with a degree-9
// polynomial (relative error below 1e-12, far under float32's 6e-8) and no
// data-dependent branch in the common range, so the float32 results are
// the correctly rounded ones except, rarely, by one unit in the last place.
//
// logisticFloat32, tanhFloat32 and expFloat32 run the same float64
// operations, in the same order and without fused multiply-adds, eight
// lanes at a time with AVX-512 where the CPU has it (fastmath_amd64.s),
// else four with AVX2, else in Go; all give the same bits (tested).

// fastmathConsts are the constants of the AVX-512 loops, in the order
// fastmath_amd64.s reads them, as the Go loops round them.
var fastmathConsts = [...]float64{
	expClamp, -expClamp, log2e, 1.5 * (1 << 52), ln2, 1,
	1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040, 1.0 / 40320, 1.0 / 362880,
	-2, 2, 1.0 / 1024, 1.0 / 3, 2.0 / 15,
}

const (
	log2e = 1.4426950408889634
	ln2   = 0.6931471805599453
	// expClamp bounds |x| so that 2^k stays a normal float64; logistic
	// and tanh are saturated (in float32) far below it.
	expClamp = 200.0
)

// logisticFloat32Go sets dst[j] = 1/(1 + e^−a[j]). e^y, for y clamped to
// ±expClamp (NaN passes), is 2^k·e^g with k = y·log2(e) rounded to the
// nearest integer by the 1.5·2^52 trick and |g| ≤ ln2/2, e^g by its Taylor
// series to degree 9 in Estrin's scheme (a short dependency chain). It is
// written out in the loop: as a function it is too large to inline, and a
// call per element would cost more than the arithmetic.
func logisticFloat32Go(dst, a []float32) {
	a = a[:len(dst)]
	const round = 1.5 * (1 << 52)
	for j, x32 := range a {
		x := -float64(x32)
		if x > expClamp {
			x = expClamp
		} else if x < -expClamp {
			x = -expClamp
		}
		t := x * log2e
		kf := (t + round) - round
		g := (t - kf) * ln2
		g2 := g * g
		g4 := g2 * g2
		p := ((1 + g) + g2*(1.0/2+g*(1.0/6))) + g4*(((1.0/24+g*(1.0/120))+g2*(1.0/720+g*(1.0/5040)))+g4*(1.0/40320+g*(1.0/362880)))
		e := p * math.Float64frombits(uint64(int64(kf)+1023)<<52)
		dst[j] = float32(1 / (1 + e))
	}
}

// tanhFloat32Go sets dst[j] = tanh(a[j]) = 2/(1 + e^−2x) − 1, with the odd
// series x − x³/3 + 2x⁵/15 for |x| < 2⁻¹⁰ where the subtraction would
// cancel. e^−2x is computed as in logisticFloat32Go.
func tanhFloat32Go(dst, a []float32) {
	a = a[:len(dst)]
	const round = 1.5 * (1 << 52)
	for j, x32 := range a {
		x := float64(x32)
		if math.Abs(x) < 1.0/1024 {
			x2 := x * x
			dst[j] = float32(x * (1 - x2*(1.0/3-x2*(2.0/15))))
			continue
		}
		y := -2 * x
		if y > expClamp {
			y = expClamp
		} else if y < -expClamp {
			y = -expClamp
		}
		t := y * log2e
		kf := (t + round) - round
		g := (t - kf) * ln2
		g2 := g * g
		g4 := g2 * g2
		p := ((1 + g) + g2*(1.0/2+g*(1.0/6))) + g4*(((1.0/24+g*(1.0/120))+g2*(1.0/720+g*(1.0/5040)))+g4*(1.0/40320+g*(1.0/362880)))
		e := p * math.Float64frombits(uint64(int64(kf)+1023)<<52)
		dst[j] = float32(2/(1+e) - 1)
	}
}

// expFloat32Go sets dst[j] = e^a[j] by the evaluation of logisticFloat32Go
// (clamped to ±expClamp, which over- and underflows float32 anyway).
func expFloat32Go(dst, a []float32) {
	a = a[:len(dst)]
	const round = 1.5 * (1 << 52)
	for j, x32 := range a {
		x := float64(x32)
		if x > expClamp {
			x = expClamp
		} else if x < -expClamp {
			x = -expClamp
		}
		t := x * log2e
		kf := (t + round) - round
		g := (t - kf) * ln2
		g2 := g * g
		g4 := g2 * g2
		p := ((1 + g) + g2*(1.0/2+g*(1.0/6))) + g4*(((1.0/24+g*(1.0/120))+g2*(1.0/720+g*(1.0/5040)))+g4*(1.0/40320+g*(1.0/362880)))
		dst[j] = float32(p * math.Float64frombits(uint64(int64(kf)+1023)<<52))
	}
}
