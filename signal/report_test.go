package signal

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestSynthesizeFile writes a SigMF pair and a raw file and checks the
// reports: their text, their JSON keys in order, and the record read back.
func TestSynthesizeFile(t *testing.T) {
	dir := t.TempDir()
	o := SynthOptions{Mod: BPSK, SampleRate: 200e3, Samples: 4096, SNRdB: 7, EsN0: true, Seed: 9}
	base := filepath.Join(dir, "rec")
	r, err := SynthesizeFile(base, "", CI16, o)
	if err != nil {
		t.Fatal(err)
	}
	if r.Format != string(CI16) || len(r.Files) != 2 || r.Files[0] != base+MetaExt || r.Files[1] != base+DataExt || !(r.SynthMS > 0) {
		t.Errorf("report %+v", r)
	}
	rec, err := Load(base+MetaExt, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if m := rec.Meta; m.Label != "bpsk" || m.Synth == nil || m.Synth.Seed != 9 || !m.Synth.EsN0 || m.SampleRate != 200e3 ||
		m.Description != "gotrain signal synth: bpsk, 4096 samples at 200000 Hz, SNR 7 dB, seed 9" {
		t.Errorf("meta %+v", m)
	}
	r.SynthMS = 1.25
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if want := "wrote " + base + MetaExt + " + " + base + DataExt + ": bpsk, 4096 samples at 200000 Hz, Es/N0 7 dB, seed 9 (1.2 ms)\n"; b.String() != want {
		t.Errorf("text %q, want %q", b.String(), want)
	}
	js, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"esn0":true,"files":["` + base + MetaExt + `","` + base + DataExt + `"],"format":"ci16_le","mod":"bpsk","sample_rate":200000,"samples":4096,"seed":9,"snr_db":7,"synth_ms":1.25}`
	if string(js) != want {
		t.Errorf("JSON %s, want %s", js, want)
	}
	raw := filepath.Join(dir, "rec.cu8")
	if r, err = SynthesizeFile(raw, "", "", o); err != nil || r.Format != "cu8" || len(r.Files) != 1 || r.Files[0] != raw {
		t.Errorf("raw: %+v, %v", r, err)
	}
	if _, err := SynthesizeFile(base, "nope", "", o); err == nil {
		t.Error("format nope accepted")
	}
}

// TestFeaturesReportWriteText checks the text of `gotrain signal
// features`: the record line, then the features table.
func TestFeaturesReportWriteText(t *testing.T) {
	f := testFeatures(t)
	r := &FeaturesReport{File: "x.cf32", Format: "cf32_le", Device: "go", ExtractMS: 2.25, FeaturesJSON: NewFeaturesJSON(f, false)}
	var b, table strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if err := WriteFeaturesTable(&table, f); err != nil {
		t.Fatal(err)
	}
	if want := "x.cf32: 8192 samples at 200000 Hz (cf32_le), features in 2.2 ms on go\n" + table.String(); b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}
