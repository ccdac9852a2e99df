package train

import (
	"bytes"
	stdcontext "context"
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gomlx/gomlx/pkg/ml/train/losses"
	"github.com/gotrain/gotrain/device"
)

func TestProgressModes(t *testing.T) {
	tests := []struct {
		mode      string
		wantLines int // plain lines; -1: not checked
		wantANSI  bool
		wantEmpty bool
	}{
		{ProgressAuto, 2, false, false}, // a bytes.Buffer is not a terminal: plain lines
		{ProgressPlain, 2, false, false},
		{ProgressOff, 0, false, true},
		{ProgressBar, -1, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.mode, func(t *testing.T) {
			var buf bytes.Buffer
			h := newHarness(t, testConfig(func(c *Config) { c.Progress, c.ProgressInterval, c.Steps = tc.mode, time.Hour, 3 }), synthData(t, 64, false))
			h.SetProgressWriter(&buf)
			if _, err := h.Run(); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if tc.wantEmpty != (out == "") {
				t.Fatalf("output %q", out)
			}
			if strings.Contains(out, "\x1b[") != tc.wantANSI {
				t.Errorf("ANSI escapes: %q", out)
			}
			if tc.wantLines >= 0 && strings.Count(out, "\n") != tc.wantLines {
				t.Errorf("%d lines, want %d (first step and last): %q", strings.Count(out, "\n"), tc.wantLines, out)
			}
			if tc.mode == ProgressPlain || tc.mode == ProgressAuto {
				for _, want := range []string{"step 1/3", "step 3/3 (100.0%)", "samples/s", "ETA", "loss "} {
					if !strings.Contains(out, want) {
						t.Errorf("progress lacks %q: %q", want, out)
					}
				}
			}
			if tc.mode == ProgressBar && !strings.Contains(out, "3/3") {
				t.Errorf("bar output lacks the count: %q", out)
			}
		})
	}
}

func TestPlainProgressInterval(t *testing.T) {
	var buf bytes.Buffer
	now := time.Unix(0, 0)
	p := &plainProgress{w: &buf, interval: 10 * time.Second, now: func() time.Time { return now }}
	for step := int64(1); step <= 30; step++ {
		now = now.Add(time.Second)
		p.update(ProgressStatus{Step: step, Total: 30})
	}
	p.finish(ProgressStatus{Step: 30, Total: 30})
	// Steps 1, 11, 21 (every 10 s) and the final one.
	if got := strings.Count(buf.String(), "\n"); got != 4 {
		t.Errorf("%d lines, want 4:\n%s", got, buf.String())
	}
}

func TestIsTerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for name, wr := range map[string]interface{ Write([]byte) (int, error) }{"buffer": &bytes.Buffer{}, "pipe": w} {
		if IsTerminal(wr) {
			t.Errorf("%s taken for a terminal", name)
		}
	}
}

func TestGPUSampler(t *testing.T) {
	now := time.Unix(0, 0)
	calls := 0
	info := device.NVIDIAInfo{GPUs: []device.NVIDIAGPU{
		{Index: 0, UtilPercent: 40, MemoryUsedMB: 1000, MemoryTotalMB: 80000},
		{Index: 1, UtilPercent: 60, MemoryUsedMB: 3000, MemoryTotalMB: 80000},
	}}
	g := &gpuSampler{interval: 10 * time.Second, now: func() time.Time { return now },
		query: func(stdcontext.Context) device.NVIDIAInfo { calls++; return info }}
	tests := []struct {
		advance time.Duration
		fail    bool
		want    bool
	}{
		{0, false, true},                // the first record is sampled
		{5 * time.Second, false, false}, // too soon
		{6 * time.Second, false, true},
		{20 * time.Second, true, false}, // nvidia-smi failed: nothing added
	}
	for i, tc := range tests {
		now = now.Add(tc.advance)
		info.Err = ""
		if tc.fail {
			info.Err = "nvidia-smi failed"
		}
		rec := map[string]any{}
		g.sample(stdcontext.Background(), rec)
		if _, got := rec["gpu_util_percent"]; got != tc.want {
			t.Errorf("case %d: sampled %v, want %v (%v)", i, got, tc.want, rec)
		}
		if tc.want && (rec["gpu_util_percent"] != 50.0 || rec["gpu_mem_used_mib"] != 4000) {
			t.Errorf("case %d: %v", i, rec)
		}
	}
	if calls != 3 {
		t.Errorf("%d nvidia-smi calls, want 3", calls)
	}
	var nilSampler *gpuSampler
	nilSampler.sample(stdcontext.Background(), map[string]any{}) // no nvidia-smi: a no-op
}

func checkPNG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		t.Fatalf("%s: empty or unreadable (%v)", path, err)
	}
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: not a valid PNG: %v", path, err)
	}
	if b := img.Bounds(); b.Dx() < 100 || b.Dy() < 100 {
		t.Errorf("%s: %v image", path, b)
	}
}

