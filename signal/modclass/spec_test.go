package modclass

import (
	"bytes"
	stdcontext "context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/forest"
	"github.com/gotrain/gotrain/internal/readlimit"
	"github.com/gotrain/gotrain/signal"
)

func TestDatasetSpecDatasetOptions(t *testing.T) {
	base := DatasetOptions{PerClass: 5, SampleRate: 200000, Seed: 7}
	with := func(f func(*DatasetOptions)) DatasetOptions {
		o := base
		f(&o)
		return o
	}
	for _, c := range []struct {
		name string
		spec DatasetSpec
		want DatasetOptions
		err  string
	}{
		{name: "all parsed", spec: DatasetSpec{Options: base, Mods: "bpsk, FM", SNR: "-10:20:2", Seconds: 0.1, SPS: "4, 8,16"},
			want: with(func(o *DatasetOptions) {
				o.Mods, o.SNRMinDB, o.SNRMaxDB, o.SNRStepDB = []signal.Modulation{signal.BPSK, signal.FM}, -10, 20, 2
				o.Samples, o.SPS = 20000, []int{4, 8, 16}
			})},
		{name: "samples override seconds, no mods the default", spec: DatasetSpec{Options: with(func(o *DatasetOptions) { o.Samples = 4096 }), SNR: "10", SPS: "2"},
			want: with(func(o *DatasetOptions) {
				o.Mods, o.SNRMinDB, o.SNRMaxDB, o.Samples, o.SPS = DefaultMods, 10, 10, 4096, []int{2}
			})},
		{name: "the SPS text replaces the options'", spec: DatasetSpec{Options: with(func(o *DatasetOptions) { o.SPS = []int{16} }), SNR: "0:5", Seconds: 0.01, SPS: "8"},
			want: with(func(o *DatasetOptions) { o.Mods, o.SNRMaxDB, o.Samples, o.SPS = DefaultMods, 5, 2000, []int{8} })},
		{name: "unknown modulation", spec: DatasetSpec{Options: base, Mods: "bpsk,qpks", SNR: "0", Seconds: 1, SPS: "4"}, err: `modclass: signal: unknown modulation "qpks"`},
		{name: "bad SNR", spec: DatasetSpec{Options: base, SNR: "20:10", Seconds: 1, SPS: "4"}, err: `DatasetSpec.SNR: modclass: SNR range "20:10": the minimum 20 is above the maximum 10`},
		{name: "zero seconds", spec: DatasetSpec{Options: base, SNR: "0", SPS: "4"}, err: "DatasetSpec.Seconds: signal: 0 s at 200000 Hz gives 0 samples"},
		{name: "bad SPS", spec: DatasetSpec{Options: base, SNR: "0", Seconds: 1, SPS: "4,x"}, err: `DatasetSpec.SPS "4,x": "x" is not an integer`},
		{name: "empty SPS", spec: DatasetSpec{Options: base, SNR: "0", Seconds: 1}, err: `DatasetSpec.SPS "": "" is not an integer`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.spec.DatasetOptions()
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

func TestDatasetSpecGenerate(t *testing.T) {
	opts := DatasetOptions{PerClass: 3, SampleRate: 200000, Samples: 4096, Seed: 2, Workers: 1}
	for _, c := range []struct {
		name     string
		spec     DatasetSpec
		occupied bool   // the folder holds a file before
		text     string // the text report up to the timings
		err      string
	}{
		{name: "generated", spec: DatasetSpec{Options: opts, Mods: "bpsk,fm", SNR: "10:20:10", SPS: "4,8"},
			text: "wrote DIR: 6 records (3 per class: bpsk fm), 4096 samples at 200000 Hz, SNR 10:20:10 dB, seed 2; "},
		{name: "forced over a file", spec: DatasetSpec{Options: opts, Mods: "fm,bpsk", SNR: "10", SPS: "4,8", Force: true}, occupied: true,
			text: "wrote DIR: 6 records (3 per class: fm bpsk), 4096 samples at 200000 Hz, SNR 10 dB, seed 2; "},
		{name: "not empty", spec: DatasetSpec{Options: opts, SNR: "10", SPS: "4,8"}, occupied: true, err: "modclass: output folder DIR is not empty"},
		{name: "spec error", spec: DatasetSpec{Options: opts, SNR: "x", SPS: "4"}, err: "DatasetSpec.SNR: "},
		{name: "options error", spec: DatasetSpec{Options: DatasetOptions{SampleRate: 200000, Samples: 4096}, SNR: "0", SPS: "4"},
			err: "modclass: records per class 0 must be at least 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ds")
			if c.occupied {
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			c.spec.Dir = dir
			rep, err := c.spec.Generate(stdcontext.Background())
			if c.err != "" {
				if want := strings.ReplaceAll(c.err, "DIR", dir); err == nil || !strings.HasPrefix(err.Error(), want) {
					t.Fatalf("error %v, want one starting %q", err, want)
				}
				if _, serr := os.Stat(filepath.Join(dir, InfoFile)); serr == nil {
					t.Errorf("a failed spec wrote %s", dir)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			d, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Dir != dir || rep.Dataset.Rows != 6 || d.Rows != 6 || !(rep.RecordsPerSecond > 0) || !(rep.Seconds >= rep.Dataset.Seconds) ||
				!reflect.DeepEqual(rep.Dataset.Options.SPS, []int{4, 8}) {
				t.Errorf("report %+v", rep)
			}
			var b bytes.Buffer
			if err := rep.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			if want := strings.ReplaceAll(c.text, "DIR", dir); !strings.HasPrefix(b.String(), want) || !strings.HasSuffix(b.String(), " records/s)\n") {
				t.Errorf("text %q, want %q...", b.String(), want)
			}
			// The JSON keys of `signal dataset --json`, and no others.
			js, err := json.Marshal(rep)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal(js, &m); err != nil {
				t.Fatal(err)
			}
			keys := slices.Sorted(func(yield func(string) bool) {
				for k := range m {
					if !yield(k) {
						return
					}
				}
			})
			if want := []string{"dataset", "dir", "records_per_second", "seconds"}; !slices.Equal(keys, want) {
				t.Errorf("JSON keys %v, want %v", keys, want)
			}
			if err := rep.WriteText(failWriter{}); err == nil {
				t.Error("WriteText hid a write error")
			}
		})
	}
}

func TestRunSpec(t *testing.T) {
	train, test := filepath.Join(t.TempDir(), "train"), filepath.Join(t.TempDir(), "test")
	for i, dir := range []string{train, test} {
		if _, err := Generate(dir, small(uint64(i+1)), false); err != nil {
			t.Fatal(err)
		}
	}
	model := filepath.Join(t.TempDir(), "m.forest")
	fo := forest.DefaultOptions()
	fo.Trees, fo.Seed = 5, 3
	fit := TrainOptions{Forest: fo}
	if _, err := Run(RunOptions{Train: mustLoad(t, train), Fit: fit, ModelFile: model}); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(train, FeaturesFile)
	fi, err := os.Stat(big)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name                 string
		spec                 RunSpec
		band                 [2]float64
		train, test, trained bool   // the data and model Load reads
		err                  string // of RunOptions and Load
		loadErr              string // of Load only
	}{
		{name: "train and test", spec: RunSpec{Options: RunOptions{Fit: fit}, Data: train, Test: test, Band: "10:20"},
			band: [2]float64{10, 20}, train: true, test: true},
		{name: "train alone, a step ignored", spec: RunSpec{Options: RunOptions{Fit: fit, TestFraction: 0.5}, Data: train, Band: "-5:5:1"},
			band: [2]float64{-5, 5}, train: true},
		{name: "demo: no data", spec: RunSpec{Options: RunOptions{Fit: fit}, Band: "3"}, band: [2]float64{3, 3}},
		{name: "evaluate", spec: RunSpec{Options: RunOptions{ModelFile: model}, Data: test, Evaluate: true, Band: "0:10"},
			band: [2]float64{0, 10}, test: true, trained: true},
		{name: "bad band", spec: RunSpec{Options: RunOptions{Fit: fit}, Data: train, Band: "20:10"}, err: `RunSpec.Band: modclass: SNR range "20:10"`},
		{name: "no band", spec: RunSpec{Options: RunOptions{Fit: fit}, Data: train}, err: "RunSpec.Band: "},
		{name: "bad forest options", spec: RunSpec{Options: RunOptions{Fit: TrainOptions{Forest: forest.Options{Trees: -1}}}, Data: train, Band: "0"},
			err: "forest: Trees -1"},
		{name: "forest options validated as given", spec: RunSpec{Options: RunOptions{Fit: TrainOptions{Forest: forest.Options{Trees: 5}}}, Band: "0"},
			err: "forest: MinSamplesSplit 0"},
		{name: "evaluation skips the forest options", spec: RunSpec{Options: RunOptions{ModelFile: model, Fit: TrainOptions{Forest: forest.Options{Trees: -1}}},
			Data: test, Evaluate: true, Band: "0"}, test: true, trained: true},
		{name: "negative MaxBytes", spec: RunSpec{Options: RunOptions{Fit: fit}, Data: train, Band: "0", MaxBytes: -1}, err: "modclass: RunSpec.MaxBytes -1"},
		{name: "data beyond MaxBytes", spec: RunSpec{Options: RunOptions{Fit: fit}, Data: train, Band: "0", MaxBytes: fi.Size() - 1},
			loadErr: "raise it with RunSpec.MaxBytes"},
		{name: "test beyond MaxBytes", spec: RunSpec{Options: RunOptions{Fit: fit}, Data: test, Test: train, Band: "0", MaxBytes: fi.Size() - 1},
			loadErr: "raise it with RunSpec.MaxBytes"},
		{name: "missing model", spec: RunSpec{Options: RunOptions{ModelFile: model + ".none"}, Data: test, Evaluate: true, Band: "0"},
			loadErr: "m.forest.none"},
		{name: "missing data", spec: RunSpec{Options: RunOptions{Fit: fit}, Data: filepath.Join(train, "none"), Band: "0"},
			loadErr: "none"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, err := c.spec.RunOptions()
			if c.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), c.err) {
					t.Fatalf("RunOptions: error %v, want one starting %q", err, c.err)
				}
				if _, lerr := c.spec.Load(); lerr == nil || lerr.Error() != err.Error() {
					t.Errorf("Load: error %v, want RunOptions' %v", lerr, err)
				}
				return
			}
			if err != nil || o.BandDB != c.band || o.Train != nil || o.Test != nil || o.Model != nil {
				t.Fatalf("RunOptions: %v, band %v (want %v), data %v %v %v", err, o.BandDB, c.band, o.Train, o.Test, o.Model)
			}
			o, err = c.spec.Load()
			if c.loadErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.loadErr) {
					t.Fatalf("Load: error %v, want one containing %q", err, c.loadErr)
				}
				if strings.Contains(c.loadErr, "MaxBytes") && !errors.Is(err, readlimit.ErrTooLarge) {
					t.Errorf("Load: %v does not wrap readlimit.ErrTooLarge", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.BandDB != c.band || (o.Train != nil) != c.train || (o.Test != nil) != c.test || (o.Model != nil) != c.trained {
				t.Fatalf("Load: band %v, train %v, test %v, model %v", o.BandDB, o.Train != nil, o.Test != nil, o.Model != nil)
			}
			if c.train && o.Train.Name != filepath.Join(c.spec.Data, FeaturesFile) {
				t.Errorf("training data from %s, want %s", o.Train.Name, c.spec.Data)
			}
			if c.test {
				want := c.spec.Test
				if c.spec.Evaluate {
					want = c.spec.Data
				}
				if o.Test.Name != filepath.Join(want, FeaturesFile) {
					t.Errorf("test data from %s, want %s", o.Test.Name, want)
				}
			}
			rep, err := Run(o)
			if (err != nil) != (o.Train == nil && o.Model == nil) {
				t.Errorf("Run on the loaded options: %v", err)
			}
			if rep2, err2 := c.spec.Run(); (err2 != nil) != (err != nil) ||
				(err == nil && (rep2.Test != rep.Test || rep2.Train != rep.Train || rep2.Eval.Accuracy != rep.Eval.Accuracy)) {
				t.Errorf("RunSpec.Run: %+v, %v; want Run's %+v, %v", rep2, err2, rep, err)
			}
		})
	}
}

