package cpubackend

import (
	"math"
	"testing"
)

// allBF16 returns every bfloat16 value, widened to float32.
func allBF16() []float32 {
	x := make([]float32, 1<<16)
	for i := range x {
		x[i] = math.Float32frombits(uint32(i) << 16)
	}
	return x
}

// TestLogisticForBF16 checks logisticForBF16 on every bfloat16 input: the
// AVX-512 loop and the Go loop give the same bits, and the float32 result
// is within 4 float32 units of 1/(1 + e^−x) in float64 (for x ≥ −88; below,
// a value of at most logistic(−88)), so that its truncation to bfloat16 is
// at most one bfloat16 unit below the exact value.
func TestLogisticForBF16(t *testing.T) {
	x := allBF16()
	vec := make([]float32, len(x)+5)
	goOut := make([]float32, len(x)+5)
	in := append(append([]float32(nil), x...), 0.5, -3, 87.5, -90, 1e-3) // a tail off the 16-lane steps
	logisticForBF16(vec, in)
	logisticForBF16Go(goOut, in)
	var worst float64
	for i := range in {
		a, b := vec[i], goOut[i]
		if math.Float32bits(a) != math.Float32bits(b) && !(a != a && b != b) {
			t.Fatalf("x=%g: vector %g (%#x), Go %g (%#x)", in[i], a, math.Float32bits(a), b, math.Float32bits(b))
		}
		v := float64(in[i])
		want := 1 / (1 + math.Exp(-v))
		got := float64(a)
		switch {
		case math.IsNaN(v):
			if !math.IsNaN(got) {
				t.Fatalf("x=NaN: %g", got)
			}
		case v < -88:
			if got < 0 || got > 6.1e-39 {
				t.Fatalf("x=%g: %g, want in [0, logistic(-88)]", v, got)
			}
		default:
			ulp := float64(math.Nextafter32(float32(want), float32(math.Inf(1)))) - float64(float32(want))
			worst = max(worst, math.Abs(got-want)/ulp)
			if math.Abs(got-want) > 4*ulp {
				t.Fatalf("x=%g: %g, want %g (%.2f float32 units off)", v, got, want, math.Abs(got-want)/ulp)
			}
		}
	}
	t.Logf("largest error %.2f float32 units", worst)
	if !hasVecAVX512 {
		t.Log("no AVX-512 loop here: the Go loop checked against itself and float64")
	}
}
