package train

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/pkg/ml/train/losses"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"

	"github.com/gotrain/gotrain/cpubackend"
	"github.com/gotrain/gotrain/gemm"
)

func TestResumeEqualsUninterrupted(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*Config)
	}{
		{"adam", func(c *Config) {}},
		{"adamw-accumulate-clip-cosine", func(c *Config) {
			c.Optimizer, c.Accumulate, c.ClipNorm, c.Cosine, c.WarmupSteps = OptimizerAdamW, 2, 0.5, true, 2
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			const total, k = 7, 3
			base := func(dir string, steps int, resume bool) Config {
				return testConfig(func(c *Config) {
					c.BatchSize, c.Steps, c.NoCheckpoint, c.CheckpointDir, c.CheckpointEvery, c.Resume = 16, steps, false, dir, 100, resume
					tc.mod(c)
				})
			}
			newH := func(cfg Config) *Harness {
				h, err := New(testBackend(t), cfg, noisyMLP, losses.MeanSquaredError, synthData(t, 64, false))
				if err != nil {
					t.Fatal(err)
				}
				return h
			}
			// Uninterrupted run (it crosses an epoch boundary: 64 examples, 16 or 32 per step).
			full := newH(base(t.TempDir(), total, false))
			if _, err := full.Run(); err != nil {
				t.Fatal(err)
			}
			// Interrupted after k steps, then resumed in a new harness.
			dir := t.TempDir()
			first := newH(base(dir, k, false))
			if _, err := first.Run(); err != nil {
				t.Fatal(err)
			}
			// The resumed harness has the final step count but a fresh context, data and seed state.
			second := newH(base(dir, total, true))
			res, err := second.Run()
			if err != nil {
				t.Fatal(err)
			}
			if res.Resumed != k || res.Steps != total {
				t.Fatalf("resumed %d, steps %d; want %d, %d", res.Resumed, res.Steps, k, total)
			}
			wf, ws := weights(t, full), weights(t, second)
			if len(wf) != len(ws) {
				t.Fatalf("%d variables uninterrupted, %d resumed", len(wf), len(ws))
			}
			for name, b := range wf {
				if !bytes.Equal(b, ws[name]) {
					t.Errorf("variable %s differs after resume", name)
				}
			}
			if full.Data().Position() != second.Data().Position() {
				t.Errorf("data position %+v vs %+v", full.Data().Position(), second.Data().Position())
			}
			if g1, g2 := optimizers.GetGlobalStep(full.Context()), optimizers.GetGlobalStep(second.Context()); g1 != g2 || g1 != total {
				t.Errorf("global step %d vs %d, want %d", g1, g2, total)
			}
		})
	}
}

