//go:build amd64 && !purego && !noasm

package gemm

import "testing"

// BenchmarkBF16Kernel times the VDPBF16PS micro-kernel alone on
// L1-resident panels, and the machine's VDPBF16PS peak, on one thread:
//
//	go test -run XXX -bench BF16Kernel ./gemm/
func BenchmarkBF16Kernel(b *testing.B) {
	if !bf16KernelOK() {
		b.Skip("no AVX-512 BF16")
	}
	b.Run("14x32", func(b *testing.B) {
		const kp = 128
		a := alignedUint32s(kp * bf16MR)
		bp := alignedUint32s(kp * bf16NR)
		c := alignedFloats(bf16MR * bf16NR)
		for b.Loop() {
			bf16Kern14x32(kp, &a[0], &bp[0], &c[0], bf16NR, false)
		}
		b.ReportMetric(4*kp*bf16MR*bf16NR*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
	b.Run("peak", func(b *testing.B) {
		const n = 1000
		for b.Loop() {
			bf16Peak(n)
		}
		b.ReportMetric(24*16*4*n*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
}
