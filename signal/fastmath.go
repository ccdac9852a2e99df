package signal

import "math"

// fastLn returns ln x for positive normal x with an absolute error below
// 2e-11 (relative to ln's output; 1e-10 dB after the 10·log10 scaling);
// other inputs go to math.Log. It reduces x = 2^e·m with m in [√½, √2)
// and sums the series ln m = 2·atanh(s), s = (m−1)/(m+1), to s^11.
func fastLn(x float64) float64 {
	b := math.Float64bits(x)
	if exp := b >> 52; exp == 0 || exp >= 0x7ff {
		return math.Log(x) // zero, subnormal, negative, infinite or NaN
	}
	// Shift the exponent so that the mantissa lands in [√½, √2) without a
	// branch (as fdlibm/musl do).
	b += 0x3ff0000000000000 - 0x3fe6a09e667f3bcd
	e := int(b>>52) - 0x3ff
	m := math.Float64frombits(b&(1<<52-1) + 0x3fe6a09e667f3bcd)
	s := (m - 1) / (m + 1)
	z := s * s
	z2 := z * z
	z4 := z2 * z2
	p := (2 + 2.0/3*z) + (2.0/5+2.0/7*z)*z2 + (2.0/9+2.0/11*z)*z4
	return float64(e)*math.Ln2 + s*p
}

// fastAtan2 returns atan2(y, x) for finite inputs within 3e-13 of
// math.Atan2, without its special cases (atan2(0, 0) is 0). The argument
// is reduced to |t| ≤ tan(π/8) with one division and evaluated with a
// polynomial; the selections are arithmetic on sign bits, not branches,
// because the signs of random phases defeat branch prediction.
func fastAtan2(y, x float64) float64 {
	ax, ay := math.Abs(x), math.Abs(y)
	hi, lo := max(ax, ay), min(ax, ay)
	if hi == 0 {
		return 0
	}
	swap := float64(math.Float64bits(ax-ay) >> 63)                       // 1 when |y| > |x|
	red := float64(math.Float64bits(0.41421356237309504880*hi-lo) >> 63) // 1 when lo/hi > tan(π/8)
	t := (lo - red*hi) / (hi + red*lo)                                   // lo/hi, or (lo/hi−1)/(lo/hi+1)
	r := red*(math.Pi/4) + atanPoly(t)
	r = swap*(math.Pi/2) + (1-2*swap)*r
	neg := float64(math.Float64bits(x) >> 63)
	r = neg*math.Pi + (1-2*neg)*r
	return math.Copysign(r, y)
}

// atanPoly returns atan(t) for |t| ≤ tan(π/8) within 3e-13: t·P(t²) with
// a degree-7 least-squares Chebyshev fit, evaluated by Estrin's scheme
// (short dependency chains).
func atanPoly(t float64) float64 {
	z := t * t
	z2 := z * z
	z4 := z2 * z2
	a := 0.9999999999992707 - 0.333333332783843*z
	b := 0.19999993188848308 - 0.1428539125816608*z
	c := 0.11103534898900606 - 0.08993217162984875*z
	d := 0.06977004852438395 - 0.03770173324445163*z
	return t * ((a + b*z2) + (c+d*z2)*z4)
}
