package signal

import (
	"fmt"
	"math"

	"github.com/gotrain/gotrain/signal/fft"
)

// The Welch PSD and the autocorrelation share one set of FFTs.
//
// The record is cut into blocks of B = M/2 samples (M = WelchSegment) and
// each block, zero-padded to M, is transformed once: P_b = FFT_M(block b).
//
// Welch: segment i is blocks i and i+1, so its transform is
// X[k] = P_i[k] + (−1)^k·P_{i+1}[k]. Removing the segment mean (scipy's
// detrend="constant") sets X[0] = 0, and the periodic Hann window
// 0.5 − 0.5·cos(2πn/M) becomes the three-tap convolution
// Xw[k] = 0.5·X[k] − 0.25·(X[k−1] + X[k+1]) (indices mod M).
//
// Autocorrelation: r[k] = Σ_n x[n+k]·conj(x[n]) splits by block offset j
// into r[k] = Σ_j c_j[k − jB], where c_j is the linear cross-correlation
// of blocks b and b+j summed over b. Its lags lie in (−B, B), so the
// length-M circular correlation IFFT(Σ_b conj(P_b)·P_{b+j}) holds it
// exactly. Lags up to L need offsets j = 0..⌊(B−1+L)/B⌋.
type welchState struct {
	m, b    int
	plan    *fft.Plan
	ring    [][]complex128 // the last len(ring) block spectra
	pad     []complex128   // one zero-padded block
	scratch []complex128
	acc     []float64      // Σ |Xw|²
	s0      []float64      // Σ |P_b|²
	sj      [][]complex128 // Σ conj(P_b)·P_{b+j}, j ≥ 1
	corr    []complex128
	tmp     []complex128
	scale   float64 // 1/(fs·Σw²)

	// The vector kernels' unreduced accumulators (two values per bin,
	// folded into s0, sj and acc after the last block): u0 for s0,
	// p1/q1 for sj[0], p2/q2 for sj[1], hacc for acc.
	u0, p1, q1, p2, q2, hacc []float64
}

func (w *welchState) init(c Config) error {
	w.m = c.WelchSegment
	w.b = w.m / 2
	p, err := fft.For(w.m)
	if err != nil {
		return fmt.Errorf("signal: Welch: %w", err)
	}
	w.plan = p
	offsets := (w.b-1+c.AutocorrLags)/w.b + 1
	// The vector path transforms four blocks before accumulating them,
	// with the two before them still in the ring: six slots.
	// The ring, the padded block, the scratch and the correlation
	// buffers, skewed against each other (alloc.go).
	nr := max(offsets, 2, 6)
	bufs := skewed[complex128](nr+4, w.m, skewComplex)
	w.ring = bufs[:nr]
	w.sj = make([][]complex128, offsets-1)
	for i := range w.sj {
		w.sj[i] = make([]complex128, w.m)
	}
	w.pad, w.scratch = bufs[nr], bufs[nr+1]
	w.acc = make([]float64, w.m)
	w.s0 = make([]float64, w.m)
	w.corr, w.tmp = bufs[nr+2], bufs[nr+3]
	if useAVX2 && len(w.sj) == 2 {
		u := skewed[float64](6, 2*w.m, skewFloat) // see alloc.go
		w.u0, w.p1, w.q1, w.p2, w.q2, w.hacc = u[0], u[1], u[2], u[3], u[4], u[5]
	}
	var sw float64
	for n := range w.m {
		v := 0.5 - 0.5*math.Cos(2*math.Pi*float64(n)/float64(w.m))
		sw += v * v
	}
	w.scale = 1 / (c.SampleRate * sw)
	return nil
}

