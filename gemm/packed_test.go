package gemm

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestSgemmPackedBMatchesSgemm checks that products with a packed B give
// Sgemm's bits, for every kernel path, both transposes, odd and tiny sizes,
// leading-dimension padding, alpha/beta, and thread counts (which change how
// the rows and columns are split into chunks).
func TestSgemmPackedBMatchesSgemm(t *testing.T) {
	saved := threads
	defer func() { threads = saved }()
	withPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(11, 12))
		shapes := [][3]int{{64, 520, 700}, {70, 130, 1030}, {1, 1, 1}, {13, 31, 7}, {15, 33, 300}, {300, 70, 513}, {5, 600, 97}}
		for _, sh := range shapes {
			m, n, k := sh[0], sh[1], sh[2]
			for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
				transA, transB := tr[0], tr[1]
				pad := rng.IntN(3)
				ar, ac := m, k
				if transA {
					ar, ac = k, m
				}
				br, bc := k, n
				if transB {
					br, bc = n, k
				}
				a, b := randMat(rng, ar, ac, pad), randMat(rng, br, bc, pad)
				c0 := randMat(rng, m, n, pad)
				pb, err := PackB(transB, k, n, b.v, b.ld)
				if err != nil {
					t.Fatal(err)
				}
				for _, th := range []int{1, 2, 3} {
					threads = th
					for _, ab := range [][2]float32{{1, 0}, {1.5, 0.5}} {
						want := append([]float32(nil), c0.v...)
						got := append([]float32(nil), c0.v...)
						if err := Sgemm(transA, transB, m, n, k, ab[0], a.v, a.ld, b.v, b.ld, ab[1], want, c0.ld); err != nil {
							t.Fatal(err)
						}
						if err := SgemmPackedB(transA, m, ab[0], a.v, a.ld, pb, ab[1], got, c0.ld); err != nil {
							t.Fatal(err)
						}
						name := fmt.Sprintf("%v trans=%v threads=%d alpha,beta=%v", sh, tr, th, ab)
						for i := range want {
							if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
								t.Fatalf("%s: element %d = %g, Sgemm gives %g", name, i, got[i], want[i])
							}
						}
					}
				}
				pb.Release()
			}
		}
	})
}

// TestSgemmPackedBErrors checks the refusals: bad sizes and slices, a
// released packing.
func TestSgemmPackedBErrors(t *testing.T) {
	if _, err := PackB(false, 3, 4, make([]float32, 11), 4); !errors.Is(err, ErrBadArgs) {
		t.Errorf("short B: %v", err)
	}
	if _, err := PackB(false, -1, 4, nil, 4); !errors.Is(err, ErrBadArgs) {
		t.Errorf("negative k: %v", err)
	}
	pb, err := PackB(false, 3, 4, make([]float32, 12), 4)
	if err != nil {
		t.Fatal(err)
	}
	c := make([]float32, 8)
	if err := SgemmPackedB(false, 2, 1, make([]float32, 5), 3, pb, 0, c, 4); !errors.Is(err, ErrBadArgs) {
		t.Errorf("short A: %v", err)
	}
	if err := SgemmPackedB(false, 2, 1, make([]float32, 6), 3, pb, 0, c[:7], 4); !errors.Is(err, ErrBadArgs) {
		t.Errorf("short C: %v", err)
	}
	pb.Release()
	if err := SgemmPackedB(false, 2, 1, make([]float32, 6), 3, pb, 0, c, 4); !errors.Is(err, ErrBadArgs) {
		t.Errorf("released: %v", err)
	}
	if err := SgemmPackedB(false, 2, 1, make([]float32, 6), 3, nil, 0, c, 4); !errors.Is(err, ErrBadArgs) {
		t.Errorf("nil: %v", err)
	}
}

// BenchmarkSgemmPackedB times the LSTM step's products with B packed once
// (as the cpu backend does for a weight used at every step) beside Sgemm,
// which packs B in every call.
func BenchmarkSgemmPackedB(b *testing.B) {
	for _, s := range benchShapes {
		if s.m != 64 {
			continue
		}
		a, lda, bm, ldb, c := benchOperands(s)
		b.Run(s.name+"/sgemm", func(b *testing.B) {
			cpu0 := cpuTime()
			for b.Loop() {
				if err := Sgemm(s.transA, s.transB, s.m, s.n, s.k, 1, a, lda, bm, ldb, 0, c, s.n); err != nil {
					b.Fatal(err)
				}
			}
			reportGFLOPS(b, s, cpu0)
		})
		b.Run(s.name+"/packed", func(b *testing.B) {
			pb, err := PackB(s.transB, s.k, s.n, bm, ldb)
			if err != nil {
				b.Fatal(err)
			}
			defer pb.Release()
			cpu0 := cpuTime()
			for b.Loop() {
				if err := SgemmPackedB(s.transA, s.m, 1, a, lda, pb, 0, c, s.n); err != nil {
					b.Fatal(err)
				}
			}
			reportGFLOPS(b, s, cpu0)
		})
	}
}