func mustLoad(t *testing.T, dir string) *Data {
	t.Helper()
	d, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDemoText checks the first line of a Demo report's text, on the data
// sets generated, and that a Run report has none.
func TestDemoText(t *testing.T) {
	ds := small(5)
	rep, err := Demo("", ds, RunOptions{Fit: TrainOptions{Forest: forest.Options{Trees: 4}}, BandDB: [2]float64{0, 10}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		rep   *Report
		first string // the text's first line, up to the times
	}{
		{"demo", rep, "demo: 12 + 12 records of 4096 samples at 200000 Hz (bpsk qpsk fm am), generated in "},
		{"run", &Report{Train: "t.csv", TrainRows: 3, Features: []string{"a"}, Trees: 4}, "trained on t.csv: 3 records, 1 features, 4 trees"},
		{"options without times", &Report{Generated: &ds, Train: "t.csv"}, "trained on t.csv"},
		{"built by hand", &Report{Generated: &DatasetOptions{Samples: 100, SampleRate: 1e3}, Generate: []float64{1.25, 2}, TrainRows: 6, TestRows: 4,
			Eval: &Eval{Classes: []string{"a", "b"}}}, "demo: 6 + 4 records of 100 samples at 1000 Hz (a b), generated in 1.2 + 2.0 s\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := c.rep.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(b.String(), c.first) {
				t.Errorf("text starts %q, want %q", b.String(), c.first)
			}
		})
	}
	if rep.Generated == nil || rep.Generated.Samples != ds.Samples || rep.Generated.Seed != ds.Seed {
		t.Errorf("Generated %+v, want the options given", rep.Generated)
	}
	js, err := json.Marshal(rep)
	if err != nil || bytes.Contains(js, []byte("generated\"")) || bytes.Contains(js, []byte("\"Generated")) {
		t.Errorf("Generated leaks into the JSON: %v %s", err, js)
	}
}

