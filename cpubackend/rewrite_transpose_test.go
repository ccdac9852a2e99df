package cpubackend

import (
	"fmt"
	"math"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// TestTransposedProductRewrite checks that a transposed product — the
// weight gradient's DotGeneral, Reshape and Transpose — is computed as the
// product of the operands swapped, the same bits as without the rewrite,
// in float32 and bfloat16, for each layout of the operands; and that a
// product whose matrix is used elsewhere too is left alone.
func TestTransposedProductRewrite(t *testing.T) {
	const k, m, n = 37, 19, 45
	cases := []struct {
		name       string
		lhs, rhs   []int // without the batch axis of one item
		lc, rc     int   // contracting axes (of the operand without the batch axis)
		batched    bool  // the product has a batch axis of one item, then a Reshape
		alsoOutput bool  // the product's matrix is an output too
		rewritten  int64
	}{
		{"weight gradient xᵀ·d", []int{k, m}, []int{k, n}, 0, 0, true, false, 1},
		{"x·w", []int{m, k}, []int{k, n}, 1, 0, true, false, 1},
		{"x·wᵀ", []int{m, k}, []int{n, k}, 1, 1, true, false, 1},
		{"no batch axis, no Reshape", []int{k, m}, []int{k, n}, 0, 0, false, false, 1},
		{"the matrix also an output", []int{k, m}, []int{k, n}, 0, 0, true, true, 0},
	}
	for _, dt := range []dtypes.DType{dtypes.Float32, dtypes.BFloat16} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/%s", dt, c.name), func(t *testing.T) {
				fn := func(x, y *graph.Node) []*graph.Node {
					x, y = graph.ConvertDType(x, dt), graph.ConvertDType(y, dt)
					var p *graph.Node
					if c.batched {
						x = graph.Reshape(x, append([]int{1}, c.lhs...)...)
						y = graph.Reshape(y, append([]int{1}, c.rhs...)...)
						p = graph.Reshape(graph.DotGeneral(x, []int{c.lc + 1}, []int{0}, y, []int{c.rc + 1}, []int{0}), m, n)
					} else {
						p = graph.DotGeneral(x, []int{c.lc}, nil, y, []int{c.rc}, nil)
					}
					outs := []*graph.Node{graph.ConvertDType(graph.Transpose(p, 0, 1), dtypes.Float32)}
					if c.alsoOutput {
						outs = append(outs, graph.ConvertDType(p, dtypes.Float32))
					}
					return outs
				}
				xv, yv := fusionInputs(k * max(m, n))
				for i := range xv { // finite values: the specials' NaNs would hide a wrong element
					xv[i], yv[i] = float32(math.Sin(float64(i))), float32(math.Cos(float64(3*i)))
				}
				run := func(config string) ([][]float32, int64) {
					before := rewrittenTransposes.Load()
					res := runGraph(t, config, fn, func(backends.Backend) []any {
						return []any{tensors.FromFlatDataAndDimensions(xv[:k*m], c.lhs...), tensors.FromFlatDataAndDimensions(yv[:k*n], c.rhs...)}
					})
					return res, rewrittenTransposes.Load() - before
				}
				want, nw := run("ops_sequential,no_rewrite")
				if nw != 0 {
					t.Fatalf("no_rewrite rewrote %d transposes", nw)
				}
				got, ng := run("ops_sequential")
				if ng != c.rewritten {
					t.Errorf("rewrote %d transposes, want %d", ng, c.rewritten)
				}
				for o := range want {
					for i := range want[o] {
						if math.Float32bits(got[o][i]) != math.Float32bits(want[o][i]) {
							t.Fatalf("output %d[%d]: %g rewritten, %g not", o, i, got[o][i], want[o][i])
						}
					}
				}
			})
		}
	}
}
