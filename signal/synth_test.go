package signal

import (
	"fmt"
	"math"
	"math/cmplx"
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

func TestSynthOptionErrors(t *testing.T) {
	base := SynthOptions{Mod: QPSK, SampleRate: 1000, Samples: 100}
	cases := []struct {
		name string
		edit func(*SynthOptions)
	}{
		{"unknown mod", func(o *SynthOptions) { o.Mod = "qqq" }},
		{"zero rate", func(o *SynthOptions) { o.SampleRate = 0 }},
		{"no samples", func(o *SynthOptions) { o.Samples = 0 }},
		{"fractional sps", func(o *SynthOptions) { o.SymbolRate = 300 }},
		{"roll-off", func(o *SynthOptions) { o.RollOff = 1.5 }},
		{"odd span", func(o *SynthOptions) { o.SpanSymbols = 3 }},
		{"esn0 analog", func(o *SynthOptions) { o.Mod = FM; o.EsN0 = true }},
		{"subcarriers", func(o *SynthOptions) { o.Mod = OFDM; o.Subcarriers = 48 }},
		{"nan snr", func(o *SynthOptions) { o.SNRdB = math.NaN() }},
	}
	for _, c := range cases {
		o := base
		c.edit(&o)
		if _, err := Synthesize(o); err == nil {
			t.Errorf("%s: no error", c.name)
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