func (w *welchState) run(x []complex64, f *Features, c Config) {
	m, bl := w.m, w.b
	n := len(x)
	nseg := (n - bl) / bl // scipy: (N − noverlap) // step
	nblk := (n + bl - 1) / bl
	clear(w.acc)
	clear(w.s0)
	for _, s := range w.sj {
		clear(s)
	}
	nr := len(w.ring)
	vec := useAVX2 && w.u0 != nil
	if vec {
		for _, u := range [][]float64{w.u0, w.p1, w.q1, w.p2, w.q2, w.hacc} {
			clear(u)
		}
	}
	transform := func(b int) []complex128 {
		lo := b * bl
		hi := min(lo+bl, n)
		cur := w.ring[b%nr]
		if hi-lo == bl {
			// A whole block: the transform reads it and skips the padding.
			_ = w.plan.ForwardHalf(cur, x[lo:hi], w.scratch)
			return cur
		}
		pad := w.pad
		for i, v := range x[lo:hi] {
			pad[i] = complex128(v)
		}
		clear(pad[hi-lo:])
		_ = w.plan.Forward(cur, pad, w.scratch)
		return cur
	}
	hann := func(b int) {
		if b >= 1 && b <= nseg {
			if vec {
				hannSegmentVec(w.acc, w.hacc, w.ring[(b-1)%nr], w.ring[b%nr])
			} else {
				hannSegment(w.acc, w.ring[(b-1)%nr], w.ring[b%nr])
			}
		}
	}
	for b := 0; b < nblk; {
		if vec && b >= 2 && b+4 <= nblk {
			// Four blocks, then their products in one pass (the values
			// of four accumulate3AVX2 calls).
			for i := range 4 {
				transform(b + i)
			}
			accumulate6AVX2(&w.u0[0], &w.p1[0], &w.q1[0], &w.p2[0], &w.q2[0],
				&w.ring[(b-2)%nr][0], &w.ring[(b-1)%nr][0], &w.ring[b%nr][0],
				&w.ring[(b+1)%nr][0], &w.ring[(b+2)%nr][0], &w.ring[(b+3)%nr][0], m)
			if b+3 <= nseg { // b ≥ 2, so all four segments count
				hannSegments4Vec(w.acc, w.hacc, w.ring[(b-1)%nr], w.ring[b%nr], w.ring[(b+1)%nr], w.ring[(b+2)%nr], w.ring[(b+3)%nr])
			} else {
				for i := range 4 {
					hann(b + i)
				}
			}
			b += 4
			continue
		}
		cur := transform(b)
		if vec && b >= 2 {
			accumulate3AVX2(&w.u0[0], &w.p1[0], &w.q1[0], &w.p2[0], &w.q2[0],
				&w.ring[(b-2)%nr][0], &w.ring[(b-1)%nr][0], &cur[0], m)
		} else if len(w.sj) == 2 && b >= 2 {
			accumulate3(w.s0, w.sj[0], w.sj[1], w.ring[(b-2)%nr], w.ring[(b-1)%nr], cur)
		} else {
			accumulatePower(w.s0, cur)
			for j := 1; j <= len(w.sj) && j <= b; j++ {
				accumulateCross(w.sj[j-1], w.ring[(b-j)%nr], cur)
			}
		}
		hann(b)
		b++
	}
	if vec {
		w.fold()
	}
	// PSD, fftshifted.
	f.PSD = grow(f.PSD, m)
	g := w.scale / float64(nseg)
	for k := range m {
		f.PSD[(k+m/2)%m] = w.acc[k] * g
	}
	w.autocorr(f, c.AutocorrLags)
}

// accumulatePower adds |p|² to acc.
func accumulatePower(acc []float64, p []complex128) {
	p = p[:len(acc)]
	for k, v := range p {
		acc[k] += real(v)*real(v) + imag(v)*imag(v)
	}
}

// accumulateCross adds conj(a)·b to acc.
func accumulateCross(acc, a, b []complex128) {
	a, b = a[:len(acc)], b[:len(acc)]
	for k := range acc {
		x, y := a[k], b[k]
		acc[k] += complex(real(x)*real(y)+imag(x)*imag(y), real(x)*imag(y)-imag(x)*real(y))
	}
}

// accumulate3 is accumulatePower(s0, c), accumulateCross(s1, b, c) and
// accumulateCross(s2, a, c) in one pass.
func accumulate3(s0 []float64, s1, s2, a, b, c []complex128) {
	n := len(s0)
	s1, s2, a, b, c = s1[:n], s2[:n], a[:n], b[:n], c[:n]
	for k := range s0 {
		cr, ci := real(c[k]), imag(c[k])
		br, bi := real(b[k]), imag(b[k])
		ar, ai := real(a[k]), imag(a[k])
		s0[k] += cr*cr + ci*ci
		s1[k] += complex(br*cr+bi*ci, br*ci-bi*cr)
		s2[k] += complex(ar*cr+ai*ci, ar*ci-ai*cr)
	}
}

