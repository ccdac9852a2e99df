package signal

import "testing"

// BenchmarkStages times each stage of Extract on the peer's QPSK record.
func BenchmarkStages(b *testing.B) {
	x, err := Synthesize(peerQPSK(1))
	if err != nil {
		b.Fatal(err)
	}
	e, err := NewExtractor(Config{SampleRate: 200e3})
	if err != nil {
		b.Fatal(err)
	}
	var f Features
	if err := e.Extract(x, &f); err != nil {
		b.Fatal(err)
	}
	stages := []struct {
		name string
		fn   func()
	}{
		{"timestats", func() { e.timeStats(x, &f) }},
		{"welch+autocorr", func() { e.welch.run(x, &f, e.cfg) }},
		{"spectral", func() { e.spectral(&f) }},
		{"spectrogram", func() { e.spec.run(x, &f, e.cfg) }},
		{"mfcc", func() { e.mfcc.run(e.env, &f, e.cfg) }},
	}
	for _, s := range stages {
		b.Run(s.name, func(b *testing.B) {
			for b.Loop() {
				s.fn()
			}
		})
	}
}
