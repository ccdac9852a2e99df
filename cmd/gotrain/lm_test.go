package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/models/text"
)

// lmCorpus writes a small corpus in which each character determines the next.
func lmCorpus(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "alphabet.txt")
	if err := os.WriteFile(p, []byte(strings.Repeat("abcdefghijklmnopqrstuvwxyz0123456789 ", 6)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// lmTiny are the flags of a tiny, fast model.
var lmTiny = []string{"--hidden-size", "16", "--layers", "1", "--seq-length", "8", "--step", "1",
	"--batch-size", "16", "--lr", "0.01"}

func TestLMTrainFlagDefaults(t *testing.T) {
	cmd := newLMTrainCmd(&globals{})
	for name, want := range map[string]string{
		"epochs": "50", "batch-size": "32", "hidden-size": "512", "layers": "2", "seq-length": "100",
		"step": "3", "lr": "0.002", "clip-norm": "5", "early-stop-patience": "20", "early-stop-monitor": "val_loss", "eval-every": "200",
		"resume": "", "no-checkpoint": "false", "precision": "32", "steps": "0", "data": "", "out": "checkpoints",
		"seed": "42", "cosine": "false", "warmup-steps": "0", "time-limit": "0s",
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
	// The seed's spellings still work, hidden and deprecated.
	for old, want := range map[string]string{"learning-rate": "0.002", "patience": "20", "max-steps": "0", "checkpoint-dir": "checkpoints"} {
		f := cmd.Flags().Lookup(old)
		if f == nil || !f.Hidden || f.Deprecated == "" || f.DefValue != want {
			t.Errorf("--%s: %+v; want a hidden, deprecated alias with default %s", old, f, want)
		}
	}
}

func TestLMTrainResumeSample(t *testing.T) {
	data := lmCorpus(t)
	dir := filepath.Join(t.TempDir(), "ckpt")
	args := append([]string{"--json", "--device", "go", "lm", "lstm", "train", "--data", data, "--out", dir}, lmTiny...)
	out, _, err := run(t, append(args, "--steps", "120")...)
	if err != nil {
		t.Fatalf("train: %v\n%s", err, out)
	}
	var rep struct {
		Device  string   `json:"device"`
		ValLoss *float64 `json:"val_loss_nats_per_char"`
		ValPPL  *float64 `json:"val_perplexity"`
		Result  struct {
			Vocab int `json:"vocab"`
			Train struct {
				Steps      int64   `json:"steps"`
				Loss       float64 `json:"loss"`
				Resumed    int64   `json:"resumed"`
				Checkpoint string  `json:"checkpoint"`
			} `json:"train"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	if rep.Device != "go" || rep.Result.Vocab != 37 || rep.Result.Train.Steps != 120 || rep.ValLoss == nil || rep.ValPPL == nil || rep.Result.Train.Checkpoint == "" {
		t.Fatalf("report: %s", out)
	}
	ckpt := rep.Result.Train.Checkpoint

	// Resuming from the directory continues the run.
	out, _, err = run(t, append(args, "--steps", "130", "--resume="+dir)...)
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Result.Train.Resumed != 120 || rep.Result.Train.Steps != 130 {
		t.Errorf("resumed at %d, ended at %d; want 120, 130", rep.Result.Train.Resumed, rep.Result.Train.Steps)
	}
	// An older checkpoint file is refused: the harness resumes from the newest.
	if _, _, err := run(t, append(args, "--steps", "140", "--resume="+ckpt)...); err == nil || !strings.Contains(err.Error(), "newest checkpoint") {
		t.Errorf("--resume with an older file: %v", err)
	}

	sample := func(extra ...string) string {
		t.Helper()
		out, _, err := run(t, append([]string{"--device", "go", "lm", "lstm", "sample", "--model", dir, "--prompt", "abc", "--length", "10"}, extra...)...)
		if err != nil {
			t.Fatalf("sample %v: %v", extra, err)
		}
		return strings.TrimSpace(out)
	}
	if a, b := sample("--seed", "3"), sample("--seed", "3"); a != b || len(a) != 13 || !strings.HasPrefix(a, "abc") {
		t.Errorf("same seed, two samples: %q, %q", a, b)
	}
	if got := sample("--temperature", "0"); got != "abcdefghijklm" {
		t.Errorf("greedy sample %q, want the alphabet continued", got)
	}
	out, _, err = run(t, "--json", "--device", "go", "lm", "lstm", "sample", "--model", ckpt, "--prompt", "xyz", "--length", "4", "--temperature", "0")
	var srep text.SampleReport
	if err != nil || json.Unmarshal([]byte(out), &srep) != nil || srep.Step != 120 || len(srep.Text) != 4 {
		t.Errorf("sample --json from %s: %v\n%s", ckpt, err, out)
	}
}

func TestLMErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	empty, bin, short := write("empty.txt", ""), write("bin.dat", "\x00\x01\x02abc"), write("short.txt", "abc")
	train := func(extra ...string) []string {
		return append(append([]string{"--device", "go", "lm", "lstm", "train", "--no-checkpoint"}, lmTiny...), extra...)
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"empty file", train("--data", empty), []string{empty, "is empty"}},
		{"binary file", train("--data", bin), []string{bin, "looks binary"}},
		{"too short", train("--data", short), []string{short, "too short for one window"}},
		{"missing file", train("--data", filepath.Join(dir, "nope.txt")), []string{"nope.txt"}},
		{"bad batch size", train("--data", lmCorpus(t), "--batch-size", "many"), []string{`--batch-size "many"`}},
		{"resume without checkpoints", train("--resume=" + dir), []string{"--resume", "--no-checkpoint"}},
		{"no model", []string{"--device", "go", "lm", "lstm", "sample"}, []string{"--model is required"}},
		{"bad model", []string{"--device", "go", "lm", "lstm", "sample", "--model", short}, []string{short}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := run(t, tc.args...)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestLMSampleUnknownPrompt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ckpt")
	args := append([]string{"--device", "go", "lm", "lstm", "train", "--data", lmCorpus(t), "--out", dir, "--steps", "2"}, lmTiny...)
	if out, _, err := run(t, args...); err != nil {
		t.Fatalf("train: %v\n%s", err, out)
	}
	_, _, err := run(t, "--device", "go", "lm", "lstm", "sample", "--model", dir, "--prompt", "Hello!")
	if err == nil || !strings.Contains(err.Error(), `2 character(s) not in the model's vocabulary: 'H', '!'`) {
		t.Errorf("unknown prompt characters: %v, want them listed", err)
	}
}
