package forest

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortKeys checks sortKeys against slices.Sort on distinct random keys
// of every length up to past rankSortMax and rankSortVec, laid out as
// featureOrder makes them (a random priority above a feature index).
func TestSortKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n <= rankSortVec+20; n++ {
		for trial := 0; trial < 20; trial++ {
			keys := make([]uint64, n)
			for j := range keys {
				keys[j] = r.Uint64()>>16<<16 | uint64(j)
			}
			if trial%2 == 1 { // a narrow band: high halves often equal
				for j := range keys {
					keys[j] = uint64(r.IntN(3))<<16 | uint64(j)
				}
			}
			want := slices.Clone(keys)
			slices.Sort(want)
			sortKeys(keys)
			if !slices.Equal(keys, want) {
				t.Fatalf("n=%d trial %d: got %x, want %x", n, trial, keys, want)
			}
		}
	}
}
