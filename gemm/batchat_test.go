package gemm

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// headsCase is a batch of products whose items are the heads of tensors laid
// out [seqs, rows, heads, cols]: item (s, h) of an operand starts at
// s·rows·heads·cols + h·cols and its rows are heads·cols apart.
type headsCase struct {
	transA, transB bool
	seqs, heads    int
	m, n, k        int
}

func (tc headsCase) String() string {
	return fmt.Sprintf("tA=%v,tB=%v,%dx%d-heads,%dx%dx%d", tc.transA, tc.transB, tc.seqs, tc.heads, tc.m, tc.n, tc.k)
}

var headsCases = []headsCase{
	{false, true, 4, 4, 64, 64, 32},  // attention scores: Q·Kᵀ
	{false, false, 4, 4, 64, 32, 64}, // weights · V
	{true, false, 2, 4, 32, 64, 64},  // a gradient: Aᵀ·B
	{true, true, 3, 2, 17, 45, 9},    // odd sizes: partial register tiles
	{false, false, 1, 1, 5, 7, 3},    // a single item
	{false, false, 2, 3, 6, 5, 0},    // k = 0: C is zero
}

// layout returns where each item of an operand stored rows×cols per head
// starts, the leading dimension, and the operand's length.
func (tc headsCase) layout(rows, cols int) (offs []int, ld, size int) {
	ld = max(1, tc.heads*cols)
	for s := range tc.seqs {
		for h := range tc.heads {
			offs = append(offs, s*rows*ld+h*cols)
		}
	}
	return offs, ld, tc.seqs * rows * ld
}

// stored returns the rows and columns of an operand as stored: cross×k, or
// k×cross when transposed.
func stored(trans bool, cross, k int) (rows, cols int) {
	if trans {
		return k, cross
	}
	return cross, k
}

// compact copies each item (rows×cols at offs[i], leading dimension ld)
// into a strided batch of dense items.
func compact[T float32 | uint16](src []T, offs []int, rows, cols, ld int) []T {
	dst := make([]T, 0, len(offs)*rows*cols)
	for _, o := range offs {
		for r := range rows {
			dst = append(dst, src[o+r*ld:][:cols]...)
		}
	}
	return dst
}

// TestSgemmBatchAt checks SgemmBatchAt on heads read in place against
// SgemmBatch on dense copies of the same items: the same bits, on every
// kernel path.
func TestSgemmBatchAt(t *testing.T) {
	withPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(11, 12))
		for _, tc := range headsCases {
			t.Run(tc.String(), func(t *testing.T) {
				ar, ac := stored(tc.transA, tc.m, tc.k)
				br, bc := stored(!tc.transB, tc.n, tc.k)
				offA, lda, sizeA := tc.layout(ar, ac)
				offB, ldb, sizeB := tc.layout(br, bc)
				a := randMat(rng, 1, sizeA, 0).v
				b := randMat(rng, 1, sizeB, 0).v
				batch := len(offA)
				c0 := randMat(rng, 1, batch*tc.m*tc.n, 0).v
				want := append([]float32(nil), c0...)
				if err := SgemmBatch(tc.transA, tc.transB, tc.m, tc.n, tc.k, 0.5, compact(a, offA, ar, ac, lda), max(1, ac),
					compact(b, offB, br, bc, ldb), max(1, bc), 0.25, want, tc.n, batch, ar*ac, br*bc, tc.m*tc.n); err != nil {
					t.Fatal(err)
				}
				got := append([]float32(nil), c0...)
				if err := SgemmBatchAt(tc.transA, tc.transB, tc.m, tc.n, tc.k, 0.5, a, lda, offA, b, ldb, offB, 0.25, got, tc.n, tc.m*tc.n); err != nil {
					t.Fatal(err)
				}
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("element %d: %g in place, %g from copies", i, got[i], want[i])
					}
				}
			})
		}
	})
}

// TestGemmBF16BatchTo16At is TestSgemmBatchAt for bfloat16, on each
// bfloat16 path.
func TestGemmBF16BatchTo16At(t *testing.T) {
	for _, path := range bf16Paths() {
		t.Run(path, func(t *testing.T) {
			withBF16Path(t, path, func() {
				rng := rand.New(rand.NewPCG(13, 14))
				for _, tc := range headsCases {
					ar, ac := stored(tc.transA, tc.m, tc.k)
					br, bc := stored(!tc.transB, tc.n, tc.k)
					offA, lda, sizeA := tc.layout(ar, ac)
					offB, ldb, sizeB := tc.layout(br, bc)
					a, b := randBF16(rng, sizeA), randBF16(rng, sizeB)
					batch := len(offA)
					want := randBF16(rng, batch*tc.m*tc.n) // overwritten
					got := append([]uint16(nil), want...)
					if err := GemmBF16BatchTo16(tc.transA, tc.transB, tc.m, tc.n, tc.k, compact(a, offA, ar, ac, lda), max(1, ac),
						compact(b, offB, br, bc, ldb), max(1, bc), want, tc.n, batch, ar*ac, br*bc, tc.m*tc.n); err != nil {
						t.Fatal(err)
					}
					if err := GemmBF16BatchTo16At(tc.transA, tc.transB, tc.m, tc.n, tc.k, a, lda, offA, b, ldb, offB, got, tc.n, tc.m*tc.n); err != nil {
						t.Fatal(err)
					}
					for i := range want {
						if got[i] != want[i] {
							t.Fatalf("%v: element %d: %#04x in place, %#04x from copies", tc, i, got[i], want[i])
						}
					}
				}
			})
		})
	}
}

