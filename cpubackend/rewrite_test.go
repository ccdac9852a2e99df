package cpubackend

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// gateGraph selects blocks of z [B, G, H] along axis 1 with constant masks
// (as models/charlstm does for its gates), combines them and returns the
// result and its gradient with respect to z. masks[k] is the mask of block k;
// use lists the blocks the output depends on.
func gateGraph(masks [][]float64, use []int) func(z *graph.Node) []*graph.Node {
	return func(z *graph.Node) []*graph.Node {
		g := z.Shape().Dimensions[1]
		sel := func(k int) *graph.Node {
			m := graph.Reshape(graph.ConvertDType(graph.Const(z.Graph(), masks[k]), z.DType()), 1, g, 1)
			return graph.ReduceSum(graph.Mul(z, m), 1)
		}
		var out *graph.Node
		for i, k := range use {
			var v *graph.Node
			switch i % 3 {
			case 0:
				v = graph.Sigmoid(sel(k))
			case 1:
				v = graph.Tanh(sel(k))
			default:
				v = graph.Square(sel(k))
			}
			if out == nil {
				out = v
			} else {
				out = graph.Mul(out, graph.AddScalar(v, 0.5))
			}
		}
		loss := graph.ReduceAllSum(out)
		return []*graph.Node{out, graph.Gradient(loss, z)[0]}
	}
}

func oneHot(g, k int) []float64 {
	m := make([]float64, g)
	m[k] = 1
	return m
}

func runGateGraph(t *testing.T, config string, dt dtypes.DType, b, g, h int, masks [][]float64, use []int) ([][]float64, int64) {
	t.Helper()
	be, err := New(config)
	if err != nil {
		t.Fatal(err)
	}
	defer be.Finalize()
	r := rand.New(rand.NewPCG(7, 8))
	z := make([]float64, b*g*h)
	for i := range z {
		z[i] = r.NormFloat64()
	}
	var in *tensors.Tensor
	if dt == dtypes.Float32 {
		z32 := make([]float32, len(z))
		for i, v := range z {
			z32[i] = float32(v)
		}
		in = tensors.FromFlatDataAndDimensions(z32, b, g, h)
	} else {
		in = tensors.FromFlatDataAndDimensions(z, b, g, h)
	}
	before := rewrittenSelections.Load()
	exec, err := graph.NewExec(be, gateGraph(masks, use))
	if err != nil {
		t.Fatal(err)
	}
	outs, err := exec.Exec(in)
	if err != nil {
		t.Fatal(err)
	}
	res := make([][]float64, len(outs))
	for i, o := range outs {
		if dt == dtypes.Float32 {
			v, err := tensors.CopyFlatData[float32](o)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range v {
				res[i] = append(res[i], float64(x))
			}
		} else {
			if res[i], err = tensors.CopyFlatData[float64](o); err != nil {
				t.Fatal(err)
			}
		}
	}
	return res, rewrittenSelections.Load() - before
}

// TestOneHotRewrites checks that the rewritten graphs give the numbers of the
// multiply-and-reduce graphs, and that only exact one-hot selections are
// rewritten.
func TestOneHotRewrites(t *testing.T) {
	four := [][]float64{oneHot(4, 0), oneHot(4, 1), oneHot(4, 2), oneHot(4, 3)}
	cases := []struct {
		name      string
		dt        dtypes.DType
		b, g, h   int
		masks     [][]float64
		use       []int
		rewritten int64 // picks plus assemblies
	}{
		{"lstm gates f32", dtypes.Float32, 5, 4, 7, four, []int{0, 1, 2, 3}, 5},
		{"lstm gates f64", dtypes.Float64, 3, 4, 9, four, []int{0, 1, 2, 3}, 5},
		{"odd sizes", dtypes.Float32, 1, 3, 1, [][]float64{oneHot(3, 2), oneHot(3, 0), oneHot(3, 1)}, []int{0, 1, 2}, 4},
		{"a block twice", dtypes.Float32, 2, 4, 3, four, []int{0, 1, 1, 3}, 4},
		{"a block unused: no assembly", dtypes.Float32, 2, 4, 3, four, []int{0, 1, 3}, 3},
		{"not one-hot: no rewrite", dtypes.Float32, 2, 2, 3, [][]float64{{1, 1}, {0, 2}}, []int{0, 1}, 0},
		{"fractional mask: no rewrite", dtypes.Float32, 2, 2, 3, [][]float64{{0.5, 0}, {0, 1}}, []int{0, 1}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, n := runGateGraph(t, "no_rewrite", c.dt, c.b, c.g, c.h, c.masks, c.use)
			if n != 0 {
				t.Fatalf("no_rewrite rewrote %d selections", n)
			}
			got, n := runGateGraph(t, "", c.dt, c.b, c.g, c.h, c.masks, c.use)
			if n != c.rewritten {
				t.Errorf("rewrote %d selections, want %d", n, c.rewritten)
			}
			for i := range want {
				if len(got[i]) != len(want[i]) {
					t.Fatalf("output %d: %d values, want %d", i, len(got[i]), len(want[i]))
				}
				for j := range want[i] {
					if got[i][j] != want[i][j] {
						t.Fatalf("output %d [%d] = %v, want %v", i, j, got[i][j], want[i][j])
					}
				}
			}
		})
	}
}

