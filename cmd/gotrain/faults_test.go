package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/forest"
	"github.com/gotrain/gotrain/models/charlstm"
	"github.com/gotrain/gotrain/models/transformer"
	"github.com/gotrain/gotrain/signal"
	"github.com/gotrain/gotrain/signal/modclass"
	"github.com/gotrain/gotrain/train"
)

// killRounds is how many times each command of TestKillLeavesGoodState is
// killed: a short loop by default, a long one with -kill-rounds 200.
var killRounds = flag.Int("kill-rounds", 10, "SIGKILLs per command in TestKillLeavesGoodState")

// childEnv makes the test binary run gotrain's main instead of the tests
// (TestMain), so that a test can kill a real gotrain process.
const childEnv = "GOTRAIN_TEST_AS_GOTRAIN"

// kills counts the processes killed by killAfter.
var kills atomic.Int64

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		injectBenchFault()
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// gotrainProcess starts gotrain with args as a child process.
func gotrainProcess(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), childEnv+"=1", "PJRT_PLUGIN_LIBRARY_PATH="+t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// runToEnd runs gotrain with args to completion and returns how long it took.
func runToEnd(t *testing.T, args ...string) time.Duration {
	t.Helper()
	t0 := time.Now()
	cmd := gotrainProcess(t, args...)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("gotrain %s: %v", strings.Join(args, " "), err)
	}
	return time.Since(t0)
}

// killAfter starts gotrain with args and kills it with SIGKILL after d
// (it may finish first). It reports whether it was killed.
func killAfter(t *testing.T, d time.Duration, args ...string) (killed bool) {
	return signalAfter(t, d, os.Kill, args...)
}

// signalAfter starts gotrain with args and sends it sig after d (it may
// finish first), then waits for it. It reports whether it was signalled.
func signalAfter(t *testing.T, d time.Duration, sig os.Signal, args ...string) (killed bool) {
	t.Helper()
	defer func() {
		if killed {
			kills.Add(1)
		}
	}()
	cmd := gotrainProcess(t, args...)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
		return false
	case <-time.After(d):
		_ = cmd.Process.Signal(sig)
		<-done
		return true
	}
}

// finalFiles returns the files under dir whose names are final: not the
// hidden temporary files an atomic write uses before its rename.
func finalFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && !strings.HasPrefix(d.Name(), ".") {
			out = append(out, p)
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return out
}

