package main

import (
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/device"
)

func TestSignalSynthThenFeatures(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "q")
	out, _, err := run(t, "--json", "signal", "synth", "--mod", "qpsk", "--rate", "200000", "--seconds", "0.25",
		"--snr", "10", "--seed", "1", "--offset", "25000", "--out", base)
	if err != nil {
		t.Fatalf("synth: %v", err)
	}
	var syn map[string]any
	if err := json.Unmarshal([]byte(out), &syn); err != nil {
		t.Fatalf("synth JSON: %v\n%s", err, out)
	}
	out, _, err = run(t, "--json", "signal", "features", "--in", base+".sigmf-meta", "--csv", filepath.Join(dir, "f.csv"))
	if err != nil {
		t.Fatalf("features: %v", err)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("features JSON: %v\n%s", err, out)
	}
	for _, k := range []string{"rssi_dbfs", "rssi_dbm", "snr_db", "snr_inband_db", "centroid_hz", "bandwidth_hz", "flatness",
		"rolloff_hz", "occupied_bw_hz", "c20", "c21", "c40", "c41", "c42", "inst_amp_mean", "inst_amp_std", "inst_freq_mean", "inst_freq_std"} {
		if _, ok := rep[k].(float64); !ok {
			t.Errorf("features JSON lacks number %q", k)
		}
	}
	if m, ok := rep["mfcc"].([]any); !ok || len(m) != 13 {
		t.Errorf("mfcc: %v", rep["mfcc"])
	}
	if snr := rep["snr_db"].(float64); math.Abs(snr-10) > 0.7 {
		t.Errorf("snr_db %g, want about 10", snr)
	}
	if rep["label"] != "qpsk" {
		t.Errorf("label %v", rep["label"])
	}
	// The same record as raw cf32 (rate from the flag) gives the same features.
	raw := filepath.Join(dir, "q.cf32")
	if _, _, err := run(t, "signal", "synth", "--mod", "qpsk", "--seconds", "0.25", "--seed", "1", "--offset", "25000", "--out", raw); err != nil {
		t.Fatal(err)
	}
	out, _, err = run(t, "--json", "signal", "features", "--in", raw, "--rate", "200000")
	if err != nil {
		t.Fatal(err)
	}
	var rep2 map[string]any
	_ = json.Unmarshal([]byte(out), &rep2)
	if rep2["snr_db"] != rep["snr_db"] || rep2["c42"] != rep["c42"] {
		t.Errorf("raw and SigMF copies differ: %v vs %v", rep2["snr_db"], rep["snr_db"])
	}
	text, _, err := run(t, "signal", "features", "--in", raw, "--rate", "200000")
	if err != nil || !strings.Contains(text, "snr_db") || !strings.Contains(text, "mfcc (means)") {
		t.Errorf("text output: %v\n%s", err, text)
	}
}

func TestSignalFeaturesErrors(t *testing.T) {
	dir := t.TempDir()
	cases := [][]string{
		{"signal", "features"},
		{"signal", "features", "--in", filepath.Join(dir, "none.sigmf-meta")},
		{"signal", "features", "--in", filepath.Join(dir, "x.cf32")},
		{"signal", "synth", "--mod", "nope", "--out", filepath.Join(dir, "a")},
		{"signal", "synth", "--out", filepath.Join(dir, "a"), "--multipath", "1,zz"},
	}
	for _, args := range cases {
		if _, _, err := run(t, args...); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

func TestSignalBenchJSON(t *testing.T) {
	out, _, err := run(t, "--json", "signal", "bench", "--runs", "2", "--records", "2", "--seconds", "0.05")
	if err != nil {
		t.Fatal(err)
	}
	var rep benchReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("bench JSON: %v\n%s", err, out)
	}
	if rep.SynthMS <= 0 || rep.FeaturesMS <= 0 || rep.TotalMS < rep.FeaturesMS || rep.RecordsPerSecond <= 0 || rep.Samples != 10000 {
		t.Errorf("bench report %+v", rep)
	}
}

func TestSignalGPURefused(t *testing.T) {
	_, _, err := run(t, "--device", "gpu", "signal", "bench", "--runs", "1")
	if err == nil || !errors.Is(err, device.ErrUnavailable) || !strings.Contains(err.Error(), "--fallback") {
		t.Errorf("--device gpu: %v", err)
	}
}
