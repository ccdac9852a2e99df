package signal

import (
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
			if c.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), c.err) {
					t.Fatalf("error %v, want one starting %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %+v\nwant %+v", got, c.want)
			}
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
		{name: "sigmf default datatype", spec: SynthFileSpec{SynthSpec: rec, Out: filepath.Join(dir, "a")},
			files: []string{"a.sigmf-meta", "a.sigmf-data"}, datatype: CF32},
		{name: "sigmf ci16", spec: SynthFileSpec{SynthSpec: rec, Out: filepath.Join(dir, "b"), Datatype: "ci16_le"},
			files: []string{"b.sigmf-meta", "b.sigmf-data"}, datatype: CI16},
		{name: "raw by format", spec: SynthFileSpec{SynthSpec: rec, Out: filepath.Join(dir, "c.bin"), Format: "cu8"},
			files: []string{"c.bin"}, datatype: CU8},
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
