package main

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExportCommand trains a mixture of experts with --ema, --tensorboard
// and a metrics log, exports it with gotrain export and reads the file's
// header back (the length, then JSON naming every tensor with its dtype,
// shape and offsets), and checks the refusals of bad flags.
func TestExportCommand(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "moe")
	if _, errOut, err := run(t, "--device", "go", "moe", "train", "--dataset", "digits", "--experts", "2", "--hidden", "8",
		"--steps", "2", "--progress", "off", "--out", out, "--ema", "0.9", "--tensorboard", filepath.Join(dir, "tb")); err != nil {
		t.Fatalf("moe train: %v\n%s", err, errOut)
	}
	for _, f := range []string{"metrics.jsonl", "metrics.csv"} {
		if fi, err := os.Stat(filepath.Join(out, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	if tb, _ := filepath.Glob(filepath.Join(dir, "tb", "events.out.tfevents.*")); len(tb) != 1 {
		t.Errorf("TensorBoard files %v", tb)
	}
	st := filepath.Join(dir, "moe.safetensors")
	stdout, errOut, err := run(t, "--json", "export", "--model", filepath.Join(out, "checkpoints"), "--out", st)
	if err != nil {
		t.Fatalf("export: %v\n%s", err, errOut)
	}
	var rep struct {
		Weights string `json:"weights"`
		Tensors []struct {
			Name string `json:"name"`
		} `json:"tensors"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || rep.Weights != "ema" || len(rep.Tensors) == 0 {
		t.Fatalf("report %q: %v", stdout, err)
	}
	b, err := os.ReadFile(st)
	if err != nil {
		t.Fatal(err)
	}
	n := binary.LittleEndian.Uint64(b)
	var header map[string]json.RawMessage
	if n > uint64(len(b)-8) || json.Unmarshal(b[8:8+n], &header) != nil {
		t.Fatalf("not a safetensors file: header length %d of %d bytes", n, len(b))
	}
	for _, want := range []string{"__metadata__", "moe/gate_w", "moe/expert_w0"} {
		if _, ok := header[want]; !ok {
			t.Errorf("header lacks %s", want)
		}
	}
	for name := range header {
		if strings.Contains(name, "Optimizer") || strings.Contains(name, "ema/") || strings.HasPrefix(name, "train_harness") {
			t.Errorf("training state %s exported", name)
		}
	}
	for _, c := range []struct{ args []string }{
		{[]string{"export", "--model", out, "--out", st, "--format", "onnx"}},
		{[]string{"export", "--model", filepath.Join(out, "checkpoints"), "--out", st, "--weights", "best"}},
		{[]string{"export", "--out", st}},
		{[]string{"export", "--model", filepath.Join(dir, "none"), "--out", st}},
	} {
		if _, _, err := run(t, c.args...); err == nil {
			t.Errorf("%v: no error", c.args)
		} else if c.args[len(c.args)-2] == "--weights" && !strings.Contains(err.Error(), "--weights") {
			t.Errorf("%v: %v, want the flag named", c.args, err)
		}
	}
}

// TestFindLRCommand runs --find-lr on moe train: the report is the range
// test's (text and JSON), with its plot, and no checkpoint, log or plot
// of a run is written.
func TestFindLRCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "moe")
	args := []string{"--device", "go", "moe", "train", "--dataset", "digits", "--experts", "2", "--hidden", "8",
		"--progress", "off", "--out", out, "--find-lr", "--find-lr-steps", "12", "--find-lr-max", "100"}
	stdout, errOut, err := run(t, args...)
	if err != nil {
		t.Fatalf("--find-lr: %v\n%s", err, errOut)
	}
	if !strings.Contains(stdout, "suggested lr: ") || !strings.Contains(stdout, "learning-rate range test: ") {
		t.Errorf("report:\n%s", stdout)
	}
	stdout, _, err = run(t, append([]string{"--json"}, args...)...)
	var rep struct {
		Suggested float64 `json:"suggested_lr"`
		Plot      string  `json:"plot"`
		Points    []any   `json:"points"`
	}
	if err != nil || json.Unmarshal([]byte(stdout), &rep) != nil || rep.Suggested <= 0 || len(rep.Points) == 0 {
		t.Fatalf("--json --find-lr: %v\n%s", err, stdout)
	}
	entries, _ := os.ReadDir(out)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 1 || names[0] != "lr_range_test.png" || rep.Plot != filepath.Join(out, "lr_range_test.png") {
		t.Errorf("--out holds %v after the range test (plot %q), want only its plot", names, rep.Plot)
	}
	if _, _, err := run(t, append(args, "--find-lr-min", "1000")...); err == nil || !strings.Contains(err.Error(), "--find-lr-min 1000") {
		t.Errorf("--find-lr-min above --find-lr-max: %v", err)
	}
}

// TestMetricsLogCSVNotAnInput checks that the CSV log beside --metrics-log
// may not be one of the command's inputs.
func TestMetricsLogCSVNotAnInput(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "corpus.csv")
	if err := os.WriteFile(data, []byte(strings.Repeat("abcdefgh ", 200)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := run(t, "--device", "go", "lm", "lstm", "train", "--data", data, "--metrics-log", filepath.Join(dir, "corpus.jsonl"),
		"--steps", "1", "--batch-size", "8", "--hidden-size", "8", "--progress", "off", "--out", filepath.Join(dir, "ck"))
	if err == nil || !strings.Contains(err.Error(), "its CSV log") {
		t.Errorf("metrics log whose CSV is the data: %v", err)
	}
	if b, _ := os.ReadFile(data); !strings.HasPrefix(string(b), "abcdefgh") {
		t.Error("the input was overwritten")
	}
}
