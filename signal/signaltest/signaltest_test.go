package signaltest

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/signal"
)

// features returns a Features value with every scalar set (distinct
// values) and two MFCCs.
func features() *signal.Features {
	f := &signal.Features{MFCC: []float64{-4, 2}, C20: complex(0.1, 0.2), C40: complex(-0.3, 0.4), C41: complex(0.5, -0.6)}
	for i, p := range []*float64{&f.RSSIdBFS, &f.RSSIdBm, &f.SNRdB, &f.SNRInbanddB, &f.NoiseFloor, &f.OccupiedBWHz,
		&f.OBWHz, &f.CentroidHz, &f.BandwidthHz, &f.Flatness, &f.RolloffHz, &f.C21, &f.C42, &f.InstAmpMean,
		&f.InstAmpStd, &f.InstPhaseMean, &f.InstPhaseStd, &f.InstFreqMean, &f.InstFreqStd} {
		*p = float64(i + 1)
	}
	return f
}

// recordOf returns a Record whose reference is f's own values, with the
// JSON layout scripts/signal_reference.py writes.
func recordOf(t *testing.T, f *signal.Features) *Record {
	t.Helper()
	g := Got(f)
	feats := map[string]json.RawMessage{}
	put := func(k string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		feats[k] = b
	}
	for k, v := range g {
		switch {
		case strings.HasPrefix(k, "mfcc"):
		case strings.HasSuffix(k, "_re"):
			base := strings.TrimSuffix(k, "_re")
			put(base+"_complex", [2]float64{v, g[base+"_im"]})
		case strings.HasSuffix(k, "_im"):
		default:
			put(k, v)
		}
	}
	put("mfcc", f.MFCC)
	return &Record{Name: "r", Features: feats}
}

func TestCompare(t *testing.T) {
	cases := []struct {
		name   string
		change func(f *signal.Features)
		want   string // substring of the only mismatch; "" for none
	}{
		{"identical", func(*signal.Features) {}, ""},
		{"within relative tolerance", func(f *signal.Features) { f.BandwidthHz *= 1 + 1e-10 }, ""},
		{"within absolute floor", func(f *signal.Features) { f.CentroidHz += 5e-7 }, ""},
		{"in-band SNR 3 dB off", func(f *signal.Features) { f.SNRInbanddB -= 3 }, "snr_inband_db = "},
		{"roll-off one bin off", func(f *signal.Features) { f.RolloffHz += 195.3125 }, "rolloff_hz = "},
		{"MFCC off by 1e-4", func(f *signal.Features) { f.MFCC[1] += 1e-4 }, "mfcc1 = "},
		{"NaN", func(f *signal.Features) { f.Flatness = math.NaN() }, "flatness = NaN"},
		{"complex part", func(f *signal.Features) { f.C40 = complex(real(f.C40), -imag(f.C40)) }, "c40_im = "},
		{"MFCC missing from the features", func(f *signal.Features) { f.MFCC = f.MFCC[:1] }, "mfcc1: in the reference but not in the features"},
		{"MFCC missing from the reference", func(f *signal.Features) { f.MFCC = append(f.MFCC, 7) }, "mfcc2: not in the reference"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := recordOf(t, features())
			f := features()
			c.change(f)
			ms, err := Compare(f, rec, CPU)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case c.want == "" && len(ms) != 0:
				t.Errorf("mismatches %v, want none", ms)
			case c.want != "" && (len(ms) != 1 || !strings.Contains(ms[0].String(), c.want)):
				t.Errorf("mismatches %v, want one containing %q", ms, c.want)
			}
		})
	}
}

// TestToleranceTablesCoverEveryFeature checks that CPU and Graph name a
// tolerance for every feature Got gives, and nothing else.
func TestToleranceTablesCoverEveryFeature(t *testing.T) {
	for name, ts := range map[string]Tolerances{"CPU": CPU, "Graph": Graph} {
		used := map[string]bool{}
		for k := range Got(features()) {
			if _, ok := ts.For(k); !ok {
				t.Errorf("%s: no tolerance for %s", name, k)
			}
			if strings.HasPrefix(k, "mfcc") {
				k = "mfcc"
			}
			used[k] = true
		}
		for k, tol := range ts {
			if !used[k] {
				t.Errorf("%s: tolerance for %s, which is no feature", name, k)
			}
			if !(tol.Rel >= 0 && tol.Abs >= 0 && tol.Rel+tol.Abs > 0) {
				t.Errorf("%s: %s: tolerance %+v allows nothing or is negative", name, k, tol)
			}
		}
	}
}

func TestLoadAndReadErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name, json, want string
	}{
		{"missing file", "", "no such file"},
		{"bad JSON", "{", "unexpected EOF"},
		{"unknown field", `{"header": {"extra": 1}, "records": [{}]}`, `unknown field "extra"`},
		{"no records", `{"header": {}}`, "no records"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			os.Remove(filepath.Join(dir, File))
			if c.json != "" {
				write(File, c.json)
			}
			_, err := Load(dir)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "signaltest: ") {
				t.Errorf("Load: %v, want an error containing %q", err, c.want)
			}
		})
	}
	write("x.cf32", strings.Repeat("\x00", 16))
	sum := "374708fff7719dd5979ec875d56cd2286f6d3cf7ec317a3b25632aab28ec37bb" // sha256 of 16 zero bytes
	for _, c := range []struct {
		name string
		rec  Record
		want string
	}{
		{"checksum", Record{File: "x.cf32", Format: "cf32", Samples: 2, SHA256: "00"}, "sha256"},
		{"count", Record{File: "x.cf32", Format: "cf32", Samples: 3, SHA256: sum}, "2 samples, the reference says 3"},
		{"format", Record{File: "x.cf32", Format: "nope", Samples: 2, SHA256: sum}, "unknown sample format"},
	} {
		t.Run("Read "+c.name, func(t *testing.T) {
			if _, err := c.rec.Read(dir); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Read: %v, want an error containing %q", err, c.want)
			}
		})
	}
	ok := Record{File: "x.cf32", Format: "cf32", Samples: 2, SHA256: sum}
	if x, err := ok.Read(dir); err != nil || len(x) != 2 {
		t.Errorf("Read: %v, %v; want 2 samples", x, err)
	}
}

func TestCheckConfig(t *testing.T) {
	e, err := signal.NewExtractor(signal.Config{SampleRate: 1})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := Load(filepath.Join("..", "testdata", "reference"))
	if err != nil {
		t.Fatal(err)
	}
	if err := ref.Header.CheckConfig(e.Config()); err != nil {
		t.Errorf("defaults: %v", err)
	}
	cfg := e.Config()
	cfg.RolloffFraction = 0.8
	if err := ref.Header.CheckConfig(cfg); err == nil || !strings.Contains(err.Error(), "RolloffFraction 0.8, reference 0.85") {
		t.Errorf("roll-off 0.8: %v", err)
	}
}
