package gemm

import (
	"fmt"
	"testing"
)

// BenchmarkPack measures the packing routines in elements per nanosecond, for
// the AVX-512 kernel's panels (14 rows, 32 columns) and the AVX2 kernel's
// (6 rows, 16 columns).
func BenchmarkPack(b *testing.B) {
	const kc, w = 256, 1024
	src := make([]float32, 1024*1024)
	for _, kr := range []*kernel{
		{name: "avx512", asmPack: hasAVX512Kernel(), mr: 14, nr: 32},
		{name: "avx2", avx2Pack: hasAVX2Kernel(), mr: 6, nr: 16},
	} {
		dst := alignedFloats(kc * (w + 64))
		for _, trans := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/A/mr=%d/trans=%v", kr.name, kr.mr, trans), func(b *testing.B) {
				for b.Loop() {
					packA(kr, dst, src, 1024, trans, 0, w-w%kr.mr, 0, kc, kr.mr)
				}
				b.ReportMetric(float64(kc*w)*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "elem/ns")
			})
			b.Run(fmt.Sprintf("%s/B/nr=%d/trans=%v", kr.name, kr.nr, trans), func(b *testing.B) {
				for b.Loop() {
					packB(kr, dst, src, 1024, trans, 0, kc, 0, w, kr.nr)
				}
				b.ReportMetric(float64(kc*w)*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "elem/ns")
			})
		}
	}
}
