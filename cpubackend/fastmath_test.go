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

// TestFastLogisticTanh compares the float32 exp, logistic and tanh with Go's
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
	lg, th, ex := make([]float32, len(xs)), make([]float32, len(xs)), make([]float32, len(xs))
	logisticFloat32(lg, xs)
	tanhFloat32(th, xs)
	expFloat32(ex, xs)
	var worstL, worstT, worstE int64
	for i, x := range xs {
		wl := float32(1 / (1 + math.Exp(-float64(x))))
		wt := float32(math.Tanh(float64(x)))
		we := float32(math.Exp(float64(x)))
		dl, dt, de := ulpDiff(lg[i], wl), ulpDiff(th[i], wt), ulpDiff(ex[i], we)
		worstL, worstT, worstE = max(worstL, dl), max(worstT, dt), max(worstE, de)
		if dl > 1 || dt > 1 || de > 1 {
			t.Fatalf("x = %g: logistic %g (want %g), tanh %g (want %g), exp %g (want %g)", x, lg[i], wl, th[i], wt, ex[i], we)
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
	if expFloat32(out, nan); !math.IsNaN(float64(out[0])) {
		t.Errorf("exp(NaN) = %g", out[0])
	}
	t.Logf("max ulp difference: logistic %d, tanh %d, exp %d", worstL, worstT, worstE)
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

// TestFastmathPathsAgree checks that the AVX-512 loops and the AVX2 loops
// (each where built and the CPU has it) give the Go loops' bits, on every
// length up to 40 (the padded tail) and on special values.
func TestFastmathPathsAgree(t *testing.T) {
	avx512, avx2 := hasFastmathAVX512, hasFastmathAVX2
	defer func() { hasFastmathAVX512, hasFastmathAVX2 = avx512, avx2 }()
	ran := false
	for _, path := range []struct {
		name     string
		on, with bool // available; hasFastmathAVX512 while testing it
	}{{"AVX-512", avx512, true}, {"AVX2", avx2, false}} {
		if !path.on {
			continue
		}
		hasFastmathAVX512, hasFastmathAVX2 = path.with, true
		testFastmathAgainstGo(t, path.name)
		ran = true
	}
	if !ran {
		t.Skip("no assembly loops (CPU, build or GOTRAIN_CPU): only the Go loops run")
	}
}

func testFastmathAgainstGo(t *testing.T, path string) {
	r := rand.New(rand.NewPCG(9, 9))
	xs := []float32{0, float32(math.Copysign(0, -1)), 1e-45, -1e-45, 1.0 / 1024, -1.0 / 1024, 0.000976, -0.000977,
		88, -88, 104, -104, 200, -200, 1e30, math.MaxFloat32, -math.MaxFloat32,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), -float32(math.NaN()),
		math.Float32frombits(0x7fa00001), math.Float32frombits(0xffc00123)} // NaNs with payloads, signalling and quiet
	for range 100000 {
		xs = append(xs, float32(r.NormFloat64()*math.Pow(10, r.Float64()*8-6)))
	}
	for _, f := range []struct {
		name       string
		fast, slow func(dst, a []float32)
	}{{"logistic", logisticFloat32, logisticFloat32Go}, {"tanh", tanhFloat32, tanhFloat32Go}, {"exp", expFloat32, expFloat32Go}} {
		for n := 0; n <= 40; n++ {
			a := xs[:n]
			if n == 40 {
				a = xs
			}
			got, want := make([]float32, len(a)), make([]float32, len(a))
			f.fast(got, a)
			f.slow(want, a)
			for i := range a {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%s(%g) = %g (%#x) with %s, %g (%#x) in Go (length %d)", f.name, a[i], got[i],
						math.Float32bits(got[i]), path, want[i], math.Float32bits(want[i]), len(a))
				}
			}
		}
	}
}

func BenchmarkTanhFloat32(b *testing.B) {
	x := make([]float32, 32768)
	for i := range x {
		x[i] = float32(i%200)/20 - 5
	}
	out := make([]float32, len(x))
	for b.Loop() {
		tanhFloat32(out, x)
	}
}
