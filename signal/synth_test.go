package signal

import (
	"fmt"
	"math"
	"math/cmplx"
	"runtime"
	"strings"
	"testing"
)

// peerQPSK is the peer benchmark's QPSK record.
func peerQPSK(seed uint64) SynthOptions {
	return SynthOptions{Mod: QPSK, SampleRate: 200e3, Samples: 200000, CarrierOffset: 25e3, SNRdB: 10, Seed: seed}
}

func power(x []complex64) float64 {
	var p float64
	for _, v := range x {
		p += float64(real(v))*float64(real(v)) + float64(imag(v))*float64(imag(v))
	}
	return p / float64(len(x))
}

func TestSynthesizeEveryModulation(t *testing.T) {
	for _, m := range Modulations {
		o := SynthOptions{Mod: m, SampleRate: 100e3, Samples: 20000, SNRdB: 20, Seed: 3}
		x, err := Synthesize(o)
		if err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		// Unit signal power plus noise power 0.01.
		if p := power(x); math.Abs(p-1.01) > 0.02 {
			t.Errorf("%s: power %.4f, want 1.01", m, p)
		}
		y, _ := Synthesize(o)
		for i := range x {
			if x[i] != y[i] {
				t.Fatalf("%s: not deterministic at sample %d", m, i)
			}
		}
		o.Seed = 4
		z, _ := Synthesize(o)
		same := 0
		for i := range x {
			if x[i] == z[i] {
				same++
			}
		}
		if same > len(x)/10 {
			t.Errorf("%s: seeds 3 and 4 share %d samples", m, same)
		}
	}
}

func TestSynthesizeNoiseFreeQPSKHitsConstellation(t *testing.T) {
	o := SynthOptions{Mod: QPSK, SampleRate: 8, Samples: 4000, NoNoise: true, Seed: 1, RollOff: 0.35, SpanSymbols: 32}
	x, err := Synthesize(o)
	if err != nil {
		t.Fatal(err)
	}
	// At symbol instants (every 8th sample) an RRC pulse alone is not
	// Nyquist, but |x| stays near 1 and the phase near π/4 + kπ/2.
	for i := 0; i < len(x); i += 8 {
		ph := cmplx.Phase(complex128(x[i]))
		k := math.Round((ph - math.Pi/4) / (math.Pi / 2))
		if d := math.Abs(ph - math.Pi/4 - k*math.Pi/2); d > 0.6 {
			t.Fatalf("sample %d phase %.3f is %.3f rad from the constellation", i, ph, d)
		}
	}
}

