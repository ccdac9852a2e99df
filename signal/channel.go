package signal

import (
	"fmt"
	"math"

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

// finish scales the clean record in out to unit power, applies the
// carrier offset and phase, adds the noise and applies IQ imbalance.
func finish(out []complex64, o SynthOptions) {
	var p float64
	for _, v := range out {
		re, im := float64(real(v)), float64(imag(v))
		p += re*re + im*im
	}
	p /= float64(len(out))
	gain := 1.0
	if p > 0 && !o.Unscaled {
		gain = 1 / math.Sqrt(p)
		p = 1
	}
	var sigma float64
	if !o.NoNoise {
		snr := o.SNRdB
		if o.EsN0 {
			snr -= 10 * math.Log10(o.SampleRate/o.SymbolRate)
		}
		sigma = math.Sqrt(p * math.Pow(10, -snr/10) / 2)
	}
	r := newStream(o.Seed, streamNoise)
	cycles := o.CarrierOffset / o.SampleRate // per sample
	rotate := cycles != 0 || o.Phase != 0
	step := cis(2 * math.Pi * cycles)
	const block = 1024 // the phasor is recomputed exactly at each block start
	for b := 0; b < len(out); b += block {
		end := min(b+block, len(out))
		seg := out[b:end]
		ph := complex(gain, 0)
		if rotate {
			turns := cycles * float64(b)
			ph = cis(2*math.Pi*(turns-math.Floor(turns))+o.Phase) * complex(gain, 0)
		}
		for i, v := range seg {
			x := complex128(v) * ph
			if rotate {
				ph = mul(ph, step)
			}
			if sigma != 0 {
				x += complex(sigma*r.norm(), sigma*r.norm())
			}
			seg[i] = complex64(x)
		}
	}
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
