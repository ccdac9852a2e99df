package signal

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSigMFRoundTrip(t *testing.T) {
	o := SynthOptions{Mod: QAM16, SampleRate: 48000, Samples: 4800, SNRdB: 20, Seed: 7, Multipath: Taps{1, 0.3 - 0.1i}}
	x, err := Synthesize(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range Formats {
		dir := t.TempDir()
		rec := &Recording{Samples: x, Meta: Meta{Datatype: f, SampleRate: 48000, Frequency: 915e6, Label: "16qam", Author: "test", Synth: &o}}
		path := filepath.Join(dir, "rec.sigmf-data")
		if err := WriteSigMF(path, rec); err != nil {
			t.Fatal(err)
		}
		got, err := ReadSigMF(filepath.Join(dir, "rec.sigmf-meta"))
		if err != nil {
			t.Fatal(err)
		}
		m := got.Meta
		if m.Datatype != f || m.SampleRate != 48000 || m.Frequency != 915e6 || m.Label != "16qam" || m.Author != "test" {
			t.Errorf("%s: metadata %+v", f, m)
		}
		if m.Synth == nil || m.Synth.Seed != 7 || m.Synth.Mod != QAM16 || len(m.Synth.Multipath) != 2 || m.Synth.Multipath[1] != 0.3-0.1i {
			t.Errorf("%s: synth options %+v", f, m.Synth)
		}
		if len(got.Samples) != len(x) {
			t.Fatalf("%s: %d samples, want %d", f, len(got.Samples), len(x))
		}
		// Exact for cf32; within half a quantisation step otherwise (the
		// 16QAM record at unit power stays inside [−1, 1) here).
		step := map[Format]float64{CF32: 0, CF32BE: 0, CI16: 0.5 / 32768, CI16BE: 0.5 / 32768, CI8: 0.5 / 128, CU8: 0.5 / 127.5}[f]
		for i := range x {
			dr := float64(real(got.Samples[i]) - real(x[i]))
			di := float64(imag(got.Samples[i]) - imag(x[i]))
			if clipped(x[i]) {
				continue
			}
			if dr > step+1e-7 || dr < -step-1e-7 || di > step+1e-7 || di < -step-1e-7 {
				t.Fatalf("%s: sample %d: %v, want %v", f, i, got.Samples[i], x[i])
			}
		}
		// Re-encoding decoded values is exact.
		b, _ := Encode(nil, got.Samples, f)
		raw, _ := os.ReadFile(path)
		if !bytes.Equal(b, raw) {
			t.Errorf("%s: re-encoding the decoded samples changed the bytes", f)
		}
	}
}

func clipped(v complex64) bool {
	return real(v) >= 127.0/128 || real(v) < -1 || imag(v) >= 127.0/128 || imag(v) < -1
}

func TestRawRoundTripAndLoad(t *testing.T) {
	x, _ := Synthesize(SynthOptions{Mod: FM, SampleRate: 1e4, Samples: 1000, SNRdB: 30, Seed: 1})
	dir := t.TempDir()
	for _, name := range []string{"a.cf32", "a.cfile", "a.ci16", "a.cs8", "a.cu8"} {
		f := FormatFromExt(name)
		path := filepath.Join(dir, name)
		if err := WriteRaw(path, x, f); err != nil {
			t.Fatal(err)
		}
		rec, err := Load(path, "", 1e4)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Meta.Datatype != f || len(rec.Samples) != len(x) || rec.Meta.SampleRate != 1e4 {
			t.Errorf("%s: %s, %d samples at %g", name, rec.Meta.Datatype, len(rec.Samples), rec.Meta.SampleRate)
		}
	}
	if _, err := Load(filepath.Join(dir, "a.cf32"), "", 0); err == nil || !strings.Contains(err.Error(), "sample rate") {
		t.Errorf("raw file without a rate: %v", err)
	}
	if _, err := Load(filepath.Join(dir, "a.xyz"), "", 1); err == nil || !strings.Contains(err.Error(), "a.xyz") {
		t.Errorf("unknown extension: %v", err)
	}
}

func TestReadErrorsNameTheFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := `{"global": {"core:datatype": "cf32_le", "core:sample_rate": 1000, "core:version": "1.0.0"}, "captures": [], "annotations": []}`
	cases := []struct {
		name, meta, data, want string
	}{
		{"truncated", good, "12345678123", "trunc.sigmf-data"},
		{"empty data", good, "", "no samples"},
		{"bad json", `{"global": `, "12345678", "not SigMF metadata"},
		{"no global", `{"captures": []}`, "12345678", "no \"global\""},
		{"no datatype", `{"global": {"core:sample_rate": 1}}`, "12345678", "missing core:datatype"},
		{"real datatype", `{"global": {"core:datatype": "rf32_le"}}`, "12345678", "real-valued"},
		{"unsupported", `{"global": {"core:datatype": "cf64_le"}}`, "12345678", "not supported"},
		{"two channels", `{"global": {"core:datatype": "cf32_le", "core:num_channels": 2}}`, "12345678", "single-channel"},
		{"negative rate", `{"global": {"core:datatype": "cf32_le", "core:sample_rate": -5}}`, "12345678", "sample_rate"},
		{"rate not number", `{"global": {"core:datatype": "cf32_le", "core:sample_rate": "fast"}}`, "12345678", "core:sample_rate"},
	}
	for i, c := range cases {
		base := "trunc"
		if i > 0 {
			base = strings.ReplaceAll(c.name, " ", "_")
		}
		write(base+".sigmf-meta", c.meta)
		write(base+".sigmf-data", c.data)
		_, err := ReadSigMF(filepath.Join(dir, base+".sigmf-meta"))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), base) {
			t.Errorf("%s: error %v, want one naming %s and saying %q", c.name, err, base, c.want)
		}
	}
	if _, err := ReadSigMF(filepath.Join(dir, "missing.sigmf-meta")); err == nil || !strings.Contains(err.Error(), "missing.sigmf-meta") {
		t.Errorf("missing file: %v", err)
	}
	write("short.cu8", "123")
	if _, err := ReadRaw(filepath.Join(dir, "short.cu8"), CU8); err == nil || !strings.Contains(err.Error(), "short.cu8") {
		t.Errorf("odd-length cu8: %v", err)
	}
}

