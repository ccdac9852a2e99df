package cpubackend

import (
	"fmt"
	"math"
	"testing"

	"github.com/gomlx/gomlx/backends"
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

// sameBits fails t unless every fused output value has the unfused one's
// bits (any NaN matching any NaN: payloads are left open).
func sameBits(t *testing.T, got, want [][]float32) {
	t.Helper()
	for k := range want {
		for i := range want[k] {
			a, w := got[k][i], want[k][i]
			if math.Float32bits(a) != math.Float32bits(w) && !(a != a && w != w) {
				t.Fatalf("output %d[%d]: fused %g (%#x), unfused %g (%#x)", k, i, a, math.Float32bits(a), w, math.Float32bits(w))
			}
		}
	}
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
					before := fusedConverts.Load()
					res := runGraph(t, config, mixedGraph, func(backends.Backend) []any {
						return []any{tensors.FromFlatDataAndDimensions(x, rows, cols), tensors.FromFlatDataAndDimensions(y, rows, cols),
							tensors.FromFlatDataAndDimensions(b, cols), float32(0.25)}
					})
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
				sameBits(t, got, want)
			})
		}
	}
}

// TestFusionRepeatedBroadcast checks that row statistics broadcast along
// the trailing axes (a softmax's maximum and sum, a layer norm's mean and
// scale, [rows, 1] or [a, b, 1] to the full shape) are read by the chains
// through their operands, in float32 and bfloat16, with the same bits as
// unfused.
func TestFusionRepeatedBroadcast(t *testing.T) {
	fn := func(x, y *graph.Node) []*graph.Node {
		softmax := func(v *graph.Node) *graph.Node {
			mx := graph.BroadcastToShape(graph.ReduceAndKeep(v, graph.ReduceMax, -1), v.Shape())
			e := graph.Exp(graph.Sub(v, mx))
			return graph.Div(e, graph.BroadcastToShape(graph.ReduceAndKeep(e, graph.ReduceSum, -1), v.Shape()))
		}
		norm := func(v *graph.Node) *graph.Node {
			mean := graph.BroadcastToShape(graph.ReduceAndKeep(v, graph.ReduceMean, -1), v.Shape())
			c := graph.Sub(v, mean)
			vari := graph.ReduceAndKeep(graph.Mul(c, c), graph.ReduceMean, -1)
			return graph.Mul(c, graph.BroadcastToShape(graph.Rsqrt(graph.AddScalar(vari, 1e-5)), v.Shape()))
		}
		d := x.Shape().Dimensions
		x3 := graph.Reshape(x, d[0], 1, d[1]) // a middle axis of one: [rows, 1, cols]
		xb, yb := graph.ConvertDType(x, dtypes.BFloat16), graph.ConvertDType(y, dtypes.BFloat16)
		// bfloat16 scale by a per-row bfloat16 statistic.
		rowb := graph.BroadcastToShape(graph.ReduceAndKeep(yb, graph.ReduceMax, -1), yb.Shape())
		// The same statistics broadcast implicitly ([rows, 1] operands of
		// the element-wise operations), in float32 and in bfloat16.
		implicit := func(v *graph.Node) *graph.Node {
			e := graph.Exp(graph.Sub(v, graph.ReduceAndKeep(v, graph.ReduceMax, -1)))
			sm := graph.Div(e, graph.ReduceAndKeep(e, graph.ReduceSum, -1))
			return graph.Mul(sm, graph.ReduceAndKeep(v, graph.ReduceMin, -1))
		}
		return []*graph.Node{softmax(x), norm(y), graph.Reshape(softmax(x3), d...), graph.ConvertDType(graph.Mul(xb, rowb), dtypes.Float32),
			implicit(y), graph.ConvertDType(implicit(yb), dtypes.Float32)}
	}
	for _, dims := range [][2]int{{37, 53}, {300, 53}, {200, 96}} {
		t.Run(fmt.Sprintf("%dx%d", dims[0], dims[1]), func(t *testing.T) {
			rows, cols := dims[0], dims[1]
			x, y := fusionInputs(rows * cols)
			for i := range x { // finite: a NaN row would hide a wrong statistic
				if math.IsNaN(float64(x[i])) || math.IsInf(float64(x[i]), 0) || math.Abs(float64(x[i])) > 1e30 {
					x[i] = 0.5
				}
				if math.IsNaN(float64(y[i])) || math.IsInf(float64(y[i]), 0) || math.Abs(float64(y[i])) > 1e30 {
					y[i] = -0.25
				}
			}
			run := func(config string) ([][]float32, int64) {
				before := fusedRepeats.Load()
				res := runGraph(t, config, fn, func(backends.Backend) []any {
					return []any{tensors.FromFlatDataAndDimensions(x, rows, cols), tensors.FromFlatDataAndDimensions(y, rows, cols)}
				})
				return res, fusedRepeats.Load() - before
			}
			want, nw := run("ops_sequential,no_fusion")
			if nw != 0 {
				t.Fatalf("no_fusion read %d broadcasts through their operands", nw)
			}
			got, ng := run("ops_sequential")
			if ng < 10 {
				t.Errorf("%d repeated broadcasts read through their operands, want at least 10", ng)
			}
			sameBits(t, got, want)
		})
	}
}

