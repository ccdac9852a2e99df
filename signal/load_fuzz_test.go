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
// then the features of the record, their JSON, table, CSV and
// spectrogram. Nothing may panic; with a valid rate and no format an
// error names the file; a loaded recording has whole samples of its
// format, a positive finite rate (the one given, if any), and extracts
// without error when it is long enough.
func FuzzLoad(f *testing.F) {
	cfgMin := Config{SampleRate: 1}.MinSamples()
	x, err := Synthesize(SynthOptions{Mod: QPSK, SampleRate: 48000, Samples: cfgMin, SNRdB: 10, Seed: 3})
	if err != nil {
		f.Fatal(err)
	}
	for _, fm := range []Format{CU8, CI16, CF32} {
		dir := f.TempDir()
		base := filepath.Join(dir, "rec")
		if err := WriteSigMF(base+DataExt, &Recording{Samples: x, Meta: Meta{Datatype: fm, SampleRate: 48000, Label: "qpsk"}}); err != nil {
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
		f.Add(data, meta, uint8(0), 1e-300)
		f.Add(data, []byte(nil), map[Format]uint8{CU8: 5, CI16: 3, CF32: 1}[fm], 2e6)
		f.Add(data, []byte(fm), uint8(6), 5e-324)
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
		e, err := NewExtractor(Config{SampleRate: m.SampleRate})
		if err != nil {
			t.Fatalf("no extractor for a loaded recording's rate %v: %v", m.SampleRate, err)
		}
		if len(rec.Samples) < e.Config().MinSamples() || len(rec.Samples) > 1<<15 {
			return
		}
		var feat Features
		if err := e.Extract(rec.Samples, &feat); err != nil {
			t.Fatalf("features of %d samples: %v", len(rec.Samples), err)
		}
		if feat.Samples != len(rec.Samples) || feat.SampleRate != m.SampleRate {
			t.Fatalf("features of %d samples at %v Hz, loaded %d at %v", feat.Samples, feat.SampleRate, len(rec.Samples), m.SampleRate)
		}
		_, _ = json.Marshal(NewFeaturesJSON(&feat, true)) // a non-finite feature is an error, not a crash
		if err := WriteFeaturesTable(io.Discard, &feat); err != nil {
			t.Fatal(err)
		}
		_ = WriteFeaturesCSV(filepath.Join(dir, "features.csv"), &feat)
		if err := WriteSpectrogram(filepath.Join(dir, "spec.f32"), &feat); err != nil {
			t.Fatal(err)
		}
	})
}
