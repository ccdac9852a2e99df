package gemm

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
)

// eps is float32's unit roundoff.
const eps = 1.0 / (1 << 24)

// mat is a stored matrix with its leading dimension.
type mat struct {
	v          []float32
	rows, cols int
	ld         int
}

// randMat returns a rows×cols matrix with ld = cols+pad, values in [-1, 1).
func randMat(rng *rand.Rand, rows, cols, pad int) mat {
	ld := max(1, cols+pad)
	n := 0
	if rows > 0 && cols > 0 {
		n = (rows-1)*ld + cols
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = rng.Float32()*2 - 1
	}
	return mat{v: v, rows: rows, cols: cols, ld: ld}
}

// reference computes alpha·op(A)·op(B) + beta·C in float64 and, for each
// element, the bound |alpha|·Σ|a||b| + |beta·c| that scales its rounding error.
func reference(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) (want, scale []float64) {
	want = make([]float64, m*n)
	scale = make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s, sa float64
			for p := 0; p < k; p++ {
				var av, bv float32
				if transA {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				if transB {
					bv = b[j*ldb+p]
				} else {
					bv = b[p*ldb+j]
				}
				s += float64(av) * float64(bv)
				sa += math.Abs(float64(av) * float64(bv))
			}
			var cv float64
			if beta != 0 {
				cv = float64(beta) * float64(c[i*ldc+j])
			}
			want[i*n+j] = float64(alpha)*s + cv
			scale[i*n+j] = math.Abs(float64(alpha))*sa + math.Abs(cv)
		}
	}
	return want, scale
}

// check compares C against the reference: the error of each element must stay
// below (k+3)·eps times its scale. It returns the largest relative error
// |got-want|/scale seen.
func check(t testing.TB, got []float32, ldc, m, n, k int, want, scale []float64) float64 {
	t.Helper()
	worst := 0.0
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			g, w, s := float64(got[i*ldc+j]), want[i*n+j], scale[i*n+j]
			diff := math.Abs(g - w)
			if math.IsNaN(g) || diff > float64(k+3)*eps*s+1e-30 {
				t.Fatalf("C[%d,%d] = %g, want %g (scale %g, k %d)", i, j, g, w, s, k)
			}
			if s > 0 {
				worst = max(worst, diff/s)
			}
		}
	}
	return worst
}

// withPath runs f with each available micro-kernel forced.
func withPath(t *testing.T, f func(t *testing.T)) {
	saved := active
	defer func() { active = saved }()
	for _, p := range paths() {
		t.Run(p, func(t *testing.T) {
			if err := setPath(p); err != nil {
				t.Fatal(err)
			}
			f(t)
		})
	}
}

// runCase multiplies one random case and checks it; it returns the max relative error.
func runCase(t testing.TB, rng *rand.Rand, transA, transB bool, m, n, k int, alpha, beta float32, pad int) float64 {
	t.Helper()
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	a := randMat(rng, ar, ac, pad)
	b := randMat(rng, br, bc, 2*pad)
	c := randMat(rng, m, n, pad)
	want, scale := reference(transA, transB, m, n, k, alpha, a.v, a.ld, b.v, b.ld, beta, c.v, c.ld)
	// Padding between rows must survive.
	pads := map[int]float32{}
	for i := 0; i+1 < m && n > 0; i++ {
		for j := n; j < c.ld; j++ {
			pads[i*c.ld+j] = c.v[i*c.ld+j]
		}
	}
	if err := Sgemm(transA, transB, m, n, k, alpha, a.v, a.ld, b.v, b.ld, beta, c.v, c.ld); err != nil {
		t.Fatal(err)
	}
	for i, v := range pads {
		if c.v[i] != v {
			t.Fatalf("padding element %d of C changed", i)
		}
	}
	return check(t, c.v, c.ld, m, n, k, want, scale)
}

