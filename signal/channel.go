package signal

import (
	"fmt"
	"math"
	"sync"

	"github.com/gotrain/gotrain/signal/fft"
)

// ofdm writes OFDM symbols (QPSK on the active subcarriers, cyclic prefix
// first) back to back into out, starting at a symbol boundary.
func (s *Synthesizer) ofdm(out []complex128, o SynthOptions) error {
	nsc, cp := o.Subcarriers, o.CyclicPrefix
	p, err := fft.For(nsc)
	if err != nil {
		return fmt.Errorf("signal: OFDM: %w", err)
	}
	qpsk := constellation(QPSK)
	r := newStream(o.Seed, streamSymbols)
	freq := make([]complex128, nsc)
	body := make([]complex128, nsc)
	scratch := make([]complex128, nsc)
	half := 3 * nsc / 8
	for pos := 0; pos < len(out); {
		clear(freq)
		for k := 1; k <= half; k++ {
			freq[k] = qpsk[r.intn(4)]
			freq[nsc-k] = qpsk[r.intn(4)]
		}
		if err := p.Inverse(body, freq, scratch); err != nil {
			return fmt.Errorf("signal: OFDM: %w", err)
		}
		pos += copy(out[pos:], body[nsc-cp:])
		pos += copy(out[pos:], body)
	}
	return nil
}

// multipath sets dst[n] = Σ_k taps[k]·src[n+len(taps)−1−k]; src holds
// len(taps)−1 samples before the record.
func multipath(dst, src []complex128, taps []complex128) {
	pre := len(taps) - 1
	for n := range dst {
		var acc complex128
		for k, h := range taps {
			acc += h * src[n+pre-k]
		}
		dst[n] = acc
	}
}

// finishBlock is the block length of the channel: the carrier phasor is
// recomputed exactly at each block start, so blocks are independent, and
// the sequential path draws the noise a block at a time.
const finishBlock = 1024

// channel is what finish applies to a clean record: gain to unit power,
// carrier offset and phase, and noise of deviation sigma per component.
type channel struct {
	gain, sigma float64
	cycles      float64 // carrier turns per sample
	rotate      bool
	step        complex128
	phase       float64
}

// newChannel measures the clean record in out and returns its channel.
func newChannel(out []complex64, o SynthOptions) channel {
	var p float64
	for _, v := range out {
		re, im := float64(real(v)), float64(imag(v))
		p += re*re + im*im
	}
	p /= float64(len(out))
	c := channel{gain: 1, cycles: o.CarrierOffset / o.SampleRate, phase: o.Phase}
	if p > 0 && !o.Unscaled {
		c.gain = 1 / math.Sqrt(p)
		p = 1
	}
	if !o.NoNoise {
		snr := o.SNRdB
		if o.EsN0 {
			snr -= 10 * math.Log10(o.SampleRate/o.SymbolRate)
		}
		c.sigma = math.Sqrt(p * math.Pow(10, -snr/10) / 2)
	}
	c.rotate = c.cycles != 0 || o.Phase != 0
	c.step = cis(2 * math.Pi * c.cycles)
	return c
}

// apply transforms the block seg, which starts at sample b of the record;
// nz holds the block's standard normal deviates (real part of each
// sample's noise first) and is not read when sigma is 0.
func (c *channel) apply(seg []complex64, b int, nz []float64) {
	ph := c.start(b)
	if c.sigma != 0 {
		nz = nz[:2*len(seg)]
	}
	for i, v := range seg {
		x := complex128(v) * ph
		if c.rotate {
			ph = mul(ph, c.step)
		}
		if c.sigma != 0 {
			x += complex(c.sigma*nz[2*i], c.sigma*nz[2*i+1])
		}
		seg[i] = complex64(x)
	}
}

// start returns the gain times the carrier phasor at sample b.
func (c *channel) start(b int) complex128 {
	ph := complex(c.gain, 0)
	if c.rotate {
		turns := c.cycles * float64(b)
		ph = cis(2*math.Pi*(turns-math.Floor(turns))+c.phase) * complex(c.gain, 0)
	}
	return ph
}