// TestBatchAtBadArgs checks that offsets out of range or of unequal
// counts are refused with ErrBadArgs and leave C untouched.
func TestBatchAtBadArgs(t *testing.T) {
	const m, n, k = 2, 3, 4
	a := make([]float32, 20) // two 2×4 items at 0 and 12, leading dimension 4
	b := make([]float32, 12) // one 4×3 item
	a16, b16 := make([]uint16, len(a)), make([]uint16, len(b))
	for _, tc := range []struct {
		name       string
		offA, offB []int
	}{
		{"counts differ", []int{0, 12}, []int{0}},
		{"negative", []int{0, -1}, []int{0, 0}},
		{"A item past the end", []int{0, 13}, []int{0, 0}},
		{"B item past the end", []int{0, 12}, []int{0, 1}},
	} {
		c := []float32{9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9}
		err := SgemmBatchAt(false, false, m, n, k, 1, a, k, tc.offA, b, n, tc.offB, 0, c, n, m*n)
		if !errors.Is(err, ErrBadArgs) {
			t.Errorf("SgemmBatchAt %s: error %v, want ErrBadArgs", tc.name, err)
		}
		c16 := []uint16{9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9}
		err = GemmBF16BatchTo16At(false, false, m, n, k, a16, k, tc.offA, b16, n, tc.offB, c16, n, m*n)
		if !errors.Is(err, ErrBadArgs) {
			t.Errorf("GemmBF16BatchTo16At %s: error %v, want ErrBadArgs", tc.name, err)
		}
		for i := range c {
			if c[i] != 9 || c16[i] != 9 {
				t.Fatalf("%s: C changed", tc.name)
			}
		}
	}
	// The largest offsets that fit are accepted.
	c := make([]float32, 2*m*n)
	if err := SgemmBatchAt(false, false, m, n, k, 1, a, k, []int{0, 12}, b, n, []int{0, 0}, 0, c, n, m*n); err != nil {
		t.Fatal(err)
	}
}

// TestBatchAtSameForAnyThreadCount checks that SgemmBatchAt and
// GemmBF16BatchTo16At (partial register tiles included: 64 rows are 4x14
// + 8) give the same bits for 1, 2, 3 and 8 threads, on each path.
func TestBatchAtSameForAnyThreadCount(t *testing.T) {
	saved := threads
	defer func() { threads = saved }()
	rng := rand.New(rand.NewPCG(15, 16))
	tc := headsCase{false, false, 4, 4, 64, 32, 64}
	ar, ac := stored(tc.transA, tc.m, tc.k)
	br, bc := stored(!tc.transB, tc.n, tc.k)
	offA, lda, sizeA := tc.layout(ar, ac)
	offB, ldb, sizeB := tc.layout(br, bc)
	batch := len(offA)
	a, b := randMat(rng, 1, sizeA, 0).v, randMat(rng, 1, sizeB, 0).v
	withPath(t, func(t *testing.T) {
		sameForAnyThreads(t, "SgemmBatchAt", []int{1, 2, 3, 8}, func() []float32 {
			c := make([]float32, batch*tc.m*tc.n)
			if err := SgemmBatchAt(tc.transA, tc.transB, tc.m, tc.n, tc.k, 1, a, lda, offA, b, ldb, offB, 0, c, tc.n, tc.m*tc.n); err != nil {
				t.Fatal(err)
			}
			return c
		})
	})
	a16, b16 := randBF16(rng, sizeA), randBF16(rng, sizeB)
	for _, path := range bf16Paths() {
		withBF16Path(t, path, func() {
			sameForAnyThreads(t, "GemmBF16BatchTo16At/"+path, []int{1, 2, 3, 8}, func() []float32 {
				c := make([]uint16, batch*tc.m*tc.n)
				if err := GemmBF16BatchTo16At(tc.transA, tc.transB, tc.m, tc.n, tc.k, a16, lda, offA, b16, ldb, offB, c, tc.n, tc.m*tc.n); err != nil {
					t.Fatal(err)
				}
				f := make([]float32, len(c))
				for i, v := range c {
					f[i] = math.Float32frombits(uint32(v) << 16)
				}
				return f
			})
		})
	}
}
