package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/signal"
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
	for _, threads := range []string{"1", "2"} {
		out, _, err := run(t, "--json", "signal", "bench", "--runs", "2", "--records", "2", "--seconds", "0.05", "--threads", threads)
		if err != nil {
			t.Fatal(err)
		}
		var rep signal.BenchResult
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("bench JSON: %v\n%s", err, out)
		}
		if rep.SynthMS <= 0 || rep.FeaturesMS <= 0 || rep.TotalMS < rep.FeaturesMS || rep.RecordsPerSecond <= 0 || rep.Samples != 10000 ||
			fmt.Sprint(rep.Threads) != threads {
			t.Errorf("bench report %+v", rep)
		}
	}
	if _, _, err := run(t, "signal", "bench", "--threads", "0"); err == nil {
		t.Error("--threads 0 accepted")
	}
}

func TestSignalGPURefused(t *testing.T) {
	if gpu := gpuHere(t); gpu != "" { // a GPU host: the graph extractor runs there
		if out, _, err := runGPU(t, "--json", "--device", "gpu", "signal", "bench", "--runs", "1", "--records", "2"); err != nil || !strings.Contains(out, gpu) {
			t.Errorf("signal bench --device gpu on a GPU host (%s): %v\n%s", gpu, err, out)
		}
	}
	_, _, err := run(t, "--device", "gpu", "signal", "bench", "--runs", "1")
	if err == nil || !errors.Is(err, device.ErrUnavailable) || !strings.Contains(err.Error(), "--fallback") {
		t.Errorf("--device gpu: %v", err)
	}
}

// TestSignalFeaturesGraphDevice checks `signal features --device go`: the
// graph extractor on simplego gives the CPU path's features within 1e-4
// (relative, with the floors of sigraph.Compare: 1 dB, one PSD bin in Hz,
// 1 for the normalised cumulants) and names the device it used.
func TestSignalFeaturesGraphDevice(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "q")
	if _, _, err := run(t, "signal", "synth", "--mod", "16qam", "--seconds", "0.05", "--snr", "12", "--offset", "20000", "--out", base); err != nil {
		t.Fatal(err)
	}
	features := func(dev string) map[string]any {
		t.Helper()
		out, _, err := run(t, "--json", "--device", dev, "signal", "features", "--in", base+".sigmf-meta", "--arrays")
		if err != nil {
			t.Fatalf("--device %s: %v", dev, err)
		}
		var rep map[string]any
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("--device %s JSON: %v", dev, err)
		}
		if rep["device"] != dev {
			t.Errorf("--device %s reports device %v", dev, rep["device"])
		}
		return rep
	}
	cpu, gr := features("cpu"), features("go")
	if _, ok := gr["compile_ms"].(float64); !ok {
		t.Errorf("graph run reports no compile_ms")
	}
	df := 200000.0 / 1024
	floors := map[string]float64{"rssi_dbfs": 1, "rssi_dbm": 1, "snr_db": 1, "snr_inband_db": 1, "noise_psd": 1e-30,
		"occupied_bw_hz": df, "obw_hz": df, "centroid_hz": df, "bandwidth_hz": df, "rolloff_hz": df, "flatness": 1e-6,
		"c20": 1, "c21": 1e-30, "c40": 1, "c41": 1, "c42": 1, "inst_amp_mean": 1, "inst_amp_std": 1,
		"inst_phase_mean": 1, "inst_phase_std": 1, "inst_freq_mean": df, "inst_freq_std": df}
	for k, floor := range floors {
		w, ok1 := cpu[k].(float64)
		g, ok2 := gr[k].(float64)
		if !ok1 || !ok2 {
			t.Errorf("%s missing: cpu %v, go %v", k, cpu[k], gr[k])
			continue
		}
		if e := math.Abs(g-w) / math.Max(math.Abs(w), floor); !(e <= 1e-4) {
			t.Errorf("%s: go %v, cpu %v (relative error %.3g)", k, g, w, e)
		}
	}
	for _, k := range []string{"mfcc", "psd"} {
		w, _ := cpu[k].([]any)
		g, _ := gr[k].([]any)
		if len(w) == 0 || len(w) != len(g) {
			t.Errorf("%s: %d values on cpu, %d on go", k, len(w), len(g))
			continue
		}
		for i := range w {
			wv, gv := w[i].(float64), g[i].(float64)
			lim := 1e-3 // MFCCs: absolute
			if k == "psd" {
				lim = 1e-4 * math.Abs(wv)
			}
			if !(math.Abs(gv-wv) <= lim) {
				t.Errorf("%s[%d]: go %v, cpu %v", k, i, gv, wv)
				break
			}
		}
	}
}

func TestSignalBenchGraphDevice(t *testing.T) {
	out, _, err := run(t, "--json", "--device", "go", "signal", "bench", "--runs", "1", "--records", "2", "--seconds", "0.05")
	if err != nil {
		t.Fatal(err)
	}
	var rep signal.BenchResult
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("bench JSON: %v\n%s", err, out)
	}
	if rep.Device != "go" || rep.FeaturesMS <= 0 || rep.RecordsPerSecond <= 0 || rep.Workers != 1 {
		t.Errorf("bench report %+v", rep)
	}
}
