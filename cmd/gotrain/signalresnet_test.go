package main

import (
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// resnetArgs are flags of a tiny, fast ResNet: records of 2100 samples cut
// into 8 windows of 256.
var resnetArgs = []string{"--model", "resnet", "--window", "256", "--stacks", "3", "--filters", "4", "--dense", "8", "--progress", "off"}

// genIQ generates a small data set with its IQ records.
func genIQ(t *testing.T, seed, out string) {
	t.Helper()
	if _, _, err := run(t, "--json", "signal", "dataset", "--per-class", "4", "--samples", "2100", "--snr", "10:20:10",
		"--mods", "bpsk,fm,am-dsb-sc", "--seed", seed, "--out", out, "--iq"); err != nil {
		t.Fatal(err)
	}
}

func TestClassifyTrainModelFlags(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "train")
	genIQ(t, "1", tr)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", "svm"}, `--model "svm": want forest or resnet`},
		{[]string{"--model", "resnet", "--trees", "5"}, "--trees is not an option of --model resnet"},
		{[]string{"--model", "resnet", "--features", "base"}, "--features is not an option of --model resnet"},
		{[]string{"--filters", "8"}, "--filters is not an option of --model forest"},
		{[]string{"--lr", "0.1"}, "--lr is not an option of --model forest"},
		{[]string{"--time-budget", "1m"}, "--time-budget is not an option of --model forest"},
		{append(resnetArgs, "--batch-size", "auto"), "--batch-size auto"},
		{append(resnetArgs, "--kernel", "4"), "--kernel 4: want an odd length"},
		{append(resnetArgs, "--test-fraction", "1"), "test fraction 1"},
		{append(resnetArgs, "--window", "4096"), "holds no window of 4096"},
		{append(resnetArgs, "--seed", "18446744073709551615"), "--seed"},
		{append(resnetArgs, "--resume", "--no-checkpoint"), "--resume and --no-checkpoint exclude each other"},
	} {
		args := append([]string{"signal", "classify", "train", "--data", tr}, c.args...)
		_, _, err := run(t, args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one with %q", c.args, err, c.want)
		}
	}
	if _, _, err := run(t, append([]string{"signal", "classify", "train"}, resnetArgs...)...); err == nil || !strings.Contains(err.Error(), "--data") {
		t.Errorf("no --data: %v", err)
	}
}

// TestClassifyResNetRoundTrip trains the ResNet from the command line,
// evaluates its checkpoint with classify eval (the same accuracy), trains
// the forest on the same data and compares the two reports.
func TestClassifyResNetRoundTrip(t *testing.T) {
	dir := t.TempDir()
	tr, te := filepath.Join(dir, "train"), filepath.Join(dir, "test")
	genIQ(t, "1", tr)
	genIQ(t, "2", te)
	runs, snr := filepath.Join(dir, "runs"), filepath.Join(dir, "snr.png")
	args := append([]string{"--json", "signal", "classify", "train", "--data", tr, "--test", te, "--out", runs, "--steps", "3", "--batch-size", "8", "--png-snr", snr}, resnetArgs...)
	out, _, err := run(t, args...)
	if err != nil {
		t.Fatalf("train: %v", err)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("JSON: %v\n%s", err, out)
	}
	if rep["classifier"] != "resnet" || rep["test_rows"] != 12.0 || rep["test_windows"] != 96.0 || rep["device"] != "cpu" || rep["eval"] == nil {
		t.Errorf("report %v", rep)
	}
	if tr, _ := rep["training"].(map[string]any); tr == nil || tr["train"].(map[string]any)["steps"] != 3.0 {
		t.Errorf("training %v", rep["training"])
	}
	model, _ := rep["model"].(string)
	if !strings.HasPrefix(model, runs) {
		t.Errorf("model %q is not a checkpoint in %s", model, runs)
	}
	fh, err := os.Open(snr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(fh); err != nil {
		t.Error(err)
	}
	fh.Close()
	resnetJSON := filepath.Join(dir, "resnet.json")
	for _, m := range []string{model, runs} {
		out2, _, err := run(t, "--json", "signal", "classify", "eval", "--model", m, "--data", te)
		if err != nil {
			t.Fatalf("eval %s: %v", m, err)
		}
		var rep2 map[string]any
		_ = json.Unmarshal([]byte(out2), &rep2)
		if rep2["accuracy"] != rep["accuracy"] || rep2["band_accuracy"] != rep["band_accuracy"] || rep2["step"] != 3.0 {
			t.Errorf("eval of %s: %v/%v at step %v, train reported %v/%v", m, rep2["accuracy"], rep2["band_accuracy"], rep2["step"], rep["accuracy"], rep["band_accuracy"])
		}
		if err := os.WriteFile(resnetJSON, []byte(out2), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	text, _, err := run(t, "signal", "classify", "eval", "--model", runs, "--data", te)
	if err != nil || !strings.Contains(text, "step 3") || !strings.Contains(text, "SNR dB") {
		t.Errorf("eval text: %v\n%s", err, text)
	}
	// The forest on the same data, unchanged by --model's arrival.
	fout, _, err := run(t, "--json", "signal", "classify", "train", "--data", tr, "--test", te, "--trees", "10")
	if err != nil {
		t.Fatal(err)
	}
	var frep map[string]any
	_ = json.Unmarshal([]byte(fout), &frep)
	if frep["trees"] != 10.0 || frep["classifier"] != nil || frep["features"] == nil {
		t.Errorf("forest report %v", frep)
	}
	forestJSON := filepath.Join(dir, "forest.json")
	if err := os.WriteFile(forestJSON, []byte(fout), 0o666); err != nil {
		t.Fatal(err)
	}
	cmpPNG := filepath.Join(dir, "cmp.png")
	md, _, err := run(t, "signal", "classify", "compare", "--report", forestJSON, "--report", "net="+resnetJSON, "--markdown", "--png", cmpPNG)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| SNR (dB) | records | forest | net |", "| 10 | 6 |", "| 10 to 20 | 12 |", "wrote " + cmpPNG} {
		if !strings.Contains(md, want) {
			t.Errorf("compare output lacks %q:\n%s", want, md)
		}
	}
	if _, err := os.Stat(cmpPNG); err != nil {
		t.Error(err)
	}
	for _, args := range [][]string{
		{"signal", "classify", "compare"},
		{"signal", "classify", "compare", "--report", filepath.Join(dir, "none.json")},
		{"signal", "classify", "compare", "--report", forestJSON, "--band", "x"},
		{"signal", "classify", "eval", "--model", filepath.Join(dir, "train"), "--data", te},
	} {
		if _, _, err := run(t, args...); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}
