package forest

import (
	"math/rand/v2"
	"slices"
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

// columnCodesCase makes n x p column-major codes of four kinds of column
// by j%4: random codes (dense), mostly 0, mostly 7 (sparse, the base 0 or
// 7) and one code throughout (sparse with no other code).
func columnCodesCase(rng *rand.Rand, n, p int) []uint8 {
	xc := make([]uint8, n*p)
	for j := 0; j < p; j++ {
		col := xc[j*n : (j+1)*n]
		for i := range col {
			switch j % 4 {
			case 0:
				col[i] = uint8(rng.IntN(256))
			case 1, 2:
				if rng.IntN(5) == 0 {
					col[i] = uint8(rng.IntN(256))
				} else if j%4 == 2 {
					col[i] = 7
				}
			case 3:
				col[i] = uint8(j)
			}
		}
	}
	return xc
}

// TestColumnCodes checks columnCodes against the plain column-major codes
// it holds: which columns it keeps sparse and their base, each column
// whole (column), which codes a column holds (holds), each row's bitset
// of codes off the base (rowBits), the
// codes of a node's rows copied column by column
// (gather) on the compress path and off it, and blocks of rows row-major
// (rowsOf); column lengths around the 64-row words and the rank groups,
// no rows, rows out of order or repeated (which must leave the compress
// path), and features to skip.
func TestColumnCodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	defer func(v bool) { useVBMI2 = v }(useVBMI2)
	for _, compress := range []bool{false, true} {
		useVBMI2 = compress && startVBMI2
		for _, n := range []int{1, 5, 63, 64, 65, 127, 128, 200, 1000, 1100} {
			p := 4 + rng.IntN(9)
			if n == 1100 {
				p = 130 // three words of features
			}
			xc := columnCodesCase(rng, n, p)
			c := newColumnCodes(xc, n, p, 2)
			for j := 0; j < p; j++ {
				col := xc[j*n : (j+1)*n]
				var cnt [256]int
				for _, v := range col {
					cnt[v]++
				}
				most := slices.Max(cnt[:])
				sparse := 2*most >= n // the base holds at least half of the rows
				if n >= 200 && sparse != (j%4 != 0) {
					t.Fatalf("n=%d: column %d of kind %d sparse %v", n, j, j%4, sparse)
				}
				if got := c.sparse[j] >= 0; got != sparse {
					t.Fatalf("compress=%v n=%d: column %d sparse %v, want %v", useVBMI2, n, j, got, sparse)
				}
				if sparse && cnt[c.base[j]] != most {
					t.Fatalf("compress=%v n=%d: column %d base %d, not the most common code", useVBMI2, n, j, c.base[j])
				}
				if s := int(c.sparse[j]); s >= 0 && n%64 != 0 && c.bits[(s+1)*c.words-1]>>(n%64) != 0 {
					t.Fatalf("compress=%v n=%d: column %d has bits past its rows", useVBMI2, n, j)
				}
			}
			for j := 0; j < p; j++ {
				col := xc[j*n : (j+1)*n]
				for _, v := range []uint8{0, 7, 255, col[0], c.base[j], uint8(j)} {
					if got, want := c.holds(j, v), slices.Contains(col, v); got != want {
						t.Fatalf("n=%d: column %d holds code %d: %v, want %v", n, j, v, got, want)
					}
				}
			}
			rb, cw := c.rowBits(2), (p+63)/64
			for j := 0; j < p; j++ {
				for r := 0; r < n; r++ {
					if got, want := rb[r*cw+j>>6]>>(j&63)&1 != 0, xc[j*n+r] != c.base[j]; got != want {
						t.Fatalf("n=%d: row %d's bit of feature %d is %v, want %v (code %d, base %d)", n, r, j, got, want, xc[j*n+r], c.base[j])
					}
				}
			}
			buf := make([]uint8, 64*c.words)
			for j := 0; j < p; j++ {
				got := c.column(j, buf)
				for r, want := range xc[j*n : (j+1)*n] {
					if got[r] != want {
						t.Fatalf("compress=%v n=%d: column %d row %d = %d, want %d", useVBMI2, n, j, r, got[r], want)
					}
				}
			}
			skip := make([]uint64, (p+63)/64)
			for j := 0; j < p; j++ {
				if rng.IntN(3) == 0 {
					skip[j>>6] |= 1 << (j & 63)
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
					c.gather(dst, rows, sk, make([]uint64, c.words), buf)
					for j := 0; j < p; j++ {
						if sk != nil && sk[j>>6]&(1<<(j&63)) != 0 {
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
			for trial := 0; trial < 20; trial++ {
				lo := rng.IntN(n + 1)
				hi := lo + rng.IntN(n-lo+1)
				if trial == 0 {
					lo, hi = 0, n
				}
				dst := make([]uint8, (hi-lo)*p)
				c.rowsOf(dst, lo, hi)
				for r := lo; r < hi; r++ {
					for j := 0; j < p; j++ {
						if got, want := dst[(r-lo)*p+j], xc[j*n+r]; got != want {
							t.Fatalf("n=%d rows [%d,%d): feature %d of row %d = %d, want %d", n, lo, hi, j, r, got, want)
						}
					}
				}
			}
		}
	}
}

// TestRowBitsKernels checks orRows and copyRows against plain loops over
// the rows' bitsets, for every width up to 16 words and rows in any
// order, repeated or none, and that nothing past the words is written.
func TestRowBitsKernels(t *testing.T) {
	if !useAVX512 {
		t.Skip("no AVX-512 kernel on this CPU or build")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for cw := 1; cw <= 16; cw++ {
		const n = 300
		bits := make([]uint64, n*cw)
		for i := range bits {
			bits[i] = rng.Uint64() & rng.Uint64() & rng.Uint64()
		}
		for _, m := range []int{0, 1, 2, 7, 50, n} {
			rows := make([]int32, m)
			for i := range rows {
				rows[i] = int32(rng.IntN(n))
			}
			want := make([]uint64, cw+1)
			for _, r := range rows {
				for w := 0; w < cw; w++ {
					want[w] |= bits[int(r)*cw+w]
				}
			}
			want[cw] = 0x5a5a // a guard word
			got := make([]uint64, cw+1)
			got[cw] = 0x5a5a
			for w := range got[:cw] {
				got[w] = 0xdead // acc is set, not added to
			}
			var r0 int32
			if m > 0 {
				r0 = rows[0]
			}
			orRows(&got[0], &bits[0], &([]int32{r0})[0], 0, cw) // no rows: zero
			for w, v := range got[:cw] {
				if v != 0 {
					t.Fatalf("cw=%d: orRows of no rows: word %d = %x", cw, w, v)
				}
			}
			if m > 0 {
				orRows(&got[0], &bits[0], &rows[0], m, cw)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("cw=%d m=%d: orRows %x, want %x", cw, m, got, want)
			}
			dst := make([]uint64, m*cw+1)
			dst[m*cw] = 0x5a5a
			if m > 0 {
				copyRows(&dst[0], &bits[0], &rows[0], m, cw)
			}
			for i, r := range rows {
				if !slices.Equal(dst[i*cw:i*cw+cw], bits[int(r)*cw:int(r)*cw+cw]) {
					t.Fatalf("cw=%d m=%d: copyRows row %d (%d) = %x, want %x", cw, m, i, r, dst[i*cw:i*cw+cw], bits[int(r)*cw:int(r)*cw+cw])
				}
			}
			if dst[m*cw] != 0x5a5a {
				t.Fatalf("cw=%d m=%d: copyRows wrote past its rows", cw, m)
			}
		}
	}
}

// TestTranspose64 checks transpose64 against the definition, bit by bit.
func TestTranspose64(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := 0; trial < 20; trial++ {
		var a [64]uint64
		for i := range a {
			a[i] = rng.Uint64()
		}
		b := a
		transpose64(&b)
		for i := 0; i < 64; i++ {
			for k := 0; k < 64; k++ {
				if b[i]>>k&1 != a[k]>>i&1 {
					t.Fatalf("trial %d: bit %d of row %d is %d, want bit %d of row %d", trial, k, i, b[i]>>k&1, i, k)
				}
			}
		}
	}
}
