package rng

import (
	"math"
	"testing"
)

func TestKnownValues(t *testing.T) {
	// SplitMix64 from state 0: the first output is Mix(Golden).
	if got, want := Mix(Golden), uint64(0xe220a8397b1dcdaf); got != want {
		t.Errorf("Mix(Golden) = %#x, want %#x", got, want)
	}
	g := uint64(Golden)
	if At(0, 0) != Mix(g) || At(5, 2) != Mix(5+3*g) {
		t.Error("At does not follow its definition")
	}
	if Key(1, 2, 3) != Mix(Mix(1^g)+2*g+3) {
		t.Error("Key does not follow its definition")
	}
}

func TestStreamMatchesAt(t *testing.T) {
	s := NewStream(42)
	for i := uint64(0); i < 100; i++ {
		if v := s.Next(); v != At(42, i) {
			t.Fatalf("value %d: %#x, want %#x", i, v, At(42, i))
		}
	}
	if s.Counter() != 100 {
		t.Errorf("counter %d", s.Counter())
	}
}

func TestBelowAndFloat64Ranges(t *testing.T) {
	counts := make([]int, 10)
	var sum float64
	for i := uint64(0); i < 100000; i++ {
		r := At(7, i)
		counts[Below(r, 10)]++
		f := Float64(r)
		if f < 0 || f >= 1 {
			t.Fatalf("Float64 = %v", f)
		}
		sum += f
	}
	for k, c := range counts {
		if c < 9500 || c > 10500 {
			t.Errorf("bucket %d has %d of 100000", k, c)
		}
	}
	if math.Abs(sum/100000-0.5) > 0.01 {
		t.Errorf("mean %v", sum/100000)
	}
}
