package fastgrad

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/backends"
	_ "github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

func testBackend(t testing.TB) backends.Backend {
	t.Helper()
	b, err := backends.NewWithConfig("go:ops_sequential")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Finalize)
	return b
}

func randTensor(r *rand.Rand, dims ...int) *tensors.Tensor {
	n := 1
	for _, d := range dims {
		n *= d
	}
	data := make([]float64, n)
	for i := range data {
		data[i] = r.NormFloat64()
	}
	return tensors.FromFlatDataAndDimensions(data, dims...)
}

func TestFastDotGradientsMatchStock(t *testing.T) {
	b := testBackend(t)
	cases := []struct {
		name     string
		lhs, rhs []int
		op       func(l, r *graph.Node) *graph.Node
	}{
		{"dot-matmul", []int{3, 4}, []int{4, 5}, graph.Dot},
		{"dot-matvec", []int{3, 4}, []int{4}, graph.Dot},
		{"dot-vecvec", []int{4}, []int{4}, graph.Dot},
		{"dotgeneral-matmul", []int{3, 4}, []int{4, 5}, func(l, r *graph.Node) *graph.Node {
			return graph.DotGeneral(l, []int{1}, nil, r, []int{0}, nil)
		}},
		{"dotgeneral-transposed", []int{4, 3}, []int{5, 4}, func(l, r *graph.Node) *graph.Node {
			return graph.DotGeneral(l, []int{0}, nil, r, []int{1}, nil)
		}},
		{"dotgeneral-batch-multi-contract", []int{2, 3, 4, 5}, []int{2, 5, 6, 3}, func(l, r *graph.Node) *graph.Node {
			return graph.DotGeneral(l, []int{3, 1}, []int{0}, r, []int{1, 3}, []int{0})
		}},
		{"dotgeneral-batch-not-first", []int{3, 2, 4}, []int{4, 5, 2}, func(l, r *graph.Node) *graph.Node {
			return graph.DotGeneral(l, []int{2}, []int{1}, r, []int{0}, []int{2})
		}},
		{"dotgeneral-outer", []int{3}, []int{2}, func(l, r *graph.Node) *graph.Node {
			return graph.DotGeneral(l, nil, nil, r, nil, nil)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			lhs, rhs := randTensor(r, tc.lhs...), randTensor(r, tc.rhs...)
			grads := func() [][]float64 {
				exec, err := graph.NewExec(b, func(l, r *graph.Node) []*graph.Node {
					out := tc.op(l, r)
					// A weight per output element makes the incoming VJP non-uniform.
					w := graph.Const(out.Graph(), 0.7)
					if out.Rank() > 0 {
						w = graph.Sin(graph.Iota(out.Graph(), out.Shape(), out.Rank()-1))
					}
					loss := graph.ReduceAllSum(graph.Mul(out, w))
					return graph.Gradient(loss, l, r)
				})
				if err != nil {
					t.Fatal(err)
				}
				outs, err := exec.Exec(lhs, rhs)
				if err != nil {
					t.Fatal(err)
				}
				res := make([][]float64, len(outs))
				for i, o := range outs {
					res[i] = tensors.MustCopyFlatData[float64](o)
				}
				return res
			}
			RestoreStock()
			want := grads()
			Register()
			got := grads()
			for i := range want {
				if len(got[i]) != len(want[i]) {
					t.Fatalf("grad %d: %d values, want %d", i, len(got[i]), len(want[i]))
				}
				for j := range want[i] {
					if d := math.Abs(got[i][j] - want[i][j]); d > 1e-6 {
						t.Fatalf("grad %d[%d] = %g, stock %g (diff %g)", i, j, got[i][j], want[i][j], d)
					}
				}
			}
		})
	}
}

func TestDotGeneralParamsReadable(t *testing.T) {
	g := graph.NewGraph(testBackend(t), "params")
	l := graph.Parameter(g, "l", randTensor(rand.New(rand.NewPCG(1, 1)), 2, 3, 4).Shape())
	r := graph.Parameter(g, "r", randTensor(rand.New(rand.NewPCG(1, 1)), 2, 4, 5).Shape())
	n := graph.DotGeneral(l, []int{2}, []int{0}, r, []int{1}, []int{0})
	lc, lb, rc, rb, ok := dotGeneralParams(n)
	if !ok || len(lc) != 1 || lc[0] != 2 || lb[0] != 0 || rc[0] != 1 || rb[0] != 0 {
		t.Fatalf("dotGeneralParams = %v %v %v %v %v; the fast DotGeneral gradient would fall back to GoMLX's", lc, lb, rc, rb, ok)
	}
}

// benchmarkMLPStep times a training step of an MLP 256-256-256-10 at batch
// 128 with the stock or the fast Dot gradients.
func benchmarkMLPStep(b *testing.B, fast bool) {
	if fast {
		Register()
	} else {
		RestoreStock()
		defer Register()
	}
	be := testBackend(b)
	r := rand.New(rand.NewPCG(1, 1))
	x, w1, w2, w3 := randTensor(r, 128, 256), randTensor(r, 256, 256), randTensor(r, 256, 256), randTensor(r, 256, 10)
	exec, err := graph.NewExec(be, func(x, w1, w2, w3 *graph.Node) []*graph.Node {
		h := graph.Tanh(graph.Dot(x, w1))
		h = graph.Tanh(graph.Dot(h, w2))
		loss := graph.ReduceAllMean(graph.Square(graph.Dot(h, w3)))
		return graph.Gradient(loss, w1, w2, w3)
	})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := exec.Exec(x, w1, w2, w3); err != nil { // compile
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := exec.Exec(x, w1, w2, w3); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMLPStepStockDotGradients(b *testing.B) { benchmarkMLPStep(b, false) }
func BenchmarkMLPStepFastDotGradients(b *testing.B)  { benchmarkMLPStep(b, true) }
