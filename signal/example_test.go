package signal_test

import (
	"fmt"

	"github.com/gotrain/gotrain/signal"
)

// Synthesize a QPSK record at a known SNR (deterministic for its seed) and
// extract its features: the SNR estimate recovers the SNR, and the
// spectral centroid sits near the +25 kHz carrier offset.
func Example() {
	x, err := signal.Synthesize(signal.SynthOptions{Mod: signal.QPSK, SampleRate: 200e3, Samples: 50000,
		SNRdB: 15, CarrierOffset: 25e3, Seed: 1})
	if err != nil {
		panic(err)
	}
	e, err := signal.NewExtractor(signal.Config{SampleRate: 200e3})
	if err != nil {
		panic(err)
	}
	var f signal.Features
	if err := e.Extract(x, &f); err != nil {
		panic(err)
	}
	fmt.Printf("%d samples at %g Hz\n", f.Samples, f.SampleRate)
	fmt.Printf("SNR %.1f dB, centroid %.1f kHz, C42 %.2f\n", f.SNRdB, f.CentroidHz/1e3, f.C42)
	fmt.Printf("%d MFCC means, %d PSD bins, spectrogram %d x %d\n", len(f.MFCC), len(f.PSD), f.SpecBins, f.SpecFrames)
	// Output:
	// 50000 samples at 200000 Hz
	// SNR 14.9 dB, centroid 24.1 kHz, C42 -0.75
	// 13 MFCC means, 1024 PSD bins, spectrogram 256 x 223
}