// hannSegment adds |Xw[k]|² for the segment made of the blocks with
// spectra a and b: X[k] = a[k] + (−1)^k·b[k], X[0] = 0 (mean removed),
// Xw[k] = 0.5·X[k] − 0.25·(X[k−1] + X[k+1]).
func hannSegment(acc []float64, a, b []complex128) {
	m := len(acc)
	a, b = a[:m], b[:m]
	// x(k) for even k is a+b, for odd k a−b; x(0) = 0. Two bins per step.
	prev := a[m-1] - b[m-1] // x(m−1), m even
	cur := complex128(0)    // x(0)
	for k := 0; k+2 < m; k += 2 {
		n1 := a[k+1] - b[k+1]
		n2 := a[k+2] + b[k+2]
		v0 := 0.5*cur - 0.25*(prev+n1)
		v1 := 0.5*n1 - 0.25*(cur+n2)
		acc[k] += real(v0)*real(v0) + imag(v0)*imag(v0)
		acc[k+1] += real(v1)*real(v1) + imag(v1)*imag(v1)
		prev, cur = n1, n2
	}
	// k = m−2 and m−1, with x(m) = x(0) = 0.
	n1 := a[m-1] - b[m-1]
	v0 := 0.5*cur - 0.25*(prev+n1)
	v1 := 0.5*n1 - 0.25*cur
	acc[m-2] += real(v0)*real(v0) + imag(v0)*imag(v0)
	acc[m-1] += real(v1)*real(v1) + imag(v1)*imag(v1)
}

// hannSegmentVec is hannSegment with bins 2..m−3 added, unreduced, to
// hacc by the vector kernel and the four bins next to the wrap-around
// (where X(0) = 0 enters) added to acc here.
func hannSegmentVec(acc, hacc []float64, a, b []complex128) {
	hannEdges(acc, a, b)
	hannAVX2(&hacc[4], &a[2], &b[2], len(acc)-4, &hannConsts)
}

// hannEdges adds to acc the Hann-windowed power of the four bins next to
// the wrap-around of the segment (a, b): bins 0, 1, m−2 and m−1, where
// X(0) = 0 enters, which the vector kernels leave out.
func hannEdges(acc []float64, a, b []complex128) {
	m := len(acc)
	x := func(j int) complex128 {
		j = (j%m + m) % m
		switch {
		case j == 0:
			return 0
		case j&1 == 0:
			return a[j] + b[j]
		}
		return a[j] - b[j]
	}
	for _, k := range [4]int{0, 1, m - 2, m - 1} {
		v := 0.5*x(k) - 0.25*(x(k-1)+x(k+1))
		acc[k] += real(v)*real(v) + imag(v)*imag(v)
	}
}

// hannSegments4Vec is hannSegmentVec for the four segments (p0, p1),
// (p1, p2), (p2, p3), (p3, p4), with one pass of the vector kernel.
func hannSegments4Vec(acc, hacc []float64, p0, p1, p2, p3, p4 []complex128) {
	blocks := [5][]complex128{p0, p1, p2, p3, p4}
	for s := range 4 {
		hannEdges(acc, blocks[s], blocks[s+1])
	}
	ptrs := [5]*complex128{&p0[2], &p1[2], &p2[2], &p3[2], &p4[2]}
	hann4AVX2(&hacc[4], &ptrs, len(acc)-4, &hannConsts)
}

// fold adds the vector kernels' unreduced accumulators into s0, sj and acc.
func (w *welchState) fold() {
	s1, s2 := w.sj[0], w.sj[1]
	for k := range w.s0 {
		w.s0[k] += w.u0[2*k] + w.u0[2*k+1]
		s1[k] += complex(w.p1[2*k]+w.p1[2*k+1], w.q1[2*k]-w.q1[2*k+1])
		s2[k] += complex(w.p2[2*k]+w.p2[2*k+1], w.q2[2*k]-w.q2[2*k+1])
		w.acc[k] += w.hacc[2*k] + w.hacc[2*k+1]
	}
}

// autocorr turns the accumulated block products into ρ[0..lags].
func (w *welchState) autocorr(f *Features, lags int) {
	m, bl := w.m, w.b
	f.Autocorr = grow(f.Autocorr, lags+1)
	r := f.Autocorr
	clear(r)
	for j := 0; j <= len(w.sj); j++ {
		if j == 0 {
			for k, v := range w.s0 {
				w.tmp[k] = complex(v, 0)
			}
		} else {
			copy(w.tmp, w.sj[j-1])
		}
		_ = w.plan.Inverse(w.corr, w.tmp, w.scratch)
		// c_j[d] for d in (−B, B) sits at corr[d mod M]; lag k = d + jB.
		for d := -bl + 1; d < bl; d++ {
			k := d + j*bl
			if k < 0 || k > lags {
				continue
			}
			r[k] += w.corr[(d+m)%m]
		}
	}
	r0 := real(r[0])
	if r0 == 0 {
		clear(r)
		return
	}
	// ρ = r/r[0]; the common factor 1/N of the biased estimator cancels.
	g := complex(1/r0, 0)
	for k := range r {
		r[k] *= g
	}
}
