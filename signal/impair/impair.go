// Package impair applies real-world impairments to IQ records: carrier
// frequency offset and drift, phase noise, flat fading, tapped-delay-line
// multipath, sample-rate offset, co- and adjacent-channel interference
// and quantization.
// Each is a transform of a []complex64 in place, seeded where it draws
// random numbers (the counter-based stream of package rng, so the same
// seed gives the same samples on any machine), and defined in
// docs/SIGNAL.md ("Impairments").
package impair

import (
	"errors"
	"fmt"
	"math"

	"github.com/gotrain/gotrain/rng"
)

// The purposes of the random streams of the transforms.
const (
	purposePhaseNoise uint64 = 1
	purposeFading     uint64 = 2
	purposeMultipath  uint64 = 3
)

// CFO applies a carrier frequency offset of offset Hz that drifts by
// drift Hz per second, at sample rate fs Hz: sample n is multiplied by
// exp(j·2π·(offset·t + drift·t²/2)) with t = n/fs. The phase is computed
// per sample in float64 from n, so it does not accumulate rounding.
func CFO(x []complex64, fs, offset, drift float64) error {
	if !(fs > 0) || math.IsInf(fs, 0) || math.IsNaN(offset) || math.IsInf(offset, 0) || math.IsNaN(drift) || math.IsInf(drift, 0) {
		return fmt.Errorf("impair: CFO: sample rate %v, offset %v, drift %v: want a positive rate and finite numbers", fs, offset, drift)
	}
	for n := range x {
		t := float64(n) / fs
		ph := 2 * math.Pi * (offset*t + drift*t*t/2)
		ph = math.Mod(ph, 2*math.Pi)
		s, c := math.Sincos(ph)
		v := complex128(x[n])
		x[n] = complex64(v * complex(c, s))
	}
	return nil
}

// PhaseNoise multiplies x by exp(j·φ[n]), φ a Wiener process (the phase
// noise of a free-running oscillator) of 3-dB linewidth linewidth Hz:
// φ[0] = 0 and φ[n+1]−φ[n] is normal with variance 2π·linewidth/fs, so
// the oscillator's spectrum is the Lorentzian of that full width at half
// maximum. seed fixes the draws.
func PhaseNoise(x []complex64, fs, linewidth float64, seed uint64) error {
	if !(fs > 0) || math.IsInf(fs, 0) || !(linewidth >= 0) || math.IsInf(linewidth, 0) {
		return fmt.Errorf("impair: phase noise: sample rate %v, linewidth %v: want a positive rate and a linewidth >= 0", fs, linewidth)
	}
	sd := math.Sqrt(2 * math.Pi * linewidth / fs)
	st := rng.NewStream(rng.Key(seed, 0, purposePhaseNoise))
	var ph float64
	for n := range x {
		if n > 0 {
			ph += sd * normal(st)
		}
		s, c := math.Sincos(ph)
		x[n] = complex64(complex128(x[n]) * complex(c, s))
	}
	return nil
}

// normal draws a standard normal deviate from st (Box-Muller, one of the
// pair).
func normal(st *rng.Stream) float64 {
	u := 1 - rng.Float64(st.Next()) // (0, 1]
	v := rng.Float64(st.Next())
	return math.Sqrt(-2*math.Log(u)) * math.Cos(2*math.Pi*v)
}

// fadingPaths is the number of sinusoids of the fading process.
const fadingPaths = 32

// Fading multiplies x by a flat-fading channel gain h[n] of unit mean
// power: Rician with factor k (the power of the line-of-sight part over
// the scattered part; 0 is Rayleigh fading), the scattered part a sum of
// fadingPaths sinusoids with random arrival angles and phases (Zheng and
// Xiao's model) of maximum Doppler shift doppler Hz at sample rate fs,
// the line-of-sight part of unit modulus. seed fixes the draws.
func Fading(x []complex64, fs, k, doppler float64, seed uint64) error {
	if !(fs > 0) || math.IsInf(fs, 0) || !(k >= 0) || math.IsInf(k, 0) || !(doppler >= 0) || math.IsInf(doppler, 0) {
		return fmt.Errorf("impair: fading: sample rate %v, K %v, Doppler %v: want a positive rate, K >= 0 and Doppler >= 0", fs, k, doppler)
	}
	st := rng.NewStream(rng.Key(seed, 0, purposeFading))
	var wI, wQ, phI, phQ [fadingPaths]float64
	theta := 2*math.Pi*rng.Float64(st.Next()) - math.Pi
	for i := range wI {
		a := (2*math.Pi*float64(i+1) - math.Pi + theta) / (4 * fadingPaths)
		wI[i] = 2 * math.Pi * doppler * math.Cos(a) / fs
		wQ[i] = 2 * math.Pi * doppler * math.Sin(a) / fs
		phI[i] = 2*math.Pi*rng.Float64(st.Next()) - math.Pi
		phQ[i] = 2*math.Pi*rng.Float64(st.Next()) - math.Pi
	}
	los := 2*math.Pi*rng.Float64(st.Next()) - math.Pi
	scatter := math.Sqrt(1 / (k + 1))
	direct := math.Sqrt(k / (k + 1))
	norm := math.Sqrt(1.0 / fadingPaths)
	for n := range x {
		var re, im float64
		for i := range wI {
			re += math.Cos(wI[i]*float64(n) + phI[i])
			im += math.Cos(wQ[i]*float64(n) + phQ[i])
		}
		h := complex(scatter*norm*re, scatter*norm*im) + complex(direct*math.Cos(los), direct*math.Sin(los))
		x[n] = complex64(complex128(x[n]) * h)
	}
	return nil
}

