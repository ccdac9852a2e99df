package cpubackend

import (
	"fmt"
	"math"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/dtypes/bfloat16"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// mixedGraph is a mixed-precision step's element-wise work: a bfloat16
// residual sum widened for a float32 layer norm whose result is narrowed
// for the next product, a float32 softmax narrowed and multiplied in
// bfloat16, a float32 Logistic between conversions (float32's function,
// not bfloat16's), bfloat16 and float32 biases broadcast over rows, scalars
// of both dtypes, and a float32 intermediate that is also an output. The
// outputs are of both dtypes.
func mixedGraph(x, y, b, s *graph.Node) []*graph.Node {
	bf := func(v *graph.Node) *graph.Node { return graph.ConvertDType(v, dtypes.BFloat16) }
	f32 := func(v *graph.Node) *graph.Node { return graph.ConvertDType(v, dtypes.Float32) }
	d := x.Shape().Dimensions
	xb, yb := bf(x), bf(y)
	// Residual sum in bfloat16, layer norm in float32, narrowed.
	// (The statistics broadcast explicitly, as the transformer's are.)
	res := f32(graph.Add(xb, yb))
	mean := graph.BroadcastToShape(graph.ReduceAndKeep(res, graph.ReduceMean, -1), x.Shape())
	centred := graph.Sub(res, mean)
	vari := graph.ReduceAndKeep(graph.Mul(centred, centred), graph.ReduceMean, -1)
	normed := graph.Mul(centred, graph.BroadcastToShape(graph.Rsqrt(graph.AddScalar(vari, 1e-5)), x.Shape()))
	scaled := graph.Add(graph.Mul(normed, graph.BroadcastToShape(graph.Reshape(b, 1, d[1]), x.Shape())), s)
	ln := bf(scaled)
	// Softmax in float32, narrowed, times a bfloat16 value.
	mx := graph.ReduceAndKeep(x, graph.ReduceMax, -1)
	e := graph.Exp(graph.Sub(x, mx))
	sm := graph.Div(e, graph.ReduceAndKeep(e, graph.ReduceSum, -1))
	probs := graph.Mul(bf(sm), yb)
	// A float32 Logistic between conversions; a bfloat16 bias and scalar.
	gate := bf(graph.Logistic(f32(graph.Mul(xb, bf(s)))))
	biased := graph.Add(gate, graph.BroadcastToShape(graph.Reshape(bf(b), 1, d[1]), x.Shape()))
	// A float32 intermediate that is also an output.
	side := graph.Mul(f32(yb), graph.ScalarOne(x.Graph(), dtypes.Float32))
	both := bf(graph.Sub(side, x))
	// A float32 chain whose only bfloat16 part is the widening of an input
	// read elsewhere too (a program with no bfloat16 member).
	widened := graph.Mul(f32(xb), x)
	return []*graph.Node{ln, probs, f32(gate), biased, side, both, f32(graph.Mul(ln, probs)), widened}
}

// mixedFloats returns a graph output's values as float32 (bfloat16 ones
// widened, exactly).
func mixedFloats(t *testing.T, o *tensors.Tensor) []float32 {
	t.Helper()
	if o.DType() == dtypes.BFloat16 {
		v, err := tensors.CopyFlatData[bfloat16.BFloat16](o)
		if err != nil {
			t.Fatal(err)
		}
		f := make([]float32, len(v))
		for i, b := range v {
			f[i] = b.Float32()
		}
		return f
	}
	v, err := tensors.CopyFlatData[float32](o)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestFusionMixedBitIdentical checks that chains holding conversions
// between float32 and bfloat16 give exactly the unfused values, specials
// included, with and without the AVX-512 loops and split over the CPUs, and
// that conversions did join chains.
func TestFusionMixedBitIdentical(t *testing.T) {
	defer func(v bool) { hasVecAVX512 = v }(hasVecAVX512)
	for _, vec := range []bool{hasVecAVX512, false} {
		hasVecAVX512 = vec
		for _, dims := range [][2]int{{37, 53}, {300, 301}} {
			t.Run(fmt.Sprintf("avx512=%v/%dx%d", vec, dims[0], dims[1]), func(t *testing.T) {
				rows, cols := dims[0], dims[1]
				x, y := fusionInputs(rows * cols)
				b := y[:cols]
				run := func(config string) ([][]float32, int64) {
					be, err := New(config)
					if err != nil {
						t.Fatal(err)
					}
					defer be.Finalize()
					exec, err := graph.NewExec(be, mixedGraph)
					if err != nil {
						t.Fatal(err)
					}
					before := fusedConverts.Load()
					outs, err := exec.Exec(tensors.FromFlatDataAndDimensions(x, rows, cols), tensors.FromFlatDataAndDimensions(y, rows, cols),
						tensors.FromFlatDataAndDimensions(b, cols), float32(0.25))
					if err != nil {
						t.Fatal(err)
					}
					var res [][]float32
					for _, o := range outs {
						res = append(res, mixedFloats(t, o))
					}
					return res, fusedConverts.Load() - before
				}
				want, nw := run("ops_sequential,no_fusion")
				if nw != 0 {
					t.Fatalf("no_fusion fused %d conversions", nw)
				}
				got, ng := run("ops_sequential")
				if ng < 6 {
					t.Errorf("%d conversions joined chains, want at least 6", ng)
				}
				if testing.Verbose() {
					t.Logf("%d conversions joined chains", ng)
				}
				for k := range want {
					for i := range want[k] {
						a, w := got[k][i], want[k][i]
						if math.Float32bits(a) != math.Float32bits(w) && !(a != a && w != w) {
							t.Fatalf("output %d[%d]: fused %g (%#x), unfused %g (%#x)", k, i, a, math.Float32bits(a), w, math.Float32bits(w))
						}
					}
				}
			})
		}
	}
}
