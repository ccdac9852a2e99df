package train

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestEvaluatorEarlyStopping stops on a plateau of a validation metric the
// evaluator returns, logs the evaluations and ranks checkpoints by it.
func TestEvaluatorEarlyStopping(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(func(c *Config) {
		c.Steps = 40
		c.LogEvery = 1
		c.EvalEvery = 2
		c.EarlyStopMonitor, c.EarlyStopPatience, c.EarlyStopMode = "val_loss", 3, ModeMin
		c.MetricsLog = filepath.Join(dir, "metrics.jsonl")
	})
	h := newHarness(t, cfg, synthData(t, 64, false))
	// val_loss improves until step 6, then stays flat: patience 3 at every
	// second step stops at step 12.
	calls := 0
	h.SetEvaluator(func(h *Harness) (map[string]float64, error) {
		calls++
		time.Sleep(evalPause) // in "wall", not in "elapsed"
		v := 1.0 / float64(min(h.Step(), 6))
		return map[string]float64{"val_loss": v, "val_acc": 0.5}, nil
	})
	res, err := h.Run()
	if err != nil {
		t.Fatal(err)
	}
	if res.Steps != 12 || !strings.Contains(res.Stopped, "early stopping at step 12") || calls != 6 {
		t.Fatalf("steps %d, calls %d, stopped %q", res.Steps, calls, res.Stopped)
	}
	if res.Eval["val_loss"] != 1.0/6 || res.Eval["val_acc"] != 0.5 {
		t.Errorf("Result.Eval = %v", res.Eval)
	}
	b, err := os.ReadFile(cfg.MetricsLog)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), `"val_loss"`); n != 6 {
		t.Errorf("metrics log has %d evaluations, want 6:\n%s", n, b)
	}
	// Every record carries "wall", the run's seconds with the evaluations
	// included, and "elapsed", the training steps' alone: after k
	// evaluations wall exceeds elapsed by at least k pauses.
	recs, err := ReadMetricsLog(cfg.MetricsLog)
	if err != nil {
		t.Fatal(err)
	}
	evals, lastWall := 0, 0.0
	for i, r := range recs {
		wall, ok1 := r["wall"].(float64)
		elapsed, ok2 := r["elapsed"].(float64)
		if !ok1 || !ok2 {
			t.Fatalf("record %d has no wall or elapsed: %v", i, r)
		}
		if _, ok := r["val_loss"]; ok {
			evals++
		}
		if wall < lastWall || wall-elapsed < float64(evals)*evalPause.Seconds() {
			t.Errorf("record %d (%d evaluations before or at it): wall %g, elapsed %g, previous wall %g", i, evals, wall, elapsed, lastWall)
		}
		lastWall = wall
	}
}

// evalPause is the evaluator's time in TestEvaluatorEarlyStopping.
const evalPause = 20 * time.Millisecond

func TestEvaluatorErrors(t *testing.T) {
	cfg := testConfig(func(c *Config) {
		c.Steps = 4
		c.EvalEvery = 2
		c.EarlyStopMonitor = "val_accuracy"
	})
	h := newHarness(t, cfg, synthData(t, 32, false))
	h.SetEvaluator(func(*Harness) (map[string]float64, error) { return map[string]float64{"val_loss": 1}, nil })
	if _, err := h.Run(); err == nil || !strings.Contains(err.Error(), `"val_accuracy" is not among the evaluation metrics [val_loss]`) {
		t.Errorf("missing monitored metric: err = %v", err)
	}
	cfg.EarlyStopMonitor = ""
	h = newHarness(t, cfg, synthData(t, 32, false))
	h.SetEvaluator(func(*Harness) (map[string]float64, error) { return nil, os.ErrNotExist })
	if _, err := h.Run(); err == nil || !strings.Contains(err.Error(), "evaluation at step 2") {
		t.Errorf("evaluator error: err = %v", err)
	}
	cfg.EarlyStopMonitor = "val_loss"
	h = newHarness(t, cfg, synthData(t, 32, false))
	h.SetEvaluator(func(*Harness) (map[string]float64, error) { return map[string]float64{"val_loss": nanValue()}, nil })
	if _, err := h.Run(); err == nil || !strings.Contains(err.Error(), "step 2") {
		t.Errorf("NaN validation metric: err = %v", err)
	}
}

func nanValue() float64 {
	var z float64
	return z / z
}
