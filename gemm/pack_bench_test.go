package gemm

import (
	"fmt"
	"testing"
)

// BenchmarkPack measures the packing routines in elements per nanosecond.
func BenchmarkPack(b *testing.B) {
	const kc, w = 256, 1024
	src := make([]float32, 1024*1024)
	kr := &kernel{asmPack: hasAVX512Kernel(), mr: 14, nr: 32}
	for _, mr := range []int{14, 32} {
		dst := alignedFloats(kc * (w + 64))
		for _, trans := range []bool{false, true} {
			b.Run(fmt.Sprintf("A/mr=%d/trans=%v", mr, trans), func(b *testing.B) {
				for b.Loop() {
					packA(kr, dst, src, 1024, trans, 0, w-w%mr, 0, kc, mr)
				}
				b.ReportMetric(float64(kc*w)*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "elem/ns")
			})
			b.Run(fmt.Sprintf("B/nr=%d/trans=%v", mr, trans), func(b *testing.B) {
				for b.Loop() {
					packB(kr, dst, src, 1024, trans, 0, kc, 0, w, mr)
				}
				b.ReportMetric(float64(kc*w)*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "elem/ns")
			})
		}
	}
}
