package cpubackend

import (
	"math"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/dtypes/bfloat16"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// bf16FusionGraph mixes the fusible bfloat16 operations: scalars, a bias
// broadcast explicitly and one broadcast implicitly ([1, n]), a shared
// intermediate and an intermediate that is also an output, and single
// operations. The outputs are widened to float32 (exactly).
func bf16FusionGraph(x, y, b, s *graph.Node) []*graph.Node {
	bf := func(v *graph.Node) *graph.Node { return graph.ConvertDType(v, dtypes.BFloat16) }
	x, y, b, s = bf(x), bf(y), bf(b), bf(s)
	d := x.Shape().Dimensions
	row := graph.Reshape(b, 1, d[1])
	bias := graph.BroadcastToShape(row, x.Shape())
	relu := graph.Max(graph.Add(x, bias), graph.ScalarZero(x.Graph(), x.DType()))
	implicit := graph.Mul(graph.Sub(x, row), graph.Add(y, s))
	shared := graph.Abs(y)
	mixed := graph.Div(graph.Add(graph.Min(x, shared), graph.Neg(s)), graph.AddScalar(shared, 0.5))
	grad := graph.Mul(graph.Sign(graph.Sub(x, y)), graph.Add(graph.Sign(y), shared))
	alone := graph.Sign(x)
	acts := graph.Add(graph.Mul(graph.Logistic(x), graph.Tanh(y)), graph.Sub(graph.Exp(graph.Neg(shared)), graph.Log(graph.AddScalar(shared, 1))))
	roots := graph.Sub(graph.Rsqrt(graph.AddScalar(graph.Abs(x), 1)), graph.Sqrt(graph.Abs(x)))
	out := graph.Add(graph.Add(graph.Add(relu, implicit), graph.Add(mixed, grad)), graph.Add(acts, roots))
	f := func(v *graph.Node) *graph.Node { return graph.ConvertDType(v, dtypes.Float32) }
	return []*graph.Node{f(out), f(mixed), f(alone), f(graph.Sub(shared, y)), f(graph.Logistic(y))}
}

// TestFusionBF16BitIdentical checks that bfloat16 chains give exactly the
// values of the unfused bfloat16 operations (GoMLX's executors: float32
// arithmetic, truncated to bfloat16 after every operation), specials
// included, on one goroutine and split over several.
func TestFusionBF16BitIdentical(t *testing.T) {
	for _, dims := range [][2]int{{37, 53}, {300, 301}} {
		rows, cols := dims[0], dims[1]
		x, y := fusionInputs(rows * cols)
		b := y[:cols]
		run := func(config string) ([][]float32, int) {
			before := fusedChains.Load()
			res := runGraph(t, config, bf16FusionGraph, func(backends.Backend) []any {
				return []any{tensors.FromFlatDataAndDimensions(x, rows, cols), tensors.FromFlatDataAndDimensions(y, rows, cols),
					tensors.FromFlatDataAndDimensions(b, cols), float32(0.25)}
			})
			return res, int(fusedChains.Load() - before)
		}
		want, nf := run("ops_sequential,no_fusion")
		if nf != 0 {
			t.Fatalf("no_fusion fused %d chains", nf)
		}
		got, nf := run("ops_sequential")
		if nf < 3 {
			t.Fatalf("%v: %d bfloat16 chains fused, want at least 3", dims, nf)
		}
		for k := range want {
			for i := range want[k] {
				a, w := got[k][i], want[k][i]
				if math.Float32bits(a) != math.Float32bits(w) && !(a != a && w != w) {
					t.Fatalf("%v output %d[%d]: fused %g (%#x), unfused %g (%#x)", dims, k, i, a, math.Float32bits(a), w, math.Float32bits(w))
				}
			}
		}
	}
}

// TestConvertBF16 checks the vector conversions against GoMLX's
// bfloat16 package, element by element, specials included and lengths off
// the 16-lane steps.
func TestConvertBF16(t *testing.T) {
	x, _ := fusionInputs(1000)
	x = append(x, float32(math.NaN()), float32(math.Inf(-1)), 1e-40, -1e-45, 3.3895314e38)
	for _, n := range []int{0, 1, 15, 16, 17, 100, len(x)} {
		src := x[:n]
		narrow := make([]uint16, n)
		narrowBF16Bits(narrow, src)
		wide := make([]float32, n)
		widenBF16(wide, narrow)
		tr := append([]float32(nil), src...)
		truncBF16(tr)
		for i, v := range src {
			want := bfloat16.FromFloat32(v)
			if narrow[i] != uint16(want) {
				t.Fatalf("n=%d: narrow(%g) = %#x, want %#x", n, v, narrow[i], uint16(want))
			}
			if math.Float32bits(wide[i]) != math.Float32bits(want.Float32()) {
				t.Fatalf("n=%d: widen(%#x) = %#x, want %#x", n, narrow[i], math.Float32bits(wide[i]), math.Float32bits(want.Float32()))
			}
			if math.Float32bits(tr[i]) != math.Float32bits(want.Float32()) {
				t.Fatalf("n=%d: trunc(%g) = %#x, want %#x", n, v, math.Float32bits(tr[i]), math.Float32bits(want.Float32()))
			}
		}
	}
}

// TestReduceBF16 checks bfloat16 ReduceSum (summed in float32, rounded
// once) against a float64 sum, and ReduceMax against the largest value,
// over leading, middle and trailing axes.
func TestReduceBF16(t *testing.T) {
	const d0, d1, d2 = 6, 257, 33
	x, _ := fusionInputs(d0 * d1 * d2)
	for i := range x {
		if math.IsNaN(float64(x[i])) || math.IsInf(float64(x[i]), 0) || math.Abs(float64(x[i])) > 1e30 {
			x[i] = 1
		}
		x[i] = bfloat16.FromFloat32(x[i]).Float32()
	}
	for _, axis := range []int{0, 1, 2} {
		fn := func(v *graph.Node) []*graph.Node {
			v = graph.ConvertDType(v, dtypes.BFloat16)
			return []*graph.Node{graph.ConvertDType(graph.ReduceSum(v, axis), dtypes.Float32), graph.ConvertDType(graph.ReduceMax(v, axis), dtypes.Float32)}
		}
		got := runGraph(t, "", fn, func(backends.Backend) []any { return []any{tensors.FromFlatDataAndDimensions(x, d0, d1, d2)} })
		dims := []int{d0, d1, d2}
		outDims := append([]int(nil), dims...)
		outDims[axis] = 1
		for i := range outDims[0] {
			for j := range outDims[1] {
				for k := range outDims[2] {
					var sum, abs float64
					mx := math.Inf(-1)
					for r := range dims[axis] {
						idx := [3]int{i, j, k}
						idx[axis] = r
						v := float64(x[(idx[0]*d1+idx[1])*d2+idx[2]])
						sum += v
						abs += math.Abs(v)
						mx = math.Max(mx, v)
					}
					o := (i*outDims[1]+j)*outDims[2] + k
					// float32 sums, then one truncation to bfloat16 (2⁻⁷ relative).
					if tol := math.Abs(sum)/128 + float64(dims[axis])*0x1p-23*abs; math.Abs(float64(got[0][o])-sum) > tol {
						t.Fatalf("axis %d: sum[%d] = %g, want %g ± %g", axis, o, got[0][o], sum, tol)
					}
					if float64(got[1][o]) != mx {
						t.Fatalf("axis %d: max[%d] = %g, want %g", axis, o, got[1][o], mx)
					}
				}
			}
		}
	}
}

// TestUnaryBF16Accuracy checks the bfloat16 Exp, Logistic and Tanh
// executors (gotrain's float32 kernels, truncated) against package math:
// within one bfloat16 unit of the exact value, below it (truncation).
func TestUnaryBF16Accuracy(t *testing.T) {
	x, _ := fusionInputs(4000)
	for i := range x {
		if math.IsNaN(float64(x[i])) || math.Abs(float64(x[i])) > 80 {
			x[i] = float32(i%160) - 80
		}
		x[i] = bfloat16.FromFloat32(x[i]).Float32()
	}
	fn := func(v *graph.Node) []*graph.Node {
		v = graph.ConvertDType(v, dtypes.BFloat16)
		f := func(v *graph.Node) *graph.Node { return graph.ConvertDType(v, dtypes.Float32) }
		return []*graph.Node{f(graph.Exp(v)), f(graph.Logistic(v)), f(graph.Tanh(v))}
	}
	got := runGraph(t, "no_fusion", fn, func(backends.Backend) []any { return []any{tensors.FromFlatDataAndDimensions(x, len(x))} })
	refs := []func(float64) float64{math.Exp, func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }, math.Tanh}
	for k, ref := range refs {
		for i, v := range x {
			want := ref(float64(v))
			g := float64(got[k][i])
			if math.IsInf(want, 1) && math.IsInf(g, 1) {
				continue
			}
			if d := math.Abs(g - want); d > math.Abs(want)*0x1p-7*1.01+1e-37 || math.Abs(g) > math.Abs(want)*(1+1e-6) {
				t.Fatalf("op %d of %g: %g, want %g (truncated: at most one bfloat16 unit below)", k, v, g, want)
			}
		}
	}
}

