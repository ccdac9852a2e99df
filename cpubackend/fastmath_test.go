package cpubackend

import (
	"math"
	"math/rand/v2"
	"testing"
)

func ulpDiff(a, b float32) int64 {
	if a == b {
		return 0
	}
	ia, ib := int64(math.Float32bits(a)), int64(math.Float32bits(b))
	if ia < 0 || math.Signbit(float64(a)) {
		ia = -(ia & 0x7fffffff)
	}
	if ib < 0 || math.Signbit(float64(b)) {
		ib = -(ib & 0x7fffffff)
	}
	d := ia - ib
	if d < 0 {
		d = -d
	}
	return d
}

// TestFastLogisticTanh compares the float32 logistic and tanh with Go's
// float64 math rounded to float32: at most one unit in the last place
// apart, specials exact.
func TestFastLogisticTanh(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	var xs []float32
	for range 200000 {
		xs = append(xs, float32(r.NormFloat64()*4))
	}
	for e := -40; e <= 40; e++ {
		v := float32(math.Ldexp(1.37, e))
		xs = append(xs, v, -v)
	}
	xs = append(xs, 0, float32(math.Copysign(0, -1)), 1e-45, -1e-45, 88, -88, 104, -104, 200, -200,
		math.MaxFloat32, -math.MaxFloat32, float32(math.Inf(1)), float32(math.Inf(-1)))
	lg, th := make([]float32, len(xs)), make([]float32, len(xs))
	logisticFloat32(lg, xs)
	tanhFloat32(th, xs)
	var worstL, worstT int64
	for i, x := range xs {
		wl := float32(1 / (1 + math.Exp(-float64(x))))
		wt := float32(math.Tanh(float64(x)))
		dl, dt := ulpDiff(lg[i], wl), ulpDiff(th[i], wt)
		worstL, worstT = max(worstL, dl), max(worstT, dt)
		if dl > 1 || dt > 1 {
			t.Fatalf("x = %g: logistic %g (want %g), tanh %g (want %g)", x, lg[i], wl, th[i], wt)
		}
	}
	nan := []float32{float32(math.NaN())}
	out := make([]float32, 1)
	if logisticFloat32(out, nan); !math.IsNaN(float64(out[0])) {
		t.Errorf("logistic(NaN) = %g", out[0])
	}
	if tanhFloat32(out, nan); !math.IsNaN(float64(out[0])) {
		t.Errorf("tanh(NaN) = %g", out[0])
	}
	negZero := []float32{float32(math.Copysign(0, -1))}
	if tanhFloat32(out, negZero); !math.Signbit(float64(out[0])) {
		t.Errorf("tanh(−0) = %g, want −0", out[0])
	}
	t.Logf("max ulp difference: logistic %d, tanh %d", worstL, worstT)
}

func BenchmarkLogisticFloat32(b *testing.B) {
	x := make([]float32, 32768)
	for i := range x {
		x[i] = float32(i%200) - 100
	}
	out := make([]float32, len(x))
	for b.Loop() {
		logisticFloat32(out, x)
	}
}
