package train

import (
	"bytes"
	"math"
	"slices"
	"testing"

	"github.com/gomlx/gomlx/pkg/ml/train/losses"
)

// TestEMAMatchesHandComputed checks the moving average of the weights
// against one computed here from the weights after each step: the bias
// /l1/b starts at zero (w₀ = 0), so a₁ = (1−d)·w₁ and a_k = d·a_{k−1} +
// (1−d)·w_k. The evaluator sees the average of its step, the weights are
// the trained ones again after it, and after Run the context's weights
// are the averages (the trained ones in their place).
func TestEMAMatchesHandComputed(t *testing.T) {
	const d = 0.75
	h := newHarness(t, testConfig(func(c *Config) {
		c.Steps, c.BatchSize, c.EMADecay, c.EvalEvery, c.Progress = 5, 16, d, 2, ProgressOff
	}), synthData(t, 64, false))
	var trained [][]float32 // /l1/b after each step
	var want [][]float32    // its average after each step
	h.SetStepHook(func(step int64, _ float64) {
		b := floats(t, h, "/l1/b")
		trained = append(trained, b)
		prev := make([]float32, len(b)) // w₀ = 0
		if len(want) > 0 {
			prev = want[len(want)-1]
		}
		a := make([]float32, len(b))
		for i := range b {
			a[i] = prev[i]*float32(d) + b[i]*float32(1-d)
		}
		want = append(want, a)
	})
	evals := 0
	h.SetEvaluator(func(h *Harness) (map[string]float64, error) {
		evals++
		near(t, "the evaluator's weights", floats(t, h, "/l1/b"), want[h.Step()-1])
		return map[string]float64{"val_loss": 1}, nil
	})
	res, err := h.Run()
	if err != nil {
		t.Fatal(err)
	}
	if evals != 3 || !res.EMA || !h.AveragedWeights() {
		t.Fatalf("%d evaluations, Result.EMA %v", evals, res.EMA)
	}
	if slices.Equal(want[4], trained[4]) {
		t.Fatal("the average equals the last weights: nothing averaged")
	}
	near(t, "the weights after Run", floats(t, h, "/l1/b"), want[4])
	near(t, "the trained weights after Run", floats(t, h, EMAScope+"/l1/b"), trained[4])
}

func near(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if math.Abs(float64(got[i]-want[i])) > 1e-6*(1+math.Abs(float64(want[i]))) {
			t.Fatalf("%s: [%d] = %g, want %g", what, i, got[i], want[i])
		}
	}
}

// TestEMAResumeExact checks that a run with EMADecay stopped after k steps
// and resumed ends with the same weights, averages and count, bit for
// bit, as an uninterrupted one (with Adam, clipping and input noise), and
// that a checkpoint loaded for inference has the averages as its weights.
func TestEMAResumeExact(t *testing.T) {
	const total, k = 6, 3
	base := func(dir string, steps int, resume bool) Config {
		return testConfig(func(c *Config) {
			c.BatchSize, c.Steps, c.NoCheckpoint, c.CheckpointDir, c.CheckpointEvery, c.Resume = 16, steps, false, dir, 100, resume
			c.EMADecay, c.ClipNorm, c.Progress = 0.9, 0.5, ProgressOff
		})
	}
	newH := func(cfg Config) *Harness {
		h, err := New(testBackend(t), cfg, noisyMLP, losses.MeanSquaredError, synthData(t, 64, false))
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	full := newH(base(t.TempDir(), total, false))
	fres, err := full.Run()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := newH(base(dir, k, false)).Run(); err != nil {
		t.Fatal(err)
	}
	second := newH(base(dir, total, true))
	res, err := second.Run()
	if err != nil {
		t.Fatal(err)
	}
	if res.Resumed != k {
		t.Fatalf("resumed at %d", res.Resumed)
	}
	wf, ws := weights(t, full), weights(t, second)
	if len(wf) != len(ws) {
		t.Fatalf("%d variables vs %d", len(wf), len(ws))
	}
	for _, name := range []string{"/l1/w", EMAScope + "/l1/w", EMAScope + "/l2/w", HarnessScope + "/" + EMAUpdatesVar} {
		if _, ok := wf[name]; !ok {
			t.Errorf("no variable %s", name)
		}
	}
	for name, b := range wf {
		if !bytes.Equal(b, ws[name]) {
			t.Errorf("variable %s differs after resume", name)
		}
	}
	// Loading the last checkpoint for inference gives the averages.
	inf, err := LoadForInference(testBackend(t), fres.Checkpoint, mlp, losses.MeanSquaredError)
	if err != nil {
		t.Fatal(err)
	}
	if !inf.AveragedWeights() {
		t.Error("LoadForInference did not take the averages")
	}
	near(t, "the loaded weights", floats(t, inf, "/l2/w"), floats(t, full, "/l2/w"))
	near(t, "the loaded averages' place", floats(t, inf, EMAScope+"/l2/w"), floats(t, full, EMAScope+"/l2/w"))
	if slices.Equal(floats(t, inf, "/l2/w"), floats(t, inf, EMAScope+"/l2/w")) {
		t.Error("averages equal the trained weights")
	}
}

// TestEMASkippedStep checks that a step the loss scaler skips leaves the
// averages and their count as they were.
func TestEMASkippedStep(t *testing.T) {
	h := newHarness(t, testConfig(func(c *Config) {
		c.Steps, c.BatchSize, c.EMADecay, c.DynamicLossScaling, c.Progress = 2, 16, 0.5, true, ProgressOff
	}), synthData(t, 64, false))
	h.SetLogger(nil)
	if _, err := h.TrainStep(); err != nil {
		t.Fatal(err)
	}
	before := weights(t, h)
	h.scaler.Scale = math.Inf(1) // the scaled loss overflows: non-finite gradients
	if _, err := h.TrainStep(); err != nil {
		t.Fatal(err)
	}
	if !h.Skipped() {
		t.Fatal("the step was not skipped")
	}
	after := weights(t, h)
	for _, name := range []string{EMAScope + "/l1/w", HarnessScope + "/" + EMAUpdatesVar, "/l1/w"} {
		if before[name] == nil {
			t.Fatalf("no variable %s", name)
		}
		if !bytes.Equal(before[name], after[name]) {
			t.Errorf("%s changed on a skipped step", name)
		}
	}
}
