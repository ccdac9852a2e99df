//go:build amd64 && !purego && !noasm

package gemm

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func hasAVX512Kernel() bool { return hasAVX512 }
func hasAVX2Kernel() bool   { return hasAVX2 }
func fmaPeak512(n int)      { fmaPeakAVX512(n) }
func fmaPeak256(n int)      { fmaPeakAVX2(n) }

// BenchmarkKernel times each micro-kernel alone on L1-resident panels (kc=256).
func BenchmarkKernel(b *testing.B) {
	const kc = 256
	for _, k := range []struct {
		name   string
		ok     bool
		mr, nr int
		fn     func(kc int, a, b, c *float32, ldc int, alpha float32, overwrite bool)
	}{
		{"avx512_14x32", hasAVX512, 14, 32, kernAVX512x14x32},
		{"avx512_6x64", hasAVX512, 6, 64, kernAVX512x6x64},
		{"avx512_8x48", hasAVX512, 8, 48, kernAVX512x8x48},
		{"avx2_6x16", hasAVX2, 6, 16, kernAVX2x6x16},
	} {
		b.Run(k.name, func(b *testing.B) {
			if !k.ok {
				b.Skip("not available")
			}
			a := alignedFloats(kc * k.mr)
			bp := alignedFloats(kc * k.nr)
			c := alignedFloats(k.mr * k.nr)
			cpu0 := cpuTime()
			for b.Loop() {
				k.fn(kc, &a[0], &bp[0], &c[0], k.nr, 1, false)
			}
			flops := 2 * float64(kc*k.mr*k.nr) * float64(b.N)
			b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			b.ReportMetric(flops/(cpuTime()-cpu0).Seconds()/1e9, "GFLOP/cpu-s")
		})
	}
}

// BenchmarkVariants compares AVX-512 register blocks and cache blocking on
// 1024³ with one thread (GFLOP per CPU-second is the figure to compare on a
// shared machine).
func BenchmarkVariants(b *testing.B) {
	if !hasAVX512 {
		b.Skip("no AVX-512")
	}
	savedPath, savedThreads := active, threads
	defer func() { active, threads = savedPath, savedThreads }()
	threads = 1
	s := benchShape{"1024", 1024, 1024, 1024, false, false}
	a, lda, bm, ldb, c := benchOperands(s)
	for _, v := range []struct {
		name   string
		mr, nr int
		fn     func(kc int, a, b, c *float32, ldc int, alpha float32, overwrite bool)
	}{{"14x32", 14, 32, kernAVX512x14x32}, {"8x48", 8, 48, kernAVX512x8x48}, {"6x64", 6, 64, kernAVX512x6x64}} {
		for _, kc := range variantKCs {
			for _, mcBytes := range variantMCBytes {
				mc := max(1, mcBytes/(4*kc)/v.mr) * v.mr
				b.Run(fmt.Sprintf("%s/kc=%d/mc=%d", v.name, kc, mc), func(b *testing.B) {
					active = &kernel{name: "variant", mr: v.mr, nr: v.nr, kc: kc, mc: mc, nc: 4096 / v.nr * v.nr, fn: v.fn, asmPack: true}
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
}

var (
	variantKCs     = []int{192, 256, 384}
	variantMCBytes = []int{256 << 10, 512 << 10, 1 << 20}
)

// TestPackAVX512 compares the AVX-512 packing routines (copies, gathers and
// register transposes) with the Go packing code, on full and edge panels.
func TestPackAVX512(t *testing.T) {
	if !hasAVX512 {
		t.Skip("AVX-512 kernels off (CPU or GOTRAIN_CPU)")
	}
	rng := rand.New(rand.NewPCG(13, 14))
	const ld = 101
	src := randMat(rng, 80, ld, 0).v
	asm := &kernel{mr: 14, nr: 32, asmPack: true}
	goK := &kernel{mr: 14, nr: 32}
	for _, trans := range []bool{false, true} {
		for _, kc := range []int{1, 15, 16, 17, 33, 64} {
			for _, w := range []int{1, 13, 14, 31, 32, 45} {
				for _, lanes := range []int{14, 32} {
					size := (w + lanes) * kc
					want, got := make([]float32, size), make([]float32, size)
					for i := range got {
						got[i], want[i] = -7, -7
					}
					if lanes == 14 {
						packA(goK, want, src, ld, trans, 2, w, 3, kc, lanes)
						packA(asm, got, src, ld, trans, 2, w, 3, kc, lanes)
					} else {
						packB(goK, want, src, ld, trans, 3, kc, 2, w, lanes)
						packB(asm, got, src, ld, trans, 3, kc, 2, w, lanes)
					}
					for i := range want {
						if got[i] != want[i] {
							t.Fatalf("trans=%v kc=%d w=%d lanes=%d: element %d = %g, want %g", trans, kc, w, lanes, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

// TestPackAVX2 compares the packing of the AVX2 kernel's panels (6 rows of A,
// 16 columns of B), with and without the AVX2 transposes, with the panels as
// defined: step p, lane l of panel q holds op(X)[first+q·lanes+l, pc+p] for A
// and op(X)[pc+p, first+q·lanes+l] for B, zero past the last row or column.
func TestPackAVX2(t *testing.T) {
	if !hasAVX2 {
		t.Skip("AVX2 kernel off (CPU or GOTRAIN_CPU)")
	}
	rng := rand.New(rand.NewPCG(15, 16))
	const ld, first, pc = 83, 2, 3
	src := randMat(rng, 80, ld, 0).v
	// at is op(X)[i, p] for packA (i a row of A) and op(X)[p, i] for packB
	// (i a column of B): src read as X or as its transpose.
	at := func(trans, isA bool, i, p int) float32 {
		if trans != isA { // A not transposed, B transposed: row i, column p
			return src[i*ld+p]
		}
		return src[p*ld+i]
	}
	for _, avx2Pack := range []bool{false, true} {
		kr := &kernel{mr: 6, nr: 16, avx2Pack: avx2Pack}
		for _, trans := range []bool{false, true} {
			for _, kc := range []int{1, 7, 8, 9, 16, 23, 64, 77} {
				for _, w := range []int{1, 5, 6, 7, 12, 15, 16, 17, 33, 50} {
					for _, isA := range []bool{true, false} {
						lanes := kr.nr
						if isA {
							lanes = kr.mr
						}
						panels := (w + lanes - 1) / lanes
						got := make([]float32, panels*lanes*kc+5)
						for i := range got {
							got[i] = -7
						}
						if isA {
							packA(kr, got, src, ld, trans, first, w, pc, kc, lanes)
						} else {
							packB(kr, got, src, ld, trans, pc, kc, first, w, lanes)
						}
						for q := range panels {
							for p := range kc {
								for l := range lanes {
									want := float32(0)
									if i := q*lanes + l; i < w {
										want = at(trans, isA, first+i, pc+p)
									}
									if g := got[q*lanes*kc+p*lanes+l]; g != want {
										t.Fatalf("avx2Pack=%v A=%v trans=%v kc=%d w=%d: panel %d step %d lane %d = %g, want %g", avx2Pack, isA, trans, kc, w, q, p, l, g, want)
									}
								}
							}
						}
						for i := panels * lanes * kc; i < len(got); i++ {
							if got[i] != -7 {
								t.Fatalf("avx2Pack=%v A=%v trans=%v kc=%d w=%d: wrote element %d past the panels", avx2Pack, isA, trans, kc, w, i)
							}
						}
					}
				}
			}
		}
	}
}
