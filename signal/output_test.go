package signal

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/data"
)

// testFeatures extracts the features of a short QPSK record.
func testFeatures(t *testing.T) *Features {
	t.Helper()
	x, err := Synthesize(SynthOptions{Mod: QPSK, SampleRate: 200e3, Samples: 8192, SNRdB: 12, CarrierOffset: 20e3, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	return extract(t, x, 200e3)
}

// onlyFile fails unless dir holds exactly the named files (no temporary
// file is left behind).
func onlyFiles(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	slices.Sort(names)
	if !slices.Equal(got, names) {
		t.Errorf("folder holds %v, want %v", got, names)
	}
}

func TestFeaturesJSON(t *testing.T) {
	f := testFeatures(t)
	for _, arrays := range []bool{false, true} {
		b, err := json.Marshal(NewFeaturesJSON(f, arrays))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if m["c20"] != math.Hypot(real(f.C20), imag(f.C20)) || m["c41"] != math.Hypot(real(f.C41), imag(f.C41)) {
			t.Errorf("c20 %v, c41 %v", m["c20"], m["c41"])
		}
		if p, _ := m["c40_complex"].([]any); len(p) != 2 || p[0] != real(f.C40) || p[1] != imag(f.C40) {
			t.Errorf("c40_complex %v, want %v", m["c40_complex"], f.C40)
		}
		if s, _ := m["spectrogram_shape"].([]any); len(s) != 2 || s[0] != float64(f.SpecBins) || s[1] != float64(f.SpecFrames) {
			t.Errorf("spectrogram_shape %v", m["spectrogram_shape"])
		}
		for _, k := range FeatureNames(0) {
			if _, ok := m[k].(float64); !ok {
				t.Errorf("arrays %v: no number %q", arrays, k)
			}
		}
		if mf, _ := m["mfcc"].([]any); len(mf) != 13 || m["samples"] != 8192.0 || m["sample_rate"] != 200e3 {
			t.Errorf("mfcc %v, samples %v, rate %v", m["mfcc"], m["samples"], m["sample_rate"])
		}
		_, psd := m["psd"]
		_, ac := m["autocorr"]
		_, fr := m["mfcc_frames"]
		if psd != arrays || ac != arrays || fr != arrays {
			t.Errorf("arrays %v: psd %v, autocorr %v, mfcc_frames %v", arrays, psd, ac, fr)
		}
		if !arrays {
			continue
		}
		j := NewFeaturesJSON(f, true)
		if len(j.PSD) != len(f.PSD) || len(j.Autocorr) != len(f.Autocorr) || j.Autocorr[7] != [2]float64{real(f.Autocorr[7]), imag(f.Autocorr[7])} {
			t.Errorf("psd %d, autocorr %d values", len(j.PSD), len(j.Autocorr))
		}
		nc := len(f.MFCC)
		if len(j.MFCCFrames) != len(f.MFCCFrames)/nc || !slices.Equal(j.MFCCFrames[2], f.MFCCFrames[2*nc:3*nc]) {
			t.Errorf("%d MFCC frames, want %d", len(j.MFCCFrames), len(f.MFCCFrames)/nc)
		}
	}
}

func TestWriteFeaturesTable(t *testing.T) {
	f := testFeatures(t)
	var b strings.Builder
	if err := WriteFeaturesTable(&b, f); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	names := FeatureNames(0)
	if len(lines) != len(names)+1 {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(names)+1, b.String())
	}
	vals := f.Vector(nil)
	for i, n := range names {
		fields := strings.Fields(lines[i])
		if len(fields) != 2 || fields[0] != n || fields[1] != strconv.FormatFloat(vals[i], 'g', 6, 64) {
			t.Errorf("line %q, want %s %.6g", lines[i], n, vals[i])
		}
	}
	mf := strings.Fields(strings.TrimPrefix(lines[len(names)], "mfcc (means)"))
	if !strings.HasPrefix(lines[len(names)], "mfcc (means)") || len(mf) != 13 || mf[1] != strconv.FormatFloat(f.MFCC[1], 'f', 3, 64) {
		t.Errorf("MFCC line %q", lines[len(names)])
	}
}

func TestWriteSpectrogramAndCSV(t *testing.T) {
	f := testFeatures(t)
	dir := t.TempDir()
	spec, csvPath := filepath.Join(dir, "s.f32"), filepath.Join(dir, "f.csv")
	if err := WriteSpectrogram(spec, f); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(spec)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float32, len(b)/4)
	if err := binary.Read(bytes.NewReader(b), binary.LittleEndian, got); err != nil || len(b) != 4*f.SpecBins*f.SpecFrames {
		t.Fatalf("%d bytes (%v), want %d float32", len(b), err, f.SpecBins*f.SpecFrames)
	}
	if !slices.Equal(got, f.Spectrogram) {
		t.Error("the spectrogram file does not read back as the spectrogram")
	}
	if err := WriteFeaturesCSV(csvPath, f); err != nil {
		t.Fatal(err)
	}
	b, err = os.ReadFile(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	// The bytes data.WriteCSV writes (the format `signal features --csv`
	// always had), and the values read back exactly.
	var want bytes.Buffer
	if err := data.WriteCSV(&want, FeatureNames(len(f.MFCC)), [][]float64{f.Vector(nil)}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, want.Bytes()) {
		t.Errorf("CSV:\n%s\nwant:\n%s", b, want.Bytes())
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 2 || lines[0] != strings.Join(FeatureNames(13), ",") {
		t.Fatalf("CSV lines %q", lines)
	}
	for i, s := range strings.Split(lines[1], ",") {
		if v, err := strconv.ParseFloat(s, 64); err != nil || v != f.Vector(nil)[i] {
			t.Errorf("column %d: %q", i, s)
		}
	}
	onlyFiles(t, dir, "s.f32", "f.csv")
	// A value that is not finite (a noise-free tone's SNR) is a missing
	// cell, as the JSON's null, not an error.
	inf := *f
	inf.SNRdB = math.Inf(1)
	if err := WriteFeaturesCSV(filepath.Join(dir, "inf.csv"), &inf); err != nil {
		t.Fatalf("infinite feature: %v", err)
	}
	b, _ = os.ReadFile(filepath.Join(dir, "inf.csv"))
	row := strings.Split(strings.Split(strings.TrimSpace(string(b)), "\n")[1], ",")
	for i, name := range FeatureNames(len(f.MFCC)) {
		if name == "snr_db" && row[i] != "NaN" {
			t.Errorf("snr_db of an infinite SNR written as %q, want NaN", row[i])
		}
	}
	onlyFiles(t, dir, "s.f32", "f.csv", "inf.csv")
}

// compiling is a fake extractor that compiles.
type compiling struct {
	compiled [][2]int
	err      error
}

func (c *compiling) Config() Config { return Config{SampleRate: 1, WelchSegment: 64, MFCCFrame: 64} }
func (c *compiling) Compile(records, samples int) error {
	c.compiled = append(c.compiled, [2]int{records, samples})
	return c.err
}
func (c *compiling) Extract(x []complex64, f *Features) error { f.Samples = len(x); return nil }

func TestExtractTimed(t *testing.T) {
	c := &compiling{}
	var f Features
	if _, _, err := ExtractTimed(c, make([]complex64, 300), &f); err != nil || f.Samples != 300 || !slices.Equal(c.compiled, [][2]int{{1, 300}}) {
		t.Errorf("compiled %v (%v), extracted %d samples", c.compiled, err, f.Samples)
	}
	// Shorter than its configuration's minimum (256): no compilation.
	if _, cms, err := ExtractTimed(c, make([]complex64, 100), &f); err != nil || cms != 0 || len(c.compiled) != 1 {
		t.Errorf("short record compiled: %v, %v", c.compiled, err)
	}
	c.err = errors.New("no compiler")
	if _, _, err := ExtractTimed(c, make([]complex64, 300), &f); err == nil {
		t.Error("compile error lost")
	}
	e, err := NewExtractor(Config{SampleRate: 200e3})
	if err != nil {
		t.Fatal(err)
	}
	x, _ := Synthesize(SynthOptions{Mod: QPSK, SampleRate: 200e3, Samples: 4096, Seed: 1})
	if ems, cms, err := ExtractTimed(e, x, &f); err != nil || !(ems > 0) || cms != 0 || f.Samples != 4096 {
		t.Errorf("CPU: %v ms, compile %v ms, %v", ems, cms, err)
	}
}

func TestSave(t *testing.T) {
	x, err := Synthesize(SynthOptions{Mod: BPSK, SampleRate: 48000, Samples: 4800, SNRdB: 20, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	for _, c := range []struct {
		path, format string
		datatype     Format
		files        []string
		want         Format
	}{
		{p("a"), "", "", []string{p("a.sigmf-meta"), p("a.sigmf-data")}, CF32},
		{p("b.sigmf-data"), "", CI16, []string{p("b.sigmf-meta"), p("b.sigmf-data")}, CI16},
		{p("c.cf32"), "", CI16, []string{p("c.cf32")}, CF32},
		{p("d.cs8"), "", "", []string{p("d.cs8")}, CI8},
		{p("e"), "cu8", "", []string{p("e")}, CU8},
		{p("f.cf32"), "SigMF", CI8, []string{p("f.cf32.sigmf-meta"), p("f.cf32.sigmf-data")}, CI8},
	} {
		rec := &Recording{Samples: x, Meta: Meta{Datatype: c.datatype, SampleRate: 48000, Label: "bpsk"}}
		files, f, err := Save(c.path, c.format, rec)
		if err != nil || f != c.want || !slices.Equal(files, c.files) {
			t.Errorf("Save(%s, %q) = %v, %v, %v; want %v, %v", c.path, c.format, files, f, err, c.files, c.want)
			continue
		}
		if rec.Meta.Datatype != c.datatype {
			t.Errorf("Save(%s) changed the recording's datatype", c.path)
		}
		format := c.format
		if len(files) == 2 {
			format = "sigmf"
		}
		got, err := Load(files[0], format, 48000)
		if err != nil {
			t.Fatalf("Load(%s): %v", files[0], err)
		}
		if got.Meta.Datatype != c.want || len(got.Samples) != len(x) {
			t.Errorf("%s reads back as %s, %d samples", files[0], got.Meta.Datatype, len(got.Samples))
		}
	}
	for _, c := range [][2]string{{p("g"), "cf64"}, {p("h"), "wav"}} {
		if _, _, err := Save(c[0], c[1], &Recording{Samples: x}); err == nil {
			t.Errorf("Save(%s, %q): no error", c[0], c[1])
		}
	}
	if _, _, err := Save(p("i"), "", nil); err == nil {
		t.Error("nil recording accepted")
	}
}

func TestSynthHelpers(t *testing.T) {
	taps, err := ParseTaps("1, 0.4-0.2i,0.1i")
	if err != nil || !slices.Equal(taps, Taps{1, 0.4 - 0.2i, 0.1i}) {
		t.Errorf("ParseTaps = %v, %v", taps, err)
	}
	if _, err := ParseTaps("1,zz"); err == nil || !strings.Contains(err.Error(), "tap 2") {
		t.Errorf("ParseTaps(1,zz): %v", err)
	}
	for _, c := range []struct {
		s, r float64
		n    int
	}{{1, 200e3, 200000}, {0.05, 200e3, 10000}, {1e-5, 1e5, 1}, {0.0123456, 1000, 12}, {0.0127, 1000, 13}} {
		if n, err := SamplesFor(c.s, c.r); err != nil || n != c.n {
			t.Errorf("SamplesFor(%v, %v) = %d, %v; want %d", c.s, c.r, n, err, c.n)
		}
	}
	for _, c := range [][2]float64{{0, 200e3}, {-1, 200e3}, {1e-9, 1e3}, {math.NaN(), 1}, {1e4, 1e5}} {
		if _, err := SamplesFor(c[0], c[1]); err == nil {
			t.Errorf("SamplesFor(%v, %v): no error", c[0], c[1])
		}
	}
	if got, want := ModulationNames(), "bpsk, qpsk, 8psk, 16qam, 64qam, 2fsk, 4fsk, gfsk, fm, am, ofdm, tone, chirp, ook, 4ask, 8ask, 16psk, 32psk, 32qam, 128qam, 256qam, "+
		"16apsk, 32apsk, 64apsk, 128apsk, am-ssb-wc, am-ssb-sc, am-dsb-wc, am-dsb-sc, gmsk, oqpsk"; got != want {
		t.Errorf("ModulationNames() = %q, want %q", got, want)
	}
	for _, c := range []struct {
		o    SynthOptions
		want string
	}{
		{SynthOptions{SNRdB: 10}, "SNR 10 dB (full band)"},
		{SynthOptions{SNRdB: 7.5, EsN0: true}, "Es/N0 7.5 dB"},
		{SynthOptions{SNRdB: 3, NoNoise: true}, "no noise"},
		{SynthOptions{NoNoise: true, EsN0: true}, "no noise"},
	} {
		if got := c.o.SNRString(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.o, got, c.want)
		}
	}
}
