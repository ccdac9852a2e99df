package signal

import (
	"fmt"
	"math"
	"math/cmplx"
	"os"
	"reflect"
	"testing"
)

func extract(t testing.TB, x []complex64, fs float64) *Features {
	t.Helper()
	e, err := NewExtractor(Config{SampleRate: fs})
	if err != nil {
		t.Fatal(err)
	}
	var f Features
	if err := e.Extract(x, &f); err != nil {
		t.Fatal(err)
	}
	return &f
}

func TestToneKnownAnswers(t *testing.T) {
	const fs = 100e3
	// (A tone at 0 Hz is pure DC, which the Welch detrend removes.)
	for _, tone := range []float64{-30e3, 1e3, 12.5e3, 20e3} {
		x, err := Synthesize(SynthOptions{Mod: Tone, SampleRate: fs, Samples: 50000, CarrierOffset: tone, NoNoise: true})
		if err != nil {
			t.Fatal(err)
		}
		f := extract(t, x, fs)
		peak := 0
		for i, v := range f.PSD {
			if v > f.PSD[peak] {
				peak = i
			}
		}
		if got := f.PSDFreq(peak); math.Abs(got-tone) > fs/1024 {
			t.Errorf("tone %g Hz: PSD peak at %g Hz", tone, got)
		}
		if math.Abs(f.CentroidHz-tone) > 50 {
			t.Errorf("tone %g Hz: centroid %g Hz", tone, f.CentroidHz)
		}
		if math.Abs(f.RSSIdBFS) > 1e-6 || math.Abs(f.RSSIdBm-10*math.Log10(1/50.0/1e-3)) > 1e-6 {
			t.Errorf("tone %g Hz: RSSI %g dBFS %g dBm, want 0 dBFS and 13.01 dBm", tone, f.RSSIdBFS, f.RSSIdBm)
		}
		if math.Abs(f.InstFreqMean-tone) > 1e-6*fs || f.InstFreqStd > 1e-6*fs {
			t.Errorf("tone %g Hz: instantaneous frequency %g ± %g Hz", tone, f.InstFreqMean, f.InstFreqStd)
		}
		if f.InstAmpStd > 1e-6 || math.Abs(f.InstAmpMean-1) > 1e-6 {
			t.Errorf("tone %g Hz: amplitude %g ± %g", tone, f.InstAmpMean, f.InstAmpStd)
		}
		if math.Abs(cmplx.Abs(f.Autocorr[1])-1) > 1e-4 {
			t.Errorf("tone %g Hz: |rho[1]| = %g, want 1", tone, cmplx.Abs(f.Autocorr[1]))
		}
	}
}