func TestRunSpecDataFiles(t *testing.T) {
	dir := t.TempDir()
	train, test := filepath.Join(dir, "train"), filepath.Join(dir, "test")
	for _, d := range []string{train, test} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	csv := filepath.Join(dir, "x.csv")
	if err := os.WriteFile(csv, []byte("label,snr_db_true,a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		spec RunSpec
		want map[string]string
	}{
		{"both folders", RunSpec{Data: train, Test: test}, map[string]string{train: filepath.Join(train, FeaturesFile), test: filepath.Join(test, FeaturesFile)}},
		{"evaluation data", RunSpec{Data: test, Evaluate: true}, map[string]string{test: filepath.Join(test, FeaturesFile)}},
		{"a CSV file is itself", RunSpec{Data: csv, Test: test}, map[string]string{test: filepath.Join(test, FeaturesFile)}},
		{"missing folder, none", RunSpec{Data: filepath.Join(dir, "none")}, map[string]string{}},
		{"nothing named", RunSpec{}, map[string]string{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.spec.DataFiles(); !reflect.DeepEqual(got, c.want) {
				t.Errorf("DataFiles() = %v, want %v", got, c.want)
			}
		})
	}
}

func TestRunSpecDemo(t *testing.T) {
	fo := forest.DefaultOptions()
	fo.Trees = 4
	run := RunSpec{Options: RunOptions{Fit: TrainOptions{Forest: fo}}, Band: "0:10"}
	ds := DatasetSpec{Options: DatasetOptions{PerClass: 3, SampleRate: 200000, Samples: 4096, Seed: 5}, Mods: "bpsk,fm", SNR: "0:10:5", SPS: "4,8"}
	with := func(f func(*RunSpec, *DatasetSpec)) (RunSpec, DatasetSpec) {
		r, d := run, ds
		f(&r, &d)
		return r, d
	}
	for _, c := range []struct {
		name string
		f    func(*RunSpec, *DatasetSpec)
		keep bool // the sets stay in a folder
		err  string
	}{
		{name: "temporary folder", f: func(*RunSpec, *DatasetSpec) {}},
		{name: "in a folder", f: func(_ *RunSpec, d *DatasetSpec) { d.Dir = t.TempDir() }, keep: true},
		{name: "bad band", f: func(r *RunSpec, _ *DatasetSpec) { r.Band = "9:1" }, err: "RunSpec.Band: "},
		{name: "bad forest options", f: func(r *RunSpec, _ *DatasetSpec) { r.Options.Fit.Forest.Trees = 0 }, err: "forest: Trees 0"},
		{name: "bad data set spec", f: func(_ *RunSpec, d *DatasetSpec) { d.SPS = "4,x" }, err: `DatasetSpec.SPS "4,x"`},
		{name: "bad data set options", f: func(_ *RunSpec, d *DatasetSpec) { d.Options.PerClass = 0 }, err: "modclass: records per class 0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, d := with(c.f)
			rep, err := r.Demo(d)
			if c.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), c.err) {
					t.Fatalf("error %v, want one starting %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if rep.TrainRows != 6 || rep.TestRows != 6 || rep.Band != [2]float64{0, 10} || rep.Trees != 4 || rep.Generated == nil ||
				rep.Generated.Seed != 5 || !slices.Equal(rep.Eval.Classes, []string{"bpsk", "fm"}) {
				t.Errorf("report: %d + %d rows, band %v, %d trees, generated %+v", rep.TrainRows, rep.TestRows, rep.Band, rep.Trees, rep.Generated)
			}
			if !c.keep {
				return
			}
			for i, name := range []string{"train", "test"} {
				if got := mustLoad(t, filepath.Join(d.Dir, name)); got.Info.Options.Seed != 5+uint64(i) {
					t.Errorf("%s set seed %d, want %d", name, got.Info.Options.Seed, 5+i)
				}
			}
		})
	}
}
