package fft

import (
	"fmt"
	"math"
	"sync"
)

// RealPlan is a precomputed FFT of real input of one even power-of-two
// length n, computed with a complex plan of length n/2. It is read-only after
// creation and safe for concurrent use.
type RealPlan struct {
	n    int
	half *Plan
	// tw[k] = exp(−2πi·k/n) for k in [0, n/2).
	tw []complex128
}

var realCache sync.Map // int -> *RealPlan

// NewRealPlan returns a plan for real transforms of length n, a power of two
// between 2 and MaxLen.
func NewRealPlan(n int) (*RealPlan, error) {
	if n < 2 || n > MaxLen || n&(n-1) != 0 {
		return nil, fmt.Errorf("fft: real length %d is not a power of two in [2, %d]", n, MaxLen)
	}
	half, err := For(n / 2)
	if err != nil {
		return nil, err
	}
	p := &RealPlan{n: n, half: half, tw: make([]complex128, n/2)}
	for k := range p.tw {
		p.tw[k] = cis(-2 * math.Pi * float64(k) / float64(n))
	}
	return p, nil
}

// ForReal returns a cached real plan for length n, creating it on first use.
func ForReal(n int) (*RealPlan, error) {
	if p, ok := realCache.Load(n); ok {
		return p.(*RealPlan), nil
	}
	p, err := NewRealPlan(n)
	if err != nil {
		return nil, err
	}
	actual, _ := realCache.LoadOrStore(n, p)
	return actual.(*RealPlan), nil
}

// Len returns the transform length n.
func (p *RealPlan) Len() int { return p.n }

// Forward stores X[0..n/2], the non-negative frequencies of the DFT of the
// real sequence src (length n), in dst (length n/2+1). work and scratch must
// have length n/2 and not overlap each other or dst.
func (p *RealPlan) Forward(dst []complex128, src []float64, work, scratch []complex128) error {
	h := p.n / 2
	if len(src) != p.n || len(dst) != h+1 || len(work) != h || len(scratch) != h {
		return fmt.Errorf("fft: length-%d real plan given dst, src, work, scratch of lengths %d, %d, %d, %d (want %d, %d, %d, %d)",
			p.n, len(dst), len(src), len(work), len(scratch), h+1, p.n, h, h)
	}
	for i := range work {
		work[i] = complex(src[2*i], src[2*i+1])
	}
	p.half.forward(work, work, scratch, 1)
	p.unpack(dst, work)
	return nil
}

// unpack turns Z, the half-length transform of z[k] = x[2k] + i·x[2k+1],
// into X[0..n/2].
func (p *RealPlan) unpack(dst, z []complex128) {
	h := p.n / 2
	z0 := z[0]
	dst[0] = complex(real(z0)+imag(z0), 0)
	dst[h] = complex(real(z0)-imag(z0), 0)
	tw := p.tw[:h]
	for k := 1; k < h; k++ {
		a := z[k]
		b := z[h-k]
		// E = (a + conj b)/2, O = (a − conj b)/(2i)
		er, ei := 0.5*(real(a)+real(b)), 0.5*(imag(a)-imag(b))
		or, oi := 0.5*(imag(a)+imag(b)), -0.5*(real(a)-real(b))
		w := tw[k]
		dst[k] = complex(er+real(w)*or-imag(w)*oi, ei+real(w)*oi+imag(w)*or)
	}
}

