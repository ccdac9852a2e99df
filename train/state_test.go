package train

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestEarlyStoppingPlateau(t *testing.T) {
	tests := []struct {
		name     string
		mode     string
		patience int
		delta    float64
		values   []float64
		stopAt   int // index of the value that stops, -1 for none
	}{
		{"improving", ModeMin, 2, 0, []float64{5, 4, 3, 2, 1}, -1},
		{"plateau", ModeMin, 2, 0, []float64{5, 4, 4, 4, 1}, 3},
		{"min-delta", ModeMin, 3, 0.5, []float64{5, 4.9, 4.8, 4.7, 1}, 3},
		{"max-mode", ModeMax, 1, 0, []float64{0.1, 0.2, 0.2}, 2},
		{"reset-on-improvement", ModeMin, 2, 0, []float64{5, 5, 4, 4, 3, 3, 3}, 6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := NewEarlyStopping(tc.mode, tc.patience, tc.delta)
			got := -1
			for i, v := range tc.values {
				stop, reason, err := e.Update(int64(i+1), v)
				if err != nil {
					t.Fatal(err)
				}
				if stop {
					got = i
					if !strings.Contains(reason, "early stopping") {
						t.Errorf("reason %q", reason)
					}
					break
				}
			}
			if got != tc.stopAt {
				t.Errorf("stopped at %d, want %d", got, tc.stopAt)
			}
		})
	}
}

func TestEarlyStoppingNonFinite(t *testing.T) {
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		e := NewEarlyStopping(ModeMin, 10, 0)
		stop, _, err := e.Update(7, v)
		if !stop || !errors.Is(err, ErrNonFiniteLoss) {
			t.Fatalf("Update(%v) = %v, %v; want stop with ErrNonFiniteLoss", v, stop, err)
		}
		if !strings.Contains(err.Error(), "step 7") || !strings.Contains(err.Error(), "LearningRate") || strings.Contains(err.Error(), "--") {
			t.Errorf("message %q should name the step and suggest a fix", err)
		}
	}
}

func TestLossScaler(t *testing.T) {
	type step struct {
		finite    bool
		wantSkip  bool
		wantScale float64
	}
	s := NewLossScaler()
	s.GrowthInterval = 3 // the default (2000) is checked below
	steps := []step{
		{true, false, 65536},
		{true, false, 65536},
		{true, false, 131072}, // 3 clean steps: grow
		{false, true, 65536},  // inf/NaN: skip and back off
		{true, false, 65536},
		{true, false, 65536},
		{false, true, 32768}, // the clean count restarts after a back-off
		{false, true, 16384},
		{true, false, 16384},
		{true, false, 16384},
		{true, false, 32768},
	}
	for i, st := range steps {
		ev := s.Update(st.finite)
		if ev.Skip != st.wantSkip || s.Scale != st.wantScale || ev.NewScale != s.Scale {
			t.Fatalf("step %d (finite %v): skip %v scale %g; want skip %v scale %g", i, st.finite, ev.Skip, s.Scale, st.wantSkip, st.wantScale)
		}
	}
	if s.Skipped != 3 {
		t.Errorf("skipped %d, want 3", s.Skipped)
	}
	d := NewLossScaler()
	if d.Scale != 1<<16 || d.GrowthFactor != 2 || d.BackoffFactor != 0.5 || d.GrowthInterval != 2000 {
		t.Errorf("defaults %+v", d)
	}
	for range 1999 {
		d.Update(true)
	}
	if d.Scale != 1<<16 {
		t.Errorf("grew before 2000 clean steps: %g", d.Scale)
	}
	if d.Update(true); d.Scale != 1<<17 {
		t.Errorf("after 2000 clean steps: %g, want 2^17", d.Scale)
	}
	// Repeated overflow never drives the scale below 1.
	for range 100 {
		d.Update(false)
	}
	if d.Scale != 1 {
		t.Errorf("scale after 100 overflows %g, want 1", d.Scale)
	}
	grads := []float64{1, 2, math.Inf(1)}
	if AllFinite(grads...) || !AllFinite(1, 2) || AllFinite(math.NaN()) {
		t.Error("AllFinite")
	}
}

