package cpubackend

import (
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// TestTransposeFloat32MatchesIterator compares the row-at-a-time transpose
// with simplego's per-element iterator on random shapes and permutations.
// It runs with the AVX2 tiles (where built and the CPU has them) and with
// the Go loops only.
func TestTransposeFloat32MatchesIterator(t *testing.T) {
	avx2 := hasTransposeAVX2
	defer func() { hasTransposeAVX2 = avx2 }()
	for _, on := range []bool{avx2, false} {
		hasTransposeAVX2 = on
		testTransposeFloat32(t)
	}
}

func testTransposeFloat32(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 9))
	// Shapes past the 16×16 tiles, then small random ones.
	fixed := []struct{ dims, perm []int }{
		{[]int{40, 33}, []int{1, 0}},
		{[]int{3, 37, 20}, []int{0, 2, 1}},
		{[]int{2, 17, 3, 19}, []int{3, 1, 0, 2}},
		{[]int{8, 50, 31}, []int{2, 0, 1}},
		// Whole 8x8 tiles and tiles with edges on either side (the AVX2 path).
		{[]int{2, 16, 24}, []int{0, 2, 1}},
		{[]int{3, 256, 13}, []int{0, 2, 1}},
		{[]int{29, 2, 43}, []int{2, 1, 0}},
		{[]int{7, 8}, []int{1, 0}},
		{[]int{8, 7}, []int{1, 0}},
		// Large enough to be split over the CPUs in bands of rows.
		{[]int{2, 300, 115}, []int{0, 2, 1}},
		{[]int{67, 1031}, []int{1, 0}},
		// Row copies large enough to be split (the contiguous axis stays last).
		{[]int{9, 37, 251}, []int{1, 0, 2}},
		{[]int{3, 5, 7, 999}, []int{2, 0, 1, 3}},
	}
	for trial := 0; trial < 500+len(fixed); trial++ {
		rank := 1 + r.IntN(5)
		dims := make([]int, rank)
		for i := range dims {
			dims[i] = 1 + r.IntN(5)
		}
		perm := r.Perm(rank)
		if trial < len(fixed) {
			dims, perm, rank = fixed[trial].dims, fixed[trial].perm, len(fixed[trial].dims)
		}
		in := shapes.Make(dtypes.Float32, dims...)
		src := make([]float32, in.Size())
		for i := range src {
			src[i] = float32(i)
		}
		outDims := make([]int, rank)
		for i, a := range perm {
			outDims[i] = dims[a]
		}
		got := make([]float32, len(src))
		transposeFloat32(got, src, dims, perm)
		want := &Buffer{shape: shapes.Make(dtypes.Float32, outDims...), flat: make([]float32, len(src))}
		execTransposeGeneric[float32](&Buffer{shape: in, flat: src}, want, newTransposeIterator(in, perm))
		for i, v := range want.flat.([]float32) {
			if got[i] != v {
				t.Fatalf("AVX2 %v, dims %v perm %v: element %d = %g, want %g", hasTransposeAVX2, dims, perm, i, got[i], v)
			}
		}
		// 16-bit values (bfloat16's bits): the same loops without the
		// AVX2 tiles.
		src16 := make([]uint16, len(src))
		for i := range src16 {
			src16[i] = uint16(i * 7)
		}
		got16 := make([]uint16, len(src))
		transposeT(got16, src16, dims, perm)
		want16 := &Buffer{shape: shapes.Make(dtypes.Uint16, outDims...), flat: make([]uint16, len(src))}
		execTransposeGeneric[uint16](&Buffer{shape: shapes.Make(dtypes.Uint16, dims...), flat: src16}, want16, newTransposeIterator(in, perm))
		for i, v := range want16.flat.([]uint16) {
			if got16[i] != v {
				t.Fatalf("16 bits, dims %v perm %v: element %d = %d, want %d", dims, perm, i, got16[i], v)
			}
		}
	}
}

// BenchmarkTransposeFloat32 times the transposes of the models' steps (the
// MoE's weight gradient [8, 256, 784] to [8, 784, 256], attention heads)
// with the AVX2 tiles and with the Go loops.
func BenchmarkTransposeFloat32(b *testing.B) {
	avx2 := hasTransposeAVX2
	defer func() { hasTransposeAVX2 = avx2 }()
	for _, c := range []struct {
		name       string
		dims, perm []int
	}{
		{"moe-grad-8x256x784", []int{8, 256, 784}, []int{0, 2, 1}},
		{"heads-16x64x4x32", []int{16, 64, 4, 32}, []int{0, 2, 3, 1}},
		{"square-1024", []int{1024, 1024}, []int{1, 0}},
	} {
		n := 1
		for _, d := range c.dims {
			n *= d
		}
		src, dst := make([]float32, n), make([]float32, n)
		for _, on := range []bool{avx2, false} {
			name := c.name + "/go"
			if on {
				name = c.name + "/avx2"
			}
			b.Run(name, func(b *testing.B) {
				hasTransposeAVX2 = on
				b.SetBytes(int64(8 * n))
				for b.Loop() {
					transposeFloat32(dst, src, c.dims, c.perm)
				}
			})
		}
	}
}
