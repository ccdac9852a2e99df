package forest

import (
	"math/rand/v2"
	"testing"
)

// TestGatherColumns checks gatherColumns against a plain copy, for row
// counts and feature counts around the 8x8 and 64-row blocks, with and
// without features to skip.
func TestGatherColumns(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, p := range []int{1, 7, 8, 9, 16, 63, 64, 65, 130} {
		for _, m := range []int{1, 7, 8, 9, 63, 64, 65, 200} {
			n := m + 13
			xb := make([]uint8, n*p)
			for i := range xb {
				xb[i] = uint8(rng.IntN(256))
			}
			rows := make([]int32, m)
			for i := range rows {
				rows[i] = int32(rng.IntN(n))
			}
			skip := make([]uint64, (p+63)/64)
			for j := 0; j < p; j++ {
				if rng.IntN(3) == 0 || (j >= 8 && j < 16) {
					skip[j>>6] |= 1 << (j & 63)
				}
			}
			for _, sk := range [][]uint64{nil, skip} {
				dst := make([]uint8, m*p)
				gatherColumns(dst, xb, rows, p, sk)
				for j := 0; j < p; j++ {
					if sk != nil && sk[j>>6]&(1<<(j&63)) != 0 {
						continue
					}
					for i, r := range rows {
						if got, want := dst[j*m+i], xb[int(r)*p+j]; got != want {
							t.Fatalf("p=%d m=%d skip=%v: feature %d of row %d = %d, want %d", p, m, sk != nil, j, i, got, want)
						}
					}
				}
			}
		}
	}
}