// apply2 is apply on two blocks of finishBlock samples, starting at
// samples b and b+finishBlock, in one loop: the same operations on each,
// but the two phasor recurrences (a chain of dependent products each)
// overlap. nz holds both blocks' deviates.
func (c *channel) apply2(seg []complex64, b int, nz []float64) {
	const n = finishBlock
	s0, s1 := seg[:n:n], seg[n:2*n:2*n]
	ph0, ph1 := c.start(b), c.start(b+n)
	if !c.rotate || c.sigma == 0 {
		c.apply(s0, b, nz)
		c.apply(s1, b+n, nz[min(len(nz), 2*n):])
		return
	}
	z0, z1 := nz[:2*n:2*n], nz[2*n:4*n:4*n]
	step, sigma := c.step, c.sigma
	for i := range s0 {
		x0 := complex128(s0[i]) * ph0
		x1 := complex128(s1[i]) * ph1
		ph0 = mul(ph0, step)
		ph1 = mul(ph1, step)
		x0 += complex(sigma*z0[2*i], sigma*z0[2*i+1])
		x1 += complex(sigma*z1[2*i], sigma*z1[2*i+1])
		s0[i] = complex64(x0)
		s1[i] = complex64(x1)
	}
}

// finish scales the clean record in out to unit power, applies the
// carrier offset and phase, adds the noise and applies IQ imbalance.
// noise is scratch space for 4·finishBlock deviates (two blocks').
func finish(out []complex64, o SynthOptions, noise []float64) {
	c := newChannel(out, o)
	r := newStream(o.Seed, streamNoise)
	b := 0
	for ; b+2*finishBlock <= len(out); b += 2 * finishBlock {
		if c.sigma != 0 {
			r.fillNorm(noise[:4*finishBlock])
		}
		c.apply2(out[b:b+2*finishBlock], b, noise)
	}
	for ; b < len(out); b += finishBlock {
		seg := out[b:min(b+finishBlock, len(out))]
		if c.sigma != 0 {
			r.fillNorm(noise[:2*len(seg)])
		}
		c.apply(seg, b, noise)
	}
	iqImbalance(out, o)
}

// applyRange applies c to the samples [lo, hi) of out, a block at a time
// (lo a multiple of finishBlock); nz holds their deviates, 2·(hi−lo) of
// them, or is unused when sigma is 0.
func (c *channel) applyRange(out []complex64, lo, hi int, nz []float64) {
	b := lo
	for ; b+2*finishBlock <= hi; b += 2 * finishBlock {
		var z []float64
		if c.sigma != 0 {
			z = nz[2*(b-lo) : 2*(b-lo)+4*finishBlock]
		}
		c.apply2(out[b:b+2*finishBlock], b, z)
	}
	for ; b < hi; b += finishBlock {
		e := min(b+finishBlock, hi)
		var z []float64
		if c.sigma != 0 {
			z = nz[2*(b-lo) : 2*(e-lo)]
		}
		c.apply(out[b:e], b, z)
	}
}

// finishParallel is finish with the record's noise already drawn (noise
// holds 2·len(out) deviates, or is unused when o.NoNoise) and the blocks
// split over two goroutines; the result is the same.
func finishParallel(out []complex64, o SynthOptions, noise []float64) {
	c := newChannel(out, o)
	nblk := (len(out) + finishBlock - 1) / finishBlock
	run := func(lo, hi int) {
		for bi := lo; bi < hi; bi++ {
			b := bi * finishBlock
			e := min(b+finishBlock, len(out))
			var nz []float64
			if c.sigma != 0 {
				nz = noise[2*b : 2*e]
			}
			c.apply(out[b:e], b, nz)
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() { run(nblk/2, nblk) })
	run(0, nblk/2)
	wg.Wait()
	iqImbalance(out, o)
}

// iqImbalance applies the IQ gain and phase imbalance of o.
func iqImbalance(out []complex64, o SynthOptions) {
	if o.IQGainDB != 0 || o.IQPhaseDeg != 0 {
		g := math.Pow(10, o.IQGainDB/20)
		sn, cs := math.Sincos(o.IQPhaseDeg * math.Pi / 180)
		for i, v := range out {
			re, im := float64(real(v)), float64(imag(v))
			out[i] = complex64(complex(re, g*(im*cs-re*sn)))
		}
	}
}

// mul is a complex product spelled out so that it stays inline.
func mul(a, b complex128) complex128 {
	return complex(real(a)*real(b)-imag(a)*imag(b), real(a)*imag(b)+imag(a)*real(b))
}