// TestBinaryBF16OnePass checks the bfloat16 programs of one Add, Sub, Mul
// or Div, run in one pass (binaryBF16), against the unfused executors bit
// for bit: operands whole or scalar on either side, specials included,
// lengths off the 16-lane steps and long enough to be split over the
// CPUs, with the AVX-512 loop and without it.
func TestBinaryBF16OnePass(t *testing.T) {
	ops := []func(x, y *graph.Node) *graph.Node{graph.Add, graph.Sub, graph.Mul, graph.Div}
	// The outputs stay bfloat16: a conversion after the operation would
	// join its program (a mixed one, not this one-pass path).
	fn := func(x, y, s *graph.Node) []*graph.Node {
		var outs []*graph.Node
		for _, op := range ops {
			outs = append(outs, op(x, y), op(s, y), op(x, s))
		}
		return outs
	}
	run := func(config string, x, y []bfloat16.BFloat16, s bfloat16.BFloat16) [][]float32 {
		return runGraph(t, config, fn, func(backends.Backend) []any {
			return []any{tensors.FromFlatDataAndDimensions(x, len(x)), tensors.FromFlatDataAndDimensions(y, len(y)), s}
		})
	}
	defer func(v bool) { hasVecAVX512 = v }(hasVecAVX512)
	for _, vec := range []bool{hasVecAVX512, false} {
		hasVecAVX512 = vec
		for _, n := range []int{37 * 53, 400 * 401} {
			xf, yf := fusionInputs(n)
			x, y := make([]bfloat16.BFloat16, n), make([]bfloat16.BFloat16, n)
			for i := range xf {
				x[i], y[i] = bfloat16.FromFloat32(xf[i]), bfloat16.FromFloat32(yf[i])
			}
			s := bfloat16.FromFloat32(-1.375)
			want := run("ops_sequential,no_fusion", x, y, s)
			before := oneBinaryBF16Runs.Load()
			got := run("ops_sequential", x, y, s)
			if runs := oneBinaryBF16Runs.Load() - before; runs != int64(3*len(ops)) {
				t.Fatalf("n=%d: %d programs ran in one pass, want %d", n, runs, 3*len(ops))
			}
			sameBits(t, got, want)
		}
	}
}