func TestDecodeKnownValues(t *testing.T) {
	x, err := Decode(nil, []byte{0, 255, 128, 127}, CU8)
	if err != nil {
		t.Fatal(err)
	}
	if x[0] != complex(-1, 1) || x[1] != complex(float32(0.5/127.5), float32(-0.5/127.5)) {
		t.Errorf("cu8 decode: %v", x)
	}
	y, _ := Decode(nil, []byte{0x00, 0x80, 0xff, 0x7f}, CI16)
	if y[0] != complex(-1, float32(32767.0/32768)) {
		t.Errorf("ci16 decode: %v", y)
	}
	b, _ := Encode(nil, []complex64{complex(2, -2)}, CI8)
	if b[0] != 127 || b[1] != 0x80 {
		t.Errorf("ci8 saturation: %v", b)
	}
}

func FuzzParseMeta(f *testing.F) {
	f.Add([]byte(`{"global": {"core:datatype": "cf32_le", "core:sample_rate": 1000}, "captures": [{"core:frequency": 1e9}], "annotations": [{"core:label": "x"}]}`))
	f.Add([]byte(`{"global": {"core:datatype": "cu8", "gotrain:synth": {"mod": "qpsk", "multipath": [[1, 0]]}}}`))
	f.Add([]byte(`{"global": null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseMeta(b, "fuzz.sigmf-meta")
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.sigmf-meta") {
				t.Errorf("error does not name the file: %v", err)
			}
			return
		}
		if m.Datatype.SampleSize() == 0 || m.SampleRate < 0 {
			t.Errorf("accepted metadata %+v", m)
		}
	})
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8}, uint8(0))
	f.Add([]byte{127, 128}, uint8(5))
	f.Add([]byte{0, 0, 0xc0, 0x7f, 0, 0, 0x80, 0xff}, uint8(0))
	f.Fuzz(func(t *testing.T, b []byte, which uint8) {
		fm := Formats[int(which)%len(Formats)]
		x, err := Decode(nil, b, fm)
		if err != nil {
			if len(b)%fm.SampleSize() == 0 {
				t.Errorf("%s: whole samples rejected: %v", fm, err)
			}
			return
		}
		if len(x)*fm.SampleSize() != len(b) {
			t.Fatalf("%s: %d samples from %d bytes", fm, len(x), len(b))
		}
		back, err := Encode(nil, x, fm)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(back, b) {
			t.Errorf("%s: decode-encode changed % x to % x", fm, b, back)
		}
	})
}

// FuzzReadSigMF writes a fuzzed metadata and data pair and reads it back.
func FuzzReadSigMF(f *testing.F) {
	f.Add([]byte(`{"global": {"core:datatype": "ci16_le", "core:sample_rate": 8}}`), []byte{1, 2, 3, 4})
	f.Add([]byte(`{"global": {"core:datatype": "cf32_le"}}`), []byte{1, 2, 3})
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, meta, data []byte) {
		base := filepath.Join(dir, "f")
		if err := os.WriteFile(base+MetaExt, meta, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(base+DataExt, data, 0o644); err != nil {
			t.Fatal(err)
		}
		rec, err := ReadSigMF(base + MetaExt)
		if err != nil {
			if !strings.Contains(err.Error(), base) {
				t.Errorf("error does not name the file: %v", err)
			}
			return
		}
		if len(rec.Samples) == 0 || len(rec.Samples)*rec.Meta.Datatype.SampleSize() != len(data) {
			t.Errorf("%d samples of %s from %d bytes", len(rec.Samples), rec.Meta.Datatype, len(data))
		}
	})
}

// TestLoadSigMFByBaseName checks that Load finds the SigMF pair that
// `signal synth --out base` writes when given the base name only.
func TestLoadSigMFByBaseName(t *testing.T) {
	dir := t.TempDir()
	x, err := Synthesize(SynthOptions{Mod: QPSK, SampleRate: 1e4, Samples: 300, SNRdB: 10, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(dir, "rec")
	if err := WriteSigMF(base, &Recording{Meta: Meta{Datatype: CF32, SampleRate: 1e4}, Samples: x}); err != nil {
		t.Fatal(err)
	}
	rec, err := Load(base, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Samples) != 300 || rec.Meta.SampleRate != 1e4 {
		t.Errorf("loaded %d samples at %g Hz", len(rec.Samples), rec.Meta.SampleRate)
	}
}

// TestLoadSaysWhatIsWrong checks that Load reports a missing file as
// missing (not as a file of unknown format), whatever its name, and an
// existing file without a known extension as a format it cannot tell.
func TestLoadSaysWhatIsWrong(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"nothere", "nothere.cf32", "nothere.sigmf-meta", "nothere.sigmf-data", "nothere.bin"} {
		for _, rate := range []float64{0, 1e6} {
			p := filepath.Join(dir, name)
			_, err := Load(p, "", rate)
			base := strings.TrimSuffix(p, filepath.Ext(p)) // a SigMF pair's error names its meta file
			if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "no such file") || !strings.Contains(err.Error(), base) {
				t.Errorf("Load(%s, rate %g): %v, want an error saying there is no such file", name, rate, err)
			}
		}
	}
	other := filepath.Join(dir, "capture.bin")
	if err := os.WriteFile(other, make([]byte, 64), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(other, "", 1e6); err == nil || !strings.Contains(err.Error(), "cannot tell the sample format") {
		t.Errorf("file without a known extension: %v", err)
	}
}