func TestFindBatchSize(t *testing.T) {
	oomAbove := func(limit int, calls *[]int) FitsFunc {
		return func(n int) error {
			*calls = append(*calls, n)
			if n > limit {
				return ErrOutOfMemory
			}
			return nil
		}
	}
	tests := []struct {
		start, limit, fits, want int
	}{
		{1, 1024, 100, 100},
		{8, 1024, 8, 8},
		{8, 1024, 64, 64},
		{8, 1024, 65, 65},
		{1, 50, 1000, 50},
		{32, 32, 1000, 32},
		{3, 1000, 127, 127},
	}
	for _, tc := range tests {
		var calls []int
		got, err := FindBatchSize(tc.start, tc.limit, oomAbove(tc.fits, &calls))
		if err != nil || got != tc.want {
			t.Errorf("FindBatchSize(%d, %d) with fits<=%d = %d, %v; want %d", tc.start, tc.limit, tc.fits, got, err, tc.want)
		}
		if len(calls) > 25 {
			t.Errorf("%d tries: %v", len(calls), calls)
		}
	}
	var calls []int
	if _, err := FindBatchSize(16, 64, oomAbove(8, &calls)); !errors.Is(err, ErrOutOfMemory) {
		t.Errorf("start too big: err %v, want ErrOutOfMemory", err)
	}
	boom := errors.New("device lost")
	if _, err := FindBatchSize(1, 64, func(int) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("other error: %v", err)
	}
	if _, err := FindBatchSize(0, 4, func(int) error { return nil }); err == nil {
		t.Error("start 0 accepted")
	}
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
	tests := []struct {
		name string
		mod  func(*Config)
		want string
	}{
		{"optimizer", func(c *Config) { c.Optimizer = "lion" }, "Optimizer"},
		{"lr", func(c *Config) { c.LearningRate = 0 }, "LearningRate"},
		{"accumulate", func(c *Config) { c.Accumulate = 0 }, "Accumulate"},
		{"clip", func(c *Config) { c.ClipNorm = -1 }, "ClipNorm"},
		{"batch", func(c *Config) { c.BatchSize = 0 }, "BatchSize 0"},
		{"steps", func(c *Config) { c.Steps, c.Epochs = 0, 0 }, "Steps"},
		{"precision", func(c *Config) { c.Precision = "8" }, "Precision"},
		{"mode", func(c *Config) { c.EarlyStopMode = "up" }, "EarlyStopMode"},
		{"monitor", func(c *Config) { c.EarlyStopMonitor = "val loss" }, "EarlyStopMonitor"},
		{"eval every", func(c *Config) { c.EvalEvery = -1 }, "EvalEvery"},
		{"resume-no-ckpt", func(c *Config) { c.Resume, c.NoCheckpoint = true, true }, "Resume and NoCheckpoint"},
		{"no dir", func(c *Config) { c.CheckpointDir = "" }, "CheckpointDir"},
		{"devices", func(c *Config) { c.Devices = "many" }, "Devices"},
		{"budget", func(c *Config) { c.DeviceDataBudgetMiB = -1 }, "DeviceDataBudgetMiB"},
		{"min lr", func(c *Config) { c.MinLearningRate = 1 }, "MinLearningRate"},
	}
	for _, tc := range tests {
		c := DefaultConfig()
		tc.mod(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want one naming %s", tc.name, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "--") {
			t.Errorf("%s: err %q names a command-line flag; the library names the Config field", tc.name, err)
		}
	}
}

func TestSchedule(t *testing.T) {
	c := DefaultConfig()
	c.LearningRate, c.WarmupSteps, c.Cosine, c.MinLearningRate = 1, 4, true, 0.1
	tests := []struct {
		step int
		want float64
	}{{0, 0.25}, {3, 1}, {4, 1}, {14, 0.55}, {24, 0.1}, {30, 0.1}}
	for _, tc := range tests {
		if got := ScheduleValue(tc.step, c, 24); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("step %d: lr %g, want %g", tc.step, got, tc.want)
		}
	}
}