func TestSgemmShapes(t *testing.T) {
	small := []int{1, 2, 3, 7, 13, 31, 33}
	large := []int{63, 65, 127, 129, 257}
	withPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		worst := 0.0
		for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			// Every combination of small sizes.
			for _, m := range small {
				for _, n := range small {
					for _, k := range []int{1, 7, 33} {
						worst = max(worst, runCase(t, rng, tr[0], tr[1], m, n, k, 1, 0, 0))
					}
				}
			}
			// Larger sizes mixed with small ones, padded leading dimensions, alpha and beta.
			for _, m := range large {
				n := small[rng.IntN(len(small))]
				k := large[rng.IntN(len(large))]
				worst = max(worst, runCase(t, rng, tr[0], tr[1], m, n, k, 0.5, 1, 3))
				worst = max(worst, runCase(t, rng, tr[0], tr[1], n, m, k, -1.25, 0.75, 1))
				worst = max(worst, runCase(t, rng, tr[0], tr[1], m, m, n, 2, -1, 0))
			}
			worst = max(worst, runCase(t, rng, tr[0], tr[1], 1000, 13, 129, 1, 0, 5))
			worst = max(worst, runCase(t, rng, tr[0], tr[1], 31, 1000, 65, 1, 1, 0))
			worst = max(worst, runCase(t, rng, tr[0], tr[1], 33, 7, 1000, 1, 0, 0))
		}
		t.Logf("path %s: max relative error %.3g (%.2f eps)", Path(), worst, worst/eps)
	})
}

func TestSgemmLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("large shape")
	}
	withPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 4))
		worst := runCase(t, rng, false, false, 257, 1000, 300, 1, 0, 0)
		worst = max(worst, runCase(t, rng, true, true, 300, 257, 513, 0.5, 2, 1))
		t.Logf("path %s: max relative error %.3g (%.2f eps)", Path(), worst, worst/eps)
	})
}

func TestSgemmZeroSizesAndAlpha(t *testing.T) {
	nan := float32(math.NaN())
	withPath(t, func(t *testing.T) {
		tests := []struct {
			name        string
			m, n, k     int
			alpha, beta float32
			aVal, cVal  float32
			want        float32
		}{
			{"k=0 beta=0 clears NaN", 3, 5, 0, 1, 0, 1, nan, 0},
			{"k=0 beta scales", 3, 5, 0, 1, 2, 1, 3, 6},
			{"alpha=0 skips NaN A", 20, 40, 9, 0, 0.5, nan, 4, 2},
			{"beta=0 ignores NaN C", 20, 40, 9, 1, 0, 1, nan, 9},
			{"beta=0 ignores NaN C small", 2, 3, 4, 2, 0, 1, nan, 8},
			{"beta=1 accumulates", 17, 33, 5, 1, 1, 1, 1, 6},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				a := make([]float32, max(1, tc.m*tc.k))
				b := make([]float32, max(1, tc.k*tc.n))
				c := make([]float32, tc.m*tc.n)
				for i := range a {
					a[i] = tc.aVal
				}
				for i := range b {
					b[i] = 1
				}
				for i := range c {
					c[i] = tc.cVal
				}
				if err := Sgemm(false, false, tc.m, tc.n, tc.k, tc.alpha, a, max(1, tc.k), b, tc.n, tc.beta, c, tc.n); err != nil {
					t.Fatal(err)
				}
				for i, v := range c {
					if v != tc.want {
						t.Fatalf("c[%d] = %g, want %g", i, v, tc.want)
					}
				}
			})
		}
	})
	// Empty products touch nothing.
	if err := Sgemm(false, false, 0, 0, 0, 1, nil, 1, nil, 1, 0, nil, 1); err != nil {
		t.Fatal(err)
	}
}