func TestWhiteNoiseFlatness(t *testing.T) {
	x, err := Synthesize(SynthOptions{Mod: Tone, SampleRate: 1e5, Samples: 100000, SNRdB: -60, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	f := extract(t, x, 1e5)
	// Welch over 194 segments: each bin's estimate has a relative spread
	// of about 1/sqrt(194·0.95), so flatness ≈ exp(−var/2) ≈ 0.997.
	if f.Flatness < 0.99 || f.Flatness > 1 {
		t.Errorf("white noise flatness %g, want about 0.997", f.Flatness)
	}
	if math.Abs(f.CentroidHz) > 500 || math.Abs(f.BandwidthHz-1e5/math.Sqrt(12)) > 500 {
		t.Errorf("white noise centroid %g Hz, bandwidth %g Hz (want 0 and %g)", f.CentroidHz, f.BandwidthHz, 1e5/math.Sqrt(12))
	}
	// Circular complex Gaussian: C42/C21² = E|x|⁴/σ⁴ − 2 = 0, C40 = 0.
	if math.Abs(f.C42) > 0.05 || cmplx.Abs(f.C40) > 0.05 {
		t.Errorf("white noise cumulants C42 %g, |C40| %g, want 0", f.C42, cmplx.Abs(f.C40))
	}
}

func TestQPSKSNREstimate(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		x, err := Synthesize(peerQPSK(seed))
		if err != nil {
			t.Fatal(err)
		}
		f := extract(t, x, 200e3)
		if math.Abs(f.SNRdB-10) > 0.5 {
			t.Errorf("seed %d: SNR estimate %.3f dB, want 10 ± 0.5", seed, f.SNRdB)
		}
		// RRC, β = 0.35 at 25 kBd: 33.75 kHz wide around +25 kHz.
		if math.Abs(f.OccupiedBWHz-33750) > 2500 || math.Abs(f.CentroidHz-25e3) > 3000 {
			t.Errorf("seed %d: occupied %g Hz, centroid %g Hz", seed, f.OccupiedBWHz, f.CentroidHz)
		}
	}
}

func TestCumulantsOfConstellations(t *testing.T) {
	// Noise-free, no offset: textbook normalised C40 and C42 values.
	cases := []struct {
		mod      Modulation
		c40, c42 float64 // C40 magnitude, C42
	}{
		{BPSK, 2, -2},
		{QPSK, 1, -1},
		{PSK8, 0, -1},
		{QAM16, 0.68, -0.68},
	}
	for _, c := range cases {
		// One sample per symbol with a wide roll-off is not a pure
		// constellation; instead read the symbols the shaper drew.
		a := constellation(c.mod)
		r := newStream(1, streamSymbols)
		x := make([]complex64, 40000)
		for i := range x {
			x[i] = complex64(a[r.intn(len(a))])
		}
		f := extract(t, x, 1e3)
		if math.Abs(cmplx.Abs(f.C40)-c.c40) > 0.05 || math.Abs(f.C42-c.c42) > 0.05 {
			t.Errorf("%s: |C40| %.3f C42 %.3f, want %.2f and %.2f", c.mod, cmplx.Abs(f.C40), f.C42, c.c40, c.c42)
		}
	}
}

func TestWelchAndAutocorrAgainstDirect(t *testing.T) {
	x, err := Synthesize(SynthOptions{Mod: QAM16, SampleRate: 1e4, Samples: 3000, SNRdB: 5, CarrierOffset: 900, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{SampleRate: 1e4, WelchSegment: 64, SpectrogramSegment: 32, MFCCFrame: 256, MFCCHop: 64, MelBands: 16, MFCCs: 8, AutocorrLags: 150}
	e, err := NewExtractor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var f Features
	if err := e.Extract(x, &f); err != nil {
		t.Fatal(err)
	}
	// Welch by definition: detrended, Hann-windowed segments, DFT by sum.
	m, step := 64, 32
	nseg := (len(x) - step) / step
	psd := make([]float64, m)
	var sw float64
	win := make([]float64, m)
	for n := range win {
		win[n] = 0.5 - 0.5*math.Cos(2*math.Pi*float64(n)/float64(m))
		sw += win[n] * win[n]
	}
	for s := range nseg {
		seg := x[s*step : s*step+m]
		var mean complex128
		for _, v := range seg {
			mean += complex128(v)
		}
		mean /= complex(float64(m), 0)
		for k := range m {
			var acc complex128
			for n, v := range seg {
				acc += (complex128(v) - mean) * complex(win[n], 0) * cmplx.Exp(complex(0, -2*math.Pi*float64(k*n%m)/float64(m)))
			}
			psd[k] += real(acc)*real(acc) + imag(acc)*imag(acc)
		}
	}
	for k := range m {
		want := psd[k] / (1e4 * sw * float64(nseg))
		got := f.PSD[(k+m/2)%m]
		if math.Abs(got-want) > 1e-9*want {
			t.Fatalf("PSD bin %d: %g, want %g", k, got, want)
		}
	}
	// Autocorrelation by definition.
	var r0 float64
	for _, v := range x {
		r0 += float64(real(v))*float64(real(v)) + float64(imag(v))*float64(imag(v))
	}
	for _, k := range []int{0, 1, 7, 31, 32, 33, 63, 64, 65, 100, 150} {
		var acc complex128
		for n := 0; n+k < len(x); n++ {
			acc += complex128(x[n+k]) * cmplx.Conj(complex128(x[n]))
		}
		want := acc / complex(r0, 0)
		if cmplx.Abs(f.Autocorr[k]-want) > 1e-12 {
			t.Errorf("rho[%d] = %v, want %v", k, f.Autocorr[k], want)
		}
	}
	if len(f.Autocorr) != 151 || f.SpecBins != 32 || f.SpecFrames != (3000-4)/28 || len(f.MFCC) != 8 {
		t.Errorf("shapes: autocorr %d, spectrogram %dx%d, mfcc %d", len(f.Autocorr), f.SpecBins, f.SpecFrames, len(f.MFCC))
	}
}

func TestExtractAllocatesNothingInSteadyState(t *testing.T) {
	x, _ := Synthesize(SynthOptions{Mod: QPSK, SampleRate: 1e5, Samples: 20000, SNRdB: 10, Seed: 1})
	e, _ := NewExtractor(Config{SampleRate: 1e5})
	var f Features
	if err := e.Extract(x, &f); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(3, func() { _ = e.Extract(x, &f) }); n != 0 {
		t.Errorf("Extract allocates %v times per record", n)
	}
	var s Synthesizer
	o := SynthOptions{Mod: QPSK, SampleRate: 1e5, Samples: 20000, SNRdB: 10, Seed: 1}
	out := make([]complex64, o.Samples)
	_ = s.Generate(out, o)
	if n := testing.AllocsPerRun(3, func() { _ = s.Generate(out, o) }); n != 0 {
		t.Errorf("Generate (QPSK) allocates %v times per record", n)
	}
}

func TestExtractBatchMatchesSequential(t *testing.T) {
	recs := make([][]complex64, 5)
	for i := range recs {
		recs[i], _ = Synthesize(SynthOptions{Mod: Modulations[i], SampleRate: 1e5, Samples: 10000, SNRdB: 15, Seed: uint64(i)})
	}
	out := make([]Features, len(recs))
	if err := ExtractBatch(Config{SampleRate: 1e5}, recs, out, 2); err != nil {
		t.Fatal(err)
	}
	for i, x := range recs {
		want := extract(t, x, 1e5)
		a, b := out[i].Vector(nil), want.Vector(nil)
		for j := range a {
			if a[j] != b[j] && !(math.IsNaN(a[j]) && math.IsNaN(b[j])) {
				t.Errorf("record %d feature %s: batch %g, sequential %g", i, FeatureNames(13)[j], a[j], b[j])
			}
		}
	}
	recs[3] = recs[3][:100]
	if err := ExtractBatch(Config{SampleRate: 1e5}, recs, out, 2); err == nil {
		t.Error("short record in a batch gave no error")
	}
}

func TestExtractErrors(t *testing.T) {
	if _, err := NewExtractor(Config{}); err == nil {
		t.Error("zero sample rate accepted")
	}
	if _, err := NewExtractor(Config{SampleRate: 1, WelchSegment: 100}); err == nil {
		t.Error("Welch segment 100 accepted")
	}
	e, _ := NewExtractor(Config{SampleRate: 1})
	var f Features
	if err := e.Extract(make([]complex64, 100), &f); err == nil {
		t.Error("100-sample record accepted")
	}
	// All-zero record: no panics, finite where defined.
	if err := e.Extract(make([]complex64, 4096), &f); err != nil {
		t.Fatal(err)
	}
}

// TestRTLSDRCapture extracts features from the dump1090 Mode S capture in
// ../shared/data/iq when it is there.
func TestRTLSDRCapture(t *testing.T) {
	const path = "../../shared/data/iq/modes1.bin"
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s not present (see shared/data/SOURCES.md): %v", path, err)
	}
	rec, err := Load(path, "cu8", 2e6)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Samples) != 356868 {
		t.Fatalf("%d samples, want 356868", len(rec.Samples))
	}
	f := extract(t, rec.Samples, 2e6)
	if math.IsNaN(f.RSSIdBFS) || f.RSSIdBFS > 0 || f.RSSIdBFS < -60 || math.IsNaN(f.SNRdB) {
		t.Errorf("implausible capture features: RSSI %g dBFS, SNR %g dB", f.RSSIdBFS, f.SNRdB)
	}
	t.Logf("modes1.bin: RSSI %.2f dBFS, SNR %.2f dB (in-band %.2f), occupied %.0f Hz, centroid %.0f Hz, flatness %.3f",
		f.RSSIdBFS, f.SNRdB, f.SNRInbanddB, f.OccupiedBWHz, f.CentroidHz, f.Flatness)
}

func BenchmarkExtractQPSK(b *testing.B) {
	x, err := Synthesize(peerQPSK(1))
	if err != nil {
		b.Fatal(err)
	}
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			e, err := NewExtractor(Config{SampleRate: 200e3, Threads: threads})
			if err != nil {
				b.Fatal(err)
			}
			var f Features
			for b.Loop() {
				if err := e.Extract(x, &f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestExtractThreadsSameFeatures checks that splitting one record's stages
// over two goroutines changes nothing, bit for bit.
func TestExtractThreadsSameFeatures(t *testing.T) {
	for _, m := range []Modulation{QPSK, FM, QAM16} {
		o := peerQPSK(5)
		o.Mod, o.Samples = m, 30000
		x, err := Synthesize(o)
		if err != nil {
			t.Fatal(err)
		}
		var want, got Features
		e1, err := NewExtractor(Config{SampleRate: 200e3})
		if err != nil {
			t.Fatal(err)
		}
		e2, err := NewExtractor(Config{SampleRate: 200e3, Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		if err := e1.Extract(x, &want); err != nil {
			t.Fatal(err)
		}
		for range 2 { // the second call reuses every buffer
			if err := e2.Extract(x, &got); err != nil {
				t.Fatal(err)
			}
		}
		if !reflect.DeepEqual(want, got) {
			t.Errorf("%s: features with Threads 2 differ from Threads 1:\n%+v\n%+v", m, want, got)
		}
	}
}
