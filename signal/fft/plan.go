package fft

import (
	"fmt"
	"math"
	"sync"
)

// Plan is a precomputed complex FFT of one power-of-two length.
// It is read-only after creation and safe for concurrent use.
type Plan struct {
	n      int
	stages []stage
}

// stage is one radix-4 or radix-2 pass of the Stockham algorithm: it turns
// s interleaved sequences of length l into 4s (or 2s) sequences of length
// l/4 (or l/2).
type stage struct {
	radix int
	l, s  int
	// tw holds w^p, w^2p, w^3p (radix 4) or w^p (radix 2) for p in
	// [0, l/radix), with w = exp(−2πi/l).
	tw []complex128
}

// MaxLen is the largest transform length NewPlan accepts.
const MaxLen = 1 << 26

// NewPlan returns a plan for transforms of length n, a power of two between
// 1 and MaxLen.
func NewPlan(n int) (*Plan, error) {
	if n < 1 || n > MaxLen || n&(n-1) != 0 {
		return nil, fmt.Errorf("fft: length %d is not a power of two in [1, %d]", n, MaxLen)
	}
	p := &Plan{n: n}
	for l, s := n, 1; l > 1; {
		radix := 4
		if l == 2 {
			radix = 2
		}
		st := stage{radix: radix, l: l, s: s}
		m := l / radix
		if m > 1 {
			st.tw = make([]complex128, (radix-1)*m)
			for q := 0; q < m; q++ {
				for k := 1; k < radix; k++ {
					st.tw[(radix-1)*q+k-1] = cis(-2 * math.Pi * float64(k*q) / float64(l))
				}
			}
		}
		p.stages = append(p.stages, st)
		l /= radix
		s *= radix
	}
	return p, nil
}

// cis returns exp(i·theta).
func cis(theta float64) complex128 {
	s, c := math.Sincos(theta)
	return complex(c, s)
}

var cache sync.Map // int -> *Plan

// For returns a cached plan for length n, creating it on first use.
func For(n int) (*Plan, error) {
	if p, ok := cache.Load(n); ok {
		return p.(*Plan), nil
	}
	p, err := NewPlan(n)
	if err != nil {
		return nil, err
	}
	actual, _ := cache.LoadOrStore(n, p)
	return actual.(*Plan), nil
}

// Len returns the transform length.
func (p *Plan) Len() int { return p.n }

// Forward stores the DFT of src in dst. All three slices must have length
// Len(); dst may be src (an in-place transform, which costs one extra copy
// when the plan has an odd number of stages) but scratch must not overlap
// either. src is left unchanged when it is not dst.
func (p *Plan) Forward(dst, src, scratch []complex128) error {
	if err := p.check(dst, src, scratch, 1); err != nil {
		return err
	}
	p.forward(dst, src, scratch, 1)
	return nil
}

// ForwardBatch transforms batch sequences at once. The slices hold
// Len()·batch elements, interleaved: element k of sequence b is at index
// k·batch + b, in the input and in the output. Batches of two or more let
// every pass use the vector kernels and are the fast way to transform many
// short sequences. The aliasing rules are those of Forward.
func (p *Plan) ForwardBatch(dst, src, scratch []complex128, batch int) error {
	if err := p.check(dst, src, scratch, batch); err != nil {
		return err
	}
	p.forward(dst, src, scratch, batch)
	return nil
}

// InverseBatch is the inverse of ForwardBatch, scaled by 1/Len().
func (p *Plan) InverseBatch(dst, src, scratch []complex128, batch int) error {
	if err := p.check(dst, src, scratch, batch); err != nil {
		return err
	}
	p.inverse(dst, src, scratch, batch)
	return nil
}

// Inverse stores the inverse DFT of src, scaled by 1/Len(), in dst, with the
// same rules as Forward.
func (p *Plan) Inverse(dst, src, scratch []complex128) error {
	if err := p.check(dst, src, scratch, 1); err != nil {
		return err
	}
	p.inverse(dst, src, scratch, 1)
	return nil
}

func (p *Plan) check(dst, src, scratch []complex128, batch int) error {
	if batch < 1 {
		return fmt.Errorf("fft: batch %d is not positive", batch)
	}
	n := p.n * batch
	if len(dst) != n || len(src) != n || len(scratch) != n {
		return fmt.Errorf("fft: length-%d plan with batch %d given dst, src, scratch of lengths %d, %d, %d (want %d)", p.n, batch, len(dst), len(src), len(scratch), n)
	}
	if p.n > 0 && (&scratch[0] == &dst[0] || &scratch[0] == &src[0]) {
		return fmt.Errorf("fft: scratch must not be dst or src")
	}
	return nil
}

// forward is Forward without the checks.
func (p *Plan) forward(dst, src, scratch []complex128, batch int) {
	ns := len(p.stages)
	if ns == 0 {
		copy(dst, src)
		return
	}
	in := src
	if &dst[0] == &src[0] && ns%2 == 1 {
		copy(scratch, src)
		in = scratch
	}
	for i := range p.stages {
		// Stage i writes dst when ns-1-i is even, so the last stage writes dst.
		out := dst
		if (ns-1-i)%2 == 1 {
			out = scratch
		}
		if &out[0] == &in[0] { // only when ns is even, dst == src and i == 0
			out = scratch
		}
		p.stages[i].run(out, in, batch)
		in = out
	}
	if &in[0] != &dst[0] {
		copy(dst, in)
	}
}

// inverse is Inverse without the checks: it swaps real and imaginary parts
// around a forward transform, which conjugates the kernel.
func (p *Plan) inverse(dst, src, scratch []complex128, batch int) {
	for i, v := range src {
		dst[i] = complex(imag(v), real(v))
	}
	p.forward(dst, dst, scratch, batch)
	f := 1 / float64(p.n)
	for i, v := range dst {
		dst[i] = complex(imag(v)*f, real(v)*f)
	}
}

// ForwardHalf stores in dst the DFT of x, Len()/2 complex64 values,
// zero-padded to Len(). The first pass reads x directly and skips the
// zero half (its butterflies have two zero inputs), so there is no padded
// copy; the values are those of Forward on the padded input (up to the
// sign of zero results). dst and scratch have length Len() and must not
// overlap.
func (p *Plan) ForwardHalf(dst []complex128, x []complex64, scratch []complex128) error {
	n := p.n
	if len(x) != n/2 || len(dst) != n || len(scratch) != n {
		return fmt.Errorf("fft: length-%d plan given dst, x, scratch of lengths %d, %d, %d (want %d, %d, %d)",
			n, len(dst), len(x), len(scratch), n, n/2, n)
	}
	if n > 0 && &scratch[0] == &dst[0] {
		return fmt.Errorf("fft: scratch must not be dst")
	}
	ns := len(p.stages)
	if n < 8 {
		for i, v := range x {
			dst[i] = complex128(v)
		}
		clear(dst[len(x):])
		p.forward(dst, dst, scratch, 1)
		return nil
	}
	// Stage i writes dst when ns−1−i is even, so the last one writes dst.
	out := dst
	if (ns-1)%2 == 1 {
		out = scratch
	}
	st := &p.stages[0]
	if useAVX2 {
		halfFirstAVX2(&out[0], &x[0], st.l/4, &st.tw[0])
	} else {
		halfFirst(out, x, st.l/4, st.tw)
	}
	in := out
	for i := 1; i < ns; i++ {
		o := dst
		if (ns-1-i)%2 == 1 {
			o = scratch
		}
		p.stages[i].run(o, in, 1)
		in = o
	}
	return nil
}