// Quantize rounds the I and Q parts of x to a bits-bit two's-complement
// converter of full scale fullScale: steps of fullScale/2^(bits−1), from
// −fullScale to fullScale minus one step, saturating beyond, as an ADC
// does.
func Quantize(x []complex64, bits int, fullScale float64) error {
	if bits < 1 || bits > 24 {
		return errors.New("impair: quantize: bits must be 1 to 24")
	}
	if !(fullScale > 0) || math.IsInf(fullScale, 0) {
		return fmt.Errorf("impair: quantize: full scale %v: want a positive number", fullScale)
	}
	half := math.Ldexp(1, bits-1)
	step := fullScale / half
	q := func(v float32) float32 {
		c := math.Round(float64(v) / step)
		c = max(-half, min(half-1, c))
		return float32(c * step)
	}
	for n, v := range x {
		x[n] = complex(q(real(v)), q(imag(v)))
	}
	return nil
}

// SampleRateOffset returns x as a receiver whose sample clock runs ppm
// parts per million fast would sample it: y[n] = x(n·(1+ppm·10⁻⁶)) by
// linear interpolation between samples, as many samples as x holds (a
// record keeps its length): a fast clock reaches the end of x early, and
// the samples beyond it, about ppm·10⁻⁶·len(x) (under one for 50,000
// samples at 20 ppm), hold x's last sample.
func SampleRateOffset(x []complex64, ppm float64) ([]complex64, error) {
	if !(ppm > -1e6) || math.IsInf(ppm, 0) || ppm > 1e6 {
		return nil, fmt.Errorf("impair: sample-rate offset %v ppm: want a finite number above -1e6", ppm)
	}
	r := 1 + ppm*1e-6
	n := len(x)
	y := make([]complex64, 0, n)
	for i := 0; i < n; i++ {
		t := float64(i) * r
		k := int(t)
		if k >= len(x)-1 {
			y = append(y, x[len(x)-1])
			continue
		}
		f := float32(t - float64(k))
		y = append(y, x[k]*complex(1-f, 0)+x[k+1]*complex(f, 0))
	}
	return y, nil
}

// Interference adds to x the interferer v shifted by offset Hz at sample
// rate fs (co-channel at 0, adjacent-channel at a channel spacing) and
// scaled so that the power of x over the power of the added signal is
// sirDB dB. v must hold at least len(x) samples; x must not be silent.
func Interference(x, v []complex64, fs, offset, sirDB float64) error {
	switch {
	case len(v) < len(x):
		return fmt.Errorf("impair: interference: %d interferer samples for %d", len(v), len(x))
	case !(fs > 0) || math.IsInf(fs, 0) || math.IsNaN(offset) || math.IsInf(offset, 0) || math.IsNaN(sirDB) || math.IsInf(sirDB, 0):
		return fmt.Errorf("impair: interference: sample rate %v, offset %v, SIR %v dB: want a positive rate and finite numbers", fs, offset, sirDB)
	}
	px, pv := power(x), power(v[:len(x)])
	if px == 0 || pv == 0 {
		return errors.New("impair: interference: the record or the interferer is silent")
	}
	g := math.Sqrt(px / pv / math.Pow(10, sirDB/10))
	for n := range x {
		ph := math.Mod(2*math.Pi*offset*float64(n)/fs, 2*math.Pi)
		s, c := math.Sincos(ph)
		x[n] += complex64(complex128(v[n]) * complex(g*c, g*s))
	}
	return nil
}

// power is the mean of |x|².
func power(x []complex64) float64 {
	var p float64
	for _, v := range x {
		p += float64(real(v))*float64(real(v)) + float64(imag(v))*float64(imag(v))
	}
	return p / float64(len(x))
}

// Tap is one path of a tapped-delay line: its delay in samples and its
// mean power in dB relative to the others.
type Tap struct {
	Delay   int     `json:"delay"`
	PowerDB float64 `json:"power_db"`
}

// Multipath passes x through a tapped-delay line with Doppler: y[n] =
// Σ_k g_k·h_k[n]·x[n−d_k], with d_k the taps' delays, g_k² their powers
// normalised to sum to 1, and h_k independent Rayleigh fading gains of
// unit mean power and maximum Doppler shift doppler Hz (Fading's, the
// seed of tap k drawn from seed). Samples before the record count as 0.
func Multipath(x []complex64, fs float64, taps []Tap, doppler float64, seed uint64) error {
	if len(taps) == 0 {
		return errors.New("impair: multipath: no taps")
	}
	var total float64
	for _, t := range taps {
		if t.Delay < 0 || math.IsNaN(t.PowerDB) || math.IsInf(t.PowerDB, 0) {
			return fmt.Errorf("impair: multipath: tap delay %d, power %v dB: want a delay >= 0 and a finite power", t.Delay, t.PowerDB)
		}
		total += math.Pow(10, t.PowerDB/10)
	}
	y := make([]complex64, len(x))
	h := make([]complex64, len(x))
	for k, t := range taps {
		for i := range h {
			h[i] = 1
		}
		if err := Fading(h, fs, 0, doppler, rng.Key(seed, uint64(k), purposeMultipath)); err != nil {
			return fmt.Errorf("impair: multipath: %w", err)
		}
		g := float32(math.Sqrt(math.Pow(10, t.PowerDB/10) / total))
		for n := t.Delay; n < len(x); n++ {
			y[n] += h[n] * x[n-t.Delay] * complex(g, 0)
		}
	}
	copy(x, y)
	return nil
}
