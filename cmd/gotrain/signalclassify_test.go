package main

import (
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSignalDatasetFlagErrors(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "ds")
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"--snr", "20:10"}, []string{"--snr", "minimum 20 is above the maximum 10"}},
		{[]string{"--snr", "a:b"}, []string{"--snr", "not a finite number"}},
		{[]string{"--snr", "0:10:0"}, []string{"step"}},
		{[]string{"--mods", "bpsk,qpks"}, []string{"\"qpks\"", "bpsk, qpsk, 8psk, 16qam, 64qam"}},
		{[]string{"--per-class", "0"}, []string{"records per class 0"}},
		{[]string{"--seconds", "0.001"}, []string{"the features need 2048"}},
		{[]string{"--sps", "3"}, []string{"samples per symbol 3 does not divide"}},
		{[]string{"--sps", "4,x"}, []string{"--sps", "\"x\" is not an integer"}},
		{[]string{"--seconds", "0"}, []string{"--seconds", "0 samples"}},
	}
	for _, c := range cases {
		args := append([]string{"signal", "dataset", "--out", out}, c.args...)
		_, _, err := run(t, args...)
		if err == nil {
			t.Errorf("%v: no error", c.args)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: error %q lacks %q", c.args, err, w)
			}
		}
	}
	if _, _, err := run(t, "signal", "dataset"); err == nil || !strings.Contains(err.Error(), "--out") {
		t.Errorf("no --out: %v", err)
	}
}

func TestSignalDatasetClassifyRoundTrip(t *testing.T) {
	dir := t.TempDir()
	tr, te := filepath.Join(dir, "train"), filepath.Join(dir, "test")
	gen := func(seed, out string, extra ...string) error {
		args := append([]string{"--json", "signal", "dataset", "--per-class", "12", "--samples", "4096", "--snr", "10:20:5",
			"--mods", "bpsk,qpsk,fm,am", "--seed", seed, "--out", out}, extra...)
		_, _, err := run(t, args...)
		return err
	}
	if err := gen("1", tr, "--workers", "1"); err != nil {
		t.Fatal(err)
	}
	if err := gen("2", te, "--iq"); err != nil {
		t.Fatal(err)
	}
	if err := gen("3", tr); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("overwrite without --force: %v", err)
	}
	if _, err := os.Stat(filepath.Join(te, "iq", "fm_11.sigmf-meta")); err != nil {
		t.Errorf("--iq: %v", err)
	}
	model := filepath.Join(dir, "m.forest")
	conf, snr := filepath.Join(dir, "c.png"), filepath.Join(dir, "s.png")
	out, _, err := run(t, "--json", "signal", "classify", "train", "--data", tr, "--test", te, "--out", model,
		"--trees", "30", "--png-confusion", conf, "--png-snr", snr)
	if err != nil {
		t.Fatalf("classify train: %v", err)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("JSON: %v\n%s", err, out)
	}
	if d, ok := rep["derived"].(map[string]any); !ok || d["c42_clean"] == nil {
		t.Errorf("report lacks the derived feature definitions: %v", rep["derived"])
	}
	acc, _ := rep["accuracy"].(float64)
	if acc < 0.6 {
		t.Errorf("accuracy %v over 4 classes at 10-20 dB, want well above chance (0.25)", acc)
	}
	for _, p := range []string{conf, snr} {
		fh, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := png.Decode(fh); err != nil {
			t.Errorf("%s: %v", p, err)
		}
		fh.Close()
	}
	out2, _, err := run(t, "--json", "signal", "classify", "eval", "--model", model, "--data", te)
	if err != nil {
		t.Fatalf("classify eval: %v", err)
	}
	var rep2 map[string]any
	_ = json.Unmarshal([]byte(out2), &rep2)
	if rep2["accuracy"] != rep["accuracy"] || rep2["band_accuracy"] != rep["band_accuracy"] {
		t.Errorf("eval of the saved model %v/%v, train reported %v/%v", rep2["accuracy"], rep2["band_accuracy"], rep["accuracy"], rep["band_accuracy"])
	}
	text, _, err := run(t, "signal", "classify", "train", "--data", tr, "--test-fraction", "0.25", "--trees", "10")
	if err != nil || !strings.Contains(text, "SNR dB") || !strings.Contains(text, "confusion matrix") {
		t.Errorf("text report: %v\n%s", err, text)
	}
	for _, args := range [][]string{
		{"signal", "classify", "train"},
		{"signal", "classify", "train", "--data", tr, "--test", te, "--test-fraction", "0.2"},
		{"signal", "classify", "train", "--data", tr, "--test-fraction", "1"},
		{"signal", "classify", "train", "--data", tr, "--features", "nope"},
		{"signal", "classify", "eval", "--model", model},
		{"signal", "classify", "eval", "--model", filepath.Join(dir, "none"), "--data", te},
	} {
		if _, _, err := run(t, args...); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

func TestSignalClassifyDemo(t *testing.T) {
	out, _, err := run(t, "signal", "classify", "demo", "--per-class", "8", "--seconds", "0.02", "--snr", "10:20:10", "--trees", "20")
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	for _, want := range []string{"demo:", "SNR dB", "confusion matrix", "64qam"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
}

// signal dataset impairs by the built-in recipe unless told otherwise:
// every record's draw goes to impairments.jsonl (a carrier offset on each,
// as the default recipe has it); --impairments none writes clean records.
func TestSignalDatasetDefaultRecipe(t *testing.T) {
	dir := t.TempDir()
	gen := func(out string, extra ...string) {
		t.Helper()
		args := append([]string{"signal", "dataset", "--per-class", "3", "--samples", "2048", "--snr", "10",
			"--mods", "bpsk,qpsk", "--out", out}, extra...)
		if _, _, err := run(t, args...); err != nil {
			t.Fatal(err)
		}
	}
	def, none := filepath.Join(dir, "default"), filepath.Join(dir, "none")
	gen(def)
	gen(none, "--impairments", "none")
	b, err := os.ReadFile(filepath.Join(def, "impairments.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 6 {
		t.Fatalf("%d impairment lines, want 6", len(lines))
	}
	for _, l := range lines {
		if !strings.Contains(l, `"cfo"`) || !strings.Contains(l, `"quantize"`) {
			t.Errorf("record without the default recipe's carrier offset and quantization: %s", l)
		}
	}
	if _, err := os.Stat(filepath.Join(none, "impairments.jsonl")); !os.IsNotExist(err) {
		t.Errorf("--impairments none wrote impairments.jsonl: %v", err)
	}
}
