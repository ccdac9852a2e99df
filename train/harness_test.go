package train

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/context/initializers"
	"github.com/gomlx/gomlx/pkg/ml/train/losses"
)

// mlp is a 2-layer MLP 4-16-1 with tanh; it computes in ComputeDType(ctx).
func mlp(ctx *context.Context, _ any, inputs []*graph.Node) []*graph.Node {
	x := inputs[0]
	g := x.Graph()
	dt := ComputeDType(ctx)
	w := func(scope, name string, dims ...int) *graph.Node {
		c := ctx.In(scope)
		if name == "b" {
			c = c.WithInitializer(initializers.Zero)
		}
		v := c.VariableWithShape(name, shapes.Make(dtypes.Float32, dims...)).ValueGraph(g)
		if dt != dtypes.Float32 {
			v = graph.ConvertDType(v, dt)
		}
		return v
	}
	h := graph.Tanh(graph.Add(graph.Dot(x, w("l1", "w", 4, 16)), graph.InsertAxes(w("l1", "b", 16), 0)))
	return []*graph.Node{graph.Dot(h, w("l2", "w", 16, 1))}
}

func synthData(t *testing.T, n int, nanLabels bool) *Dataset {
	t.Helper()
	r := rand.New(rand.NewPCG(7, 7))
	x := make([]float32, n*4)
	y := make([]float32, n)
	for i := range n {
		var s float32
		for j := range 4 {
			x[i*4+j] = float32(r.NormFloat64())
			s += x[i*4+j] * float32(j+1) / 4
		}
		y[i] = float32(math.Sin(float64(s)))
		if nanLabels {
			y[i] = float32(math.NaN())
		}
	}
	d, err := NewDataset(x, 4, y, 1, 3, true)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func testConfig(mod func(*Config)) Config {
	c := DefaultConfig()
	c.NoCheckpoint = true
	c.Steps = 3
	c.Optimizer = OptimizerAdam
	c.LearningRate = 0.01
	if mod != nil {
		mod(&c)
	}
	return c
}

func newHarness(t *testing.T, cfg Config, data *Dataset) *Harness {
	t.Helper()
	h, err := New(testBackend(t), cfg, mlp, losses.MeanSquaredError, data)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// weights returns every variable's values, keyed by scope/name.
func weights(t *testing.T, h *Harness) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for v := range h.Context().IterVariables() {
		if !v.HasValue() || isMetricsScope(v.Scope()) {
			continue
		}
		tv, err := v.Value()
		if err != nil {
			t.Fatal(err)
		}
		_ = tv.ConstBytes(func(b []byte) { out[v.ScopeAndName()] = append([]byte(nil), b...) })
	}
	return out
}

func floats(t *testing.T, h *Harness, scopeName string) []float32 {
	t.Helper()
	for v := range h.Context().IterVariables() {
		if v.ScopeAndName() == scopeName {
			return tensors.MustCopyFlatData[float32](v.MustValue())
		}
	}
	t.Fatalf("no variable %s", scopeName)
	return nil
}

// noisyMLP is mlp with Gaussian input noise drawn from the context's RNG,
// so a run depends on the RNG state.
func noisyMLP(ctx *context.Context, spec any, inputs []*graph.Node) []*graph.Node {
	x := inputs[0]
	noise := graph.MulScalar(ctx.RandomNormal(x.Graph(), x.Shape()), 0.1)
	return mlp(ctx, spec, []*graph.Node{graph.Add(x, noise)})
}

var trainables = []string{"/l1/w", "/l1/b", "/l2/w"}

func TestAccumulateEqualsBigBatch(t *testing.T) {
	for _, opt := range []string{OptimizerSGD, OptimizerAdam} {
		t.Run(opt, func(t *testing.T) {
			big := newHarness(t, testConfig(func(c *Config) { c.Optimizer, c.BatchSize, c.Steps = opt, 32, 1 }), synthData(t, 64, false))
			acc := newHarness(t, testConfig(func(c *Config) { c.Optimizer, c.BatchSize, c.Accumulate, c.Steps = opt, 8, 4, 1 }), synthData(t, 64, false))
			lb, err := big.TrainStep()
			if err != nil {
				t.Fatal(err)
			}
			la, err := acc.TrainStep()
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(la-lb) > 1e-5 {
				t.Errorf("loss: accumulated %g, big batch %g", la, lb)
			}
			if g1, g2 := big.GlobalStep(), acc.GlobalStep(); g1 != 1 || g2 != 1 {
				t.Errorf("global step: big %d, accumulated %d; want 1", g1, g2)
			}
			for _, name := range trainables {
				wb, wa := floats(t, big, name), floats(t, acc, name)
				for i := range wb {
					if d := math.Abs(float64(wb[i] - wa[i])); d > 1e-5 {
						t.Fatalf("%s[%d]: accumulated %g, big batch %g", name, i, wa[i], wb[i])
					}
				}
			}
		})
	}
}

func TestClipNormBoundsGlobalNorm(t *testing.T) {
	tests := []struct {
		clip     float64
		clipping bool
	}{{1e-3, true}, {0.05, true}, {1e6, false}}
	for _, tc := range tests {
		// SGD with lr 1: the weight change is minus the (clipped) gradient.
		h := newHarness(t, testConfig(func(c *Config) { c.Optimizer, c.LearningRate, c.ClipNorm, c.Steps = OptimizerSGD, 1, tc.clip, 1 }), synthData(t, 64, false))
		if _, err := h.TrainStep(); err != nil {
			t.Fatal(err)
		}
		raw, err := h.HarnessValue(GradNormVar)
		if err != nil {
			t.Fatal(err)
		}
		clipped, err := h.HarnessValue(ClippedGradNormVar)
		if err != nil {
			t.Fatal(err)
		}
		if clipped > tc.clip*(1+1e-5) {
			t.Errorf("clip %g: clipped norm %g exceeds it", tc.clip, clipped)
		}
		if tc.clipping && math.Abs(clipped-tc.clip) > tc.clip*1e-4 {
			t.Errorf("clip %g (raw norm %g): clipped norm %g, want the clip", tc.clip, raw, clipped)
		}
		if !tc.clipping && math.Abs(clipped-raw) > raw*1e-6 {
			t.Errorf("clip %g: norm %g changed to %g though below the clip", tc.clip, raw, clipped)
		}
	}
}

func TestTotalSteps(t *testing.T) {
	tests := []struct {
		steps, epochs, batch, accumulate, want int
	}{
		{5, 0, 16, 1, 5},
		{0, 1, 16, 1, 4},
		{0, 2, 16, 1, 8},
		{0, 2, 16, 2, 4},
		{0, 1, 24, 1, 2}, // a partial last batch is dropped
	}
	for _, tc := range tests {
		h := newHarness(t, testConfig(func(c *Config) {
			c.Steps, c.Epochs, c.BatchSize, c.Accumulate = tc.steps, tc.epochs, tc.batch, tc.accumulate
		}), synthData(t, 64, false))
		if got := h.TotalSteps(); got != tc.want {
			t.Errorf("%+v: %d steps", tc, got)
		}
	}
	_, err := New(testBackend(t), testConfig(func(c *Config) { c.BatchSize = 100 }), mlp, losses.MeanSquaredError, synthData(t, 64, false))
	if err == nil || !strings.Contains(err.Error(), "BatchSize 100 is larger than the data set (64 examples)") {
		t.Errorf("a batch larger than the data set: %v, want an error naming the BatchSize option", err)
	}
}

func TestStepFitsWithFindBatchSize(t *testing.T) {
	b := testBackend(t)
	data := synthData(t, 64, false)
	fits := StepFits(b, testConfig(nil), mlp, losses.MeanSquaredError, data)
	// Everything fits on the host: the finder reaches the limit.
	got, err := FindBatchSize(4, 48, fits)
	if err != nil || got != 48 {
		t.Errorf("FindBatchSize = %d, %v; want 48", got, err)
	}
	// A fake out-of-memory rule above 20 examples, on top of the real step.
	fake := func(n int) error {
		if n > 20 {
			return fmt.Errorf("%w: RESOURCE_EXHAUSTED: while trying to allocate", ErrOutOfMemory)
		}
		return fits(n)
	}
	if got, err := FindBatchSize(4, 64, fake); err != nil || got != 20 {
		t.Errorf("FindBatchSize with fake OOM = %d, %v; want 20", got, err)
	}
	if data.Position() != (DataPosition{}) {
		t.Errorf("the finder moved the data position to %+v", data.Position())
	}
}

func TestIsOutOfMemory(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{nil, false},
		{ErrOutOfMemory, true},
		{fmt.Errorf("step: %w", ErrOutOfMemory), true},
		{errors.New("RESOURCE_EXHAUSTED: failed to allocate 4GiB"), true},
		{errors.New("CUDA error: out of memory"), true},
		{errors.New("shape mismatch"), false},
	}
	for _, tc := range tests {
		if got := IsOutOfMemory(tc.err); got != tc.want {
			t.Errorf("IsOutOfMemory(%v) = %v", tc.err, got)
		}
	}
}

func TestAutoBatchSize(t *testing.T) {
	called := false
	find := func() (int, error) { called = true; return 96, nil }
	n, note, err := AutoBatchSize(testBackend(t), 64, find)
	if err != nil || n != 64 || called || !strings.Contains(note, "host backend") {
		t.Errorf("on the host: %d, %q, %v (finder called: %v); want the host default 64 without probing", n, note, err, called)
	}
	if n, _, err := AutoBatchSize(nil, 8, find); err != nil || n != 8 || called {
		t.Errorf("no backend: %d, %v", n, err)
	}
}