func TestRunWritesPlots(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "metrics.jsonl")
	h := newHarness(t, testConfig(func(c *Config) {
		c.Steps, c.LogEvery, c.MetricsLog, c.PlotsDir, c.Progress = 4, 1, logPath, filepath.Join(dir, "plots"), ProgressOff
	}), synthData(t, 64, false))
	h.gpu = &gpuSampler{interval: 0, now: time.Now, query: func(stdcontext.Context) device.NVIDIAInfo {
		return device.NVIDIAInfo{GPUs: []device.NVIDIAGPU{{UtilPercent: 70, MemoryUsedMB: 10}}}
	}}
	res, err := h.Run()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"loss.png", "throughput.png", "learning_rate.png", "gpu_utilization.png"}
	if len(res.Plots) != len(want) {
		t.Fatalf("plots %v, want %v", res.Plots, want)
	}
	for _, name := range want {
		checkPNG(t, filepath.Join(dir, "plots", name))
	}
	if _, err := os.Stat(filepath.Join(dir, "plots", "accuracy.png")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("accuracy.png written without an accuracy metric (%v)", err)
	}
	recs, err := ReadMetricsLog(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 4 || recs[0]["samples_per_s"] == nil || recs[0]["gpu_util_percent"] != 70.0 {
		t.Errorf("metrics log: %v", recs)
	}
}

func TestPlotMetricsAccuracy(t *testing.T) {
	recs := []map[string]any{
		{"step": 1.0, "loss": 1.0, "accuracy": 0.5},
		{"step": 2.0, "event": "skipped"},
		{"step": 3.0, "loss": 0.5, "accuracy": 0.75},
	}
	dir := t.TempDir()
	files, err := PlotMetrics(recs, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 {
		t.Fatalf("files %v, want loss.png and accuracy.png", files)
	}
	for _, f := range files {
		checkPNG(t, f)
	}
}

func TestInterruptCheckpointsAndResumesExactly(t *testing.T) {
	const total, k = 6, 2
	cfg := func(dir string, resume bool) Config {
		return testConfig(func(c *Config) {
			c.BatchSize, c.Steps, c.NoCheckpoint, c.CheckpointDir, c.CheckpointEvery, c.Resume, c.Progress =
				16, total, false, dir, 100, resume, ProgressOff
		})
	}
	newH := func(c Config) *Harness {
		h, err := New(testBackend(t), c, noisyMLP, losses.MeanSquaredError, synthData(t, 64, false))
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	full := newH(cfg(t.TempDir(), false))
	if _, err := full.Run(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	plots := t.TempDir()
	firstCfg := cfg(dir, false)
	firstCfg.PlotsDir, firstCfg.LogEvery = plots, 5 // step k is neither a logging step nor the first: the interruption logs it
	first := newH(firstCfg)
	// The signal source is a context; cancelling it stands for SIGINT/SIGTERM.
	ctx, cancel := stdcontext.WithCancelCause(stdcontext.Background())
	first.SetStepHook(func(step int64, _ float64) {
		if step == k {
			cancel(errors.New("signal: interrupt"))
		}
	})
	res, err := first.RunContext(ctx)
	if !errors.Is(err, ErrInterrupted) || !strings.Contains(err.Error(), "signal: interrupt") {
		t.Fatalf("error %v, want ErrInterrupted with the cause", err)
	}
	if !res.Interrupted || res.Steps != k || res.Checkpoint == "" || len(res.Plots) == 0 {
		t.Fatalf("result %+v", res)
	}
	checkPNG(t, filepath.Join(plots, "loss.png"))
	if n := len(first.history); n != 2 || first.history[0]["step"] != int64(1) || first.history[1]["step"] != int64(k) {
		t.Errorf("logged %v, want lines for the first step and step %d", first.history, k)
	}
	second := newH(cfg(dir, true))
	res, err = second.Run()
	if err != nil {
		t.Fatal(err)
	}
	if res.Resumed != k || res.Steps != total {
		t.Fatalf("resumed %d, steps %d", res.Resumed, res.Steps)
	}
	wf, ws := weights(t, full), weights(t, second)
	if len(wf) != len(ws) {
		t.Fatalf("%d variables vs %d", len(wf), len(ws))
	}
	for name, b := range wf {
		if !bytes.Equal(b, ws[name]) {
			t.Errorf("variable %s differs after interrupt and resume", name)
		}
	}
	if full.Data().Position() != second.Data().Position() {
		t.Errorf("data position %+v vs %+v", full.Data().Position(), second.Data().Position())
	}
}

func TestNotifyContextCancelsOnSIGTERM(t *testing.T) {
	ctx, stop := NotifyContext(stdcontext.Background())
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("SIGTERM did not cancel the context")
	}
}

func TestInterruptBeforeFirstStep(t *testing.T) {
	dir := t.TempDir()
	h := newHarness(t, testConfig(func(c *Config) { c.NoCheckpoint, c.CheckpointDir, c.Progress = false, dir, ProgressOff }), synthData(t, 64, false))
	ctx, cancel := stdcontext.WithCancel(stdcontext.Background())
	cancel()
	res, err := h.RunContext(ctx)
	if !errors.Is(err, ErrInterrupted) || !errors.Is(err, stdcontext.Canceled) {
		t.Fatalf("error %v", err)
	}
	if !res.Interrupted || res.Steps != 0 || res.Checkpoint != "" {
		t.Errorf("result %+v", res)
	}
	if files, _ := os.ReadDir(dir); len(files) != 0 {
		t.Errorf("%d files written with no step done", len(files))
	}
}
