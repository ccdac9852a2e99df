package signal

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestSynthSpecSynthOptions(t *testing.T) {
	base := SynthOptions{SampleRate: 200000, SNRdB: 10, Seed: 3}
	with := func(f func(*SynthOptions)) SynthOptions {
		o := base
		f(&o)
		return o
	}
	for _, c := range []struct {
		name string
		spec SynthSpec
		want SynthOptions
		err  string
	}{
		{name: "seconds give samples", spec: SynthSpec{Options: base, Mod: "QPSK", Seconds: 0.25},
			want: with(func(o *SynthOptions) { o.Mod, o.Samples = QPSK, 50000 })},
		{name: "samples override seconds", spec: SynthSpec{Options: with(func(o *SynthOptions) { o.Samples = 4096 }), Mod: "fm", Seconds: 0},
			want: with(func(o *SynthOptions) { o.Mod, o.Samples = FM, 4096 })},
		{name: "multipath taps", spec: SynthSpec{Options: base, Mod: "bpsk", Seconds: 0.01, Multipath: "1, 0.4-0.2i,0.1i"},
			want: with(func(o *SynthOptions) { o.Mod, o.Samples, o.Multipath = BPSK, 2000, Taps{1, 0.4 - 0.2i, 0.1i} })},
		{name: "empty multipath keeps the options' taps", spec: SynthSpec{Options: with(func(o *SynthOptions) { o.Multipath = Taps{1, 0.5} }), Mod: "am", Seconds: 0.01},
			want: with(func(o *SynthOptions) { o.Mod, o.Samples, o.Multipath = AM, 2000, Taps{1, 0.5} })},
		{name: "unknown modulation", spec: SynthSpec{Options: base, Mod: "nope", Seconds: 1}, err: `signal: unknown modulation "nope" (want one of bpsk,`},
		{name: "zero seconds", spec: SynthSpec{Options: base, Mod: "qpsk"}, err: "SynthSpec.Seconds: signal: 0 s at 200000 Hz gives 0 samples"},
		{name: "bad taps", spec: SynthSpec{Options: base, Mod: "qpsk", Seconds: 1, Multipath: "1,zz"}, err: `SynthSpec.Multipath: signal: tap 2 "zz": not a complex number`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.spec.SynthOptions()
			checkSpec(t, got, err, c.want, c.err)
		})
	}
}

func TestSynthFileSpecSynthesize(t *testing.T) {
	dir := t.TempDir()
	rec := SynthSpec{Options: SynthOptions{SampleRate: 200000, SNRdB: 10, Seed: 1}, Mod: "qpsk", Seconds: 0.02}
	for _, c := range []struct {
		name     string
		spec     SynthFileSpec
		files    []string
		datatype Format // of the file read back
		err      string
	}{
		{name: "sigmf cf32", spec: SynthFileSpec{SynthSpec: rec, Out: filepath.Join(dir, "a"), Datatype: "cf32_le"},
			files: []string{"a.sigmf-meta", "a.sigmf-data"}, datatype: CF32},
		{name: "sigmf ci16", spec: SynthFileSpec{SynthSpec: rec, Out: filepath.Join(dir, "b"), Datatype: "ci16_le"},
			files: []string{"b.sigmf-meta", "b.sigmf-data"}, datatype: CI16},
		{name: "raw by format, the datatype unused", spec: SynthFileSpec{SynthSpec: rec, Out: filepath.Join(dir, "c.bin"), Format: "cu8", Datatype: "ci16_le"},
			files: []string{"c.bin"}, datatype: CU8},
		{name: "no datatype", spec: SynthFileSpec{SynthSpec: rec, Out: filepath.Join(dir, "f")}, err: `SynthFileSpec.Datatype: signal: unknown sample format ""`},
		{name: "bad datatype", spec: SynthFileSpec{SynthSpec: rec, Out: filepath.Join(dir, "d"), Datatype: "f64"},
			err: `SynthFileSpec.Datatype: signal: unknown sample format "f64"`},
		{name: "record error first", spec: SynthFileSpec{SynthSpec: SynthSpec{Options: rec.Options, Mod: "qpsk"}, Out: filepath.Join(dir, "e"), Datatype: "f64"},
			err: "SynthSpec.Seconds:"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep, err := c.spec.Synthesize()
			if c.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), c.err) {
					t.Fatalf("error %v, want one starting %q", err, c.err)
				}
				if _, serr := os.Stat(c.spec.Out + ".sigmf-meta"); serr == nil {
					t.Errorf("a failed spec wrote %s", c.spec.Out)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, f := range c.files {
				want = append(want, filepath.Join(dir, f))
			}
			if !reflect.DeepEqual(rep.Files, want) || rep.Format != string(c.datatype) || rep.Samples != 4000 || rep.Mod != QPSK {
				t.Errorf("report %+v; want files %v in %s", rep, want, c.datatype)
			}
			r, err := Load(rep.Files[0], c.spec.Format, 200000)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Samples) != 4000 || (c.spec.Format == "" && r.Meta.Datatype != c.datatype) {
				t.Errorf("read back %d samples as %s", len(r.Samples), r.Meta.Datatype)
			}
		})
	}
}

