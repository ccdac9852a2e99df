package sigraph_test

import (
	"fmt"

	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/signal"
	"github.com/gotrain/gotrain/signal/sigraph"
)

// Extract a record's features as GoMLX graphs on simplego, GoMLX's pure-Go
// backend, and compare them with the CPU path's: every feature agrees
// within 1e-4 (sigraph.Compare's metrics).
func Example() {
	eng, backend, err := device.Open("go") // the caller owns the backend
	if err != nil {
		panic(err)
	}
	defer eng.Close()
	cfg := signal.Config{SampleRate: 200e3}
	g, err := sigraph.New(backend, cfg, 1) // one record per graph execution
	if err != nil {
		panic(err)
	}
	defer g.Close()
	x, err := signal.Synthesize(signal.SynthOptions{Mod: signal.QAM16, SampleRate: 200e3, Samples: 8192, SNRdB: 12, Seed: 3})
	if err != nil {
		panic(err)
	}
	var got, want signal.Features
	if err := g.Extract(x, &got); err != nil {
		panic(err)
	}
	cpu, err := signal.NewExtractor(cfg)
	if err != nil {
		panic(err)
	}
	if err := cpu.Extract(x, &want); err != nil {
		panic(err)
	}
	worst := sigraph.FeatureError{}
	for _, e := range sigraph.Compare(&got, &want) {
		if e.Err > worst.Err {
			worst = e
		}
	}
	fmt.Printf("graph SNR %.1f dB, CPU SNR %.1f dB\n", got.SNRdB, want.SNRdB)
	fmt.Println("every feature within 1e-4:", worst.Err <= 1e-4)
	// Output:
	// graph SNR 11.7 dB, CPU SNR 11.7 dB
	// every feature within 1e-4: true
}
