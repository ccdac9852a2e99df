package gemm

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gotrain/gotrain/internal/cpufeat/cpufeattest"
)

// startBF16Path is the bfloat16 path in use when the package started.
var startBF16Path = BF16Path()

// TestBF16PathFollowsGOTRAIN_CPU checks that the VDPBF16PS kernel is on
// offer, and in use from the start, exactly when the build, the CPU's
// AVX-512 BF16 and GOTRAIN_CPU allow it.
func TestBF16PathFollowsGOTRAIN_CPU(t *testing.T) {
	w := cpufeattest.Current()
	var want []string
	if kernelsBuilt && w.AVX512BF16 {
		want = append(want, "avx512bf16")
	}
	want = append(want, "widen")
	if got := bf16Paths(); !slices.Equal(got, want) {
		t.Errorf("GOTRAIN_CPU=%q: bfloat16 paths %v, want %v", w.Setting, got, want)
	}
	if startBF16Path != want[0] {
		t.Errorf("GOTRAIN_CPU=%q: bfloat16 path %q at start-up, want %q", w.Setting, startBF16Path, want[0])
	}
	cpufeattest.EachSetting(t)
}

// withBF16Path runs f with the bfloat16 path forced to name.
func withBF16Path(t testing.TB, name string, f func()) {
	t.Helper()
	old := bf16Active
	if err := setBF16Path(name); err != nil {
		t.Fatal(err)
	}
	defer func() { bf16Active = old }()
	f()
}

// randBF16 returns n random bfloat16 values (normal, spread over a few
// binades, a tenth of them zero) as bits.
func randBF16(r *rand.Rand, n int) []uint16 {
	s := make([]uint16, n)
	for i := range s {
		if r.IntN(10) == 0 {
			continue
		}
		v := float32(r.NormFloat64() * math.Exp2(float64(r.IntN(7)-3)))
		s[i] = uint16(math.Float32bits(v) >> 16)
	}
	return s
}

func bf16Value(b uint16) float64 { return float64(math.Float32frombits(uint32(b) << 16)) }

// TestGemmBF16MatchesFloat64 compares every path with a float64 triple
// loop over the same bfloat16 values: all four transpositions, sizes off
// the 14x32 tiles and the 512-deep blocks, odd k, leading dimensions wider
// than the rows, batches. Float32 sums of exact products stay within
// k·2⁻²³·Σ|a·b| (plus a little) of the exact sum.
func TestGemmBF16MatchesFloat64(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	sizes := [][3]int{{1, 1, 1}, {14, 32, 2}, {13, 31, 3}, {15, 33, 17}, {29, 65, 511}, {28, 64, 512}, {40, 70, 1025}, {3, 100, 9}, {100, 3, 64}, {520, 40, 30}, {60, 2100, 20}}
	for _, path := range bf16Paths() {
		for _, sz := range sizes {
			// Even and odd leading dimensions: the kernel path packs pairs
			// along rows with 32-bit transposes only when rows start on
			// pairs.
			for ti, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}, {false, false}, {true, false}, {false, true}, {true, true}} {
				m, n, k := sz[0], sz[1], sz[2]
				batch := 1
				if m*n*k < 20000 {
					batch = 2
				}
				name := fmt.Sprintf("%s/%dx%dx%d/tA=%v/tB=%v/batch=%d/ld=%d", path, m, n, k, tr[0], tr[1], batch, ti/4)
				ar, ac, br, bc := m, k, k, n
				if tr[0] {
					ar, ac = k, m
				}
				if tr[1] {
					br, bc = n, k
				}
				lda, ldb, ldc := ac+3, bc+1, n+5
				if ti >= 4 {
					lda, ldb = ac+(ac%2), bc+2+(bc%2)
				}
				sa, sb, sc := ar*lda+7, br*ldb+2, m*ldc+1
				a := randBF16(r, batch*sa)
				b := randBF16(r, batch*sb)
				c := make([]float32, batch*sc)
				for i := range c {
					c[i] = float32(math.NaN()) // overwritten, never read
				}
				var err error
				withBF16Path(t, path, func() {
					err = GemmBF16Batch(tr[0], tr[1], m, n, k, a, lda, b, ldb, c, ldc, batch, sa, sb, sc)
				})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				// The bfloat16 output: the same sums, truncated; C's
				// padding untouched.
				c16 := make([]uint16, len(c))
				for i := range c16 {
					c16[i] = 0xdead
				}
				withBF16Path(t, path, func() {
					err = GemmBF16BatchTo16(tr[0], tr[1], m, n, k, a, lda, b, ldb, c16, ldc, batch, sa, sb, sc)
				})
				if err != nil {
					t.Fatalf("%s to bfloat16: %v", name, err)
				}
				for i, v := range c {
					want := uint16(math.Float32bits(v) >> 16)
					if math.IsNaN(float64(v)) {
						want = 0xdead
					}
					if c16[i] != want {
						t.Fatalf("%s to bfloat16: C[%d] = %#x, want %#x (float32 %g)", name, i, c16[i], want, v)
					}
				}
				for it := range batch {
					for i := range m {
						for j := range n {
							var sum, abs float64
							for p := range k {
								ia, ib := it*sa+i*lda+p, it*sb+p*ldb+j
								if tr[0] {
									ia = it*sa + p*lda + i
								}
								if tr[1] {
									ib = it*sb + j*ldb + p
								}
								x := bf16Value(a[ia]) * bf16Value(b[ib])
								sum += x
								abs += math.Abs(x)
							}
							got := float64(c[it*sc+i*ldc+j])
							if tol := float64(k+2)*0x1p-23*abs + 1e-30; math.Abs(got-sum) > tol {
								t.Fatalf("%s: C[%d][%d][%d] = %g, want %g (±%g)", name, it, i, j, got, sum, tol)
							}
						}
					}
				}
				// Padding between rows and items is not written.
				for it := range batch {
					for i := range m {
						for j := n; j < ldc && it*sc+i*ldc+j < len(c); j++ {
							if i == m-1 && j >= n {
								break
							}
							if v := c[it*sc+i*ldc+j]; !math.IsNaN(float64(v)) {
								t.Fatalf("%s: wrote %g into C's padding at [%d][%d][%d]", name, v, it, i, j)
							}
						}
					}
				}
			}
		}
	}
}

