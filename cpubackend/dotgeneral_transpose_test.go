package cpubackend

import (
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// TestTransposeFloat32MatchesIterator compares the row-at-a-time transpose
// with simplego's per-element iterator on random shapes and permutations.
func TestTransposeFloat32MatchesIterator(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 9))
	// Shapes past the 16×16 tiles, then small random ones.
	fixed := []struct{ dims, perm []int }{
		{[]int{40, 33}, []int{1, 0}},
		{[]int{3, 37, 20}, []int{0, 2, 1}},
		{[]int{2, 17, 3, 19}, []int{3, 1, 0, 2}},
		{[]int{8, 50, 31}, []int{2, 0, 1}},
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
				t.Fatalf("dims %v perm %v: element %d = %g, want %g", dims, perm, i, got[i], v)
			}
		}
	}
}