// TestSynthOptionErrors checks that every option outside its range is an
// error naming the option and the range.
func TestSynthOptionErrors(t *testing.T) {
	base := SynthOptions{Mod: QPSK, SampleRate: 1000, Samples: 100}
	cases := []struct {
		name string
		edit func(*SynthOptions)
		want string
	}{
		{"unknown mod", func(o *SynthOptions) { o.Mod = "qqq" }, "unknown modulation"},
		{"zero rate", func(o *SynthOptions) { o.SampleRate = 0 }, "SampleRate 0 Hz: want 0.001 to 1e+12 Hz"},
		{"huge rate", func(o *SynthOptions) { o.SampleRate = 1e300 }, "SampleRate 1e+300 Hz: want"},
		{"no samples", func(o *SynthOptions) { o.Samples = 0 }, "Samples 0: want 1 to 268435456"},
		{"fractional sps", func(o *SynthOptions) { o.SymbolRate = 300 }, "SymbolRate 300"},
		{"huge sps", func(o *SynthOptions) { o.SymbolRate = 1000.0 / 4096 }, "samples per symbol from 1 to 1024"},
		{"tiny symbol rate", func(o *SynthOptions) { o.SymbolRate = 1e-300 }, "SymbolRate 1e-300"},
		{"roll-off", func(o *SynthOptions) { o.RollOff = 1.5 }, "RollOff 1.5: want a number in (0, 1]"},
		{"odd span", func(o *SynthOptions) { o.SpanSymbols = 3 }, "SpanSymbols 3: want an even number"},
		{"esn0 analog", func(o *SynthOptions) { o.Mod = FM; o.EsN0 = true }, "Es/N0 needs a digital modulation"},
		{"subcarriers", func(o *SynthOptions) { o.Mod = OFDM; o.Subcarriers = 48 }, "Subcarriers 48: want a power of two"},
		{"cyclic prefix", func(o *SynthOptions) { o.Mod = OFDM; o.CyclicPrefix = -1 }, "CyclicPrefix -1: want 0 to 64"},
		{"nan snr", func(o *SynthOptions) { o.SNRdB = math.NaN() }, "SNRdB NaN: want -100 to 200 dB"},
		{"huge mod index", func(o *SynthOptions) { o.Mod = AM; o.ModIndex = 1e300 }, "ModIndex 1e+300: want a number in (0, 100]"},
		{"negative mod index", func(o *SynthOptions) { o.Mod = FSK2; o.ModIndex = -1 }, "ModIndex -1"},
		{"bt", func(o *SynthOptions) { o.Mod = GFSK; o.BT = 11 }, "BT 11: want a number in (0, 10]"},
		{"tiny mod freq", func(o *SynthOptions) { o.Mod = FM; o.ModFreq = 1e-320 }, "ModFreq 1e-320 Hz: want 0.001 to 1e+12 Hz"},
		{"huge deviation", func(o *SynthOptions) { o.Mod = FM; o.Deviation = 1e300 }, "Deviation 1e+300 Hz"},
		{"huge offset", func(o *SynthOptions) { o.CarrierOffset = math.Inf(-1) }, "CarrierOffset -Inf Hz"},
		{"huge bandwidth", func(o *SynthOptions) { o.Mod = Chirp; o.Bandwidth = 1e300 }, "Bandwidth 1e+300 Hz"},
		{"short chirp", func(o *SynthOptions) { o.Mod = Chirp; o.ChirpPeriod = 1e-320 }, "ChirpPeriod 1e-320 s"},
		{"iq gain", func(o *SynthOptions) { o.IQGainDB = 1e308 }, "IQGainDB 1e+308: want -60 to 60 dB"},
		{"iq phase", func(o *SynthOptions) { o.IQPhaseDeg = math.Inf(1) }, "IQPhaseDeg +Inf: want a finite number"},
		{"phase", func(o *SynthOptions) { o.Phase = math.NaN() }, "Phase NaN: want a finite number"},
		{"many taps", func(o *SynthOptions) { o.Multipath = make(Taps, 1025) }, "Multipath has 1025 taps: want at most 1024"},
		{"huge tap", func(o *SynthOptions) { o.Multipath = Taps{1, complex(1e300, 0)} }, "Multipath tap 2"},
		{"nan tap", func(o *SynthOptions) { o.Multipath = Taps{complex(math.NaN(), 0)} }, "Multipath tap 1"},
	}
	for _, c := range cases {
		o := base
		c.edit(&o)
		_, err := Synthesize(o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// TestSynthesizeChecksSizeBeforeAllocating checks that a record length
// outside 1..MaxSamples is an error, not a panic or a large allocation.
func TestSynthesizeChecksSizeBeforeAllocating(t *testing.T) {
	for _, n := range []int{-5, math.MinInt, MaxSamples + 1, 1e12} {
		o := SynthOptions{Mod: QPSK, SampleRate: 200e3, Samples: n, SNRdB: 10}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := Synthesize(o)
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("Samples %d: want 1 to %d", n, MaxSamples)) {
			t.Errorf("Samples %d: error %v, want one naming Samples and its limit", n, err)
		}
		if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
			t.Errorf("Samples %d: %d bytes allocated before the error", n, d)
		}
	}
}

// TestSynthesizeRejectsSNROutOfRange checks that an SNR whose noise
// cannot be represented is refused with the allowed range instead of
// giving a record of infinite samples.
func TestSynthesizeRejectsSNROutOfRange(t *testing.T) {
	for _, snr := range []float64{-1e308, -1000, MinSNRdB - 1, MaxSNRdB + 1, 1e308, math.Inf(1)} {
		for _, esn0 := range []bool{false, true} {
			o := SynthOptions{Mod: QPSK, SampleRate: 200e3, Samples: 4000, SNRdB: snr, EsN0: esn0}
			x, err := Synthesize(o)
			if err == nil || !strings.Contains(err.Error(), "want -100 to 200 dB") {
				t.Errorf("SNRdB %v (Es/N0 %v): error %v with %d samples, want the allowed range", snr, esn0, err, len(x))
			}
		}
	}
}

// TestSynthesizeAtLimitsIsFinite synthesizes every modulation with the
// options at the ends of their ranges and checks every sample is finite.
func TestSynthesizeAtLimitsIsFinite(t *testing.T) {
	edges := []struct {
		name string
		set  func(*SynthOptions)
	}{
		{"lowest snr", func(o *SynthOptions) { o.SNRdB = MinSNRdB }},
		{"lowest es/n0", func(o *SynthOptions) { o.SNRdB, o.EsN0 = MinSNRdB, o.Mod.Digital() }},
		{"highest snr", func(o *SynthOptions) { o.SNRdB = MaxSNRdB }},
		{"unscaled extremes", func(o *SynthOptions) {
			o.Unscaled, o.ModIndex, o.IQGainDB, o.SNRdB = true, MaxModIndex, MaxIQGainDB, MinSNRdB
			o.Multipath = Taps{MaxTapMagnitude, complex(0, MaxTapMagnitude)}
		}},
		{"scaled extremes", func(o *SynthOptions) {
			o.ModIndex, o.IQGainDB, o.IQPhaseDeg, o.Phase = MaxModIndex, -MaxIQGainDB, 1e300, -1e300
			o.Multipath = Taps{MaxTapMagnitude, 1e-300}
		}},
		{"frequencies", func(o *SynthOptions) {
			o.CarrierOffset, o.Deviation, o.Bandwidth, o.ModFreq = -MaxFrequency, MaxFrequency, MaxFrequency, MinModFreq
			o.ChirpPeriod = 1 / o.SampleRate
		}},
		{"lowest rate", func(o *SynthOptions) {
			o.SampleRate, o.CarrierOffset, o.Deviation, o.Bandwidth, o.ModFreq = MinSampleRate, MaxFrequency, MaxFrequency, MaxFrequency, MinModFreq
		}},
		{"highest rate", func(o *SynthOptions) { o.SampleRate, o.ModFreq = MaxSampleRate, MinModFreq }},
	}
	for _, m := range Modulations {
		for _, e := range edges {
			o := SynthOptions{Mod: m, SampleRate: 64e3, Samples: 3000, SNRdB: 10, Seed: 5}
			e.set(&o)
			if m.Digital() && (o.SampleRate == MinSampleRate || o.SampleRate == MaxSampleRate) {
				o.SymbolRate = o.SampleRate / 8
			}
			x, err := Synthesize(o)
			if err != nil {
				t.Errorf("%s, %s: %v", m, e.name, err)
				continue
			}
			if i := nonFinite(x); i >= 0 {
				t.Errorf("%s, %s: sample %d is %v", m, e.name, i, x[i])
			}
		}
	}
}

func BenchmarkSynthesizeQPSK(b *testing.B) {
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			s := Synthesizer{Threads: threads}
			o := peerQPSK(1)
			out := make([]complex64, o.Samples)
			for b.Loop() {
				if err := s.Generate(out, o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestSynthesizerThreadsSameRecord checks that two goroutines per record
// give the same samples, bit for bit, for every modulation and channel.
func TestSynthesizerThreadsSameRecord(t *testing.T) {
	chans := []struct {
		name string
		set  func(*SynthOptions)
	}{
		{"awgn", func(*SynthOptions) {}},
		{"clean", func(o *SynthOptions) { o.NoNoise = true }},
		{"iq+phase", func(o *SynthOptions) { o.IQGainDB, o.IQPhaseDeg, o.Phase = 0.5, 3, 1 }},
		{"multipath", func(o *SynthOptions) { o.Multipath = []complex128{1, 0.3i, -0.1} }},
	}
	for _, m := range Modulations {
		for _, ch := range chans {
			o := SynthOptions{Mod: m, SampleRate: 100e3, Samples: 5000 + 123, SNRdB: 7, CarrierOffset: 3100, Seed: 11}
			ch.set(&o)
			var one, two Synthesizer
			two.Threads = 2
			a := make([]complex64, o.Samples)
			b := make([]complex64, o.Samples)
			if err := one.Generate(a, o); err != nil {
				t.Fatalf("%s/%s: %v", m, ch.name, err)
			}
			for range 2 { // the second call reuses the buffers
				if err := two.Generate(b, o); err != nil {
					t.Fatalf("%s/%s: %v", m, ch.name, err)
				}
			}
			for i := range a {
				if a[i] != b[i] {
					t.Fatalf("%s/%s: sample %d differs: %v vs %v", m, ch.name, i, a[i], b[i])
				}
			}
		}
	}
}

// TestGenerateSplitNoise checks both ways generateSplit gets the noise of
// the record's second part: from the caller's draws at a guessed stream
// position (the usual case), and drawn after the helper's when the guess
// misses. Both give the one-goroutine record bit for bit.
func TestGenerateSplitNoise(t *testing.T) {
	defer func(r float64) { normDrawRate = r }(normDrawRate)
	for _, c := range []struct {
		rate   float64
		synced bool
	}{{normDrawRate, true}, {1.3, false}, {0.8, false}} {
		normDrawRate = c.rate
		for _, n := range []int{3000, 50000, 200000} {
			o := SynthOptions{Mod: QPSK, SampleRate: 200e3, Samples: n, SNRdB: 3, CarrierOffset: 25e3, Seed: 21}
			var one, two Synthesizer
			two.Threads = 2
			a := make([]complex64, n)
			b := make([]complex64, n)
			if err := one.Generate(a, o); err != nil {
				t.Fatal(err)
			}
			if err := two.Generate(b, o); err != nil {
				t.Fatal(err)
			}
			if two.synced != c.synced {
				t.Errorf("rate %g, %d samples: speculative noise used %v, want %v", c.rate, n, two.synced, c.synced)
			}
			for i := range a {
				if a[i] != b[i] {
					t.Fatalf("rate %g, %d samples: sample %d differs: %v vs %v", c.rate, n, i, a[i], b[i])
				}
			}
		}
	}
}

// TestChannelApply2 checks that the two-block channel loop gives what two
// single-block calls give, bit for bit, with and without noise and carrier.
func TestChannelApply2(t *testing.T) {
	for _, o := range []SynthOptions{
		{Mod: QPSK, SampleRate: 1e5, Samples: 4 * finishBlock, SNRdB: 4, CarrierOffset: 1700, Phase: 0.3, Seed: 2},
		{Mod: QPSK, SampleRate: 1e5, Samples: 4 * finishBlock, SNRdB: 4, Seed: 2},
		{Mod: QPSK, SampleRate: 1e5, Samples: 4 * finishBlock, NoNoise: true, CarrierOffset: -900, Seed: 2},
	} {
		o, err := o.withDefaults()
		if err != nil {
			t.Fatal(err)
		}
		var s Synthesizer
		x := make([]complex64, o.Samples)
		s.shapeLinear(x, o, 0)
		c := newChannel(x, o)
		nz := make([]float64, 4*finishBlock)
		r := newStream(5, streamNoise)
		r.fillNorm(nz)
		b := finishBlock // a block start that is not 0
		one := append([]complex64(nil), x...)
		c.apply(one[b:b+finishBlock], b, nz)
		c.apply(one[b+finishBlock:b+2*finishBlock], b+finishBlock, nz[2*finishBlock:])
		two := append([]complex64(nil), x...)
		c.apply2(two[b:b+2*finishBlock], b, nz)
		for i := range one {
			if one[i] != two[i] {
				t.Fatalf("%+v: sample %d: apply %v, apply2 %v", o, i, one[i], two[i])
			}
		}
	}
}
