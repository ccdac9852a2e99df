package signal

import (
	"math"
	"testing"
)

func TestInstFreqSumsVectorMatchesScalar(t *testing.T) {
	if !useAVX2 {
		t.Skip("AVX2 kernels off (CPU, build or GOTRAIN_CPU): only the scalar code runs")
	}
	x, err := Synthesize(SynthOptions{Mod: QPSK, SampleRate: 8, Samples: 1003, SNRdB: 5, CarrierOffset: 0.3, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	x[10], x[11] = 0, 0 // exact zeros give d = 0
	x[20] = complex(0, -1)
	x[21] = complex(-1, 0)
	x[30], x[31] = complex(1, 0), complex(-1, 0)
	defer func() { useAVX2 = true }()
	for _, n := range []int{2, 5, 6, 9, 1003} {
		useAVX2 = true
		s1, q1 := instFreqSums(x[:n])
		useAVX2 = false
		s2, q2 := instFreqSums(x[:n])
		if math.Abs(s1-s2) > 1e-10 || math.Abs(q1-q2) > 1e-10 {
			t.Errorf("n=%d: vector (%.15g, %.15g), scalar (%.15g, %.15g)", n, s1, q1, s2, q2)
		}
	}
}
func TestSpectrogramVectorMatchesScalar(t *testing.T) {
	if !useAVX2 {
		t.Skip("AVX2 kernels off (CPU, build or GOTRAIN_CPU): only the scalar code runs")
	}
	x, err := Synthesize(SynthOptions{Mod: QAM16, SampleRate: 1e4, Samples: 5000, SNRdB: 3, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	x[100] = complex(float32(math.Inf(1)), 0)
	x[3000] = complex(float32(math.NaN()), 0)
	e, err := NewExtractor(Config{SampleRate: 1e4})
	if err != nil {
		t.Fatal(err)
	}
	var a, b Features
	defer func() { useAVX2 = true }()
	useAVX2 = true
	e.spec.run(x, &a, e.cfg)
	useAVX2 = false
	e.spec.run(x, &b, e.cfg)
	for i := range a.Spectrogram {
		va, vb := float64(a.Spectrogram[i]), float64(b.Spectrogram[i])
		if math.IsNaN(va) != math.IsNaN(vb) || math.IsInf(va, 1) != math.IsInf(vb, 1) || !math.IsNaN(va) && !math.IsInf(va, 0) && math.Abs(va-vb) > 1e-4 {
			t.Fatalf("spectrogram[%d]: vector %g, scalar %g", i, va, vb)
		}
	}
}

func TestWelchVectorMatchesScalar(t *testing.T) {
	if !useAVX2 {
		t.Skip("AVX2 kernels off (CPU, build or GOTRAIN_CPU): only the scalar code runs")
	}
	for _, n := range []int{4096, 5000, 20000} {
		x, err := Synthesize(SynthOptions{Mod: QAM16, SampleRate: 1e4, Samples: n, SNRdB: 3, CarrierOffset: 700, Seed: 4})
		if err != nil {
			t.Fatal(err)
		}
		var a, b Features
		defer func() { useAVX2 = true }()
		for i, f := range []*Features{&a, &b} {
			useAVX2 = i == 0
			e, err := NewExtractor(Config{SampleRate: 1e4, WelchSegment: 256, AutocorrLags: 200})
			if err != nil {
				t.Fatal(err)
			}
			if (e.welch.u0 != nil) != useAVX2 {
				t.Fatalf("vector accumulators present = %v with useAVX2 = %v", e.welch.u0 != nil, useAVX2)
			}
			e.welch.run(x, f, e.cfg)
		}
		for i := range a.PSD {
			if d := math.Abs(a.PSD[i] - b.PSD[i]); d > 1e-12*math.Abs(b.PSD[i]) {
				t.Fatalf("n=%d: PSD[%d]: vector %g, scalar %g", n, i, a.PSD[i], b.PSD[i])
			}
		}
		for k := range a.Autocorr {
			if d := cmplxAbs(a.Autocorr[k] - b.Autocorr[k]); d > 1e-12 {
				t.Fatalf("n=%d: autocorr[%d]: vector %v, scalar %v", n, k, a.Autocorr[k], b.Autocorr[k])
			}
		}
	}
}

func cmplxAbs(c complex128) float64 { return math.Hypot(real(c), imag(c)) }

// TestMFCCVectorMatchesScalar checks the AVX2 frame packing and mel sums
// against the scalar code, on a record whose last batch is partial.
func TestMFCCVectorMatchesScalar(t *testing.T) {
	if !useAVX2 {
		t.Skip("AVX2 kernels off (CPU, build or GOTRAIN_CPU): only the scalar code runs")
	}
	x, err := Synthesize(SynthOptions{Mod: QAM16, SampleRate: 1e4, Samples: 9000, SNRdB: 3, CarrierOffset: 900, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { useAVX2 = true }()
	var got [2]Features
	for i, vec := range []bool{false, true} {
		useAVX2 = vec
		e, err := NewExtractor(Config{SampleRate: 1e4, MFCCFrame: 512, MFCCHop: 128, MelBands: 24})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Extract(x, &got[i]); err != nil {
			t.Fatal(err)
		}
	}
	a, b := got[0].MFCCFrames, got[1].MFCCFrames
	if len(a) != len(b) || len(a) == 0 || (len(a)/13)%mfccBatch == 0 {
		t.Fatalf("%d and %d coefficients (want a partial last batch)", len(a), len(b))
	}
	for i := range a {
		if d := math.Abs(a[i] - b[i]); d > 1e-12*math.Max(1, math.Abs(a[i])) {
			t.Fatalf("MFCC value %d: scalar %.17g, vector %.17g", i, a[i], b[i])
		}
	}
}

// TestTimeStatsVectorMatchesScalar checks the AVX2 time-domain sums (the
// envelope bit for bit, every statistic within rounding) against the
// scalar loop, on records with exact zeros and lengths that leave a
// scalar tail.
func TestTimeStatsVectorMatchesScalar(t *testing.T) {
	if !useAVX2 {
		t.Skip("AVX2 kernels off (CPU, build or GOTRAIN_CPU): only the scalar code runs")
	}
	defer func() { useAVX2 = true }()
	for _, n := range []int{4, 7, 1003, 20000} {
		x, err := Synthesize(SynthOptions{Mod: QAM16, SampleRate: 1e4, Samples: n, SNRdB: 8, CarrierOffset: 700, Seed: 6})
		if err != nil {
			t.Fatal(err)
		}
		x[1] = 0
		if n > 100 {
			x[50], x[51] = 0, complex(0, -2)
		}
		var got [2]Features
		var env [2][]float64
		for i, vec := range []bool{false, true} {
			useAVX2 = vec
			e, err := NewExtractor(Config{SampleRate: 1e4})
			if err != nil {
				t.Fatal(err)
			}
			e.env = make([]float64, n)
			e.timeStats(x, &got[i])
			env[i] = e.env
		}
		for i := range env[0] {
			if env[0][i] != env[1][i] {
				t.Fatalf("n=%d: env[%d]: scalar %g, vector %g", n, i, env[0][i], env[1][i])
			}
		}
		a, b := got[0], got[1]
		pairs := [][2]float64{
			{a.RSSIdBFS, b.RSSIdBFS}, {a.InstAmpMean, b.InstAmpMean}, {a.InstAmpStd, b.InstAmpStd},
			{a.InstPhaseMean, b.InstPhaseMean}, {a.InstPhaseStd, b.InstPhaseStd}, {a.C21, b.C21}, {a.C42, b.C42},
			{real(a.C20), real(b.C20)}, {imag(a.C20), imag(b.C20)}, {real(a.C40), real(b.C40)}, {imag(a.C40), imag(b.C40)},
			{real(a.C41), real(b.C41)}, {imag(a.C41), imag(b.C41)},
		}
		for j, p := range pairs {
			if d := math.Abs(p[0] - p[1]); !(d <= 1e-11*math.Max(1, math.Abs(p[0]))) {
				t.Errorf("n=%d: statistic %d: scalar %.17g, vector %.17g", n, j, p[0], p[1])
			}
		}
	}
}

// TestShapeVectorMatchesScalar checks that the AVX2 pulse shaping gives
// the scalar loop's samples bit for bit, for several samples per symbol,
// spans and record lengths (partial groups and blocks).
func TestShapeVectorMatchesScalar(t *testing.T) {
	if !useAVX2 {
		t.Skip("AVX2 kernels off (CPU, build or GOTRAIN_CPU): only the scalar code runs")
	}
	defer func() { useAVX2 = true }()
	for _, c := range []struct {
		mod       Modulation
		sps, span int
		n         int
	}{{QPSK, 8, 8, 20011}, {QAM64, 2, 6, 5003}, {BPSK, 1, 4, 999}, {PSK8, 3, 10, 7000}, {OOK, 16, 8, 40000}} {
		o := SynthOptions{Mod: c.mod, SampleRate: 1e5, SymbolRate: 1e5 / float64(c.sps), SpanSymbols: c.span,
			Samples: c.n, SNRdB: 5, CarrierOffset: 1234, Seed: 3}
		var got [2][]complex64
		for i, vec := range []bool{false, true} {
			useAVX2 = vec
			var s Synthesizer
			got[i] = make([]complex64, c.n)
			if err := s.Generate(got[i], o); err != nil {
				t.Fatal(err)
			}
		}
		for i := range got[0] {
			if math.Float32bits(real(got[0][i])) != math.Float32bits(real(got[1][i])) ||
				math.Float32bits(imag(got[0][i])) != math.Float32bits(imag(got[1][i])) {
				t.Fatalf("%s sps %d: sample %d: scalar %v, vector %v", c.mod, c.sps, i, got[0][i], got[1][i])
			}
		}
	}
}

// TestLogVectorMatchesMathLog checks logAVX2 against math.Log bit for bit
// on values across the exponent range and around √2/2 (where the
// reduction switches), and on the MFCC's floor 1e-10.
func TestLogVectorMatchesMathLog(t *testing.T) {
	if !useAVX2 {
		t.Skip("AVX2 kernels off (CPU, build or GOTRAIN_CPU): only the scalar code runs")
	}
	var xs []float64
	for e := -1020; e <= 1020; e += 7 {
		for _, m := range []float64{1, 1.25, 1.4142135623730951, 1.4142135623730950, 1.5, 1.999999999} {
			xs = append(xs, math.Ldexp(m, e))
		}
	}
	h := 7.07106781186547524401e-01
	xs = append(xs, h, math.Nextafter(h, 0), math.Nextafter(h, 1), 1e-10, 1, 2, 0.5, math.MaxFloat64, 0x1p-1022)
	v := 0.000123
	for len(xs)%4 != 0 || len(xs) < 4000 {
		v = math.Mod(v*7.77+0.0313, 1000)
		xs = append(xs, v)
	}
	got := append([]float64(nil), xs...)
	logAVX2(&got[0], len(got), &logConsts)
	for i, x := range xs {
		if w := math.Log(x); math.Float64bits(got[i]) != math.Float64bits(w) {
			t.Fatalf("log(%v): vector %v, math.Log %v", x, got[i], w)
		}
	}
}
