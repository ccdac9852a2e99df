package signal

import (
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// loadFuzzExts are the raw extensions FuzzLoad gives its data file, by
// mode (mode 0 is a SigMF pair, the last an explicit format).
var loadFuzzExts = []string{"", ".cf32", ".cfile", ".ci16", ".cs8", ".cu8", ".bin"}

// FuzzLoad writes a fuzzed recording and goes through `signal features
// --in FILE [--format F] [--rate R]`: Load (a SigMF pair found by its base
// name, a raw file by its extension, or a raw file of a named format),
// then the features of the record (with a small configuration, and with
// the default one when the record is long enough), their JSON, table, CSV
// and spectrogram. Nothing may panic; with a valid rate and no format an
// error names the file; a loaded recording has whole samples of its
// format, a positive finite rate (the one given, if any), and extracts
// without error when it is long enough.
func FuzzLoad(f *testing.F) {
	// Short records (the small configuration's features) in three
	// formats, and one as long as the default configuration needs.
	for _, c := range []struct {
		fm Format
		n  int
	}{{CU8, 64}, {CI16, 64}, {CF32, 64}, {CU8, Config{SampleRate: 1}.MinSamples()}} {
		x, err := Synthesize(SynthOptions{Mod: QPSK, SampleRate: 48000, Samples: c.n, SNRdB: 10, Seed: 3})
		if err != nil {
			f.Fatal(err)
		}
		dir := f.TempDir()
		base := filepath.Join(dir, "rec")
		if err := WriteSigMF(base+DataExt, &Recording{Samples: x, Meta: Meta{Datatype: c.fm, SampleRate: 48000, Label: "qpsk"}}); err != nil {
			f.Fatal(err)
		}
		meta, err := os.ReadFile(base + MetaExt)
		if err != nil {
			f.Fatal(err)
		}
		data, err := os.ReadFile(base + DataExt)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, meta, uint8(0), 0.0)
		f.Add(data, []byte(nil), map[Format]uint8{CU8: 5, CI16: 3, CF32: 1}[c.fm], 2e6)
		if c.n < 100 {
			f.Add(data, meta, uint8(0), 1e-300)
			f.Add(data, []byte(c.fm), uint8(6), 5e-324)
		}
	}
	f.Add([]byte{0, 0, 0xc0, 0x7f, 0, 0, 0x80, 0x7f}, []byte("cf32"), uint8(6), 1.0)
	f.Add([]byte{1, 2, 3}, []byte(`{"global": {"core:datatype": "ci8", "core:sample_rate": 1e308}}`), uint8(0), 0.0)
	f.Add([]byte{}, []byte(nil), uint8(5), 1.0)
	f.Fuzz(func(t *testing.T, data, meta []byte, mode uint8, rate float64) {
		dir := t.TempDir()
		mode %= uint8(len(loadFuzzExts))
		var path, dataPath, format string
		switch mode {
		case 0:
			path = filepath.Join(dir, "rec")
			dataPath = path + DataExt
			if err := os.WriteFile(path+MetaExt, meta, 0o644); err != nil {
				t.Fatal(err)
			}
		default:
			path = filepath.Join(dir, "rec"+loadFuzzExts[mode])
			dataPath = path
			if mode == uint8(len(loadFuzzExts)-1) {
				format = string(meta)
			}
		}
		if err := os.WriteFile(dataPath, data, 0o644); err != nil {
			t.Fatal(err)
		}
		rec, err := Load(path, format, rate)
		if err != nil {
			if rec != nil {
				t.Fatal("a recording with an error")
			}
			if rate >= 0 && !math.IsInf(rate, 0) && format == "" && !strings.Contains(err.Error(), path) {
				t.Fatalf("error does not name %s: %v", path, err)
			}
			return
		}
		m := rec.Meta
		switch {
		case m.Datatype.SampleSize() == 0 || len(rec.Samples) == 0 || len(rec.Samples)*m.Datatype.SampleSize() != len(data):
			t.Fatalf("%d samples of %q from %d bytes", len(rec.Samples), m.Datatype, len(data))
		case !(m.SampleRate > 0) || math.IsInf(m.SampleRate, 0):
			t.Fatalf("sample rate %v", m.SampleRate)
		case rate > 0 && m.SampleRate != rate:
			t.Fatalf("sample rate %v, given %v", m.SampleRate, rate)
		}
		// The features with a small configuration (16-sample segments, so
		// that short inputs reach them), then with the default one
		// (`signal features`) when the record is long enough.
		small := Config{SampleRate: m.SampleRate, WelchSegment: 16, SpectrogramSegment: 8, MFCCFrame: 16, MFCCHop: 8, MelBands: 8, MFCCs: 4, AutocorrLags: 8}
		for _, cfg := range []Config{small, {SampleRate: m.SampleRate}} {
			checkFeatures(t, rec.Samples, cfg, dir)
		}
	})
}

// checkFeatures extracts the features of x with cfg (when x is long
// enough and not too long for a fast fuzz input) and writes them as
// `signal features` does: nothing may fail but the JSON of a non-finite
// feature.
func checkFeatures(t *testing.T, x []complex64, cfg Config, dir string) {
	t.Helper()
	e, err := NewExtractor(cfg)
	if err != nil {
		t.Fatalf("no extractor for a loaded recording's rate %v: %v", cfg.SampleRate, err)
	}
	if len(x) < e.Config().MinSamples() || len(x) > 1<<15 {
		return
	}
	var feat Features
	if err := e.Extract(x, &feat); err != nil {
		t.Fatalf("features of %d samples: %v", len(x), err)
	}
	if feat.Samples != len(x) || feat.SampleRate != cfg.SampleRate {
		t.Fatalf("features of %d samples at %v Hz, loaded %d at %v", feat.Samples, feat.SampleRate, len(x), cfg.SampleRate)
	}
	_, _ = json.Marshal(NewFeaturesJSON(&feat, true)) // a non-finite feature is an error, not a crash
	if err := WriteFeaturesTable(io.Discard, &feat); err != nil {
		t.Fatal(err)
	}
	_ = WriteFeaturesCSV(filepath.Join(dir, "features.csv"), &feat)
	if err := WriteSpectrogram(filepath.Join(dir, "spec.f32"), &feat); err != nil {
		t.Fatal(err)
	}
}
