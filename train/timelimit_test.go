package train

import (
	stdcontext "context"
	"strings"
	"testing"
	"time"

	"github.com/gomlx/gomlx/pkg/core/tensors"
)

func TestPlanSteps(t *testing.T) {
	s := time.Second
	for _, c := range []struct {
		name               string
		done               int64
		left, step, eval   time.Duration
		every, limit, want int64
	}{
		// 10 steps of 1 s fill 10 s; no evaluator.
		{"steps only", 0, 10 * s, s, 0, 200, 100, 10},
		// The limit caps the plan.
		{"capped", 0, 10 * s, s, 0, 200, 7, 7},
		// From step 5, evaluations of 3 s after steps 10 and 20 and at the
		// end: steps 6-10 (5 s) + 3 + steps 11-14 (4 s) + final 3 = 15 s.
		{"evaluations", 5, 15 * s, s, 3 * s, 10, 1000, 14},
		// One more second makes room for step 15 (its final evaluation).
		{"evaluations, one more", 5, 16 * s, s, 3 * s, 10, 1000, 15},
		// Step 20's own evaluation is the final one: steps 6-10, eval,
		// 11-20, eval = 5+3+10+3 = 21 s.
		{"ends on an evaluation", 5, 21 * s, s, 3 * s, 10, 1000, 20},
		// Nothing fits: the plan is the steps done.
		{"none fits", 5, 2 * s, s, 3 * s, 10, 1000, 5},
	} {
		if got := PlanSteps(c.done, c.left, c.step, c.eval, c.every, c.limit); got != c.want {
			t.Errorf("%s: PlanSteps(%d, %v, %v, %v, %d, %d) = %d, want %d",
				c.name, c.done, c.left, c.step, c.eval, c.every, c.limit, got, c.want)
		}
	}
}

// fakeClock is a harness clock that moves only when a test's step inputs
// or evaluator move it, so that a time-limited run plays out the same way
// on any machine.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// limitedHarness is a harness whose steps take step(n) of the fake clock
// (n the step being taken, from 1) and whose evaluations take eval.
func limitedHarness(t *testing.T, cfg Config, step func(n int64) time.Duration, eval time.Duration) (*Harness, *fakeClock) {
	t.Helper()
	h := newHarness(t, cfg, synthData(t, 64, false))
	clk := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	h.clock = clk.now
	h.SetStepInputs(func(*tensors.Tensor) ([]*tensors.Tensor, error) {
		clk.t = clk.t.Add(step(h.Step() + 1))
		return nil, nil
	})
	h.SetEvaluator(func(h *Harness) (map[string]float64, error) {
		clk.t = clk.t.Add(eval)
		return map[string]float64{"val_loss": h.lastLoss}, nil
	})
	return h, clk
}

func timeLimitConfig(mod func(*Config)) Config {
	return testConfig(func(c *Config) {
		c.Steps, c.Epochs = 0, 1000
		c.TimeLimit = 100 * time.Second
		c.EvalEvery = 10
		c.WarmupSteps, c.Cosine = 8, true
		if mod != nil {
			mod(c)
		}
	})
}

// TestTimeLimitPlansTheRun checks that a time-limited run plans its steps
// after the warm-up, ends at the plan with a final evaluation within the
// budget, and that its schedule ends there: the same flags with Steps set
// to the plan give the same weights.
func TestTimeLimitPlansTheRun(t *testing.T) {
	cfg := timeLimitConfig(nil)
	h, clk := limitedHarness(t, cfg, func(int64) time.Duration { return time.Second }, 3*time.Second)
	start := clk.t
	res, err := h.Run()
	if err != nil {
		t.Fatal(err)
	}
	wall := clk.t.Sub(start)
	if res.PlannedSteps <= int64(cfg.WarmupSteps) || res.Steps != res.PlannedSteps || res.Stopped != "" {
		t.Fatalf("steps %d, planned %d, stopped %q: want the planned steps, after the warm-up's %d", res.Steps, res.PlannedSteps, res.Stopped, cfg.WarmupSteps)
	}
	// 1 s a step and 3 s an evaluation every 10 steps: a plan that uses
	// the budget (less the 2 % margin) and does not pass it.
	if wall > cfg.TimeLimit || wall < 90*time.Second {
		t.Errorf("the run took %v of its %v", wall, cfg.TimeLimit)
	}
	if res.EvalStep != res.Steps {
		t.Errorf("last evaluation after step %d, want the last step %d", res.EvalStep, res.Steps)
	}
	if lr := h.LearningRate(); lr > cfg.LearningRate/100 {
		t.Errorf("learning rate %g at the end: want the cosine's end near 0 (peak %g)", lr, cfg.LearningRate)
	}

	again := newHarness(t, testConfig(func(c *Config) {
		c.Steps, c.EvalEvery, c.WarmupSteps, c.Cosine = int(res.PlannedSteps), 10, 8, true
	}), synthData(t, 64, false))
	if _, err := again.Run(); err != nil {
		t.Fatal(err)
	}
	want, got := weights(t, again), weights(t, h)
	for _, name := range trainables {
		if string(got[name]) != string(want[name]) {
			t.Errorf("%s differs from the run with Steps %d", name, res.PlannedSteps)
		}
	}
}