// TestGemmBF16SameForAnyThreadCount checks that each path gives the same
// bits on one and on several threads.
func TestGemmBF16SameForAnyThreadCount(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, path := range bf16Paths() {
		for _, sz := range [][3]int{{256, 512, 784}, {784, 512, 256}, {300, 40, 1500}, {50, 900, 100}} {
			m, n, k := sz[0], sz[1], sz[2]
			a, b := randBF16(r, m*k), randBF16(r, k*n)
			var ref []float32
			for _, th := range []int{1, 2, 3, 8} {
				c := make([]float32, m*n)
				old := threads
				threads = th
				withBF16Path(t, path, func() {
					if err := GemmBF16(false, false, m, n, k, a, k, b, n, c, n); err != nil {
						t.Fatal(err)
					}
				})
				threads = old
				if ref == nil {
					ref = c
				} else if !slices.Equal(c, ref) {
					t.Fatalf("%s %dx%dx%d: %d threads differ from 1", path, m, n, k, th)
				}
			}
		}
	}
}

// TestGemmBF16BadArgs checks that bad arguments are refused with
// ErrBadArgs and leave C as it was.
func TestGemmBF16BadArgs(t *testing.T) {
	a, b := make([]uint16, 12), make([]uint16, 12)
	for _, tc := range []struct {
		name                string
		m, n, k, lda, ldb   int
		ldc, batch, strideC int
		clen                int
	}{
		{"negative m", -1, 3, 4, 4, 3, 3, 1, 0, 9},
		{"short A", 4, 3, 4, 4, 3, 3, 1, 0, 12},
		{"lda below k", 3, 3, 4, 3, 3, 3, 1, 0, 9},
		{"short C", 3, 3, 4, 4, 3, 3, 1, 0, 8},
		{"overlapping items", 1, 3, 4, 4, 3, 3, 2, 2, 9},
	} {
		c := make([]float32, tc.clen)
		for i := range c {
			c[i] = 7
		}
		err := GemmBF16Batch(false, false, tc.m, tc.n, tc.k, a, tc.lda, b, tc.ldb, c, tc.ldc, tc.batch, 0, 0, tc.strideC)
		if !errors.Is(err, ErrBadArgs) {
			t.Errorf("%s: err %v, want ErrBadArgs", tc.name, err)
		}
		for _, v := range c {
			if v != 7 {
				t.Fatalf("%s: C changed", tc.name)
			}
		}
	}
}

