package forest

import (
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gotrain/gotrain/forest/internal/core"
)

// TestRankSortKeys checks the AVX-512 rank sort against slices.Sort for
// every length up to rankSortVec, with keys near 0 and near ^0.
func TestRankSortKeys(t *testing.T) {
	needAVX512(t)
	r := rand.New(rand.NewPCG(5, 6))
	for n := 1; n <= rankSortVec; n++ {
		for trial := range 20 {
			seen := map[uint64]bool{}
			keys := make([]uint64, 0, n)
			for len(keys) < n {
				k := r.Uint64()
				switch trial % 3 {
				case 1:
					k = r.Uint64N(200)
				case 2:
					k = ^uint64(0) - 1 - r.Uint64N(200)
				}
				if !seen[k] {
					seen[k] = true
					keys = append(keys, k)
				}
			}
			want := slices.Sorted(slices.Values(keys))
			var tmp [rankSortVec]uint64
			copy(tmp[:], keys)
			for i := n; i < (n+7)&^7; i++ {
				tmp[i] = ^uint64(0)
			}
			got := make([]uint64, n)
			rankSortKeys(&got[0], &tmp[0], n)
			if !slices.Equal(got, want) {
				t.Fatalf("n=%d trial %d: %v, want %v", n, trial, got, want)
			}
		}
	}
}

// TestFeatureKeys checks the AVX-512 keys of featureOrder against the
// scalar definition (core.FeaturePriorityAt), as sets on each side of the
// limit, for feature counts around the block and word sizes and random
// known constants.
func TestFeatureKeys(t *testing.T) {
	needAVX512(t)
	r := rand.New(rand.NewPCG(7, 8))
	for _, p := range []int{1, 5, 8, 9, 63, 64, 65, 127, 200, 784} {
		for trial := range 10 {
			konst := make([]uint64, (p+63)/64)
			for j := 0; j < p; j++ {
				if trial > 0 && r.IntN(3) == 0 {
					konst[j>>6] |= 1 << (j & 63)
				}
			}
			cand := p
			for _, w := range konst {
				cand -= bits.OnesCount64(w)
			}
			if cand == 0 {
				continue
			}
			nk := r.Uint64()
			limit := r.Uint64()
			if trial == 1 {
				limit = ^uint64(0)
			}
			var below, above []uint64
			for j := 0; j < p; j++ {
				if konst[j>>6]&(1<<(j&63)) != 0 {
					continue
				}
				k := core.FeaturePriorityAt(nk, j)>>16<<16 | uint64(j)
				if k < limit {
					below = append(below, k)
				} else {
					above = append(above, k)
				}
			}
			keys := make([]uint64, cand+2)
			keys[cand], keys[cand+1] = 12345, 67890 // must stay
			lo := featureKeys(&keys[0], &konst[0], p, nk, limit, cand)
			if lo != len(below) {
				t.Fatalf("p=%d trial %d: %d keys below the limit, want %d", p, trial, lo, len(below))
			}
			slices.Sort(below)
			slices.Sort(above)
			gb := slices.Sorted(slices.Values(keys[:lo]))
			ga := slices.Sorted(slices.Values(keys[lo:cand]))
			if !slices.Equal(gb, below) || !slices.Equal(ga, above) {
				t.Fatalf("p=%d trial %d: keys differ", p, trial)
			}
			if keys[cand] != 12345 || keys[cand+1] != 67890 {
				t.Fatalf("p=%d trial %d: wrote past the keys", p, trial)
			}
		}
	}
}
