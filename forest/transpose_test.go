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

// TestGatherFromColumns checks gatherFromColumns against a plain copy of
// the rows' codes, on the compress path and off it: column lengths around
// the 64-row words (rows past the last full word are copied one by one),
// no rows, rows out of order or repeated (which must leave the compress
// path), and features to skip.
func TestGatherFromColumns(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	defer func(v bool) { useVBMI2 = v }(useVBMI2)
	for _, compress := range []bool{false, true} {
		useVBMI2 = compress && startVBMI2
		for _, n := range []int{1, 5, 63, 64, 65, 127, 128, 200, 1000} {
			p := 1 + rng.IntN(9)
			xc := make([]uint8, n*p)
			for i := range xc {
				xc[i] = uint8(rng.IntN(256))
			}
			skip := make([]uint64, 1)
			for j := 0; j < p; j++ {
				if rng.IntN(3) == 0 {
					skip[0] |= 1 << j
				}
			}
			for trial := 0; trial < 5; trial++ {
				var rows []int32
				for r := 0; r < n; r++ {
					if trial == 1 || rng.IntN(3) == 0 { // all rows, or about a third
						rows = append(rows, int32(r))
					}
				}
				switch trial {
				case 2:
					rows = nil
				case 3: // out of order
					if len(rows) > 1 {
						rows[0], rows[len(rows)-1] = rows[len(rows)-1], rows[0]
					}
				case 4: // a row twice
					if len(rows) > 1 {
						rows[1] = rows[0]
					}
				}
				for _, sk := range [][]uint64{nil, skip} {
					m := len(rows)
					dst := make([]uint8, m*p)
					gatherFromColumns(dst, xc, n, rows, p, sk, make([]uint64, n/64))
					for j := 0; j < p; j++ {
						if sk != nil && sk[0]&(1<<j) != 0 {
							continue
						}
						for i, r := range rows {
							if got, want := dst[j*m+i], xc[j*n+int(r)]; got != want {
								t.Fatalf("compress=%v n=%d p=%d trial %d skip=%v: feature %d of row %d (%d) = %d, want %d",
									useVBMI2, n, p, trial, sk != nil, j, i, r, got, want)
							}
						}
					}
				}
			}
		}
	}
}
