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

func TestPermuteIsBijection(t *testing.T) {
	tests := []struct {
		n    uint64
		keys int
	}{
		{1, 3}, {2, 3}, {3, 3}, {7, 3}, {64, 3}, {1000, 3}, {4097, 2}, {100000, 1},
	}
	for _, tc := range tests {
		for k := range tc.keys {
			key := PermutationKey(uint64(k), uint64(tc.n))
			seen := make([]bool, tc.n)
			for i := uint64(0); i < tc.n; i++ {
				p := Permute(i, tc.n, key)
				if p >= tc.n {
					t.Fatalf("n=%d key %#x: Permute(%d) = %d, out of range", tc.n, key, i, p)
				}
				if seen[p] {
					t.Fatalf("n=%d key %#x: %d is the image of two indices", tc.n, key, p)
				}
				seen[p] = true
			}
		}
	}
}

func TestPermuteDefinition(t *testing.T) {
	tests := []struct{ i, n, key uint64 }{
		{0, 1, 5}, {3, 10, 7}, {999, 1000, 42}, {12345, 100000, 1 << 63},
	}
	for _, tc := range tests {
		x := tc.i
		for r := uint64(0); r < PermuteRounds; r++ {
			k := At(tc.key, 2*r) % tc.n
			p := (k + tc.n - x) % tc.n
			if Mix(max(x, p)^At(tc.key, 2*r+1))>>63 == 1 {
				x = p
			}
		}
		if got := Permute(tc.i, tc.n, tc.key); got != x {
			t.Errorf("Permute(%d, %d, %#x) = %d, the definition gives %d", tc.i, tc.n, tc.key, got, x)
		}
		if Permute(tc.i, tc.n, tc.key) != Permute(tc.i, tc.n, tc.key) {
			t.Errorf("Permute(%d, %d, %#x) is not deterministic", tc.i, tc.n, tc.key)
		}
	}
	if PermutationKey(3, 4) != Key(3, 4, PurposePermutation) {
		t.Error("PermutationKey does not follow its definition")
	}
	for _, tc := range []struct{ i, n uint64 }{{5, 5}, {7, 0}, {100, 3}} {
		if got := Permute(tc.i, tc.n, 1); got != tc.i {
			t.Errorf("Permute(%d, %d) = %d, want it unchanged", tc.i, tc.n, got)
		}
	}
}

func TestPermuteDiffersAcrossKeys(t *testing.T) {
	const n = 1000
	perm := func(key uint64) []uint64 {
		p := make([]uint64, n)
		for i := range p {
			p[i] = Permute(uint64(i), n, key)
		}
		return p
	}
	a := perm(PermutationKey(1, 0))
	for _, key := range []uint64{PermutationKey(1, 1), PermutationKey(2, 0), PermutationKey(1, 0) + 1} {
		b := perm(key)
		same, fixed := 0, 0
		for i := range a {
			if a[i] == b[i] {
				same++
			}
			if b[i] == uint64(i) {
				fixed++
			}
		}
		// A random pair of permutations agrees at about one index, and a
		// random permutation has about one fixed point.
		if same > 8 || fixed > 8 {
			t.Errorf("key %#x: agrees with another key at %d of %d indices, %d fixed points", key, same, n, fixed)
		}
	}
}

func TestPermuteIsRoughlyUniform(t *testing.T) {
	// Over many keys, where each index lands (and where two neighbours land
	// relative to each other) should be uniform: a chi-square test with
	// generous bounds.
	const n, keys = 10, 20000
	var pos [n][n]int
	var gap [n]int
	for k := range uint64(keys) {
		key := PermutationKey(99, k)
		for i := range uint64(n) {
			pos[i][Permute(i, n, key)]++
		}
		gap[(Permute(1, n, key)+n-Permute(0, n, key))%n]++
	}
	exp := float64(keys) / n
	for i := range n {
		var chi float64
		for j := range n {
			d := float64(pos[i][j]) - exp
			chi += d * d / exp
		}
		// 9 degrees of freedom: P(chi² > 33.7) ≈ 1e-4.
		if chi > 33.7 {
			t.Errorf("index %d: positions %v, chi² %.1f", i, pos[i], chi)
		}
	}
	if gap[0] != 0 {
		t.Fatalf("two indices share an image")
	}
	var chi float64
	e := float64(keys) / (n - 1)
	for j := 1; j < n; j++ {
		d := float64(gap[j]) - e
		chi += d * d / e
	}
	// 8 degrees of freedom: P(chi² > 31.8) ≈ 1e-4.
	if chi > 31.8 {
		t.Errorf("gaps between the images of 0 and 1: %v, chi² %.1f", gap, chi)
	}
}

func BenchmarkPermute(b *testing.B) {
	key := PermutationKey(1, 2)
	var s uint64
	for i := range b.N {
		s += Permute(uint64(i)%60000, 60000, key)
	}
	_ = s
}

func BenchmarkPermutationIndex(b *testing.B) {
	p := NewPermutation(60000, PermutationKey(1, 2))
	var s uint64
	for i := range b.N {
		s += p.Index(uint64(i) % 60000)
	}
	_ = s
}