// countingExtractor is a FeatureExtractor that counts its calls and can
// fail.
type countingExtractor struct {
	e     *Extractor
	calls int
	fail  error
}

func (c *countingExtractor) Extract(x []complex64, f *Features) error {
	c.calls++
	if c.fail != nil {
		return c.fail
	}
	return c.e.Extract(x, f)
}

func TestFeaturesSpec(t *testing.T) {
	dir := t.TempDir()
	rec := SynthSpec{Options: SynthOptions{SampleRate: 100000, SNRdB: 10, Seed: 2}, Mod: "qpsk", Seconds: 0.05}
	sigmf, raw := filepath.Join(dir, "r"), filepath.Join(dir, "r.ci16")
	for _, f := range []SynthFileSpec{{SynthSpec: rec, Out: sigmf, Datatype: "cf32_le"}, {SynthSpec: rec, Out: raw, Datatype: "cf32_le"}} {
		if _, err := f.Synthesize(); err != nil {
			t.Fatal(err)
		}
	}
	x, err := Synthesize(mustOptions(t, rec))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name       string
		spec       FeaturesSpec
		fail       error
		rate       float64 // of the configuration Load returns
		format     string
		label      string
		loadErr    string
		extractErr string
		files      []string // written
	}{
		{name: "sigmf", spec: FeaturesSpec{In: sigmf + ".sigmf-meta", Impedance: 50}, rate: 100000, format: "cf32_le", label: "qpsk"},
		{name: "raw with rate, arrays and files", spec: FeaturesSpec{In: raw, Rate: 100000, Impedance: 75, Arrays: true,
			Spectrogram: filepath.Join(dir, "a.spec"), CSV: filepath.Join(dir, "a.csv")}, rate: 100000, format: "ci16_le",
			files: []string{"a.spec", "a.csv"}},
		{name: "rate overrides sigmf's", spec: FeaturesSpec{In: sigmf + ".sigmf-meta", Rate: 50000, Impedance: 50}, rate: 50000, format: "cf32_le", label: "qpsk"},
		{name: "missing file", spec: FeaturesSpec{In: filepath.Join(dir, "none.cf32"), Rate: 1e5}, loadErr: "none.cf32"},
		{name: "raw without rate", spec: FeaturesSpec{In: raw}, loadErr: "rate"},
		{name: "extraction error names the file, no files written", spec: FeaturesSpec{In: raw, Rate: 100000, Impedance: 50,
			CSV: filepath.Join(dir, "b.csv")}, fail: errors.New("boom"), rate: 100000, extractErr: raw + ": boom"},
		{name: "write error names the file", spec: FeaturesSpec{In: raw, Rate: 100000, Impedance: 50,
			CSV: filepath.Join(dir, "no", "c.csv")}, rate: 100000, extractErr: raw + ": "},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, cfg, err := c.spec.Load()
			if c.loadErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.loadErr) {
					t.Fatalf("Load: error %v, want one containing %q", err, c.loadErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg != (Config{SampleRate: c.rate, Impedance: c.spec.Impedance}) || len(r.Samples) != len(x) {
				t.Fatalf("Load: config %+v, %d samples; want rate %v, impedance %v, %d samples", cfg, len(r.Samples), c.rate, c.spec.Impedance, len(x))
			}
			cpu, err := NewExtractor(cfg)
			if err != nil {
				t.Fatal(err)
			}
			ce := &countingExtractor{e: cpu, fail: c.fail}
			rep, err := c.spec.Extract(ce, r)
			if c.extractErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), c.extractErr) || rep != nil {
					t.Fatalf("Extract: report %v, error %v; want no report and an error starting %q", rep != nil, err, c.extractErr)
				}
				if _, serr := os.Stat(c.spec.CSV); serr == nil {
					t.Errorf("a failed extraction wrote %s", c.spec.CSV)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var want Features
			if err := cpu.Extract(r.Samples, &want); err != nil {
				t.Fatal(err)
			}
			if ce.calls != 1 || rep.File != c.spec.In || rep.Format != c.format || rep.Label != c.label || rep.Device != "" ||
				!(rep.ExtractMS > 0) || rep.CompileMS != 0 || rep.Spectrogram != c.spec.Spectrogram || rep.Features.SNRdB != want.SNRdB ||
				rep.Features.SampleRate != c.rate || (len(rep.PSD) > 0) != c.spec.Arrays {
				t.Errorf("report of %s (%s, label %q, device %q, %v ms, compile %v ms, spectrogram %q, SNR %v dB at %v Hz, %d PSD bins) after %d extractions",
					rep.File, rep.Format, rep.Label, rep.Device, rep.ExtractMS, rep.CompileMS, rep.Spectrogram, rep.Features.SNRdB, rep.Features.SampleRate,
					len(rep.PSD), ce.calls)
			}
			for _, f := range c.files {
				if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
					t.Errorf("%s: %v", f, err)
				}
			}
		})
	}
}