// TestKillLeavesGoodState kills training, `signal dataset --force` (every
// other time with Ctrl-C, SIGINT) and `forest train --save` with SIGKILL at
// seeded random moments and checks
// after each kill that every file under its final name is complete and
// valid and that the good state from before the kill survives: the earlier
// run's checkpoint, the data set being replaced, the model being
// overwritten.
func TestKillLeavesGoodState(t *testing.T) {
	if testing.Short() {
		t.Skip("kills real processes")
	}
	rng := rand.New(rand.NewPCG(17, uint64(*killRounds)))
	delay := func(full time.Duration) time.Duration {
		return time.Duration(rng.Float64() * 1.2 * float64(full))
	}
	defer func() { t.Logf("%d processes killed", kills.Load()) }()
	t.Run("lm lstm train", func(t *testing.T) {
		_, b, err := device.Open("go")
		if err != nil {
			t.Fatal(err)
		}
		defer b.Finalize()
		dir := t.TempDir()
		corpus := filepath.Join(dir, "corpus.txt")
		if err := os.WriteFile(corpus, []byte(strings.Repeat("abcdefghijklmnopqrstuvwxyz0123456789 ", 6)), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "ckpt")
		args := []string{"--device", "go", "--log-level", "error", "lm", "lstm", "train", "--data", corpus, "--out", out,
			"--hidden-size", "16", "--layers", "1", "--seq-length", "8", "--step", "1", "--batch-size", "16",
			"--steps", "40", "--checkpoint-every", "1", "--keep-best", "1", "--progress", "off"}
		full := runToEnd(t, args...)
		var firstRun string // the first run's folder: it keeps a valid checkpoint
		for _, f := range finalFiles(t, out) {
			if strings.HasSuffix(f, ".gtc") {
				firstRun = filepath.Dir(f)
			}
		}
		if firstRun == "" {
			t.Fatal("the first run wrote no checkpoint")
		}
		for round := range *killRounds {
			a := args
			if round%2 == 1 {
				a = append(a[:len(a):len(a)], "--resume", "--steps", "60")
			}
			killAfter(t, delay(full), a...)
			for _, f := range finalFiles(t, out) {
				switch {
				case filepath.Base(f) == train.ManifestName:
					if _, err := train.ReadManifest(filepath.Dir(f)); err != nil {
						t.Errorf("round %d: %v", round, err)
					}
				case strings.HasSuffix(f, ".gtc"):
					if _, err := charlstm.Load(b, f); err != nil {
						t.Errorf("round %d: checkpoint %s does not load: %v", round, f, err)
					}
				default:
					t.Errorf("round %d: unexpected file %s", round, f)
				}
			}
			if ckpts, _ := filepath.Glob(filepath.Join(firstRun, "*.gtc")); len(ckpts) == 0 {
				t.Errorf("round %d: the first run's checkpoints are gone", round)
			}
		}
	})
	t.Run("signal dataset --force", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "set")
		args := []string{"signal", "dataset", "--out", out, "--per-class", "16", "--seconds", "0.02", "--force"}
		full := runToEnd(t, args...)
		for round := range *killRounds {
			a := append(args[:len(args):len(args)], "--seed", string(rune('2'+round%8)))
			if round%2 == 0 {
				killAfter(t, delay(full), a...)
			} else {
				// Ctrl-C: the old set stays and the new one's hidden
				// folder is removed.
				pattern := filepath.Join(filepath.Dir(out), ".set.tmp-*")
				before, _ := filepath.Glob(pattern) // left by SIGKILLs
				signalAfter(t, delay(full), os.Interrupt, a...)
				if after, _ := filepath.Glob(pattern); len(after) > len(before) {
					t.Errorf("round %d: Ctrl-C left a build folder: %v", round, after)
				}
			}
			d, err := modclass.Load(out)
			if err != nil {
				t.Fatalf("round %d: the data set does not load after a kill: %v", round, err)
			}
			if d.Rows != 16*8 || d.Info == nil || d.Info.Rows != d.Rows {
				t.Errorf("round %d: %d rows (manifest %+v); want a complete set of 128", round, d.Rows, d.Info)
			}
		}
	})
	t.Run("forest train --save", func(t *testing.T) {
		model := filepath.Join(t.TempDir(), "model.gtf")
		args := []string{"--log-level", "error", "forest", "train", "--dataset", "digits", "--trees", "30", "--save", model}
		full := runToEnd(t, args...)
		for round := range *killRounds {
			a := append(args[:len(args):len(args)], "--seed", string(rune('1'+round%9)))
			killAfter(t, delay(full), a...)
			if _, err := forest.LoadFile(model); err != nil {
				t.Fatalf("round %d: the model does not load after a kill: %v", round, err)
			}
			if files := finalFiles(t, filepath.Dir(model)); len(files) != 1 {
				t.Errorf("round %d: files %v; want the model only", round, files)
			}
		}
	})
}

