package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoiseFreeToneFeatures checks that the features of a perfect tone,
// whose SNR is infinite, are reported: null in the JSON with a note of
// what the value was, a missing cell in the CSV; never a failure.
func TestNoiseFreeToneFeatures(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "tone")
	if _, _, err := run(t, "signal", "synth", "--mod", "tone", "--no-noise", "--samples", "4096", "--out", rec); err != nil {
		t.Fatal(err)
	}
	csv := filepath.Join(dir, "f.csv")
	out, _, err := run(t, "--json", "signal", "features", "--in", rec+".sigmf-meta", "--csv", csv)
	if err != nil {
		t.Fatalf("features of a noise-free tone: %v", err)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("JSON: %v\n%s", err, out)
	}
	notes, _ := rep["non_finite"].(map[string]any)
	if v, ok := rep["snr_db"]; !ok || v != nil || notes["snr_db"] != "+Inf" {
		t.Errorf("snr_db = %v (note %v); want null with the note +Inf", v, notes["snr_db"])
	}
	b, err := os.ReadFile(csv)
	if err != nil || !strings.Contains(string(b), "NaN") {
		t.Errorf("CSV: %v\n%s", err, b)
	}
}
