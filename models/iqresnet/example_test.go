package iqresnet_test

import (
	"fmt"

	"github.com/gotrain/gotrain/models/iqresnet"
	"github.com/gotrain/gotrain/signal"
)

// The network for the 24 RadioML 2018 classes, and a record of 4200
// samples cut into its input windows.
func Example() {
	a := iqresnet.DefaultArch(24)
	fmt.Printf("%d stacks of %d filters: %.0f weights\n", a.Stacks, a.Filters, a.Params())
	rec, err := signal.Synthesize(signal.SynthOptions{Mod: signal.QPSK, SampleRate: 200000, Samples: 4200, SNRdB: 10, SymbolRate: 25000, Seed: 1})
	if err != nil {
		panic(err)
	}
	x, n := iqresnet.AppendWindows(nil, rec, a.Window, a.Window)
	fmt.Printf("%d windows of %d values (I and Q interleaved)\n", n, len(x)/n)
	// Output:
	// 6 stacks of 32 filters: 165144 weights
	// 4 windows of 2048 values (I and Q interleaved)
}
