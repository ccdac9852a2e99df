// Package fftcompare benchmarks gotrain's FFT against gonum's
// (gonum.org/v1/gonum/dsp/fourier). It is its own module so that gonum stays
// out of gotrain's dependencies. Run from this folder:
//
//	go test -bench . -benchtime 2000x
package fftcompare

import (
	"fmt"
	"math/cmplx"
	"testing"

	"gonum.org/v1/gonum/dsp/fourier"

	"github.com/gotrain/gotrain/signal/fft"
)

var sizes = []int{256, 1024, 2048, 4096}

func input(n int) []complex128 {
	x := make([]complex128, n)
	for i := range x {
		x[i] = complex(float64(i%7)-3, float64(i%5)-2)
	}
	return x
}

func TestSameResult(t *testing.T) {
	for _, n := range sizes {
		x := input(n)
		want := fourier.NewCmplxFFT(n).Coefficients(nil, x)
		p, _ := fft.For(n)
		got := make([]complex128, n)
		if err := p.Forward(got, x, make([]complex128, n)); err != nil {
			t.Fatal(err)
		}
		for k := range got {
			if cmplx.Abs(got[k]-want[k]) > 1e-9 {
				t.Fatalf("n=%d bin %d: %v, gonum %v", n, k, got[k], want[k])
			}
		}
	}
}

func BenchmarkGonum(b *testing.B) {
	for _, n := range append(sizes, 400000) {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			f := fourier.NewCmplxFFT(n)
			x, dst := input(n), make([]complex128, n)
			for b.Loop() {
				f.Coefficients(dst, x)
			}
		})
	}
}

func BenchmarkGotrain(b *testing.B) {
	for _, n := range append(sizes, 1<<19) {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			p, _ := fft.For(n)
			x, dst, s := input(n), make([]complex128, n), make([]complex128, n)
			for b.Loop() {
				_ = p.Forward(dst, x, s)
			}
		})
	}
}

func BenchmarkGotrainBatch4(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			p, _ := fft.For(n)
			x, dst, s := input(4*n), make([]complex128, 4*n), make([]complex128, 4*n)
			for b.Loop() {
				_ = p.ForwardBatch(dst, x, s, 4)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(4*b.N), "ns/transform")
		})
	}
}
