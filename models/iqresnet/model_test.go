package iqresnet

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/train"
)

// tinyArch is a small network for tests: windows of 16 samples, two
// stacks of 4 filters, three classes, no dropout.
func tinyArch() Arch {
	return Arch{Window: 16, Classes: 3, Stacks: 2, Filters: 4, Kernel: 3, Dense: 8}
}

// cpuBackend opens gotrain's cpu backend as the commands do.
func cpuBackend(t testing.TB) backends.Backend {
	t.Helper()
	_, be, err := device.Open("cpu")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(be.Finalize)
	return be
}

// randomWindows returns n windows of a's width, normal values.
func randomWindows(a Arch, n int, seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, 1))
	x := make([]float32, n*2*a.Window)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

func TestDefaultArch(t *testing.T) {
	a := DefaultArch(24)
	if err := a.Validate(); err != nil {
		t.Fatal(err)
	}
	// 6 stacks: 1x1 convolutions 96 + 5·1056, residual units 6·4·3104;
	// dense 512·128+128, 128·128+128, 128·24+24.
	if got := a.Params(); got != 165144 {
		t.Errorf("Params = %v, want 165144", got)
	}
	if a.flatLength() != 16 {
		t.Errorf("flat length %d, want 1024/2^6 = 16", a.flatLength())
	}
}

func TestArchValidate(t *testing.T) {
	for _, c := range []struct {
		mod  func(*Arch)
		want string
	}{
		{func(a *Arch) { a.Window = 1 }, "Window"},
		{func(a *Arch) { a.Window = 18 }, "multiple of 4"},
		{func(a *Arch) { a.Classes = 1 }, "Classes"},
		{func(a *Arch) { a.Stacks = 0 }, "Stacks"},
		{func(a *Arch) { a.Filters = 0 }, "Filters"},
		{func(a *Arch) { a.Dense = 0 }, "Dense"},
		{func(a *Arch) { a.Kernel = 2 }, "Kernel"},
		{func(a *Arch) { a.Dropout = 1 }, "Dropout"},
		{func(a *Arch) { a.Dropout = math.NaN() }, "Dropout"},
		{func(a *Arch) { a.Window, a.Filters = 1<<20, 4096 }, "MaxParams"},
	} {
		a := tinyArch()
		c.mod(&a)
		if err := a.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one naming %s", a, err, c.want)
		}
	}
}