// rnnGraph returns the gradient of a weight w [M, N] applied at every step,
// y_t = tanh(x_t·w), to loss Σ_t Σ y_t²: Σ_t x_tᵀ·g_t with g_t = 2·y_t·(1−y_t²)
// written as the backward pass of a recurrent network writes it (and y_0
// when alsoOutput, which then also uses the first product).
func rnnGraph(steps int, alsoOutput bool) func(x, w *graph.Node) []*graph.Node {
	return func(x, w *graph.Node) []*graph.Node {
		var sum, first *graph.Node
		for t := 0; t < steps; t++ {
			xt := graph.Reshape(graph.Slice(x, graph.AxisElem(t)), x.Shape().Dimensions[1:]...)
			y := graph.Tanh(graph.MatMul(xt, w))
			g := graph.MulScalar(graph.Mul(y, graph.OneMinus(graph.Mul(y, y))), 2)
			p := graph.DotGeneral(xt, []int{0}, nil, g, []int{0}, nil)
			if t == 0 {
				first = p
			}
			if sum == nil {
				sum = p
			} else {
				sum = graph.Add(sum, p)
			}
		}
		outs := []*graph.Node{sum}
		if alsoOutput {
			outs = append(outs, first)
		}
		return outs
	}
}

func runRNNGraph(t *testing.T, config string, steps, batch, m, n int, alsoOutput bool) ([]float32, int64) {
	t.Helper()
	be, err := New(config)
	if err != nil {
		t.Fatal(err)
	}
	defer be.Finalize()
	r := rand.New(rand.NewPCG(3, 4))
	x := make([]float32, steps*batch*m)
	w := make([]float32, m*n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	for i := range w {
		w[i] = float32(r.NormFloat64() / 8)
	}
	before := rewrittenDotSums.Load()
	exec, err := graph.NewExec(be, rnnGraph(steps, alsoOutput))
	if err != nil {
		t.Fatal(err)
	}
	outs, err := exec.Exec(tensors.FromFlatDataAndDimensions(x, steps, batch, m), tensors.FromFlatDataAndDimensions(w, m, n))
	if err != nil {
		t.Fatal(err)
	}
	g, err := tensors.CopyFlatData[float32](outs[0])
	if err != nil {
		t.Fatal(err)
	}
	return g, rewrittenDotSums.Load() - before
}

// TestDotSumRewrite checks that a weight gradient summed over steps is
// computed as one product, equal to the summed products within float32
// rounding.
func TestDotSumRewrite(t *testing.T) {
	cases := []struct {
		name               string
		steps, batch, m, n int
		rewritten          int64
		alsoOutput         bool
	}{
		{"lstm-like", 12, 8, 33, 40, 1, false},
		{"odd", 3, 1, 7, 5, 1, false},
		{"one step: nothing to sum", 1, 4, 6, 5, 0, false},
		{"a product also an output", 4, 4, 6, 5, 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, n := runRNNGraph(t, "no_rewrite", c.steps, c.batch, c.m, c.n, c.alsoOutput)
			if n != 0 {
				t.Fatalf("no_rewrite rewrote %d sums", n)
			}
			got, n := runRNNGraph(t, "", c.steps, c.batch, c.m, c.n, c.alsoOutput)
			if n != c.rewritten {
				t.Errorf("rewrote %d sums, want %d", n, c.rewritten)
			}
			// Norm-wise: the largest difference over the largest value (single
			// entries of a sum with cancellations carry larger relative errors).
			var maxDiff, maxWant float64
			for i := range want {
				maxDiff = max(maxDiff, math.Abs(float64(got[i])-float64(want[i])))
				maxWant = max(maxWant, math.Abs(float64(want[i])))
			}
			if rel := maxDiff / maxWant; rel > 1e-6 || math.IsNaN(rel) {
				t.Errorf("largest difference %.3g of the largest value from the summed products", rel)
			} else {
				t.Logf("largest difference %.3g of the largest value", rel)
			}
		})
	}
}
