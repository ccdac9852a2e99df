package cpubackend

import (
	"math"
	"testing"
)

// TestUnaryPartsSplit checks that the unfused float32 kernels give the same
// bits split over the CPUs (unaryParts) as in one call, on a length that
// splits off the 16-lane steps, in place as well.
func TestUnaryPartsSplit(t *testing.T) {
	x, _ := fusionInputs(3*elementwiseParallelMin + 7)
	for name, fn := range map[string]func(dst, a []float32){
		"sign": signFloat32, "exp": expFloat32, "logistic": logisticFloat32, "tanh": tanhFloat32,
	} {
		want := make([]float32, len(x))
		fn(want, x)
		got := make([]float32, len(x))
		unaryParts(fn, got, x)
		inPlace := append([]float32(nil), x...)
		unaryParts(fn, inPlace, inPlace)
		for i := range want {
			w := math.Float32bits(want[i])
			if math.Float32bits(got[i]) != w || math.Float32bits(inPlace[i]) != w {
				t.Fatalf("%s[%d] of %g: split %g, in place %g, one call %g", name, i, x[i], got[i], inPlace[i], want[i])
			}
		}
	}
}
