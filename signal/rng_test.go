package signal

import (
	"math"
	"testing"
)

func TestNormMoments(t *testing.T) {
	r := newStream(1, streamNoise)
	const n = 400000
	var s1, s2, s3, s4 float64
	tail := 0
	for range n {
		v := r.norm()
		s1 += v
		s2 += v * v
		s3 += v * v * v
		s4 += v * v * v * v
		if math.Abs(v) > 3 {
			tail++
		}
	}
	mean, vr := s1/n, s2/n
	skew, kurt := s3/n, s4/n
	// Standard errors at n = 4e5: mean 0.0016, variance 0.0022, skew 0.004, kurtosis 0.015.
	if math.Abs(mean) > 0.01 || math.Abs(vr-1) > 0.01 || math.Abs(skew) > 0.02 || math.Abs(kurt-3) > 0.08 {
		t.Errorf("moments mean %.4f var %.4f skew %.4f kurt %.4f", mean, vr, skew, kurt)
	}
	// P(|z| > 3) = 0.0027: expect 1080 ± 33.
	if tail < 950 || tail > 1210 {
		t.Errorf("%d of %d beyond 3 sigma, want about 1080", tail, n)
	}
}

func TestRNGDeterministic(t *testing.T) {
	a, b := newStream(42, streamSymbols), newStream(42, streamSymbols)
	c := newStream(42, streamNoise)
	for i := range 100 {
		x, y, z := a.next(), b.next(), c.next()
		if x != y {
			t.Fatalf("draw %d differs for one seed", i)
		}
		if x == z {
			t.Fatalf("draw %d equal across purposes", i)
		}
	}
}

func TestIntnRange(t *testing.T) {
	r := newStream(3, streamSymbols)
	var counts [4]int
	for range 40000 {
		counts[r.intn(4)]++
	}
	for k, c := range counts {
		if c < 9600 || c > 10400 {
			t.Errorf("value %d drawn %d times of 40000", k, c)
		}
	}
}