// TestTimeLimitStopsASlowRun checks that a run whose steps slow down
// after the plan stops before the budget runs out, with a final
// evaluation.
func TestTimeLimitStopsASlowRun(t *testing.T) {
	cfg := timeLimitConfig(nil)
	step := func(n int64) time.Duration {
		if n > 8 {
			return 2 * time.Second
		}
		return time.Second
	}
	h, clk := limitedHarness(t, cfg, step, 3*time.Second)
	start := clk.t
	res, err := h.Run()
	if err != nil {
		t.Fatal(err)
	}
	if wall := clk.t.Sub(start); wall > cfg.TimeLimit {
		t.Errorf("the run took %v of its %v", wall, cfg.TimeLimit)
	}
	if res.Steps >= res.PlannedSteps || !strings.Contains(res.Stopped, "time limit") {
		t.Errorf("steps %d of %d planned, stopped %q: want an early stop for the time limit", res.Steps, res.PlannedSteps, res.Stopped)
	}
	if res.EvalStep != res.Steps {
		t.Errorf("last evaluation after step %d, want the last step %d", res.EvalStep, res.Steps)
	}
}

// TestTimeLimitResumeKeepsThePlan checks that an interrupted time-limited
// run resumed from its checkpoint keeps its planned end, and ends with the
// weights of the run that was not interrupted.
func TestTimeLimitResumeKeepsThePlan(t *testing.T) {
	dir := t.TempDir()
	cfg := timeLimitConfig(func(c *Config) { c.NoCheckpoint, c.CheckpointDir, c.CheckpointEvery = false, dir, 0 })
	one := func(int64) time.Duration { return time.Second }

	whole, _ := limitedHarness(t, timeLimitConfig(nil), one, 3*time.Second)
	full, err := whole.Run()
	if err != nil {
		t.Fatal(err)
	}

	h, _ := limitedHarness(t, cfg, one, 3*time.Second)
	ctx, cancel := stdcontext.WithCancel(stdcontext.Background())
	defer cancel()
	h.SetStepHook(func(step int64, _ float64) {
		if step == 20 {
			cancel()
		}
	})
	if _, err := h.RunContext(ctx); err == nil {
		t.Fatal("the interrupted run returned no error")
	}
	cfg.Resume = true
	r, _ := limitedHarness(t, cfg, one, 3*time.Second)
	res, err := r.Run()
	if err != nil {
		t.Fatal(err)
	}
	if res.Resumed != 20 || res.PlannedSteps != full.PlannedSteps || res.Steps != full.Steps {
		t.Fatalf("resumed at %d, planned %d, ended at %d: want 20, and the whole run's %d and %d",
			res.Resumed, res.PlannedSteps, res.Steps, full.PlannedSteps, full.Steps)
	}
	want, got := weights(t, whole), weights(t, r)
	for _, name := range trainables {
		if string(got[name]) != string(want[name]) {
			t.Errorf("%s differs from the run that was not interrupted", name)
		}
	}
}

func TestTimeLimitValidate(t *testing.T) {
	for _, c := range []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.TimeLimit = -time.Second }, "TimeLimit -1s"},
		{func(c *Config) { c.TimeLimit, c.Cosine, c.WarmupSteps = time.Minute, true, 2 }, "WarmupSteps >= 5"},
	} {
		cfg := testConfig(c.mod)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate() = %v, want an error with %q", err, c.want)
		}
	}
	if err := testConfig(func(c *Config) { c.TimeLimit, c.Cosine, c.WarmupSteps = time.Minute, true, 5 }).Validate(); err != nil {
		t.Errorf("a valid time limit: %v", err)
	}
}

// TestTimeLimitCountsTimeOutsideSteps checks that the plan counts the
// time a run spends outside its steps and evaluations (logs, progress):
// with half a second of it after each step the run still ends at its plan,
// within the budget.
func TestTimeLimitCountsTimeOutsideSteps(t *testing.T) {
	cfg := timeLimitConfig(nil)
	h, clk := limitedHarness(t, cfg, func(int64) time.Duration { return time.Second }, 3*time.Second)
	h.SetStepHook(func(int64, float64) { clk.t = clk.t.Add(time.Second / 2) })
	start := clk.t
	res, err := h.Run()
	if err != nil {
		t.Fatal(err)
	}
	if wall := clk.t.Sub(start); wall > cfg.TimeLimit || res.Steps != res.PlannedSteps || res.Stopped != "" {
		t.Errorf("%d steps of %d planned in %v of %v, stopped %q: want the plan, within the budget",
			res.Steps, res.PlannedSteps, wall, cfg.TimeLimit, res.Stopped)
	}
}

// TestTimeLimitReplansAConstantRate checks that a run without a schedule
// that ends at the plan plans again at each evaluation: its steps turning
// faster after the plan, it goes on past the first plan and still ends
// within the budget, having used most of it.
func TestTimeLimitReplansAConstantRate(t *testing.T) {
	cfg := timeLimitConfig(func(c *Config) { c.WarmupSteps, c.Cosine = 0, false })
	step := func(n int64) time.Duration {
		if n > PlanAfterSteps {
			return time.Second / 2
		}
		return time.Second
	}
	h, clk := limitedHarness(t, cfg, step, 3*time.Second)
	var first int64
	h.SetStepHook(func(n int64, _ float64) {
		if n == PlanAfterSteps+1 {
			first = int64(h.TotalSteps())
		}
	})
	start := clk.t
	res, err := h.Run()
	if err != nil {
		t.Fatal(err)
	}
	wall := clk.t.Sub(start)
	if res.Steps <= first || wall > cfg.TimeLimit || wall < 90*time.Second || res.EvalStep != res.Steps {
		t.Errorf("%d steps (first plan %d, last %d) in %v of %v, last evaluation after step %d: want more steps than first planned, within the budget",
			res.Steps, first, res.PlannedSteps, wall, cfg.TimeLimit, res.EvalStep)
	}
}