// TestParamsMatchVariables builds the network and checks that its
// variables are the ones weightShapes lists, with Params elements in all.
func TestParamsMatchVariables(t *testing.T) {
	be := cpuBackend(t)
	for _, a := range []Arch{tinyArch(), {Window: 64, Classes: 5, Stacks: 3, Filters: 6, Kernel: 5, Dense: 7, Dropout: 0.2}} {
		ctx := context.New()
		ctx.SetParam(context.ParamInitialSeed, int64(1))
		e, err := context.NewExec(be, ctx, func(ctx *context.Context, x *graph.Node) *graph.Node { return a.Logits(ctx, x) })
		if err != nil {
			t.Fatal(err)
		}
		out, err := e.Exec(tensors.FromFlatDataAndDimensions(randomWindows(a, 5, 1), 5, 2*a.Window))
		if err != nil {
			t.Fatal(err)
		}
		if got := out[0].Shape().Dimensions; len(got) != 2 || got[0] != 5 || got[1] != a.Classes {
			t.Errorf("%+v: logits of shape %v, want [5 %d]", a, got, a.Classes)
		}
		n, count := 0, 0
		for v := range ctx.IterVariables() {
			if v.Trainable && strings.HasPrefix(v.Scope(), Scope) {
				n += v.Shape().Size()
				count++
			}
		}
		if float64(n) != a.Params() || count != len(a.weightShapes()) {
			t.Errorf("%+v: %d variables of %d values, want %d of %v", a, count, n, len(a.weightShapes()), a.Params())
		}
		for _, w := range a.weightShapes() {
			v := ctx.GetVariableByScopeAndName(w.scope, w.name)
			if v == nil || !equalInts(v.Shape().Dimensions, w.dims) {
				t.Errorf("%+v: %s/%s is %v, want %v", a, w.scope, w.name, v, w.dims)
			}
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestIm2colValueAndGradient checks im2col's value (out[b, t, k·C+j] =
// h[b, t+k−K/2, j], zero outside) and its gradient (each h[b, s, j] summing
// the columns it was copied to) against loops, for kernels 1, 3, 5 and 7
// (longer than the length), on gotrain's CPU backend and on simplego.
func TestIm2colValueAndGradient(t *testing.T) {
	const b, n, c = 2, 5, 3
	h := make([]float32, b*n*c)
	for i := range h {
		h[i] = float32(i + 1)
	}
	for _, dev := range []string{"cpu", "go"} {
		_, be, err := device.Open(dev)
		if err != nil {
			t.Fatal(err)
		}
		defer be.Finalize()
		for _, k := range []int{1, 3, 5, 7} {
			half := k / 2
			w := make([]float32, b*n*k*c)
			for i := range w {
				w[i] = float32(2*i - 7)
			}
			e, err := graph.NewExec(be, func(x, wt *graph.Node) (*graph.Node, *graph.Node) {
				y := im2col(x, k)
				grad := graph.Gradient(graph.ReduceAllSum(graph.Mul(y, wt)), x)[0]
				return y, grad
			})
			if err != nil {
				t.Fatal(err)
			}
			out, err := e.Exec(tensors.FromFlatDataAndDimensions(h, b, n, c), tensors.FromFlatDataAndDimensions(w, b, n, k*c))
			if err != nil {
				t.Fatalf("%s, kernel %d: %v", dev, k, err)
			}
			y, g := tensors.MustCopyFlatData[float32](out[0]), tensors.MustCopyFlatData[float32](out[1])
			wantG := make([]float32, len(h))
			for bb := range b {
				for tt := range n {
					for kk := range k {
						for cc := range c {
							i := ((bb*n+tt)*k+kk)*c + cc
							var want float32
							if s := tt + kk - half; s >= 0 && s < n {
								want = h[(bb*n+s)*c+cc]
								wantG[(bb*n+s)*c+cc] += w[i]
							}
							if y[i] != want {
								t.Fatalf("%s, kernel %d: value [%d %d %d] = %v, want %v", dev, k, bb, tt, kk*c+cc, y[i], want)
							}
						}
					}
				}
			}
			for i := range wantG {
				if g[i] != wantG[i] {
					t.Fatalf("%s, kernel %d: gradient %d = %v, want %v", dev, k, i, g[i], wantG[i])
				}
			}
		}
	}
}

// TestConvIsSameConvolution checks the convolution written as a product of
// shifted copies against the direct sum y[t,f] = b[f] + Σ_j Σ_c
// h[t+j−K/2, c]·W[j·C+c, f] with zero padding, for kernels 1, 3 and 5.
func TestConvIsSameConvolution(t *testing.T) {
	be := cpuBackend(t)
	const b, n, c = 2, 7, 3
	r := rand.New(rand.NewPCG(3, 4))
	h := make([]float32, b*n*c)
	for i := range h {
		h[i] = float32(r.NormFloat64())
	}
	for _, k := range []int{1, 3, 5} {
		a := Arch{Filters: 4, Kernel: k}
		ctx := context.New()
		ctx.SetParam(context.ParamInitialSeed, int64(2))
		e, err := context.NewExec(be, ctx, func(ctx *context.Context, x *graph.Node) *graph.Node {
			return a.conv(ctx.In("conv"), x, 0.5)
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Exec(tensors.FromFlatDataAndDimensions(h, b, n, c)); err != nil {
			t.Fatal(err)
		}
		// A non-zero bias, so that its broadcast is checked too.
		if err := ctx.In("conv").GetVariable("bias").SetValue(tensors.FromValue([]float32{1, -2, 3, 0.5})); err != nil {
			t.Fatal(err)
		}
		out, err := e.Exec(tensors.FromFlatDataAndDimensions(h, b, n, c))
		if err != nil {
			t.Fatal(err)
		}
		y := tensors.MustCopyFlatData[float32](out[0])
		wv, _ := ctx.In("conv").GetVariable("weights").Value()
		bv, _ := ctx.In("conv").GetVariable("bias").Value()
		W, B := tensors.MustCopyFlatData[float32](wv), tensors.MustCopyFlatData[float32](bv)
		for bb := range b {
			for tt := range n {
				for f := range a.Filters {
					want := float64(B[f])
					for j := range k {
						s := tt + j - k/2
						if s < 0 || s >= n {
							continue
						}
						for cc := range c {
							want += float64(h[(bb*n+s)*c+cc]) * float64(W[(j*c+cc)*a.Filters+f])
						}
					}
					if got := y[(bb*n+tt)*a.Filters+f]; math.Abs(float64(got)-want) > 1e-5 {
						t.Fatalf("kernel %d: y[%d %d %d] = %v, want %v", k, bb, tt, f, got, want)
					}
				}
			}
		}
	}
}

func TestPoolSeluAlphaDropout(t *testing.T) {
	be := cpuBackend(t)
	e, err := graph.NewExec(be, func(x *graph.Node) (*graph.Node, *graph.Node) {
		return maxPool2(graph.Reshape(x, 1, 4, 2)), selu(x)
	})
	if err != nil {
		t.Fatal(err)
	}
	in := []float32{1, -5, 3, 2, -1, -2, 0, 4}
	out, err := e.Exec(in)
	if err != nil {
		t.Fatal(err)
	}
	// [t][c]: (1,-5) (3,2) (-1,-2) (0,4): pairs of times, per channel.
	if got, want := tensors.MustCopyFlatData[float32](out[0]), []float32{3, 2, 0, 4}; !equal32(got, want) {
		t.Errorf("maxPool2 = %v, want %v", got, want)
	}
	for i, v := range tensors.MustCopyFlatData[float32](out[1]) {
		x := float64(in[i])
		want := SeluScale * x
		if x <= 0 {
			want = SeluScale * SeluAlpha * (math.Exp(x) - 1)
		}
		if math.Abs(float64(v)-want) > 1e-6 {
			t.Errorf("selu(%v) = %v, want %v", x, v, want)
		}
	}
	// Alpha dropout keeps a standard normal input's mean and variance and
	// sets about rate of the values to the saturation.
	const rate, m = 0.3, 200000
	ctx := context.New()
	ctx.SetParam(context.ParamInitialSeed, int64(7))
	if err := ctx.ResetRNGState(); err != nil {
		t.Fatal(err)
	}
	de, err := context.NewExec(be, ctx, func(ctx *context.Context, x *graph.Node) *graph.Node { return alphaDropout(ctx, x, rate) })
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 1))
	x := make([]float32, m)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	res, err := de.Exec(tensors.FromFlatDataAndDimensions(x, m))
	if err != nil {
		t.Fatal(err)
	}
	y := tensors.MustCopyFlatData[float32](res[0])
	sat := -SeluScale * SeluAlpha
	scale := 1 / math.Sqrt((1-rate)*(1+rate*sat*sat))
	low := scale*sat - scale*sat*rate
	var sum, sq float64
	dropped := 0
	for _, v := range y {
		sum += float64(v)
		sq += float64(v) * float64(v)
		if math.Abs(float64(v)-low) < 1e-5 {
			dropped++
		}
	}
	mean := sum / m
	variance := sq/m - mean*mean
	if math.Abs(mean) > 0.01 || math.Abs(variance-1) > 0.02 || math.Abs(float64(dropped)/m-rate) > 0.01 {
		t.Errorf("alpha dropout: mean %.4f, variance %.4f, dropped %.4f; want 0, 1, %v", mean, variance, float64(dropped)/m, rate)
	}
}

func equal32(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestOneStepLowersLoss trains on one fixed batch: the loss of the second
// step (after one update) is below the first's, and the first loss is
// near ln(Classes) (the initialisation keeps the logits small).
func TestOneStepLowersLoss(t *testing.T) {
	be := cpuBackend(t)
	a := tinyArch()
	const n = 12
	x := randomWindows(a, n, 5)
	y := make([]float32, n)
	for i := range y {
		y[i] = float32(i % a.Classes)
	}
	ds, err := train.NewDataset(x, 2*a.Window, y, 1, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	cfg := train.DefaultConfig()
	cfg.Optimizer, cfg.LearningRate, cfg.BatchSize, cfg.Steps, cfg.NoCheckpoint, cfg.Progress = train.OptimizerAdam, 0.01, n, 2, true, "off"
	h, err := train.New(be, cfg, a.ModelFn(), Loss, ds)
	if err != nil {
		t.Fatal(err)
	}
	l1, err := h.TrainStep()
	if err != nil {
		t.Fatal(err)
	}
	l2, err := h.TrainStep()
	if err != nil {
		t.Fatal(err)
	}
	if !(l2 < l1) {
		t.Errorf("loss %v after one step on the same batch, %v before", l2, l1)
	}
	if math.Abs(l1-math.Log(float64(a.Classes))) > 0.5 {
		t.Errorf("first loss %v, want near ln(%d) = %.3f", l1, a.Classes, math.Log(float64(a.Classes)))
	}
	if dt := train.ComputeDType(h.Context()); dt != dtypes.Float32 {
		t.Errorf("compute dtype %v", dt)
	}
}