func TestSgemmErrors(t *testing.T) {
	buf := make([]float32, 100)
	tests := []struct {
		name              string
		ta, tb            bool
		m, n, k           int
		a, b, c           []float32
		lda, ldb, ldc     int
		batch, sa, sb, sc int
	}{
		{"negative m", false, false, -1, 2, 2, buf, buf, buf, 2, 2, 2, 1, 0, 0, 0},
		{"negative batch", false, false, 2, 2, 2, buf, buf, buf, 2, 2, 2, -1, 0, 0, 0},
		{"negative stride", false, false, 2, 2, 2, buf, buf, buf, 2, 2, 2, 2, -4, 0, 4},
		{"lda too small", false, false, 2, 2, 3, buf, buf, buf, 2, 2, 2, 1, 0, 0, 0},
		{"lda too small transA", true, false, 4, 2, 3, buf, buf, buf, 3, 2, 2, 1, 0, 0, 0},
		{"ldb too small transB", false, true, 2, 2, 5, buf, buf, buf, 5, 4, 2, 1, 0, 0, 0},
		{"ldc too small", false, false, 2, 3, 2, buf, buf, buf, 2, 3, 2, 1, 0, 0, 0},
		{"A too short", false, false, 11, 2, 10, buf, buf, buf, 10, 2, 2, 1, 0, 0, 0},
		{"B too short", false, false, 2, 10, 11, buf, buf, buf, 11, 10, 10, 1, 0, 0, 0},
		{"C too short", false, false, 11, 10, 1, buf, buf, buf, 1, 10, 10, 1, 0, 0, 0},
		{"batch C too short", false, false, 2, 2, 2, buf, buf, buf, 2, 2, 2, 30, 0, 0, 4},
		{"batch C overlaps", false, false, 2, 2, 2, buf, buf, buf, 2, 2, 2, 3, 0, 0, 3},
		{"nil A", false, false, 2, 2, 2, nil, buf, buf, 2, 2, 2, 1, 0, 0, 0},
		{"ld overflows", false, false, 3, 2, 2, buf, buf, buf, math.MaxInt / 2, 2, 2, 1, 0, 0, 0},
		{"stride overflows", false, false, 2, 2, 2, buf, buf, buf, 2, 2, 2, 3, math.MaxInt / 2, 0, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := SgemmBatch(tc.ta, tc.tb, tc.m, tc.n, tc.k, 1, tc.a, tc.lda, tc.b, tc.ldb, 0, tc.c, tc.ldc, tc.batch, tc.sa, tc.sb, tc.sc)
			if !errors.Is(err, ErrBadArgs) {
				t.Fatalf("err = %v, want ErrBadArgs", err)
			}
		})
	}
}

func TestSgemmBatch(t *testing.T) {
	withPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(5, 6))
		for _, tc := range []struct {
			batch, m, n, k int
			shareB         bool
		}{
			{1, 9, 17, 5, false},
			{3, 33, 65, 31, false},
			{8, 16, 64, 64, true},    // small: inline, B shared by every item
			{6, 64, 70, 64, false},   // many items: split over the batch
			{2, 130, 200, 96, false}, // few large items: split inside each
			{5, 1, 1, 1, false},
		} {
			t.Run(fmt.Sprintf("%dx%dx%dx%d", tc.batch, tc.m, tc.n, tc.k), func(t *testing.T) {
				lda, ldb, ldc := tc.k+1, tc.n, tc.n+2
				sa := tc.m*lda + 3
				sb := tc.k * ldb
				sc := tc.m*ldc + 1
				a := randMat(rng, 1, sa*tc.batch, 0).v
				b := randMat(rng, 1, sb*tc.batch, 0).v
				c := randMat(rng, 1, sc*tc.batch, 0).v
				if tc.shareB {
					sb = 0
				}
				want := append([]float32(nil), c...)
				for i := 0; i < tc.batch; i++ {
					if err := Sgemm(false, false, tc.m, tc.n, tc.k, 0.5, a[i*sa:], lda, b[i*sb:], ldb, 0.25, want[i*sc:], ldc); err != nil {
						t.Fatal(err)
					}
				}
				wantRef := make([][]float64, tc.batch)
				scales := make([][]float64, tc.batch)
				for i := 0; i < tc.batch; i++ {
					wantRef[i], scales[i] = reference(false, false, tc.m, tc.n, tc.k, 0.5, a[i*sa:], lda, b[i*sb:], ldb, 0.25, c[i*sc:], ldc)
				}
				if err := SgemmBatch(false, false, tc.m, tc.n, tc.k, 0.5, a, lda, b, ldb, 0.25, c, ldc, tc.batch, sa, sb, sc); err != nil {
					t.Fatal(err)
				}
				for i := 0; i < tc.batch; i++ {
					check(t, c[i*sc:], ldc, tc.m, tc.n, tc.k, wantRef[i], scales[i])
				}
				for i := range c {
					if c[i] != want[i] {
						t.Fatalf("batch result differs from per-item Sgemm at %d: %g vs %g", i, c[i], want[i])
					}
				}
			})
		}
	})
}