// BenchmarkGemmBF16 times GemmBF16 on each path beside Sgemm on the same
// sizes (the MLP's products and 1024³), both threads:
//
//	go test -run XXX -bench GemmBF16 ./gemm/
func BenchmarkGemmBF16(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, sz := range []struct {
		name    string
		tA, tB  bool
		m, n, k int
	}{
		{"1024", false, false, 1024, 1024, 1024},
		{"mlp-fwd-256x512x784", false, false, 256, 512, 784},
		{"mlp-dx-256x784x512-tB", false, true, 256, 784, 512},
		{"mlp-dw-784x512x256-tA", true, false, 784, 512, 256},
		{"mlp-out-256x10x512", false, false, 256, 10, 512},
		{"mlp-outdw-512x10x256-tA", true, false, 512, 10, 256},
		{"tf-proj-1024x128x128", false, false, 1024, 128, 128},
		{"tf-dx-1024x128x128-tB", false, true, 1024, 128, 128},
		{"tf-dw-128x128x1024-tA", true, false, 128, 128, 1024},
		{"tf-ffn-1024x344x128", false, false, 1024, 344, 128},
	} {
		m, n, k := sz.m, sz.n, sz.k
		a, bb := randBF16(r, m*k), randBF16(r, k*n)
		lda, ldb := k, n
		if sz.tA {
			lda = m
		}
		if sz.tB {
			ldb = k
		}
		c := make([]float32, m*n)
		flops := 2 * float64(m*n*k)
		b.Run(sz.name+"/sgemm", func(b *testing.B) {
			af, bf := *widenBF16(a), *widenBF16(bb)
			for b.Loop() {
				if err := Sgemm(sz.tA, sz.tB, m, n, k, 1, af, lda, bf, ldb, 0, c, n); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		for _, path := range bf16Paths() {
			b.Run(sz.name+"/bf16-"+path, func(b *testing.B) {
				withBF16Path(b, path, func() {
					for b.Loop() {
						if err := GemmBF16(sz.tA, sz.tB, m, n, k, a, lda, bb, ldb, c, n); err != nil {
							b.Fatal(err)
						}
					}
				})
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkGemmBF16Batch times the transformer's attention products, 64
// items of [64, 32]·[32, 64] and [64, 64]·[64, 32] (heads × batch), as
// GemmBF16BatchTo16 beside SgemmBatch, both threads:
//
//	go test -run XXX -bench GemmBF16Batch ./gemm/
func BenchmarkGemmBF16Batch(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 9))
	for _, sz := range []struct {
		name           string
		tA, tB         bool
		batch, m, n, k int
	}{
		{"scores-64x64x64x32-tB", false, true, 64, 64, 64, 32},
		{"values-64x64x32x64", false, false, 64, 64, 32, 64},
		{"dv-64x32x64x64-tA", true, false, 64, 32, 64, 64},
	} {
		m, n, k, nb := sz.m, sz.n, sz.k, sz.batch
		a, bb := randBF16(r, nb*m*k), randBF16(r, nb*k*n)
		lda, ldb := k, n
		if sz.tA {
			lda = m
		}
		if sz.tB {
			ldb = k
		}
		flops := 2 * float64(nb*m*n*k)
		b.Run(sz.name+"/sgemm", func(b *testing.B) {
			af, bf := *widenBF16(a), *widenBF16(bb)
			c := make([]float32, nb*m*n)
			for b.Loop() {
				if err := SgemmBatch(sz.tA, sz.tB, m, n, k, 1, af, lda, bf, ldb, 0, c, n, nb, m*k, k*n, m*n); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		for _, path := range bf16Paths() {
			b.Run(sz.name+"/bf16-"+path, func(b *testing.B) {
				c := make([]uint16, nb*m*n)
				withBF16Path(b, path, func() {
					for b.Loop() {
						if err := GemmBF16BatchTo16(sz.tA, sz.tB, m, n, k, a, lda, bb, ldb, c, n, nb, m*k, k*n, m*n); err != nil {
							b.Fatal(err)
						}
					}
				})
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// TestNarrowRow checks narrowRow against its definition, the top 16 bits of
// each float32, for lengths on and off the 16-lane steps and any bits
// (NaNs and infinities included).
func TestNarrowRow(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for n := range 70 {
		src := make([]float32, n)
		for i := range src {
			src[i] = math.Float32frombits(r.Uint32())
		}
		dst := make([]uint16, n+1)
		dst[n] = 0xbeef
		narrowRow(dst[:n], src)
		for i, v := range src {
			if want := uint16(math.Float32bits(v) >> 16); dst[i] != want {
				t.Fatalf("n=%d: dst[%d] = %#04x, want %#04x", n, i, dst[i], want)
			}
		}
		if dst[n] != 0xbeef {
			t.Fatalf("n=%d: wrote past the row", n)
		}
	}
}

// TestGemmBF16PartialRows checks the kernels of partial tiles' rows
// (bf16Kern<h>x32To16, h = 1-13) on each path: bfloat16 C is the float32 C
// truncated, bit for bit, and the rows past C's last (the sentinel rows of a
// larger buffer) are not written.
func TestGemmBF16PartialRows(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for _, path := range bf16Paths() {
		for h := 1; h < bf16MR; h++ {
			m, n, k := bf16MR+h, 2*bf16NR, 40
			a, b := randBF16(r, m*k), randBF16(r, k*n)
			c := make([]float32, m*n)
			c16 := make([]uint16, (m+bf16MR)*n)
			for i := range c16 {
				c16[i] = 0xdead
			}
			withBF16Path(t, path, func() {
				if err := GemmBF16(false, false, m, n, k, a, k, b, n, c, n); err != nil {
					t.Fatal(err)
				}
				if err := GemmBF16BatchTo16(false, false, m, n, k, a, k, b, n, c16, n, 1, 0, 0, 0); err != nil {
					t.Fatal(err)
				}
			})
			for i, v := range c {
				if want := uint16(math.Float32bits(v) >> 16); c16[i] != want {
					t.Fatalf("%s h=%d: C[%d][%d] = %#x, want %#x", path, h, i/n, i%n, c16[i], want)
				}
			}
			for i := m * n; i < len(c16); i++ {
				if c16[i] != 0xdead {
					t.Fatalf("%s h=%d: wrote row %d past C's %d", path, h, i/n, m)
				}
			}
		}
	}
}