func mustOptions(t *testing.T, s SynthSpec) SynthOptions {
	t.Helper()
	o, err := s.SynthOptions()
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestBenchSpecBenchOptions(t *testing.T) {
	rec := SynthSpec{Options: SynthOptions{SampleRate: 200000, SNRdB: 10, CarrierOffset: 25000}, Mod: "qpsk", Seconds: 0.01}
	for _, c := range []struct {
		name string
		spec BenchSpec
		want BenchOptions
		err  string
	}{
		{name: "record parsed, options kept", spec: BenchSpec{Synth: rec, Options: BenchOptions{Runs: 3, Records: 4, Workers: 2, Threads: 2}},
			want: BenchOptions{Runs: 3, Records: 4, Workers: 2, Threads: 2,
				Synth: SynthOptions{Mod: QPSK, SampleRate: 200000, Samples: 2000, SNRdB: 10, CarrierOffset: 25000}}},
		{name: "zero options stay zero (Benchmark's defaults)", spec: BenchSpec{Synth: rec},
			want: BenchOptions{Synth: SynthOptions{Mod: QPSK, SampleRate: 200000, Samples: 2000, SNRdB: 10, CarrierOffset: 25000}}},
		{name: "the spec's record replaces the options'", spec: BenchSpec{Synth: rec, Options: BenchOptions{Synth: SynthOptions{Mod: FM, Samples: 9}}},
			want: BenchOptions{Synth: SynthOptions{Mod: QPSK, SampleRate: 200000, Samples: 2000, SNRdB: 10, CarrierOffset: 25000}}},
		{name: "record error", spec: BenchSpec{Synth: SynthSpec{Options: rec.Options, Mod: "qpsk"}, Options: BenchOptions{Runs: 1}}, err: "SynthSpec.Seconds: "},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.spec.BenchOptions()
			checkSpec(t, got, err, c.want, c.err)
		})
	}
}

// checkSpec checks what a spec's method returned: an error starting
// wantErr, or (wantErr "") no error and got equal to want.
func checkSpec[T any](t *testing.T, got T, err error, want T, wantErr string) {
	t.Helper()
	if wantErr != "" {
		if err == nil || !strings.HasPrefix(err.Error(), wantErr) {
			t.Fatalf("error %v, want one starting %q", err, wantErr)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}
