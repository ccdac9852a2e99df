package impair

import (
	"math"
	"math/cmplx"
	"slices"
	"testing"
)

func ones(n int) []complex64 {
	x := make([]complex64, n)
	for i := range x {
		x[i] = 1
	}
	return x
}

// unwrap returns the unwrapped phase of x.
func unwrap(x []complex64) []float64 {
	ph := make([]float64, len(x))
	var prev, acc float64
	for i, v := range x {
		p := cmplx.Phase(complex128(v))
		if i > 0 {
			d := p - prev
			d -= 2 * math.Pi * math.Round(d/(2*math.Pi))
			acc += d
		}
		prev = p
		ph[i] = acc
	}
	return ph
}

// TestCFOMeasuredBack applies an offset and a drift to a constant and
// measures both back from the samples' phase: its first differences give
// the offset, its second differences the drift.
func TestCFOMeasuredBack(t *testing.T) {
	const fs, off, drift = 200e3, 12345.0, 50e3 // drift in Hz/s
	x := ones(20000)
	if err := CFO(x, fs, off, drift); err != nil {
		t.Fatal(err)
	}
	ph := unwrap(x)
	// φ[n] = 2π(off·n/fs + drift·n²/(2fs²)): φ[1]−φ[0] = 2π(off/fs + drift/(2fs²)),
	// the second difference 2π·drift/fs².
	gotOff := (ph[1]-ph[0])*fs/(2*math.Pi) - drift/(2*fs)
	var d2 float64
	for n := 2; n < len(ph); n++ {
		d2 += ph[n] - 2*ph[n-1] + ph[n-2]
	}
	gotDrift := d2 / float64(len(ph)-2) * fs * fs / (2 * math.Pi)
	if math.Abs(gotOff-off) > 0.5 || math.Abs(gotDrift-drift)/drift > 1e-3 {
		t.Fatalf("measured offset %v Hz and drift %v Hz/s, want %v and %v", gotOff, gotDrift, off, drift)
	}
	for i, v := range x {
		if m := cmplx.Abs(complex128(v)); math.Abs(m-1) > 1e-6 {
			t.Fatalf("sample %d: modulus %v, want 1", i, m)
		}
	}
	if err := CFO(x, 0, 1, 0); err == nil {
		t.Error("a zero sample rate was accepted")
	}
}

// TestPhaseNoiseIncrements checks the Wiener phase: its increments have
// the variance 2π·linewidth/fs and mean 0, the modulus is kept, and the
// seed fixes the draws.
func TestPhaseNoiseIncrements(t *testing.T) {
	const fs, lw = 1e6, 500.0
	x := ones(200000)
	if err := PhaseNoise(x, fs, lw, 7); err != nil {
		t.Fatal(err)
	}
	ph := unwrap(x)
	var s, s2 float64
	for n := 1; n < len(ph); n++ {
		d := ph[n] - ph[n-1]
		s += d
		s2 += d * d
	}
	m := float64(len(ph) - 1)
	mean, vr := s/m, s2/m-(s/m)*(s/m)
	want := 2 * math.Pi * lw / fs
	if math.Abs(vr-want)/want > 0.03 || math.Abs(mean) > 4*math.Sqrt(want/m) {
		t.Fatalf("increment variance %v (want %v), mean %v", vr, want, mean)
	}
	y := ones(1000)
	z := ones(1000)
	PhaseNoise(y, fs, lw, 7)
	PhaseNoise(z, fs, lw, 8)
	if !slices.Equal(y, x[:1000]) || slices.Equal(y, z) {
		t.Fatal("the seed does not fix the draws")
	}
}

// TestFadingStatistics checks the fading gain's distribution over many
// seeds: Rayleigh (K = 0) of unit mean power with P(|h|² < 1) = 1 − 1/e;
// Rician K = 10 of unit power whose line-of-sight part, the time average
// of h, has modulus √(K/(K+1)).
func TestFadingStatistics(t *testing.T) {
	const fs, fd, n, seeds = 100e3, 500.0, 20000, 60
	var power, below float64
	for s := uint64(0); s < seeds; s++ {
		x := ones(n)
		if err := Fading(x, fs, 0, fd, s); err != nil {
			t.Fatal(err)
		}
		for _, v := range x {
			p := real(v)*real(v) + imag(v)*imag(v)
			power += float64(p)
			if p < 1 {
				below++
			}
		}
	}
	total := float64(n * seeds)
	if p, b := power/total, below/total; math.Abs(p-1) > 0.05 || math.Abs(b-(1-1/math.E)) > 0.03 {
		t.Fatalf("Rayleigh: mean power %v (want 1), P(|h|² < 1) %v (want %v)", p, b, 1-1/math.E)
	}
	const k = 10
	power = 0
	var los float64
	for s := uint64(0); s < seeds; s++ {
		x := ones(n)
		if err := Fading(x, fs, k, fd, s); err != nil {
			t.Fatal(err)
		}
		var sum complex128
		for _, v := range x {
			power += float64(real(v)*real(v) + imag(v)*imag(v))
			sum += complex128(v)
		}
		los += cmplx.Abs(sum / n)
	}
	if p, l := power/total, los/seeds; math.Abs(p-1) > 0.05 || math.Abs(l-math.Sqrt(k/(k+1.0))) > 0.03 {
		t.Fatalf("Rician K=10: mean power %v (want 1), line of sight %v (want %v)", p, l, math.Sqrt(k/(k+1.0)))
	}
}

