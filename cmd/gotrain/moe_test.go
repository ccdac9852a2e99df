package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/models/moe"
)

func TestMoETrainFlagDefaults(t *testing.T) {
	cmd := newMoETrainCmd(&globals{})
	for name, want := range map[string]string{
		"epochs": "5", "batch-size": "256", "experts": "8", "top-k": "2", "hidden": "256", "parallel": "data",
		"devices": "1", "precision": "32", "accumulate": "1", "dataset": "auto", "data-dir": "",
		"capacity-factor": "1.25", "balance-alpha": "0.01", "grow-experts": "false", "monitor-memory": "false",
		"out": "runs/moe", "optimizer": "adam", "lr": "0.006", "cosine": "true", "warmup-steps": "0", "warmup-fraction": "0.1", "steps": "0", "resume": "", "seed": "42",
		"early-stop-patience": "5", "download": "false",
	} {
		f := cmd.Flags().Lookup(name)
		if f == nil {
			t.Errorf("no --%s flag", name)
			continue
		}
		if f.DefValue != want {
			t.Errorf("--%s default %q, want %q", name, f.DefValue, want)
		}
	}
	for _, name := range []string{"plots-dir", "perf-summary"} {
		if cmd.Flags().Lookup(name) != nil {
			t.Errorf("--%s should not be offered (moe train writes to --out)", name)
		}
	}
}

func TestMoETrainDigitsJSON(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	stdout, stderr, err := run(t, "--json", "--device", "go", "moe", "train", "--dataset", "digits", "--experts", "4",
		"--hidden", "32", "--epochs", "6", "--batch-size", "64", "--lr", "0.005", "--progress", "off", "--capacity-factor", "2",
		"--grow-experts", "--grow-min-delta", "1", "--monitor-memory", "--out", out)
	if err != nil {
		t.Fatalf("moe train: %v\n%s\n%s", err, stdout, stderr)
	}
	var rep moe.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	if rep.Device != "go" || rep.Epochs != 6 || rep.StepsPerSecond <= 0 || rep.TestAccuracy < 0.8 {
		t.Errorf("report %+v: want device go, 6 epochs, steps/s > 0, accuracy >= 0.8", rep)
	}
	if len(rep.ExpertLoad) != rep.Experts || rep.Experts < 5 || len(rep.Grown) == 0 {
		t.Errorf("expert load %v for %d experts, grown %v: want one share per expert after a split", rep.ExpertLoad, rep.Experts, rep.Grown)
	}
	for _, f := range []string{"training_metrics.png", "expert_activations.png", "expert_device_distribution.png",
		"performance_summary.txt", "metrics.jsonl", "epochs.jsonl", "loss.png"} {
		if fi, err := os.Stat(filepath.Join(out, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	if ck, _ := filepath.Glob(filepath.Join(out, "checkpoints", "*")); len(ck) == 0 {
		t.Error("no checkpoint in --out/checkpoints")
	}
	sum, _ := os.ReadFile(filepath.Join(out, "performance_summary.txt"))
	for _, want := range []string{"steady step", "expert 0", "experts per device"} {
		if !strings.Contains(string(sum), want) {
			t.Errorf("performance summary lacks %q:\n%s", want, sum)
		}
	}
}

func TestMoETrainErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"mnist missing", []string{"--dataset", "mnist", "--data-dir", "DIR"}, "MNIST not found in DIR"},
		{"bad parallel", []string{"--parallel", "tensor"}, "--parallel"},
		{"bad top-k", []string{"--dataset", "digits", "--top-k", "3"}, "--top-k 3"},
		{"bad hidden", []string{"--hidden", "256,x"}, "--hidden"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := []string{"--device", "go", "moe", "train", "--out", filepath.Join(dir, "out"), "--progress", "off"}
			tc.want = strings.ReplaceAll(tc.want, "DIR", dir)
			for _, a := range tc.args {
				args = append(args, strings.ReplaceAll(a, "DIR", dir))
			}
			_, _, err := run(t, args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestMoETrainParallelExpertOnOneDevice checks that `moe train --parallel
// expert` on one device reports what ran: data parallel (single-device),
// with what was requested and why, in the JSON and in the text.
func TestMoETrainParallelExpertOnOneDevice(t *testing.T) {
	args := []string{"--device", "go", "moe", "train", "--dataset", "digits", "--experts", "2", "--hidden", "8",
		"--epochs", "1", "--batch-size", "64", "--progress", "off", "--parallel", "expert"}
	stdout, stderr, err := run(t, append(append([]string{"--json"}, args...), "--out", filepath.Join(t.TempDir(), "run"))...)
	if err != nil {
		t.Fatalf("moe train: %v\n%s\n%s", err, stdout, stderr)
	}
	var rep moe.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	const why = "expert parallelism was requested but needs more than one device"
	if rep.Devices != 1 || rep.Parallel != "data" || rep.ParallelRequested != "expert" || !strings.HasPrefix(rep.ParallelNote, why) {
		t.Errorf("devices %d, parallel %q, requested %q, note %q; want 1, data, expert and %q...",
			rep.Devices, rep.Parallel, rep.ParallelRequested, rep.ParallelNote, why)
	}
	stdout, stderr, err = run(t, append(args, "--out", filepath.Join(t.TempDir(), "run"))...)
	if err != nil {
		t.Fatalf("moe train: %v\n%s\n%s", err, stdout, stderr)
	}
	if !strings.Contains(stdout, "device:        go (1 device(s), data parallel)\nparallel:      "+why) {
		t.Errorf("text report does not say what ran and why:\n%s", stdout)
	}
}