// TestSgemmThreadInvariance checks that results are bit-identical for any
// number of threads (k is never split).
func TestSgemmThreadInvariance(t *testing.T) {
	saved := threads
	defer func() { threads = saved }()
	withPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 8))
		for _, sh := range [][3]int{{300, 70, 513}, {70, 300, 513}, {129, 257, 65}} {
			m, n, k := sh[0], sh[1], sh[2]
			a := randMat(rng, m, k, 0)
			b := randMat(rng, k, n, 0)
			c0 := randMat(rng, m, n, 0)
			sameForAnyThreads(t, fmt.Sprint(sh), []int{1, 2, 3, 4, 7}, func() []float32 {
				c := append([]float32(nil), c0.v...)
				if err := Sgemm(false, false, m, n, k, 1.5, a.v, a.ld, b.v, b.ld, 0.5, c, n); err != nil {
					t.Fatal(err)
				}
				return c
			})
		}
	})
}

// TestSgemmConcurrent calls Sgemm from many goroutines at once (run with -race):
// the pool must neither deadlock nor mix up calls.
func TestSgemmConcurrent(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	// One shape runs on the pool (with B packed once and shared), one inline.
	for _, sh := range [][3]int{{200, 160, 128}, {9, 20, 30}} { // 4.1M and 5.4k multiply-adds
		m, n, k := sh[0], sh[1], sh[2]
		a := randMat(rng, m, k, 0)
		b := randMat(rng, k, n, 0)
		want := make([]float32, m*n)
		if err := Sgemm(false, false, m, n, k, 1, a.v, a.ld, b.v, b.ld, 0, want, n); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for g := 0; g < 16; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := make([]float32, m*n)
				for it := 0; it < 4; it++ {
					if err := Sgemm(false, false, m, n, k, 1, a.v, a.ld, b.v, b.ld, 0, c, n); err != nil {
						errs <- err
						return
					}
					for i := range c {
						if c[i] != want[i] {
							errs <- fmt.Errorf("%v goroutine %d: c[%d] = %g, want %g", sh, g, i, c[i], want[i])
							return
						}
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
}

func TestSgemmNoAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for _, sh := range [][3]int{{5, 7, 3}, {200, 150, 100}} {
		m, n, k := sh[0], sh[1], sh[2]
		a := randMat(rng, m, k, 0)
		b := randMat(rng, n, k, 0) // transposed
		c := make([]float32, m*n)
		call := func() {
			if err := Sgemm(false, true, m, n, k, 1, a.v, a.ld, b.v, b.ld, 0, c, n); err != nil {
				t.Fatal(err)
			}
		}
		call()
		if allocs := testing.AllocsPerRun(20, call); allocs != 0 {
			t.Errorf("%v: %.1f allocations per call, want 0", sh, allocs)
		}
	}
}

func TestSetPath(t *testing.T) {
	saved := active
	defer func() { active = saved }()
	if err := setPath("no-such-path"); err == nil {
		t.Fatal("setPath accepted an unknown path")
	}
	for _, p := range paths() {
		if err := setPath(p); err != nil || Path() != p {
			t.Fatalf("setPath(%q) = %v, Path() = %q", p, err, Path())
		}
	}
	if got := paths()[len(paths())-1]; got != "go" {
		t.Fatalf("last path = %q, want go", got)
	}
}

// FuzzSgemm checks small shapes, flags and scalars against the reference on every path.
func FuzzSgemm(f *testing.F) {
	f.Add(uint8(3), uint8(5), uint8(7), uint8(0), int8(2), int8(0), uint64(1))
	f.Add(uint8(15), uint8(33), uint8(1), uint8(3), int8(-3), int8(4), uint64(2))
	f.Add(uint8(1), uint8(1), uint8(0), uint8(1), int8(1), int8(1), uint64(3))
	f.Fuzz(func(t *testing.T, m8, n8, k8, flags uint8, alpha8, beta8 int8, seed uint64) {
		m, n, k := int(m8%40), int(n8%70), int(k8%50)
		transA, transB := flags&1 != 0, flags&2 != 0
		pad := int(flags>>2) % 4
		alpha, beta := float32(alpha8)/4, float32(beta8)/4
		saved := active
		defer func() { active = saved }()
		for _, p := range paths() {
			if err := setPath(p); err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(seed, uint64(m*10000+n*100+k)))
			runCase(t, rng, transA, transB, m, n, k, alpha, beta, pad)
		}
	})
}

// TestSgemmSplitK checks the products that split k into slices (small C,
// long k: weight gradients) against the float64 reference on every path,
// transposed or not, with a remainder slice, alpha and beta, and that they
// are bit-identical for any number of threads.
func TestSgemmSplitK(t *testing.T) {
	saved := threads
	defer func() { threads = saved }()
	shapes := [][3]int{{32, 96, 8197}, {96, 32, 8192}, {7, 2, 8193}}
	for _, sh := range shapes {
		if kSlices(sh[0], sh[1], sh[2]) < 2 {
			t.Fatalf("%v: kSlices %d, want a split", sh, kSlices(sh[0], sh[1], sh[2]))
		}
	}
	withPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(9, 10))
		worst := 0.0
		for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			for i, sh := range shapes {
				alpha, beta := float32(1), float32(0)
				if i == 1 {
					alpha, beta = -0.75, 0.5
				}
				worst = max(worst, runCase(t, rng, tr[0], tr[1], sh[0], sh[1], sh[2], alpha, beta, i))
			}
		}
		t.Logf("path %s: max relative error %.3g (%.2f eps)", Path(), worst, worst/eps)
		m, n, k := 32, 96, 16384
		a := randMat(rng, k, m, 0)
		b := randMat(rng, k, n, 0)
		sameForAnyThreads(t, "split k", []int{1, 2, 3, 7}, func() []float32 {
			c := make([]float32, m*n)
			if err := Sgemm(true, false, m, n, k, 1, a.v, a.ld, b.v, b.ld, 0, c, n); err != nil {
				t.Fatal(err)
			}
			return c
		})
	})
}

// sameForAnyThreads runs product with each thread count in turn (the first
// one the reference) and fails t unless every result has the same bits.
// The caller restores threads.
func sameForAnyThreads(t *testing.T, name string, counts []int, product func() []float32) {
	t.Helper()
	var first []float32
	for _, th := range counts {
		threads = th
		c := product()
		if first == nil {
			first = c
			continue
		}
		for i := range c {
			if math.Float32bits(c[i]) != math.Float32bits(first[i]) {
				t.Fatalf("%s: threads=%d differs from threads=%d at %d: %g vs %g", name, th, counts[0], i, c[i], first[i])
			}
		}
	}
}
