package train

import (
	"crypto/sha256"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"
)

// tree returns every file under dir with a hash of its content.
func tree(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = sha256.Sum256(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFindLR runs the range test where a run already is: each step's
// learning rate follows the exponential ramp and is the one the optimizer
// used, the smoothed loss is the bias-corrected average, the test stops
// when the loss diverges, the suggestion follows the documented rule, the
// plot is written, and the run's folder, logs and checkpoints are as they
// were (no checkpoint, log or event file of the test).
func TestFindLR(t *testing.T) {
	dir := t.TempDir()
	ckpt := filepath.Join(dir, "ckpt")
	cfg := func(mod func(*Config)) Config {
		return testConfig(func(c *Config) {
			c.Optimizer, c.BatchSize, c.Steps, c.Progress = OptimizerSGD, 16, 3, ProgressOff
			c.NoCheckpoint, c.CheckpointDir = false, ckpt
			c.MetricsLog, c.TensorBoardDir = filepath.Join(dir, "metrics.jsonl"), filepath.Join(dir, "tb")
			c.WarmupSteps, c.Cosine = 2, true // not used by the test
			mod(c)
		})
	}
	if _, err := newHarness(t, cfg(func(*Config) {}), synthData(t, 64, false)).Run(); err != nil {
		t.Fatal(err)
	}
	before := tree(t, dir)
	const steps, lo, hi = 100, 1e-4, 1e3
	h := newHarness(t, cfg(func(c *Config) {
		c.FindLR, c.FindLRSteps, c.FindLRMin, c.FindLRMax, c.PlotsDir = true, steps, lo, hi, filepath.Join(dir, "plots")
	}), synthData(t, 64, false))
	h.SetStepHook(func(int64, float64) { t.Error("the range test called the step hook") })
	res, err := h.Run()
	var found *LRFound
	if !errors.As(err, &found) || res.Steps != 0 || res.Checkpoint != "" {
		t.Fatalf("Run: %+v, %v; want an *LRFound error and no training", res, err)
	}
	r := found.Test
	if !strings.HasPrefix(r.Stopped, "diverged at step") || len(r.Points) >= steps || len(r.Points) < 5 {
		t.Fatalf("stopped %q after %d points: want a divergence before lr %g", r.Stopped, len(r.Points), hi)
	}
	var avg float64
	lowest := math.Inf(1)
	for i, p := range r.Points {
		want := lo * math.Pow(hi/lo, float64(i)/(steps-1))
		if p.Step != i+1 || math.Abs(p.LR-want) > 1e-12*want {
			t.Errorf("point %d: step %d, lr %g; want %d, %g", i, p.Step, p.LR, i+1, want)
		}
		avg = 0.98*avg + 0.02*p.Loss
		if s := avg / (1 - math.Pow(0.98, float64(i+1))); math.Abs(p.Smoothed-s) > 1e-12*math.Abs(s) {
			t.Errorf("point %d: smoothed %g, want %g", i, p.Smoothed, s)
		}
		if i < len(r.Points)-1 && p.Smoothed > 4*math.Min(lowest, p.Smoothed) {
			t.Errorf("point %d: smoothed %g is over 4 x the lowest %g, yet the test went on", i, p.Smoothed, lowest)
		}
		lowest = math.Min(lowest, p.Smoothed)
	}
	if last := r.Points[len(r.Points)-1]; last.Smoothed <= 4*lowest && !math.IsInf(last.Loss, 0) && !strings.Contains(r.Stopped, "not finite") {
		t.Errorf("stopped at %+v, which does not diverge (lowest %g)", last, lowest)
	}
	// The optimizer used the ramp's last learning rate.
	if v := h.Context().GetVariableByScopeAndName("/"+optimizers.Scope, optimizers.ParamLearningRate); v == nil {
		t.Error("no learning-rate variable")
	} else {
		lr, err := scalarValue(v.MustValue())
		if err != nil || math.Abs(lr-r.Points[len(r.Points)-1].LR) > 1e-6*lr && !strings.Contains(r.Stopped, "not finite") {
			t.Errorf("learning-rate variable %g (%v), want the last point's %g", lr, err, r.Points[len(r.Points)-1].LR)
		}
	}
	if r.SuggestedLR <= lo || r.SuggestedLR >= hi || r.SuggestedLR != r.SteepestLR || !strings.Contains(r.Rule, "steepest") {
		t.Errorf("suggested %g (steepest %g, rule %q)", r.SuggestedLR, r.SteepestLR, r.Rule)
	}
	checkPNG(t, r.Plot)
	after := tree(t, dir)
	delete(after, r.Plot)
	if len(after) != len(before) {
		t.Errorf("%d files after the range test, %d before", len(after), len(before))
	}
	for p, sum := range before {
		if after[p] != sum {
			t.Errorf("the range test changed %s", p)
		}
	}
	// Resuming first, the range test is refused: it starts from fresh weights.
	_, err = newHarness(t, cfg(func(c *Config) { c.FindLR, c.Resume = true, true }), synthData(t, 64, false)).Run()
	if err == nil || !strings.Contains(err.Error(), "FindLR: the harness has trained 3 steps") {
		t.Errorf("range test after a resume: %v", err)
	}
	var text strings.Builder
	if err := r.WriteText(&text); err != nil || !strings.Contains(text.String(), "suggested lr") {
		t.Errorf("report %q, %v", text.String(), err)
	}
}

// TestLRSuggestionRule checks the rule on smoothed losses given here: the
// first quarter of the steps (at most LRSkipStart) not counted, the
// steepest descent (against ln lr) up to the lowest, and the lowest's
// learning rate / 10 when fewer than 3 steps lead to it.
func TestLRSuggestionRule(t *testing.T) {
	points := func(smoothed ...float64) *LRRangeTest {
		r := &LRRangeTest{}
		for i, s := range smoothed {
			r.Points = append(r.Points, LRPoint{Step: i + 1, LR: math.Pow(10, float64(i-6)), Smoothed: s})
		}
		r.suggest()
		return r
	}
	// 12 steps: the first 3 are not counted (0.1 is a lucky batch). By
	// central differences the steepest is at index 6 (lr 1), the lowest at
	// index 8 (lr 100).
	r := points(5, 0.1, 5, 2.0, 1.95, 1.7, 1.2, 0.9, 0.8, 0.85, 3, 9)
	if r.SteepestLR != 1 || r.SuggestedLR != 1 || r.MinLossLR != 100 {
		t.Errorf("steepest %g, suggested %g, lowest at %g; want 1, 1, 100", r.SteepestLR, r.SuggestedLR, r.MinLossLR)
	}
	// A loss that rises from the start: its lowest is the first step.
	r = points(1, 1.5, 3)
	if r.SteepestLR != 0 || r.MinLossLR != 1e-6 || math.Abs(r.SuggestedLR-1e-7) > 1e-20 || !strings.Contains(r.Rule, "/ 10") {
		t.Errorf("rising loss: %+v", r)
	}
	if got := rangeLR(0, 5, 1e-6, 1); got != 1e-6 {
		t.Errorf("first lr %g", got)
	}
	if got := rangeLR(4, 5, 1e-6, 1); math.Abs(got-1) > 1e-15 {
		t.Errorf("last lr %g", got)
	}
}

// TestFindLRConfig checks the range test's options.
func TestFindLRConfig(t *testing.T) {
	c := DefaultConfig()
	c.FindLR, c.FindLRSteps, c.FindLRMin, c.FindLRMax = true, 1, 1, 0.5
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), "FindLRSteps 1") || !strings.Contains(err.Error(), "FindLRMin 1 / FindLRMax 0.5") {
		t.Errorf("Validate: %v", err)
	}
	c = DefaultConfig()
	c.EMADecay = 1
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "EMADecay 1") {
		t.Errorf("Validate: %v", err)
	}
}
