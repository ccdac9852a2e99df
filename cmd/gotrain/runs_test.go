package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// lstmRun trains the tiny LSTM of lmTiny into out for steps steps, with
// extra flags, and returns the error.
func lstmRun(t *testing.T, corpus, out string, steps string, extra ...string) (string, error) {
	t.Helper()
	args := append([]string{"--device", "go", "lm", "lstm", "train", "--data", corpus, "--out", out, "--steps", steps,
		"--progress", "off", "--keep-best", "0"}, lmTiny...)
	_, errOut, err := run(t, append(args, extra...)...)
	return errOut, err
}

// checkpointsUnder returns the checkpoint files in the run folders under dir.
func checkpointsUnder(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "run-*", "ckpt-*.gtc"))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestRunsSharingOutKeepTheirCheckpoints checks that two training runs with
// different settings and the same --out each keep their checkpoint, in
// either order.
func TestRunsSharingOutKeepTheirCheckpoints(t *testing.T) {
	corpus := lmCorpus(t)
	out := filepath.Join(t.TempDir(), "checkpoints")
	if _, err := lstmRun(t, corpus, out, "3"); err != nil {
		t.Fatal(err)
	}
	if _, err := lstmRun(t, corpus, out, "2", "--hidden-size", "8"); err != nil {
		t.Fatal(err)
	}
	if files := checkpointsUnder(t, out); len(files) != 2 || filepath.Dir(files[0]) == filepath.Dir(files[1]) {
		t.Fatalf("checkpoints %v; want one in each run's folder", files)
	}
	// Resuming picks the run of the same architecture, whichever is newer.
	if _, err := lstmRun(t, corpus, out, "4", "--resume"); err != nil {
		t.Fatalf("resume the hidden-16 run: %v", err)
	}
	files := checkpointsUnder(t, out)
	var steps []string
	for _, f := range files {
		steps = append(steps, filepath.Base(f))
	}
	if len(files) != 2 || !strings.Contains(strings.Join(steps, " "), "ckpt-000000000004.gtc") || !strings.Contains(strings.Join(steps, " "), "ckpt-000000000002.gtc") {
		t.Errorf("after resuming: %v; want the resumed run at step 4 and the other still at step 2", steps)
	}
}

// TestResumeRefusesOtherModels checks that a checkpoint of another model
// (a transformer's, a MoE's) is refused by lm lstm train --resume, and an
// LSTM's by moe train --resume, instead of training fresh weights.
func TestResumeRefusesOtherModels(t *testing.T) {
	corpus := lmCorpus(t)
	tcorpus, _ := transformerFiles(t)
	tout := filepath.Join(t.TempDir(), "tr")
	targs := append([]string{"--device", "go", "lm", "transformer", "train", "--pretrain-data", tcorpus, "--out", tout, "--steps", "1"}, transformerTiny...)
	if _, _, err := run(t, targs...); err != nil {
		t.Fatal(err)
	}
	tckpt := checkpointsUnder(t, filepath.Join(tout, "pretrain"))
	if len(tckpt) != 1 {
		t.Fatalf("transformer checkpoints %v", tckpt)
	}
	mout := t.TempDir()
	if _, _, err := run(t, "--device", "go", "moe", "train", "--dataset", "digits", "--out", mout, "--steps", "1", "--hidden", "8",
		"--experts", "2", "--progress", "off"); err != nil {
		t.Fatal(err)
	}
	mckpt := checkpointsUnder(t, filepath.Join(mout, "checkpoints"))
	if len(mckpt) != 1 {
		t.Fatalf("moe checkpoints %v", mckpt)
	}
	lout := filepath.Join(t.TempDir(), "lstm")
	if _, err := lstmRun(t, corpus, lout, "2"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"transformer into lm lstm", append([]string{"--device", "go", "lm", "lstm", "train", "--data", corpus, "--steps", "3", "--resume=" + tckpt[0]}, lmTiny...)},
		{"moe into lm lstm", append([]string{"--device", "go", "lm", "lstm", "train", "--data", corpus, "--steps", "3", "--resume=" + mckpt[0]}, lmTiny...)},
		{"lm lstm into moe", []string{"--device", "go", "moe", "train", "--dataset", "digits", "--out", t.TempDir(), "--steps", "2", "--hidden", "8",
			"--experts", "2", "--progress", "off", "--steps", "4", "--resume=" + checkpointsUnder(t, lout)[0]}},
	} {
		_, _, err := run(t, tc.args...)
		if err == nil || !(strings.Contains(err.Error(), "trains a") || strings.Contains(err.Error(), "architecture")) {
			t.Errorf("%s: %v; want a refusal naming the other model", tc.name, err)
		}
	}
}

// TestResumeFromCorruptCheckpointsFails checks that --resume from a run
// whose every checkpoint is truncated fails, naming each file, for the
// LSTM and for moe (which said nothing before).
func TestResumeFromCorruptCheckpointsFails(t *testing.T) {
	corpus := lmCorpus(t)
	lout := filepath.Join(t.TempDir(), "lstm")
	if _, err := lstmRun(t, corpus, lout, "2", "--checkpoint-every", "1", "--keep-best", "2"); err != nil {
		t.Fatal(err)
	}
	mout := t.TempDir()
	margs := []string{"--device", "go", "moe", "train", "--dataset", "digits", "--out", mout, "--hidden", "8", "--experts", "2", "--progress", "off"}
	if _, _, err := run(t, append(margs, "--steps", "1")...); err != nil {
		t.Fatal(err)
	}
	files := append(checkpointsUnder(t, lout), checkpointsUnder(t, filepath.Join(mout, "checkpoints"))...)
	if len(files) != 3 {
		t.Fatalf("checkpoints %v; want 2 + 1", files)
	}
	for _, f := range files {
		if err := os.Truncate(f, 64); err != nil {
			t.Fatal(err)
		}
	}
	_, errL := lstmRun(t, corpus, lout, "3", "--resume")
	_, _, errM := run(t, append(margs, "--steps", "2", "--resume")...)
	for i, err := range []error{errL, errM} {
		if err == nil || !strings.Contains(err.Error(), "no valid checkpoint") {
			t.Errorf("command %d: %v; want a failure, not a fresh start", i, err)
			continue
		}
		for _, f := range files {
			if strings.Contains(f, []string{lout, mout}[i]) && !strings.Contains(err.Error(), filepath.Base(f)) {
				t.Errorf("command %d: the error does not name %s: %v", i, filepath.Base(f), err)
			}
		}
	}
}