// TestFusionDirectBF16Inputs checks bfloat16 programs whose bfloat16 inputs
// only Add, Sub, Mul and Div read, which read them where they are with
// AVX-512 (vecBinaryWiden): every operand form (both inputs, an input and
// an intermediate either way round, an input and a scalar either way
// round), truncated and last results, against the unfused executors bit for
// bit, with and without AVX-512, at lengths off the 16-lane steps.
func TestFusionDirectBF16Inputs(t *testing.T) {
	ops := []func(x, y *graph.Node) *graph.Node{graph.Add, graph.Sub, graph.Mul, graph.Div}
	fn := func(x, y, z, s *graph.Node) []*graph.Node {
		// (z is read by Mul and Sub alone: every program reads it where
		// it is; the intermediates Mul(z, z) and Mul(z, y) are each read
		// once, inside the program.)
		var outs []*graph.Node
		for _, op := range ops {
			outs = append(outs,
				graph.Sub(op(x, y), z),               // both inputs, truncated; an intermediate and an input, last
				op(op(x, graph.Mul(z, z)), y),        // an input and an intermediate, truncated; the reverse, last
				graph.Mul(op(x, s), z),               // an input and a scalar, truncated
				graph.Mul(op(s, y), z),               // a scalar and an input, truncated
				op(x, graph.Mul(z, y)),               // an input and an intermediate, last
				graph.Mul(op(graph.Mul(z, z), y), x), // an intermediate and an input, truncated
			)
		}
		return outs
	}
	defer func(v bool) { hasVecAVX512 = v }(hasVecAVX512)
	for _, vec := range []bool{hasVecAVX512, false} {
		hasVecAVX512 = vec
		for _, n := range []int{37 * 53, 300 * 301} {
			t.Run(fmt.Sprintf("avx512=%v/n=%d", vec, n), func(t *testing.T) {
				xf, yf := fusionInputs(n)
				zf, _ := fusionInputs(n)
				x, y, z := make([]bfloat16.BFloat16, n), make([]bfloat16.BFloat16, n), make([]bfloat16.BFloat16, n)
				for i := range xf {
					x[i], y[i], z[i] = bfloat16.FromFloat32(xf[i]), bfloat16.FromFloat32(yf[i]), bfloat16.FromFloat32(zf[(i*7)%n])
				}
				run := func(config string) [][]float32 {
					return runGraph(t, config, fn, func(backends.Backend) []any {
						return []any{tensors.FromFlatDataAndDimensions(x, n), tensors.FromFlatDataAndDimensions(y, n),
							tensors.FromFlatDataAndDimensions(z, n), bfloat16.FromFloat32(-1.375)}
					})
				}
				want := run("ops_sequential,no_fusion")
				before := fusedDirectInputs.Load()
				got := run("ops_sequential")
				if d := fusedDirectInputs.Load() - before; d < int64(2*len(ops)) {
					t.Errorf("%d inputs read where they are, want at least %d", d, 2*len(ops))
				}
				sameBits(t, got, want)
			})
		}
	}
}
