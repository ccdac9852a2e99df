package gemm

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"
	gonumblas "gonum.org/v1/gonum/blas/gonum"
)

// benchShape is m×k×n: C (m×n) = A (m×k) · B (k×n), with the transposes DotGeneral uses.
type benchShape struct {
	name           string
	m, k, n        int
	transA, transB bool
}

var benchShapes = []benchShape{
	{"256", 256, 256, 256, false, false},
	{"512", 512, 512, 512, false, false},
	{"1024", 1024, 1024, 1024, false, false},
	{"mlp_256x784x512", 256, 784, 512, false, false},
	{"mlp_256x512x512", 256, 512, 512, false, false},
	{"lstm_64x1024x2048", 64, 1024, 2048, false, false},
	// Gradients: dW = Xᵀ·dY (transA), dX = dY·Wᵀ (transB).
	{"mlp_784x256x512_TA", 784, 256, 512, true, false},
	{"mlp_256x512x784_TB", 256, 512, 784, false, true},
	{"mlp_256x512x512_TB", 256, 512, 512, false, true},
	{"mlp_256x10x512_TB", 256, 10, 512, false, true},
	{"mlp_512x256x512_TA", 512, 256, 512, true, false},
	{"lstm_1024x64x2048_TA", 1024, 64, 2048, true, false},
	{"lstm_64x2048x1024_TB", 64, 2048, 1024, false, true},
}

func benchOperands(s benchShape) (a []float32, lda int, b []float32, ldb int, c []float32) {
	rng := rand.New(rand.NewPCG(1, 1))
	ar, ac := s.m, s.k
	if s.transA {
		ar, ac = s.k, s.m
	}
	br, bc := s.k, s.n
	if s.transB {
		br, bc = s.n, s.k
	}
	return randMat(rng, ar, ac, 0).v, ac, randMat(rng, br, bc, 0).v, bc, make([]float32, s.m*s.n)
}

// reportGFLOPS reports wall-clock GFLOP/s and GFLOP per CPU-second since cpu0
// (the latter is what one core gives when other processes share the machine).
func reportGFLOPS(b *testing.B, s benchShape, cpu0 time.Duration) {
	flops := 2 * float64(s.m) * float64(s.n) * float64(s.k) * float64(b.N)
	b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	if cpu := cpuTime() - cpu0; cpu > 0 {
		b.ReportMetric(flops/cpu.Seconds()/1e9, "GFLOP/cpu-s")
	}
}

// BenchmarkSgemm times every path at 1 thread and at all cores, and gonum's
// pure-Go Sgemm (which uses all cores), on square and model shapes.
//
//	go test -run '^$' -bench 'Sgemm$' ./gemm/
func BenchmarkSgemm(b *testing.B) {
	savedPath, savedThreads := active, threads
	defer func() { active, threads = savedPath, savedThreads }()
	for _, s := range benchShapes {
		a, lda, bm, ldb, c := benchOperands(s)
		for _, p := range paths() {
			for _, th := range []int{1, runtime.GOMAXPROCS(0)} {
				b.Run(fmt.Sprintf("%s/%s/threads=%d", s.name, p, th), func(b *testing.B) {
					if p == "go" && s.m*s.n*s.k > 1<<28 && testing.Short() {
						b.Skip("slow path on a large shape")
					}
					if err := setPath(p); err != nil {
						b.Fatal(err)
					}
					threads = th
					cpu0 := cpuTime()
					for b.Loop() {
						if err := Sgemm(s.transA, s.transB, s.m, s.n, s.k, 1, a, lda, bm, ldb, 0, c, s.n); err != nil {
							b.Fatal(err)
						}
					}
					reportGFLOPS(b, s, cpu0)
				})
			}
		}
		b.Run(s.name+"/gonum", func(b *testing.B) {
			ta, tb := blas.NoTrans, blas.NoTrans
			if s.transA {
				ta = blas.Trans
			}
			if s.transB {
				tb = blas.Trans
			}
			var impl gonumblas.Implementation
			cpu0 := cpuTime()
			for b.Loop() {
				impl.Sgemm(ta, tb, s.m, s.n, s.k, 1, a, lda, bm, ldb, 0, c, s.n)
			}
			reportGFLOPS(b, s, cpu0)
		})
	}
}

// BenchmarkPeak measures the machine's FMA throughput on one core with a loop
// of independent FMAs: the ceiling for any SGEMM kernel.
func BenchmarkPeak(b *testing.B) {
	probes := []struct {
		name  string
		ok    bool
		flops float64 // per iteration
		fn    func(int)
	}{
		{"avx512", hasAVX512Kernel(), 24 * 16 * 2, fmaPeak512},
		{"avx2", hasAVX2Kernel(), 12 * 8 * 2, fmaPeak256},
	}
	for _, p := range probes {
		b.Run(p.name, func(b *testing.B) {
			if !p.ok {
				b.Skip("not available")
			}
			const iters = 1 << 16
			cpu0 := cpuTime()
			for b.Loop() {
				p.fn(iters)
			}
			flops := p.flops * iters * float64(b.N)
			b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			b.ReportMetric(flops/(cpuTime()-cpu0).Seconds()/1e9, "GFLOP/cpu-s")
		})
	}
}

// BenchmarkSgemmSmall times small squares at 1 thread and at all cores with
// the parallel threshold lowered, to place parallelThreshold.
//
//	go test -run '^$' -bench SgemmSmall ./gemm/
func BenchmarkSgemmSmall(b *testing.B) {
	savedThreads, savedThreshold := threads, parallelThreshold
	defer func() { threads, parallelThreshold = savedThreads, savedThreshold }()
	for _, size := range []int{32, 48, 64, 96, 128, 192} {
		s := benchShape{fmt.Sprint(size), size, size, size, false, false}
		a, lda, bm, ldb, c := benchOperands(s)
		for _, th := range []int{1, runtime.GOMAXPROCS(0)} {
			b.Run(fmt.Sprintf("%d/threads=%d", size, th), func(b *testing.B) {
				threads, parallelThreshold = th, 0
				cpu0 := cpuTime()
				for b.Loop() {
					if err := Sgemm(false, false, s.m, s.n, s.k, 1, a, lda, bm, ldb, 0, c, s.n); err != nil {
						b.Fatal(err)
					}
				}
				reportGFLOPS(b, s, cpu0)
			})
		}
	}
}
