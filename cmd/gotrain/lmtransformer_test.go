package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLMTransformerFlagDefaults(t *testing.T) {
	cmd := newLMTransformerTrainCmd(&globals{})
	for name, want := range map[string]string{
		"layers": "4", "heads": "4", "width": "128", "context": "64", "attention": "softmax", "ffn": "swiglu", "norm": "rms",
		"pretrain-epochs": "1", "pretrain-batch-size": "32", "pretrain-accumulate": "1", "instruction-epochs": "3",
		"instruction-batch-size": "16", "instruction-accumulate": "1", "steps": "0", "pretrain-data": "",
		"instruction-data": "", "precision": "32", "resume": "", "out": "checkpoints", "optimizer": "adamw",
		"batch-size": "", "epochs": "0", "accumulate": "0", "lr": "0.001", "seed": "42", "early-stop-patience": "5",
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
	for old, want := range map[string]string{"max-steps": "0", "checkpoint-dir": "checkpoints"} {
		f := cmd.Flags().Lookup(old)
		if f == nil || !f.Hidden || f.Deprecated == "" || f.DefValue != want {
			t.Errorf("--%s: %+v; want a hidden, deprecated alias with default %s", old, f, want)
		}
	}
}

// transformerFiles writes a small corpus and returns it with the test
// instruction set of package transformer.
func transformerFiles(t *testing.T) (corpus, instructions string) {
	t.Helper()
	corpus = filepath.Join(t.TempDir(), "corpus.txt")
	text := strings.Repeat("a cat and a dog sat in the sun by a tree; a fish swam in the rain. the bird saw milk, a rock, "+
		"a leaf and a star. a bell rang at the door; a lamp lit the ship. wolf, rose, king, sand, wind, gold, frog, corn, nest. ", 2)
	if err := os.WriteFile(corpus, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return corpus, filepath.Join("..", "..", "models", "transformer", "testdata", "instructions.jsonl")
}

// transformerTiny are the flags of a tiny, fast transformer.
var transformerTiny = []string{"--layers", "1", "--heads", "2", "--width", "8", "--context", "12", "--stride", "2",
	"--pretrain-batch-size", "8", "--instruction-batch-size", "4", "--lr", "0.01", "--progress", "off"}

type transformerReport struct {
	Device   string   `json:"device"`
	ValLoss  *float64 `json:"val_loss_nats_per_char"`
	Before   *float64 `json:"response_loss_before"`
	After    *float64 `json:"response_loss_after"`
	Fallback string   `json:"fallback"`
	Result   struct {
		Arch struct {
			Vocab int `json:"vocab"`
		} `json:"arch"`
		Pretrain *struct {
			Skipped string `json:"skipped"`
			Train   struct {
				Steps   int64 `json:"steps"`
				Resumed int64 `json:"resumed"`
			} `json:"train"`
		} `json:"pretrain"`
		Instruct *struct {
			Train struct {
				Steps   int64 `json:"steps"`
				Resumed int64 `json:"resumed"`
			} `json:"train"`
		} `json:"instruct"`
		Checkpoint string `json:"checkpoint"`
		DeviceNote string `json:"device_note"`
	} `json:"result"`
}

func TestLMTransformerTrainResumeSample(t *testing.T) {
	corpus, inst := transformerFiles(t)
	dir := filepath.Join(t.TempDir(), "ckpt")
	args := append([]string{"--json", "--device", "go", "lm", "transformer", "train", "--pretrain-data", corpus,
		"--instruction-data", inst, "--out", dir}, transformerTiny...)
	out, errOut, err := run(t, append(args, "--steps", "20")...)
	if err != nil {
		t.Fatalf("train: %v\n%s\n%s", err, out, errOut)
	}
	var rep transformerReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	r := rep.Result
	if rep.Device != "go" || r.Pretrain == nil || r.Pretrain.Train.Steps != 20 || r.Instruct == nil || r.Instruct.Train.Steps != 20 ||
		rep.ValLoss == nil || rep.Before == nil || rep.After == nil || r.Checkpoint == "" || rep.Fallback != "" {
		t.Fatalf("report: %s", out)
	}
	if !strings.Contains(errOut, "device check passed") || strings.Count(errOut, "initialised before the training loop") != 1 ||
		!strings.Contains(r.DeviceNote, "device 0 of backend") {
		t.Fatalf("the log should state the device check and, once, where the parameters are initialised:\n%s", errOut)
	}
	if *rep.After >= *rep.Before {
		t.Errorf("response loss %g after instruction tuning, %g before", *rep.After, *rep.Before)
	}

	// Resuming continues the instruction phase; pretraining is not redone.
	out, errOut, err = run(t, append(args, "--steps", "24", "--resume")...)
	if err != nil {
		t.Fatalf("resume: %v\n%s\n%s", err, out, errOut)
	}
	rep = transformerReport{}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	if rep.Result.Pretrain.Skipped == "" || rep.Result.Instruct.Train.Resumed != 20 || rep.Result.Instruct.Train.Steps != 24 {
		t.Fatalf("resume report: %s", out)
	}

	// Sampling: reproducible, greedy at temperature 0, prompt characters checked.
	sample := []string{"--json", "--device", "go", "lm", "transformer", "sample", "--model", dir, "--prompt", "repeat cat:", "--length", "12"}
	var texts []string
	for range 2 {
		out, _, err := run(t, append(sample, "--temperature", "0.8", "--top-k", "5", "--seed", "3")...)
		if err != nil {
			t.Fatalf("sample: %v\n%s", err, out)
		}
		var s struct {
			Text string `json:"text"`
			Step int64  `json:"step"`
		}
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatalf("bad JSON: %v\n%s", err, out)
		}
		if len([]rune(s.Text)) != 12 || s.Step != 24 {
			t.Fatalf("sample: %s", out)
		}
		texts = append(texts, s.Text)
	}
	if texts[0] != texts[1] {
		t.Fatalf("same seed, different samples: %q, %q", texts[0], texts[1])
	}
	_, _, err = run(t, "--device", "go", "lm", "transformer", "sample", "--model", dir, "--prompt", "XYZ", "--length", "3")
	if err == nil || !strings.Contains(err.Error(), "'X', 'Y', 'Z'") {
		t.Fatalf("unknown prompt characters: %v", err)
	}
}

func TestLMTransformerErrors(t *testing.T) {
	corpus, _ := transformerFiles(t)
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(bad, []byte(`{"prompt": "a", "response": "b"}`+"\n"+`{"prompt": "a", "reply": "b"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"bad jsonl", []string{"--pretrain-data", corpus, "--instruction-data", bad}, bad + `:2: field "response" is missing`},
		{"heads", []string{"--pretrain-data", corpus, "--heads", "3"}, "not a multiple of --heads"},
		{"attention", []string{"--pretrain-data", corpus, "--attention", "linear"}, "--attention"},
		{"nothing", []string{"--pretrain-epochs", "0"}, "nothing to train"},
		{"batch", []string{"--pretrain-data", corpus, "--pretrain-batch-size", "0"}, "--pretrain-batch-size 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--device", "go", "lm", "transformer", "train", "--no-checkpoint", "--steps", "1"}, tc.args...)
			_, _, err := run(t, args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