// TestKillOtherCommands applies the interruption fault class (SIGKILL at
// seeded random moments, as TestKillLeavesGoodState) to the other commands
// that write files: after each kill the output of an earlier complete run
// is still there and valid, or replaced by a complete new one.
func TestKillOtherCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("kills real processes")
	}
	rng := rand.New(rand.NewPCG(23, uint64(*killRounds)))
	f := newFaultFixtures(t)
	_, b, err := device.Open("go")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Finalize()
	tcorpus, _ := transformerFiles(t)
	dir := t.TempDir()
	pred, rec, csv, model := filepath.Join(dir, "pred.csv"), filepath.Join(dir, "rec"), filepath.Join(dir, "f.csv"), filepath.Join(dir, "m.gtf")
	tout, mout := filepath.Join(dir, "tr"), filepath.Join(dir, "moe")
	var goodPred []byte
	for _, tc := range []struct {
		name string
		args func(round int) []string
		// check returns what is wrong with the output after a kill.
		check func() error
	}{
		{"forest predict --out", func(int) []string {
			return []string{"forest", "predict", "--model", f.model, "--data", f.predictCSV, "--out", pred}
		}, func() error {
			b, err := os.ReadFile(pred)
			if err == nil && !bytes.Equal(b, goodPred) {
				err = fmt.Errorf("predictions differ from the complete run's:\n%s", b)
			}
			return err
		}},
		{"signal synth --out (SigMF)", func(round int) []string {
			return []string{"signal", "synth", "--samples", "200000", "--seed", fmt.Sprint(round + 1), "--out", rec}
		}, func() error {
			r, err := signal.Load(rec, "", 0)
			if err == nil && len(r.Samples) != 200000 {
				err = fmt.Errorf("%d samples", len(r.Samples))
			}
			return err
		}},
		{"signal features --csv", func(int) []string {
			return []string{"signal", "features", "--in", f.record + ".sigmf-meta", "--csv", csv}
		}, func() error {
			b, err := os.ReadFile(csv)
			if n := strings.Count(string(b), "\n"); err == nil && n != 2 {
				err = fmt.Errorf("%d lines", n)
			}
			return err
		}},
		{"signal classify train --out", func(round int) []string {
			return []string{"signal", "classify", "train", "--data", f.dataset, "--test-fraction", "0.25", "--trees", "20",
				"--seed", fmt.Sprint(round), "--out", model}
		}, func() error { _, err := forest.LoadFile(model); return err }},
		{"lm transformer train", func(round int) []string {
			a := append([]string{"--device", "go", "--log-level", "error", "lm", "transformer", "train", "--pretrain-data", tcorpus,
				"--out", tout, "--steps", "20", "--checkpoint-every", "1"}, transformerTiny...)
			if round%2 == 1 {
				a = append(a, "--resume", "--steps", "30")
			}
			return a
		}, func() error {
			for _, p := range finalFiles(t, tout) {
				if strings.HasSuffix(p, ".gtc") {
					if _, err := transformer.Load(b, p); err != nil {
						return err
					}
				} else if _, err := train.ReadManifest(filepath.Dir(p)); err != nil {
					return err
				}
			}
			return nil
		}},
		{"moe train", func(round int) []string {
			a := []string{"--device", "go", "--log-level", "error", "moe", "train", "--dataset", "digits", "--out", mout, "--steps", "20",
				"--hidden", "8", "--experts", "2", "--checkpoint-every", "1", "--progress", "off"}
			if round%2 == 1 {
				a = append(a, "--resume", "--steps", "30")
			}
			return a
		}, func() error {
			// Every line of the epoch log (written atomically) is whole;
			// metrics.jsonl is appended to and may end in a partial line.
			for _, p := range finalFiles(t, mout) {
				if filepath.Base(p) == "epochs.jsonl" {
					b, err := os.ReadFile(p)
					if err != nil {
						return err
					}
					for i, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
						if !json.Valid([]byte(l)) {
							return fmt.Errorf("%s line %d is not whole: %q", p, i+1, l)
						}
					}
				}
			}
			return nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			full := runToEnd(t, tc.args(0)...)
			if tc.name == "forest predict --out" {
				goodPred, _ = os.ReadFile(pred)
			}
			if err := tc.check(); err != nil {
				t.Fatalf("after a complete run: %v", err)
			}
			for round := range *killRounds {
				killAfter(t, time.Duration(rng.Float64()*1.2*float64(full)), tc.args(round)...)
				if err := tc.check(); err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
			}
			if tc.name == "moe train" {
				// After all the kills, a run still resumes.
				if _, _, err := run(t, append(tc.args(1), "--steps", "40")...); err != nil {
					t.Errorf("resume after the kills: %v", err)
				}
			}
		})
	}
}
