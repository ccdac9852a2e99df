package signal

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestFastLn(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	xs := []float64{1, 2, 0.5, math.Sqrt2, math.Nextafter(math.Sqrt2, 3), 1e-20, 1e-300, 1e300, math.SmallestNonzeroFloat64, 3}
	for range 100000 {
		xs = append(xs, math.Exp(r.Float64()*200-100))
	}
	for _, x := range xs {
		got, want := fastLn(x), math.Log(x)
		if math.Abs(got-want) > 2e-11*math.Max(1, math.Abs(want)/10) {
			t.Fatalf("fastLn(%g) = %.17g, want %.17g", x, got, want)
		}
	}
	for _, x := range []float64{0, -1, math.Inf(1), math.NaN()} {
		got, want := fastLn(x), math.Log(x)
		if !(got == want || math.IsNaN(got) && math.IsNaN(want)) {
			t.Errorf("fastLn(%g) = %g, want %g", x, got, want)
		}
	}
}

func TestFastAtan2(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	type pt struct{ y, x float64 }
	pts := []pt{{0, 1}, {1, 0}, {0, -1}, {-1, 0}, {1, 1}, {-1, -1}, {1, -1}, {-1, 1}, {1e-300, 1}, {1, 1e-300},
		{math.Tan(math.Pi / 8), 1}, {0, 0}}
	for range 100000 {
		pts = append(pts, pt{r.NormFloat64(), r.NormFloat64()})
	}
	for _, p := range pts {
		got, want := fastAtan2(p.y, p.x), math.Atan2(p.y, p.x)
		if p.x == 0 && p.y == 0 {
			want = 0
		}
		if math.Abs(got-want) > 3e-13 {
			t.Fatalf("fastAtan2(%g, %g) = %.17g, want %.17g", p.y, p.x, got, want)
		}
	}
}

func BenchmarkFastLn(b *testing.B) {
	x := 1.2345
	var s float64
	for b.Loop() {
		s += fastLn(x)
		x += 1e-3
	}
	_ = s
}

func BenchmarkMathLog(b *testing.B) {
	x := 1.2345
	var s float64
	for b.Loop() {
		s += math.Log(x)
		x += 1e-3
	}
	_ = s
}
