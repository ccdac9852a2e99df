package fft

import (
	"fmt"
	"testing"
)

func BenchmarkForward(b *testing.B) {
	for _, n := range []int{256, 512, 1024, 2048, 4096, 1 << 19} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			p, _ := For(n)
			x, dst, scratch := randomComplex(n, 1), make([]complex128, n), make([]complex128, n)
			b.SetBytes(int64(16 * n))
			for b.Loop() {
				_ = p.Forward(dst, x, scratch)
			}
		})
	}
}

func BenchmarkRealForward(b *testing.B) {
	for _, n := range []int{2048} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			p, _ := ForReal(n)
			x := make([]float64, n)
			for i := range x {
				x[i] = float64(i % 7)
			}
			dst, w, s := make([]complex128, n/2+1), make([]complex128, n/2), make([]complex128, n/2)
			for b.Loop() {
				_ = p.Forward(dst, x, w, s)
			}
		})
	}
}

func BenchmarkForwardBatch(b *testing.B) {
	for _, n := range []int{256, 1024} {
		for _, batch := range []int{2, 4, 8} {
			b.Run(fmt.Sprintf("%d/x%d", n, batch), func(b *testing.B) {
				p, _ := For(n)
				x, dst, scratch := randomComplex(n*batch, 1), make([]complex128, n*batch), make([]complex128, n*batch)
				for b.Loop() {
					_ = p.ForwardBatch(dst, x, scratch, batch)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/transform")
			})
		}
	}
}
