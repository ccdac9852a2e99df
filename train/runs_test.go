package train

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/train/losses"
)

// runConfig is a checkpointing configuration of steps steps into parent,
// for a run of kind with architecture arch.
func runConfig(parent, kind, arch string, steps int, resume bool) Config {
	return testConfig(func(c *Config) {
		c.BatchSize, c.Steps, c.NoCheckpoint, c.CheckpointDir, c.CheckpointEvery, c.KeepBest = 16, steps, false, parent, 1, 0
		c.Run, c.Resume = RunInfo{Kind: kind, Arch: arch, Data: "data-1"}, resume
	})
}

// TestRunsKeepTheirCheckpoints checks that two runs given the same
// checkpoint folder each write into a folder of their own with a manifest,
// and that the second run's pruning leaves the first run's checkpoint.
func TestRunsKeepTheirCheckpoints(t *testing.T) {
	parent := t.TempDir()
	var dirs []string
	for _, arch := range []string{`{"hidden":8}`, `{"hidden":16}`} {
		h := newHarness(t, runConfig(parent, "mlp", arch, 3, false), synthData(t, 64, false))
		if _, err := h.Run(); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, h.RunDir())
	}
	if dirs[0] == dirs[1] || filepath.Dir(dirs[0]) != parent || filepath.Dir(dirs[1]) != parent {
		t.Fatalf("run folders %q: want two different folders in %s", dirs, parent)
	}
	for i, dir := range dirs {
		files, err := (&Checkpointer{Dir: dir}).List()
		if err != nil || len(files) != 1 || !strings.HasSuffix(files[0], "ckpt-000000000003.gtc") {
			t.Errorf("run %d: checkpoints %v, %v; want its last one (step 3)", i, files, err)
		}
		m, err := ReadManifest(dir)
		if err != nil || m.Kind != "mlp" || m.Run != filepath.Base(dir) || m.Data != "data-1" || m.Version == "" || m.Created.IsZero() {
			t.Errorf("run %d: manifest %+v, %v", i, m, err)
		}
	}
}

// TestResumePicksNewestCompatibleRun checks that resuming a folder of runs
// continues the newest run of the same kind and architecture, in its own
// folder, and that a run of another kind is never resumed.
func TestResumePicksNewestCompatibleRun(t *testing.T) {
	parent := t.TempDir()
	run := func(arch string, steps int) string {
		h := newHarness(t, runConfig(parent, "mlp", arch, steps, false), synthData(t, 64, false))
		if _, err := h.Run(); err != nil {
			t.Fatal(err)
		}
		return h.RunDir()
	}
	a := run("A", 2)
	time.Sleep(20 * time.Millisecond) // distinct modification times
	b := run("B", 3)
	if a == b {
		t.Fatal("one folder for two runs")
	}
	var warned []string
	h := newHarness(t, runConfig(parent, "mlp", "A", 4, true), synthData(t, 64, false))
	h.SetLogger(func(msg string) { warned = append(warned, msg) })
	res, err := h.Run()
	if err != nil {
		t.Fatal(err)
	}
	if h.RunDir() != a || res.Resumed != 2 || res.Steps != 4 {
		t.Errorf("resumed %s at step %d (to %d); want run %s at step 2", h.RunDir(), res.Resumed, res.Steps, a)
	}
	if !strings.Contains(strings.Join(warned, "\n"), "skipping run "+b) {
		t.Errorf("no warning about the incompatible run %s: %q", b, warned)
	}
	if files, _ := (&Checkpointer{Dir: a}).List(); len(files) != 1 || !strings.HasSuffix(files[0], "ckpt-000000000004.gtc") {
		t.Errorf("run A after resuming: %v; want its step-4 checkpoint only", files)
	}
	// Naming a run folder resumes that run, if compatible.
	h = newHarness(t, runConfig(b, "mlp", "B", 5, true), synthData(t, 64, false))
	if res, err := h.Run(); err != nil || h.RunDir() != b || res.Resumed != 3 {
		t.Errorf("resume named run B: dir %s, resumed %d, %v", h.RunDir(), res.Resumed, err)
	}
	h = newHarness(t, runConfig(b, "mlp", "A", 5, true), synthData(t, 64, false))
	if _, err := h.Run(); err == nil || !strings.Contains(err.Error(), "architecture") {
		t.Errorf("resume run B with architecture A: %v; want an architecture error", err)
	}
	// Another kind: nothing to resume, an error naming what was skipped.
	h = newHarness(t, runConfig(parent, "lstm", "A", 5, true), synthData(t, 64, false))
	_, err = h.Run()
	if !errors.Is(err, ErrNoCheckpoint) || !strings.Contains(err.Error(), "trains a mlp model, not lstm") {
		t.Errorf("resume another kind: %v; want ErrNoCheckpoint naming the skipped runs", err)
	}
}