func TestTruncatedCheckpointRejected(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(func(c *Config) {
		c.BatchSize, c.Steps, c.NoCheckpoint, c.CheckpointDir, c.CheckpointEvery, c.KeepBest = 16, 4, false, dir, 2, 5
	})
	h := newHarness(t, cfg, synthData(t, 64, false))
	if _, err := h.Run(); err != nil {
		t.Fatal(err)
	}
	dir = h.RunDir()
	ck := &Checkpointer{Dir: dir}
	files, err := ck.List()
	if err != nil || len(files) != 2 {
		t.Fatalf("checkpoints %v, %v; want steps 4 and 2", files, err)
	}
	// No temporary files are left behind.
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
	for _, cut := range []int{10, 1000, -1} {
		b, err := os.ReadFile(files[0])
		if err != nil {
			t.Fatal(err)
		}
		n := len(b) - 1
		if cut > 0 && cut < len(b) {
			n = cut
		}
		if err := os.WriteFile(files[0], b[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		var warned []string
		ck := &Checkpointer{Dir: dir, Warn: func(m string) { warned = append(warned, m) }}
		h2 := newHarness(t, testConfig(func(c *Config) { c.BatchSize, c.Steps = 16, 4 }), synthData(t, 64, false))
		path, err := ck.Restore(h2)
		if err != nil {
			t.Fatal(err)
		}
		if path != files[1] || h2.Step() != 2 {
			t.Errorf("cut %d: restored %s at step %d; want %s at step 2", cut, path, h2.Step(), files[1])
		}
		if len(warned) != 1 || !strings.Contains(warned[0], filepath.Base(files[0])) {
			t.Errorf("cut %d: warnings %q", cut, warned)
		}
		if err := os.WriteFile(files[0], b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Nothing valid at all.
	empty := &Checkpointer{Dir: t.TempDir()}
	if _, err := empty.Restore(h); !errors.Is(err, ErrNoCheckpoint) {
		t.Errorf("empty dir: %v, want ErrNoCheckpoint", err)
	}
}

func TestKeepBestAndLast(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(func(c *Config) {
		c.BatchSize, c.Steps, c.NoCheckpoint, c.CheckpointDir, c.CheckpointEvery, c.KeepBest = 16, 6, false, dir, 1, 2
	})
	h := newHarness(t, cfg, synthData(t, 64, false))
	if _, err := h.Run(); err != nil {
		t.Fatal(err)
	}
	files, err := (&Checkpointer{Dir: h.RunDir()}).List()
	if err != nil || len(files) != 3 {
		t.Fatalf("files %v, %v: want the last and the 2 best", files, err)
	}
	if !strings.HasSuffix(files[0], "ckpt-000000000006.gtc") {
		t.Errorf("newest %s, want step 6", files[0])
	}
}

func TestNonFiniteLossStops(t *testing.T) {
	h := newHarness(t, testConfig(func(c *Config) { c.BatchSize, c.Steps = 16, 5 }), synthData(t, 64, true))
	res, err := h.Run()
	if !errors.Is(err, ErrNonFiniteLoss) {
		t.Fatalf("err %v, want ErrNonFiniteLoss", err)
	}
	if res.Steps != 1 || !strings.Contains(err.Error(), "step 1") {
		t.Errorf("stopped at %d: %v", res.Steps, err)
	}
}

func TestEarlyStoppingInRun(t *testing.T) {
	// With lr tiny the loss barely moves: a min delta of 1 is a plateau.
	h := newHarness(t, testConfig(func(c *Config) {
		c.BatchSize, c.Steps, c.LearningRate = 16, 50, 1e-9
		c.EarlyStopMonitor, c.EarlyStopPatience, c.EarlyStopMinDelta = "loss", 3, 1
	}), synthData(t, 64, false))
	res, err := h.Run()
	if err != nil {
		t.Fatal(err)
	}
	if res.Steps != 4 || !strings.Contains(res.Stopped, "early stopping") {
		t.Errorf("steps %d, stopped %q; want 4 and an early-stopping reason", res.Steps, res.Stopped)
	}
}

func TestMetricsLogAndSummary(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "metrics.jsonl")
	sum := filepath.Join(dir, "performance_summary.txt")
	h := newHarness(t, testConfig(func(c *Config) { c.BatchSize, c.Steps, c.MetricsLog, c.LogEvery, c.PerfSummary = 16, 5, log, 2, sum }), synthData(t, 64, false))
	if _, err := h.Run(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 4 { // the first step, steps 2, 4 and the last (5)
		t.Fatalf("%d lines: %q", len(lines), lines)
	}
	for _, l := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		for _, k := range []string{"step", "loss", "lr", "grad_norm", "step_ms", "epoch"} {
			if _, ok := rec[k]; !ok {
				t.Errorf("line %q lacks %q", l, k)
			}
		}
	}
	s, err := os.ReadFile(sum)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"device: SimpleGo (go)", "precision: 32", "batch: 16", "first step", "steady step", "steps/s", "peak host memory"} {
		if !strings.Contains(string(s), want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
	if PeakMemoryBytes() == 0 || math.IsNaN(float64(h.Perf().SteadyMedian())) {
		t.Error("no memory or timing")
	}
}

func TestPrecisionOnSimpleGo(t *testing.T) {
	b := testBackend(t)
	tests := []struct {
		in      Precision
		want    Precision
		wantErr string
	}{
		{Precision32, Precision32, ""},
		{PrecisionAuto, Precision32, ""},
		{PrecisionBF16Mixed, PrecisionBF16Mixed, ""},
		{Precision16Mixed, "", "no float16 support"},
	}
	for _, tc := range tests {
		got, err := ResolvePrecision(tc.in, b, false)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: err %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	// bf16-mixed on a pure-Go backend warns that it is slower than float32.
	var logs bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	_, _ = ResolvePrecision(PrecisionBF16Mixed, b, false)
	slog.SetDefault(prev)
	if !strings.Contains(logs.String(), "slower than float32") {
		t.Errorf("no warning that bf16-mixed is slow on %s: %q", b.Name(), logs.String())
	}
	// On gotrain's cpu backend it warns exactly when the products cannot
	// run on AVX-512 BF16 (the CPU lacks it, or GOTRAIN_CPU caps it).
	cb, err := cpubackend.New("")
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Finalize()
	logs.Reset()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	_, _ = ResolvePrecision(PrecisionBF16Mixed, cb, false)
	slog.SetDefault(prev)
	if warned, want := strings.Contains(logs.String(), "slower than float32"), gemm.BF16Path() != "avx512bf16"; warned != want {
		t.Errorf("bf16-mixed on the cpu backend (bfloat16 path %s): warned %v, want %v: %q", gemm.BF16Path(), warned, want, logs.String())
	}
	_, err = New(b, testConfig(func(c *Config) { c.Precision = Precision16Mixed }), mlp, losses.MeanSquaredError, synthData(t, 64, false))
	if err == nil || !strings.Contains(err.Error(), "Precision 16-mixed") || !strings.Contains(err.Error(), "no float16") {
		t.Errorf("New with 16-mixed on simplego: %v; want a clear error", err)
	}
	if IsAccelerator(b) {
		t.Error("simplego reported as an accelerator")
	}
}

func TestScheduleInGraphMatchesHost(t *testing.T) {
	cfg := testConfig(func(c *Config) {
		c.Optimizer, c.LearningRate, c.WarmupSteps, c.Cosine, c.MinLearningRate, c.BatchSize, c.Steps = OptimizerSGD, 0.1, 2, true, 0.01, 16, 6
	})
	h := newHarness(t, cfg, synthData(t, 64, false))
	for step := range 6 {
		if _, err := h.TrainStep(); err != nil {
			t.Fatal(err)
		}
		v := h.Context().GetVariableByScopeAndName("/"+optimizers.Scope, optimizers.ParamLearningRate)
		if v == nil {
			t.Fatal("no learning-rate variable")
		}
		got, _ := scalarValue(v.MustValue())
		if want := ScheduleValue(step, cfg, 6); math.Abs(got-want) > 1e-6 {
			t.Errorf("step %d: lr %g in graph, %g on host", step, got, want)
		}
	}
}

func TestBF16MixedTrains(t *testing.T) {
	run := func(p Precision) (*Harness, float64) {
		h := newHarness(t, testConfig(func(c *Config) { c.Precision, c.BatchSize, c.Steps, c.LearningRate = p, 16, 40, 0.02 }), synthData(t, 64, false))
		res, err := h.Run()
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		return h, res.Loss
	}
	h32, l32 := run(Precision32)
	h16, l16 := run(PrecisionBF16Mixed)
	t.Logf("final loss: float32 %g, bf16-mixed %g", l32, l16)
	first32 := h32.Perf().Steps
	if first32 != 40 {
		t.Fatalf("steps %d", first32)
	}
	if math.Abs(l16-l32) > 0.1*l32+0.01 {
		t.Errorf("final loss bf16-mixed %g, float32 %g", l16, l32)
	}
	for v := range h16.Context().IterVariables() {
		if v.ScopeAndName() == "/l1/w" && v.DType().String() != "Float32" {
			t.Errorf("master weight %s is %s, want Float32", v.ScopeAndName(), v.DType())
		}
	}
	if ComputeDType(h16.Context()).String() != "BFloat16" {
		t.Errorf("compute dtype %s", ComputeDType(h16.Context()))
	}
}

func TestResumeDir(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(func(c *Config) {
		c.NoCheckpoint, c.CheckpointDir, c.CheckpointEvery, c.KeepBest, c.Steps = false, dir, 1, 5, 3
	})
	h := newHarness(t, cfg, synthData(t, 64, false))
	if _, err := h.Run(); err != nil {
		t.Fatal(err)
	}
	dir = h.RunDir()
	files, err := (&Checkpointer{Dir: dir}).List()
	if err != nil || len(files) < 2 {
		t.Fatalf("checkpoints %v, %v; want at least 2", files, err)
	}
	for _, p := range []string{dir, files[0]} {
		if got, err := ResumeDir(p); err != nil || filepath.Clean(got) != filepath.Clean(dir) {
			t.Errorf("ResumeDir(%s) = %q, %v; want %s", p, got, err, dir)
		}
	}
	if _, err := ResumeDir(files[1]); err == nil || !strings.Contains(err.Error(), "newest checkpoint") || !strings.Contains(err.Error(), files[0]) {
		t.Errorf("ResumeDir(an older file) = %v; want an error naming the newest", err)
	}
	if _, err := ResumeDir(filepath.Join(dir, "absent")); err == nil || !strings.Contains(err.Error(), "absent") {
		t.Errorf("ResumeDir(absent) = %v", err)
	}
}
