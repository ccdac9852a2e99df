package impair_test

import (
	"fmt"
	"log"
	"math/cmplx"

	"github.com/gotrain/gotrain/signal/impair"
)

// Impair a record as a receiver would see it: a 1 kHz carrier offset, the
// phase noise of a 100 Hz linewidth oscillator, Rician fading and an
// 8-bit converter.
func Example() {
	x := make([]complex64, 1000)
	for i := range x {
		x[i] = 0.5
	}
	const fs = 200e3
	for _, err := range []error{
		impair.CFO(x, fs, 1000, 0),
		impair.PhaseNoise(x, fs, 100, 1),
		impair.Fading(x, fs, 10, 50, 1),
		impair.Quantize(x, 8, 1),
	} {
		if err != nil {
			log.Fatal(err)
		}
	}
	fmt.Printf("first sample %.3f, modulus %.2f\n", x[0], cmplx.Abs(complex128(x[0])))
	// Output:
	// first sample (-0.203+0.438i), modulus 0.48
}