// TestResumeWithNothingValidFails checks that --resume never silently
// starts afresh: an empty folder and a run whose every checkpoint is
// corrupt are errors, and each corrupt file is named.
func TestResumeWithNothingValidFails(t *testing.T) {
	h := newHarness(t, runConfig(t.TempDir(), "mlp", "A", 3, true), synthData(t, 64, false))
	if _, err := h.Run(); !errors.Is(err, ErrNoCheckpoint) {
		t.Errorf("resume from an empty folder: %v; want ErrNoCheckpoint", err)
	}
	if h.Step() != 0 {
		t.Errorf("trained %d steps after a failed resume", h.Step())
	}
	parent := t.TempDir()
	cfg := runConfig(parent, "mlp", "A", 2, false)
	cfg.KeepBest = 3
	h = newHarness(t, cfg, synthData(t, 64, false))
	if _, err := h.Run(); err != nil {
		t.Fatal(err)
	}
	files, _ := (&Checkpointer{Dir: h.RunDir()}).List()
	if len(files) != 2 {
		t.Fatalf("checkpoints %v, want 2", files)
	}
	for _, f := range files {
		if err := os.Truncate(f, 100); err != nil {
			t.Fatal(err)
		}
	}
	h = newHarness(t, runConfig(parent, "mlp", "A", 3, true), synthData(t, 64, false))
	_, err := h.Run()
	if !errors.Is(err, ErrNoCheckpoint) {
		t.Fatalf("resume with only corrupt checkpoints: %v; want ErrNoCheckpoint", err)
	}
	for _, f := range files {
		if !strings.Contains(err.Error(), filepath.Base(f)) {
			t.Errorf("error does not name the corrupt %s: %v", filepath.Base(f), err)
		}
	}
}

// TestResumeFlatFolder checks that checkpoints written before run folders
// (directly in the checkpoint folder, without a manifest) still resume.
func TestResumeFlatFolder(t *testing.T) {
	flat := t.TempDir()
	h := newHarness(t, runConfig(flat, "mlp", "A", 2, false), synthData(t, 64, false))
	if _, err := h.Run(); err != nil {
		t.Fatal(err)
	}
	// Move the run's checkpoint to the flat layout of earlier releases.
	files, _ := (&Checkpointer{Dir: h.RunDir()}).List()
	if len(files) != 1 {
		t.Fatalf("checkpoints %v", files)
	}
	if err := os.Rename(files[0], filepath.Join(flat, filepath.Base(files[0]))); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(h.RunDir()); err != nil {
		t.Fatal(err)
	}
	h = newHarness(t, runConfig(flat, "mlp", "A", 3, true), synthData(t, 64, false))
	res, err := h.Run()
	if err != nil || res.Resumed != 2 || h.RunDir() != flat {
		t.Errorf("resume a flat folder: resumed %d in %s, %v; want step 2 in %s", res.Resumed, h.RunDir(), err, flat)
	}
}

// TestResumeIntoAnotherModelFails checks that a checkpoint without a
// manifest (the layout of earlier releases) that lacks the model's
// trainable variables is refused on the first step instead of training
// fresh weights.
func TestResumeIntoAnotherModelFails(t *testing.T) {
	flat := t.TempDir()
	h := newHarness(t, runConfig(flat, "", "", 2, false), synthData(t, 64, false))
	if _, err := h.Run(); err != nil {
		t.Fatal(err)
	}
	files, _ := (&Checkpointer{Dir: h.RunDir()}).List()
	if err := os.Rename(files[0], filepath.Join(flat, filepath.Base(files[0]))); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(h.RunDir()); err != nil {
		t.Fatal(err)
	}
	// The same layers under other scopes: another model.
	other := func(ctx *context.Context, spec any, inputs []*graph.Node) []*graph.Node {
		return mlp(ctx.In("other"), spec, inputs)
	}
	h2, err := New(testBackend(t), runConfig(flat, "", "", 4, true), other, losses.MeanSquaredError, synthData(t, 64, false))
	if err != nil {
		t.Fatal(err)
	}
	_, err = h2.Run()
	if err == nil || !strings.Contains(err.Error(), "another model") || !strings.Contains(err.Error(), "/other/") {
		t.Errorf("resume another model's checkpoint: %v; want a refusal naming its variables", err)
	}
	// The same model resumes.
	h3 := newHarness(t, runConfig(flat, "", "", 4, true), synthData(t, 64, false))
	if res, err := h3.Run(); err != nil || res.Resumed != 2 {
		t.Errorf("resume the same model: %+v, %v", res, err)
	}
}

// TestResumable checks what Resumable says of a folder: nothing there, a
// run folder holding only its manifest (killed before its first
// checkpoint) and one with only a corrupt checkpoint are false; a run with
// a valid checkpoint is true.
func TestResumable(t *testing.T) {
	want := RunInfo{Kind: "mlp", Arch: "A"}
	parent := t.TempDir()
	if ok, err := Resumable(filepath.Join(parent, "absent"), want); ok || err != nil {
		t.Errorf("absent folder: %v, %v", ok, err)
	}
	if err := writeManifest(filepath.Join(parent, "run-x"), &Manifest{Format: manifestFormat, Run: "run-x", RunInfo: want}); err != nil {
		t.Fatal(err)
	}
	if ok, err := Resumable(parent, want); ok || err != nil {
		t.Errorf("a run with only its manifest: %v, %v; want false", ok, err)
	}
	h := newHarness(t, runConfig(parent, "mlp", "A", 2, false), synthData(t, 64, false))
	if _, err := h.Run(); err != nil {
		t.Fatal(err)
	}
	if ok, err := Resumable(parent, want); !ok || err != nil {
		t.Errorf("a run with a checkpoint: %v, %v; want true", ok, err)
	}
	if ok, _ := Resumable(parent, RunInfo{Kind: "lstm"}); ok {
		t.Error("another kind's run counts as resumable")
	}
	files, _ := (&Checkpointer{Dir: h.RunDir()}).List()
	for _, f := range files {
		if err := os.Truncate(f, 50); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := Resumable(parent, want); ok || err != nil {
		t.Errorf("only corrupt checkpoints: %v, %v; want false", ok, err)
	}
}
