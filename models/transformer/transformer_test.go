package transformer

import (
	stdcontext "context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"slices"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/models/text"
	"github.com/gotrain/gotrain/train"
)

var (
	backendOnce sync.Once
	testBackend backends.Backend
	backendErr  error
)

// goBackend is simplego as the harness opens it, shared by the tests.
func goBackend(t *testing.T) backends.Backend {
	t.Helper()
	backendOnce.Do(func() {
		_, testBackend, backendErr = device.Open("go")
	})
	if backendErr != nil {
		t.Fatal(backendErr)
	}
	return testBackend
}

// tinyArch is a small model for fast tests.
func tinyArch(attention, ffn string) Arch {
	return Arch{Layers: 2, Heads: 2, Width: 8, Context: 6, Hidden: 12, Attention: attention, FFN: ffn}
}

// randomModel returns a model of arch (vocabulary of text) with freshly
// initialised weights.
func randomModel(t *testing.T, arch Arch, corpus string, seed int64) *Model {
	t.Helper()
	b := goBackend(t)
	v, err := text.NewVocab(corpus)
	if err != nil {
		t.Fatal(err)
	}
	arch = arch.withDefaults()
	arch.Vocab = v.Size()
	ctx := context.New().Checked(false)
	ctx.SetParam(context.ParamInitialSeed, seed)
	if err := ctx.ResetRNGState(); err != nil {
		t.Fatal(err)
	}
	if err := setMeta(ctx, v, arch); err != nil {
		t.Fatal(err)
	}
	if _, err := initParams(b, ctx, arch); err != nil {
		t.Fatal(err)
	}
	m, err := NewModel(b, ctx)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// fullLogits runs the uncached forward pass on one window of ids.
func fullLogits(t *testing.T, m *Model, ids []int) [][]float32 {
	t.Helper()
	x := make([]float32, len(ids))
	for i, id := range ids {
		x[i] = float32(id)
	}
	var out [][]float32
	err := train.Catch(func() {
		e, err := context.NewExec(m.backend, m.ctx.Reuse(), func(ctx *context.Context, ids *graph.Node) *graph.Node {
			return m.Arch.Logits(ctx, ids)
		})
		if err != nil {
			panic(err)
		}
		res, err := e.Exec(tensors.FromFlatDataAndDimensions(x, 1, len(ids)))
		if err != nil {
			panic(err)
		}
		flat := tensors.MustCopyFlatData[float32](res[0])
		for i := range ids {
			out = append(out, flat[i*m.Arch.Vocab:(i+1)*m.Arch.Vocab])
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCausalMask(t *testing.T) {
	for _, att := range []string{AttentionSoftmax, AttentionPoly} {
		t.Run(att, func(t *testing.T) {
			m := randomModel(t, tinyArch(att, FFNSwiGLU), "abcdef", 3)
			a := fullLogits(t, m, []int{0, 1, 2, 3, 4, 5})
			b := fullLogits(t, m, []int{0, 1, 2, 3, 4, 0}) // the last token changed
			for pos := 0; pos < 5; pos++ {
				for j := range a[pos] {
					if a[pos][j] != b[pos][j] {
						t.Fatalf("position %d logit %d changed (%g -> %g) when a later token changed: the future leaks", pos, j, a[pos][j], b[pos][j])
					}
				}
			}
			diff := 0.0
			for j := range a[5] {
				diff = math.Max(diff, math.Abs(float64(a[5][j]-b[5][j])))
			}
			if diff == 0 {
				t.Fatal("the changed position's logits did not change")
			}
		})
	}
}

// execGraph runs fn on constant inputs and returns its flat float32 output.
func execGraph(t *testing.T, fn func(g *graph.Graph) *graph.Node) []float32 {
	t.Helper()
	var out []float32
	err := train.Catch(func() {
		e, err := graph.NewExec(goBackend(t), func(g *graph.Graph) *graph.Node { return fn(g) })
		if err != nil {
			panic(err)
		}
		res, err := e.Exec()
		if err != nil {
			panic(err)
		}
		out = tensors.MustCopyFlatData[float32](res[0])
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func near(t *testing.T, what string, got []float32, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if math.Abs(float64(got[i])-want[i]) > tol*math.Max(1, math.Abs(want[i])) {
			t.Fatalf("%s[%d] = %.7g, want %.7g (all: %v)", what, i, got[i], want[i], got)
		}
	}
}

func TestAttentionHandComputed(t *testing.T) {
	// One batch, one head, two positions, head width 2.
	q := [][]float64{{1, 0}, {0, 2}}
	k := [][]float64{{1, 1}, {2, -1}}
	v := [][]float64{{1, 2}, {3, -1}}
	s := func(i, j int) float64 { return (q[i][0]*k[j][0] + q[i][1]*k[j][1]) / math.Sqrt2 }
	phi := func(x float64) float64 { return 1 + x + x*x/2 }
	for _, tc := range []struct {
		kind string
		w    func(i, j int) float64
	}{
		{AttentionSoftmax, func(i, j int) float64 {
			if j > i {
				return 0
			}
			den := 0.0
			for jj := 0; jj <= i; jj++ {
				den += math.Exp(s(i, jj))
			}
			return math.Exp(s(i, j)) / den
		}},
		{AttentionPoly, func(i, j int) float64 {
			if j > i {
				return 0
			}
			den := PolyEpsilon
			for jj := 0; jj <= i; jj++ {
				den += phi(s(i, jj))
			}
			return phi(s(i, j)) / den
		}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			var want []float64
			for i := range 2 {
				for d := range 2 {
					want = append(want, tc.w(i, 0)*v[0][d]+tc.w(i, 1)*v[1][d])
				}
			}
			got := execGraph(t, func(g *graph.Graph) *graph.Node {
				c := func(m [][]float64) *graph.Node {
					return graph.Reshape(graph.Const(g, []float32{float32(m[0][0]), float32(m[0][1]), float32(m[1][0]), float32(m[1][1])}), 1, 2, 1, 2)
				}
				return attend(tc.kind, c(q), c(k), c(v), graph.Reshape(CausalMask(g, 2), 1, 1, 2, 2))
			})
			near(t, tc.kind, got, want, 1e-5)
		})
	}
}

func TestPolyKernelPositive(t *testing.T) {
	got := execGraph(t, func(g *graph.Graph) *graph.Node {
		return PolyKernel(graph.Const(g, []float32{-1e3, -3, -1, 0, 1, 2}))
	})
	near(t, "phi", got, []float64{1 - 1e3 + 5e5, 1 - 3 + 4.5, 0.5, 1, 2.5, 5}, 1e-6)
}

// ffnCase sets the feed-forward weights of scope "ffn" and runs it on x [1, 2].
func ffnCase(t *testing.T, kind string, x []float32, w1, w3, w2 [][]float32, beta, nu float32) []float32 {
	t.Helper()
	arch := Arch{Vocab: 1, Layers: 1, Heads: 1, Width: 2, Context: 1, Hidden: 2, FFN: kind}.withDefaults()
	ctx := context.New().Checked(false)
	c := ctx.In("ffn")
	c.VariableWithValue("w1", w1)
	c.VariableWithValue("w3", w3)
	c.VariableWithValue("w2", w2)
	// RichardsShape(raw) = softplus(raw) clamped: raw = log(e^v − 1).
	c.VariableWithValue("beta_raw", fill(2, float32(math.Log(math.Expm1(float64(beta))))))
	c.VariableWithValue("nu_raw", fill(2, float32(math.Log(math.Expm1(float64(nu))))))
	var out []float32
	err := train.Catch(func() {
		e, err := context.NewExec(goBackend(t), ctx, func(ctx *context.Context, xs *graph.Node) *graph.Node {
			return arch.ffn(ctx.In("ffn"), xs, dtypes.Float32)
		})
		if err != nil {
			panic(err)
		}
		res, err := e.Exec(tensors.FromFlatDataAndDimensions(x, 1, 2))
		if err != nil {
			panic(err)
		}
		out = tensors.MustCopyFlatData[float32](res[0])
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestFFNHandComputed(t *testing.T) {
	x := []float32{1, -2}
	w1 := [][]float32{{0.5, -1}, {0.25, 0.5}}
	w3 := [][]float32{{1, 2}, {-1, 0.5}}
	w2 := [][]float32{{1, 0}, {0.5, -1}}
	matvec := func(w [][]float32) []float64 {
		return []float64{float64(x[0]*w[0][0] + x[1]*w[1][0]), float64(x[0]*w[0][1] + x[1]*w[1][1])}
	}
	a, b := matvec(w1), matvec(w3)
	want := func(act func(float64) float64) []float64 {
		h := []float64{act(a[0]) * b[0], act(a[1]) * b[1]}
		return []float64{h[0]*float64(w2[0][0]) + h[1]*float64(w2[1][0]), h[0]*float64(w2[0][1]) + h[1]*float64(w2[1][1])}
	}
	swish := func(z float64) float64 { return z / (1 + math.Exp(-z)) }
	richards := func(beta, nu float64) func(float64) float64 {
		return func(z float64) float64 { return z * math.Pow(1+math.Exp(-beta*z), -1/nu) }
	}
	for _, tc := range []struct {
		name, kind string
		beta, nu   float32
		act        func(float64) float64
	}{
		{"swiglu", FFNSwiGLU, 1, 1, swish},
		{"richards beta=nu=1 is swiglu", FFNRichards, 1, 1, swish},
		{"richards beta=2 nu=0.5", FFNRichards, 2, 0.5, richards(2, 0.5)},
		{"richards beta=0.3 nu=4", FFNRichards, 0.3, 4, richards(0.3, 4)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			near(t, tc.name, ffnCase(t, tc.kind, x, w1, w3, w2, tc.beta, tc.nu), want(tc.act), 1e-5)
		})
	}
}

func TestRichardsExtremeInputsFinite(t *testing.T) {
	xs := []float32{-3e38, -1e30, -1e4, -88, -1, 0, 1, 88, 1e4, 1e30, 3e38}
	for _, dt := range []dtypes.DType{dtypes.Float32, dtypes.BFloat16} {
		for _, shape := range [][2]float32{{-50, -50}, {50, 50}, {-50, 50}, {50, -50}, {0, 0}} {
			got := execGraph(t, func(g *graph.Graph) *graph.Node {
				x := graph.ConvertDType(graph.Const(g, xs), dt)
				beta := graph.ConvertDType(RichardsShape(graph.Const(g, fill(len(xs), shape[0]))), dt)
				nu := graph.ConvertDType(RichardsShape(graph.Const(g, fill(len(xs), shape[1]))), dt)
				r := RichardsGate(x, beta, nu)
				return graph.ConvertDType(graph.Concatenate([]*graph.Node{r, graph.Mul(x, r)}, 0), dtypes.Float32)
			})
			for i, v := range got {
				f := float64(v)
				if math.IsNaN(f) || math.IsInf(f, 0) {
					t.Fatalf("%s, raw shape %v: output %d (x = %g) is %g", dt, shape, i, xs[i%len(xs)], f)
				}
				if i < len(xs) && (f < 0 || f > 1) {
					t.Fatalf("%s, raw shape %v: gate(%g) = %g, outside [0, 1]", dt, shape, xs[i], f)
				}
			}
		}
	}
	// The shape parameters stay in range whatever the raw value.
	got := execGraph(t, func(g *graph.Graph) *graph.Node {
		return RichardsShape(graph.Const(g, []float32{-1e30, -5, 0, 5, 1e30}))
	})
	near(t, "shape", got, []float64{RichardsMin, RichardsMin, math.Log(2), 5.006715348, RichardsMax}, 1e-5)
}

func TestKVCacheEqualsFullRecomputation(t *testing.T) {
	corpus := "abcdefghij"
	for _, tc := range []struct{ att, ffn string }{{AttentionSoftmax, FFNSwiGLU}, {AttentionPoly, FFNRichards}} {
		t.Run(tc.att+"/"+tc.ffn, func(t *testing.T) {
			m := randomModel(t, tinyArch(tc.att, tc.ffn), corpus, 5)
			// 16 tokens with a context of 6: the window slides twice.
			ids := []int{1, 4, 2, 8, 5, 7, 0, 3, 9, 6, 2, 2, 5, 1, 8, 4}
			cached, err := m.trace(ids, false)
			if err != nil {
				t.Fatal(err)
			}
			full, err := m.trace(ids, true)
			if err != nil {
				t.Fatal(err)
			}
			for i := range ids {
				for j := range full[i] {
					if d := math.Abs(float64(cached[i][j] - full[i][j])); d > 1e-5 {
						t.Fatalf("token %d logit %d: cached %g, full %g", i, j, cached[i][j], full[i][j])
					}
				}
			}
			// The first window's logits equal the training forward pass's.
			direct := fullLogits(t, m, ids[:6])
			for i := range direct {
				for j := range direct[i] {
					if d := math.Abs(float64(cached[i][j] - direct[i][j])); d > 1e-5 {
						t.Fatalf("token %d logit %d: cached %g, forward %g", i, j, cached[i][j], direct[i][j])
					}
				}
			}
		})
	}
}

// maskedBackend is simplego with one operation masked out of its capabilities.
type maskedBackend struct {
	backends.Backend
	drop backends.OpType
}

// Finalize leaves the shared backend open (the stub does not own it).
func (m maskedBackend) Finalize() {}

func (m maskedBackend) Capabilities() backends.Capabilities {
	c := m.Backend.Capabilities().Clone()
	delete(c.Operations, m.drop)
	return c
}

func TestRequiredOpsFromBuiltModel(t *testing.T) {
	for _, tc := range []struct{ att, ffn, norm string }{
		{AttentionSoftmax, FFNSwiGLU, NormRMS}, {AttentionPoly, FFNRichards, NormLayer},
	} {
		ops, err := RequiredOps(Arch{Attention: tc.att, FFN: tc.ffn, Norm: tc.norm})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s/%s/%s: %v", tc.att, tc.ffn, tc.norm, ops)
		names := map[string]bool{}
		for _, op := range ops {
			names[op.String()] = true
		}
		for _, want := range []string{"DotGeneral", "Exp", "Log", "ReduceSum", "Iota", "Sqrt"} {
			if !names[want] {
				t.Errorf("%v: %s missing from %v", tc, want, ops)
			}
		}
		if tc.ffn == FFNSwiGLU && !names["Logistic"] {
			t.Errorf("swiglu uses the logistic: %v", ops)
		}
		if tc.ffn == FFNRichards && !names["Log1p"] {
			t.Errorf("richards uses log1p: %v", ops)
		}
		// Every recorded op is one that simplego offers (the model builds there).
		if err := CheckBackend(goBackend(t), Arch{Attention: tc.att, FFN: tc.ffn, Norm: tc.norm}, train.Precision32); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCheckBackendStubMissingOp(t *testing.T) {
	b := goBackend(t)
	stub := maskedBackend{Backend: b, drop: backends.OpTypeDotGeneral}
	arch := Arch{}
	err := CheckBackend(stub, arch, train.Precision32)
	var miss *MissingError
	if !errors.As(err, &miss) || len(miss.Ops) != 1 || miss.Ops[0] != "DotGeneral" {
		t.Fatalf("CheckBackend on a backend without DotGeneral: %v", err)
	}
	// Without --fallback: an error listing the op.
	_, _, err = PrepareBackend(stub, arch, train.Precision32, false, nil)
	if err == nil || !strings.Contains(err.Error(), "DotGeneral") || !strings.Contains(err.Error(), "allow a fallback") || strings.Contains(err.Error(), "--") {
		t.Fatalf("PrepareBackend without fallback: %v", err)
	}
	// With --fallback: the fallback backend and one warning line.
	got, warn, err := PrepareBackend(stub, arch, train.Precision32, true, func() (backends.Backend, error) { return b, nil })
	if err != nil || got != b || !strings.Contains(warn, "DotGeneral") || strings.Contains(warn, "\n") {
		t.Fatalf("PrepareBackend with fallback: %v, %q, %v", got, warn, err)
	}
	// A fallback that lacks the op too fails.
	_, _, err = PrepareBackend(stub, arch, train.Precision32, true, func() (backends.Backend, error) {
		return maskedBackend{Backend: b, drop: backends.OpTypeExp}, nil
	})
	if err == nil || !strings.Contains(err.Error(), "Exp") {
		t.Fatalf("fallback lacking Exp: %v", err)
	}
	// Missing dtype under bf16-mixed.
	bf := dtypeMasked{Backend: b}
	if err := CheckBackend(bf, arch, train.PrecisionBF16Mixed); !errors.As(err, &miss) || len(miss.DTypes) != 1 || miss.DTypes[0] != "BFloat16" {
		t.Fatalf("bf16 check: %v", err)
	}
}

// dtypeMasked is simplego without bfloat16.
type dtypeMasked struct{ backends.Backend }

func (m dtypeMasked) Capabilities() backends.Capabilities {
	c := m.Backend.Capabilities().Clone()
	delete(c.DTypes, dtypes.BFloat16)
	return c
}

// testConfig is a harness configuration for tiny runs.
func testConfig(t *testing.T) train.Config {
	cfg := train.DefaultConfig()
	cfg.CheckpointDir = t.TempDir()
	cfg.LearningRate = 0.01
	cfg.Progress = "off"
	cfg.WeightDecay = 0
	cfg.LogEvery = 1000
	return cfg
}

func TestMemorisesTinyCorpus(t *testing.T) {
	cfg := testConfig(t)
	cfg.NoCheckpoint = true
	res, err := Train(stdcontext.Background(), goBackend(t), Options{Arch: tinyArch(AttentionSoftmax, FFNSwiGLU), PretrainText: strings.Repeat("abcdefghijklmnopqrstuvwxyz0123456789 ", 4),
		Pretrain: Phase{Steps: 300, BatchSize: 16}, Stride: 1, ValFraction: -1, Train: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("training loss %.4f after 300 steps (first step %.4f)", res.Pretrain.Train.Loss, res.Pretrain.FirstLoss)
	if l := res.Pretrain.Train.Loss; l > 0.05 || res.Pretrain.FirstLoss < 2 {
		t.Fatalf("training loss %g after 300 steps (first %g): want < 0.05, from > 2", l, res.Pretrain.FirstLoss)
	}
}

const pretrainText = "a cat and a dog sat in the sun by a tree; a fish swam in the rain. the bird saw the milk, the rock, " +
	"the leaf and the star. a bell rang at the door; the lamp lit the ship. the wolf, the rose and the king " +
	"walked on the sand in the wind. gold frogs ate corn by the nest. the moon and the bear sat. "

func TestInstructionTuningLowersHeldOutResponseLoss(t *testing.T) {
	b := goBackend(t)
	train1, err := LoadInstructions(filepath.Join("testdata", "instructions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	held, err := LoadInstructions(filepath.Join("testdata", "heldout.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	arch := Arch{Layers: 2, Heads: 2, Width: 16, Context: 16}
	cfg := testConfig(t)
	opts := Options{Arch: arch, PretrainText: strings.Repeat(pretrainText, 2), Pretrain: Phase{Steps: 60, BatchSize: 16},
		Instructions: train1, Instruct: Phase{Steps: 60, BatchSize: 8}, Stride: 2, ValFraction: -1, Train: cfg}
	res, err := Train(stdcontext.Background(), b, opts)
	if err != nil {
		t.Fatal(err)
	}
	pre, err := Load(b, PhaseDir(cfg.CheckpointDir, "pretrain"))
	if err != nil {
		t.Fatal(err)
	}
	post, err := Load(b, cfg.CheckpointDir) // the instruction phase's newest
	if err != nil {
		t.Fatal(err)
	}
	if post.Step != 60 || !post.Vocab.Equal(res.Vocab) {
		t.Fatalf("loaded the wrong checkpoint: step %d", post.Step)
	}
	hx, hy, _, err := InstructionRows(res.Vocab, held, res.Arch.Context)
	if err != nil {
		t.Fatal(err)
	}
	before, err := EvalLoss(b, pre.ctx, pre.Arch, hx, hy, 8)
	if err != nil {
		t.Fatal(err)
	}
	after, err := EvalLoss(b, post.ctx, post.Arch, hx, hy, 8)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("held-out response loss: %.4f before instruction tuning, %.4f after (training examples: %.4f -> %.4f)",
		before, after, res.ResponseLossBefore, res.ResponseLossAfter)
	if !(after < before-0.1) {
		t.Fatalf("held-out response loss %.4f after instruction tuning, %.4f before: want it lower by more than 0.1", after, before)
	}
	if !(res.ResponseLossAfter < res.ResponseLossBefore) {
		t.Fatalf("training response loss %.4f -> %.4f: want lower", res.ResponseLossBefore, res.ResponseLossAfter)
	}
}

// weights returns the model's variables (scope/name -> flat values).
func weights(t *testing.T, ctx *context.Context) map[string][]float32 {
	t.Helper()
	out := map[string][]float32{}
	for v := range ctx.IterVariables() {
		if !strings.HasPrefix(v.Scope(), Scope+"/") {
			continue
		}
		tv, err := v.Value()
		if err != nil {
			t.Fatal(err)
		}
		out[v.ScopeAndName()] = tensors.MustCopyFlatData[float32](tv)
	}
	return out
}

func TestResumeContinuesTheSameRun(t *testing.T) {
	exs, err := LoadInstructions(filepath.Join("testdata", "instructions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	base := func(t *testing.T, preSteps, instSteps int) Options {
		return Options{Arch: tinyArch(AttentionPoly, FFNRichards), PretrainText: pretrainText, Pretrain: Phase{Steps: preSteps, BatchSize: 8},
			Instructions: exs, Instruct: Phase{Steps: instSteps, BatchSize: 4}, Stride: 3, ValFraction: -1, Train: testConfig(t)}
	}
	full, err := Train(stdcontext.Background(), goBackend(t), base(t, 6, 4))
	if err != nil {
		t.Fatal(err)
	}
	want := weights(t, full.Context)
	for _, tc := range []struct {
		name                string
		preFirst, instFirst int
		wantPreSkipped      bool
		wantInstructResumed int64
		wantPretrainResumed int64
	}{
		{"during pretraining", 3, 0, false, 0, 3},
		{"during instruction tuning", 6, 2, true, 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := base(t, tc.preFirst, tc.instFirst)
			if tc.instFirst == 0 {
				o.Instruct = Phase{} // stopped before instruction tuning (same data, so the same vocabulary)
			}
			if _, err := Train(stdcontext.Background(), goBackend(t), o); err != nil {
				t.Fatal(err)
			}
			o2 := base(t, 6, 4)
			o2.Train.CheckpointDir = o.Train.CheckpointDir
			o2.Train.Resume = true
			got, err := Train(stdcontext.Background(), goBackend(t), o2)
			if err != nil {
				t.Fatal(err)
			}
			if (got.Pretrain.Skipped != "") != tc.wantPreSkipped || got.Instruct.Train.Resumed != tc.wantInstructResumed ||
				got.Pretrain.Train.Resumed != tc.wantPretrainResumed {
				t.Fatalf("pretrain %+v, instruct %+v", got.Pretrain, got.Instruct)
			}
			gw := weights(t, got.Context)
			if len(gw) != len(want) {
				t.Fatalf("%d variables, want %d", len(gw), len(want))
			}
			for k, w := range want {
				g := gw[k]
				for i := range w {
					if g[i] != w[i] {
						t.Fatalf("%s[%d] = %g after resuming, %g uninterrupted", k, i, g[i], w[i])
					}
				}
			}
		})
	}
}

func TestBadInstructionLines(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"not JSON", `{"prompt": "a", "response": "b"}` + "\n" + `{"prompt": "a", `, ":2: not a JSON object"},
		{"missing response", `{"prompt": "a"}`, `:1: field "response" is missing`},
		{"missing prompt", "\n" + `{"response": "b"}`, `:2: field "prompt" is missing`},
		{"number", `{"prompt": 3, "response": "b"}`, `:1: field "prompt": want a string, got 3`},
		{"unknown field", `{"prompt": "a", "response": "b", "answer": "c"}`, `:1: field "answer" is unknown`},
		{"empty response", `{"prompt": "a", "response": ""}`, `:1: field "response" is empty`},
		{"array", `["a", "b"]`, ":1: not a JSON object"},
		{"empty file", "\n\n", "no examples"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "bad.jsonl")
			if err := os.WriteFile(p, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadInstructions(p)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
				t.Fatalf("error %v, want one naming %s and containing %q", err, p, tc.want)
			}
		})
	}
}

func TestInstructionRowsMaskThePrompt(t *testing.T) {
	v, err := text.NewVocab("abcxy:")
	if err != nil {
		t.Fatal(err)
	}
	id := func(s string) float32 {
		ids, _ := v.Encode(s)
		return float32(ids[0])
	}
	x, y, n, err := InstructionRows(v, []Example{{Prompt: "ab:", Response: "xy"}, {Prompt: "abcab:", Response: "xy"}}, 4)
	if err != nil || n != 2 {
		t.Fatal(n, err)
	}
	// Example 1: "ab:xy" fits: x = a b : x, y = - - x y.
	wantX := []float32{id("a"), id("b"), id(":"), id("x")}
	wantY := []float32{-1, -1, id("x"), id("y")}
	// Example 2: "abcab:xy" keeps its last 5: "ab:xy".
	wantX = append(wantX, id("a"), id("b"), id(":"), id("x"))
	wantY = append(wantY, -1, -1, id("x"), id("y"))
	if !slices.Equal(x, wantX) || !slices.Equal(y, wantY) {
		t.Fatalf("x %v y %v, want %v %v", x, y, wantX, wantY)
	}
	if _, _, _, err := InstructionRows(v, []Example{{Prompt: "ab", Response: "z!"}}, 4); err == nil || !strings.Contains(err.Error(), `'z'`) {
		t.Fatalf("unknown characters: %v", err)
	}
}

func TestSampleReproducibleAndChecked(t *testing.T) {
	m := randomModel(t, tinyArch(AttentionSoftmax, FFNRichards), "abcdefgh ", 9)
	s1, err := m.Sample(SampleOptions{Prompt: "abc", Length: 20, Temperature: 1, TopK: 4, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := m.Sample(SampleOptions{Prompt: "abc", Length: 20, Temperature: 1, TopK: 4, Seed: 7})
	s3, _ := m.Sample(SampleOptions{Prompt: "abc", Length: 20, Temperature: 1, TopK: 4, Seed: 8})
	if s1 != s2 || len([]rune(s1)) != 20 {
		t.Fatalf("same seed, different text: %q %q", s1, s2)
	}
	if s1 == s3 {
		t.Errorf("seeds 7 and 8 gave the same 20 characters %q", s1)
	}
	// Temperature 0 is the argmax, whatever the seed, and the cache changes nothing.
	g1, _ := m.Sample(SampleOptions{Prompt: "abc", Length: 15, Seed: 1})
	g2, _ := m.Sample(SampleOptions{Prompt: "abc", Length: 15, Seed: 2, NoCache: true})
	if g1 != g2 {
		t.Fatalf("greedy: %q cached, %q uncached", g1, g2)
	}
	if _, err := m.Sample(SampleOptions{Prompt: "abQz!", Length: 3}); err == nil || !strings.Contains(err.Error(), `'Q', 'z', '!'`) {
		t.Fatalf("unknown prompt characters: %v", err)
	}
}

func TestArchValidate(t *testing.T) {
	for _, tc := range []struct {
		a    Arch
		want string
	}{
		{Arch{Vocab: 3, Layers: 1, Heads: 3, Width: 8, Context: 4}, "multiple"},
		{Arch{Vocab: 3, Layers: 0, Heads: 1, Width: 8, Context: 4}, ">= 1"},
		{Arch{Vocab: 3, Layers: 1, Heads: 1, Width: 8, Context: 4, Attention: "linear"}, "Attention \"linear\""},
		{Arch{Vocab: 3, Layers: 1, Heads: 1, Width: 8, Context: 4, FFN: "gelu"}, "FFN \"gelu\""},
		{Arch{Vocab: 3, Layers: 1, Heads: 1, Width: 8, Context: 4, Norm: "batch"}, "Norm \"batch\""},
	} {
		if err := tc.a.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.a, err, tc.want)
		}
	}
	if got := (Arch{Vocab: 91, Layers: 4, Heads: 4, Width: 128, Context: 64}).Params(); got != 811520 {
		t.Errorf("params %d, want 811520 (as the harness counted)", got)
	}
}

// TestLoadV1Checkpoint reads an instruction-tuned checkpoint written before
// the vocabulary moved to package text (gotrain lm transformer train, 1
// layer, 2 heads, width 8, context 12, 3 steps per phase) and checks that it
// samples what it sampled then.
func TestLoadV1Checkpoint(t *testing.T) {
	m, err := Load(goBackend(t), filepath.Join("testdata", "transformer-v1.gtc"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Step != 3 || m.Arch.Width != 8 || m.Arch.Context != 12 || m.Vocab.Size() != m.Arch.Vocab {
		t.Fatalf("step %d, arch %+v, vocabulary %d", m.Step, m.Arch, m.Vocab.Size())
	}
	got, err := m.Sample(SampleOptions{Prompt: "repeat cat:", Length: 12, Temperature: 1, Seed: 7})
	if err != nil || got != ".9q2bsruigyi" {
		t.Errorf("sample %q, %v; want %q (as sampled before the change)", got, err, ".9q2bsruigyi")
	}
}