// PowerPacked computes power spectra |X_b[k]|², k = 0..n/2, of batch real
// sequences x_b of length n given packed two samples per complex value and
// interleaved across the batch: z[i·batch + b] = x_b[2i] + i·x_b[2i+1] for
// i < n/2. The packed values are transformed in place (z is overwritten).
// dst receives batch rows of n/2+1 values: dst[b·(n/2+1) + k] = |X_b[k]|².
// scratch must have the length of z and not overlap it.
func (p *RealPlan) PowerPacked(dst []float64, z, scratch []complex128, batch int) error {
	h := p.n / 2
	if batch < 1 || len(z) != h*batch || len(scratch) != h*batch || len(dst) != (h+1)*batch {
		return fmt.Errorf("fft: length-%d real plan, batch %d, given dst, z, scratch of lengths %d, %d, %d (want %d, %d, %d)",
			p.n, batch, len(dst), len(z), len(scratch), (h+1)*batch, h*batch, h*batch)
	}
	p.half.forward(z, z, scratch, batch)
	tw := p.tw[:h]
	for b := range batch {
		z0 := z[b]
		dc, ny := real(z0)+imag(z0), real(z0)-imag(z0)
		dst[b*(h+1)], dst[b*(h+1)+h] = dc*dc, ny*ny
	}
	// Bins k and h−k come from the same two packed values a = z[k] and
	// c = z[h−k]: with E = (a + conj c)/2, O = −i(a − conj c)/2,
	// w = tw[k] and w·O = P + iQ, X[k] = E + w·O and, since
	// tw[h−k] = −conj(w), X[h−k] = conj(E) − conj(w·O), whose power is
	// (Er − P)² + (Q − Ei)². The batch is the inner loop, so z is read in
	// order. At k = h/2 both are the same bin; X[k]'s form is kept.
	for k := 1; k <= h/2; k++ {
		w := tw[k]
		za := z[k*batch : k*batch+batch]
		zc := z[(h-k)*batch : (h-k)*batch+batch]
		for b := range batch {
			row := dst[b*(h+1) : (b+1)*(h+1)]
			pk, phk := unpackPower(w, za[b], zc[b])
			row[h-k] = phk
			row[k] = pk // at k = h/2 the same bin: X[k]'s form is kept
		}
	}
	return nil
}

// PowerPackedInterleaved is PowerPacked with the power spectra interleaved
// across the batch like its input: dst[k·batch + b] = |X_b[k]|² for
// k = 0..n/2 (dst has (n/2+1)·batch values). Its values are PowerPacked's,
// bit for bit on the same CPU path; with batch a multiple of 4 the AVX2
// path computes four sequences per vector.
func (p *RealPlan) PowerPackedInterleaved(dst []float64, z, scratch []complex128, batch int) error {
	h := p.n / 2
	if batch < 1 || len(z) != h*batch || len(scratch) != h*batch || len(dst) != (h+1)*batch {
		return fmt.Errorf("fft: length-%d real plan, batch %d, given dst, z, scratch of lengths %d, %d, %d (want %d, %d, %d)",
			p.n, batch, len(dst), len(z), len(scratch), (h+1)*batch, h*batch, h*batch)
	}
	p.half.forward(z, z, scratch, batch)
	for b := range batch {
		z0 := z[b]
		dc, ny := real(z0)+imag(z0), real(z0)-imag(z0)
		dst[b], dst[h*batch+b] = dc*dc, ny*ny
	}
	if h < 2 {
		return nil
	}
	if useAVX2 && batch%4 == 0 {
		powerUnpackAVX2(&dst[0], &z[0], &p.tw[0], h, batch, &half4)
		return nil
	}
	tw := p.tw[:h]
	for k := 1; k <= h/2; k++ {
		w := tw[k]
		za := z[k*batch : k*batch+batch]
		zc := z[(h-k)*batch : (h-k)*batch+batch]
		dx := dst[k*batch : k*batch+batch]
		dy := dst[(h-k)*batch : (h-k)*batch+batch]
		for b := range batch {
			pk, phk := unpackPower(w, za[b], zc[b])
			dy[b] = phk
			dx[b] = pk // at k = h/2 the same bin: X[k]'s form is kept
		}
	}
	return nil
}

// half4 holds the constants of powerUnpackAVX2: four 0.5, four −0.5.
var half4 = [2][4]float64{{0.5, 0.5, 0.5, 0.5}, {-0.5, -0.5, -0.5, -0.5}}

// unpackPower returns the power of bins k and h−k of a real sequence of
// length 2h from the half-length transform's values a = Z[k] and
// c = Z[h−k] and the twiddle w = tw[k]: with E = (a + conj c)/2 and
// O = (a − conj c)/(2i), X[k] = E + w·O and X[h−k] = conj(E) − conj(w·O),
// whose power is (Er − P)² + (Q − Ei)².
func unpackPower(w, a, c complex128) (pk, phk float64) {
	er, ei := 0.5*(real(a)+real(c)), 0.5*(imag(a)-imag(c))
	or, oi := 0.5*(imag(a)+imag(c)), -0.5*(real(a)-real(c))
	pr := real(w)*or - imag(w)*oi
	qi := real(w)*oi + imag(w)*or
	xr, xi := er+pr, ei+qi
	yr, yi := er-pr, qi-ei
	return xr*xr + xi*xi, yr*yr + yi*yi
}