// TestQuantizeLevels checks the converter: values on the grid of
// fullScale/2^(bits−1), at most 2^bits levels, saturation at the ends,
// and an error of at most half a step inside the range.
func TestQuantizeLevels(t *testing.T) {
	const bits, fsc = 4, 1.0
	step := fsc / 8
	x := make([]complex64, 1001)
	for i := range x {
		v := float32(-1.5 + 3*float64(i)/1000)
		x[i] = complex(v, -v)
	}
	orig := slices.Clone(x)
	if err := Quantize(x, bits, fsc); err != nil {
		t.Fatal(err)
	}
	levels := map[float32]bool{}
	for i, v := range x {
		levels[real(v)] = true
		r, o := float64(real(v)), float64(real(orig[i]))
		if c := r / step; c != math.Round(c) || r < -fsc || r > fsc-step {
			t.Fatalf("value %v is not a level of the %d-bit grid", r, bits)
		}
		if o >= -fsc && o <= fsc-step && math.Abs(r-o) > step/2+1e-7 {
			t.Fatalf("%v quantized to %v: more than half a step", o, r)
		}
	}
	if len(levels) != 1<<bits || !levels[float32(-fsc)] || !levels[float32(fsc-step)] {
		t.Fatalf("%d levels, want %d from %v to %v", len(levels), 1<<bits, -fsc, fsc-step)
	}
	if err := Quantize(x, 0, 1); err == nil {
		t.Error("0 bits accepted")
	}
}

// TestSampleRateOffsetScalesFrequency checks that a tone sampled by a
// clock ppm fast comes out at its frequency times 1+ppm·10⁻⁶.
func TestSampleRateOffsetScalesFrequency(t *testing.T) {
	const fs, f0, ppm = 1e6, 1000.0, 200.0
	x := make([]complex64, 100000)
	for n := range x {
		s, c := math.Sincos(2 * math.Pi * f0 * float64(n) / fs)
		x[n] = complex(float32(c), float32(s))
	}
	y, err := SampleRateOffset(x, ppm)
	if err != nil {
		t.Fatal(err)
	}
	if len(y) != len(x) {
		t.Fatalf("%d samples, want the record's %d", len(y), len(x))
	}
	// The samples the fast clock reads past the end hold the last one.
	inside := int(float64(len(x)-1)/(1+ppm*1e-6)) + 1
	for n := inside; n < len(y); n++ {
		if y[n] != x[len(x)-1] {
			t.Fatalf("sample %d past the end: %v, want the last sample %v", n, y[n], x[len(x)-1])
		}
	}
	ph := unwrap(y[:inside])
	got := (ph[len(ph)-1] - ph[0]) / float64(len(ph)-1) * fs / (2 * math.Pi)
	if want := f0 * (1 + ppm*1e-6); math.Abs(got-want) > 1e-4 {
		t.Fatalf("tone at %.6f Hz, want %.6f", got, want)
	}
	if _, err := SampleRateOffset(x, math.Inf(1)); err == nil {
		t.Error("an infinite offset was accepted")
	}
}

// TestInterferencePower checks that the added signal is the interferer
// shifted by the offset, at the power ratio asked for.
func TestInterferencePower(t *testing.T) {
	const fs, off, sir = 200e3, 25e3, 6.0
	x := make([]complex64, 8000)
	v := make([]complex64, 8000)
	for n := range x {
		x[n] = complex(float32(math.Cos(float64(n)*0.01)), 0)
		v[n] = complex(0.3, 0.1)
	}
	orig := slices.Clone(x)
	if err := Interference(x, v, fs, off, sir); err != nil {
		t.Fatal(err)
	}
	added := make([]complex64, len(x))
	for n := range x {
		added[n] = x[n] - orig[n]
	}
	if got := 10 * math.Log10(power(orig)/power(added)); math.Abs(got-sir) > 1e-3 {
		t.Fatalf("SIR %v dB, want %v", got, sir)
	}
	ph := unwrap(added)
	if got := (ph[len(ph)-1] - ph[0]) / float64(len(ph)-1) * fs / (2 * math.Pi); math.Abs(got-off) > 1e-3 {
		t.Fatalf("interferer at %v Hz, want %v", got, off)
	}
	if err := Interference(x, v[:10], fs, off, sir); err == nil {
		t.Error("a short interferer was accepted")
	}
}

// TestMultipathPowerDelayProfile sends an impulse through static
// multipath channels of many seeds: the response holds only the taps'
// delays, and its mean power at each delay is the tap's share.
func TestMultipathPowerDelayProfile(t *testing.T) {
	taps := []Tap{{0, 0}, {3, -3}, {7, -10}}
	shares := []float64{1, math.Pow(10, -0.3), math.Pow(10, -1)}
	var sum float64
	for _, s := range shares {
		sum += s
	}
	const seeds = 400
	pdp := make([]float64, 10)
	for s := uint64(0); s < seeds; s++ {
		x := make([]complex64, 10)
		x[0] = 1
		if err := Multipath(x, 1e5, taps, 0, s); err != nil {
			t.Fatal(err)
		}
		for i, v := range x {
			pdp[i] += float64(real(v)*real(v)+imag(v)*imag(v)) / seeds
		}
	}
	for i, p := range pdp {
		want := 0.0
		for k, tp := range taps {
			if tp.Delay == i {
				want = shares[k] / sum
			}
		}
		if math.Abs(p-want) > 0.12*want+1e-9 {
			t.Fatalf("delay %d: mean power %v, want %v", i, p, want)
		}
	}
	if err := Multipath(make([]complex64, 4), 1e5, []Tap{{-1, 0}}, 0, 1); err == nil {
		t.Error("a negative delay was accepted")
	}
}
