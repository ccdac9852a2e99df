package sigraph

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/backends"

	"github.com/gotrain/gotrain/signal"
)

// TestNewFeatureExtractor checks the choice of extractor by backend: nil
// gives the CPU path's (its release a no-op), a backend the graph
// extractor with the options given (its release frees the compiled
// graph), and errors come from the extractor chosen.
func TestNewFeatureExtractor(t *testing.T) {
	cfg := signal.Config{SampleRate: testRate}
	x := record(t, "qpsk", 10, 4096, 1)
	want := cpuFeatures(t, cfg, x)
	for _, c := range []struct {
		name    string
		backend backends.Backend
		cfg     signal.Config
		opts    Options
		graph   bool   // a graph extractor is chosen
		err     string // of the choice
	}{
		{name: "nil backend: the CPU path", cfg: cfg},
		{name: "simplego: the graph path", backend: graphBackend(t), cfg: cfg, graph: true},
		{name: "options reach the graph extractor", backend: graphBackend(t), cfg: cfg, opts: Options{DirectMax: 16, MFCCFloat64: true}, graph: true},
		{name: "CPU config error", cfg: signal.Config{SampleRate: testRate, Impedance: -1}, err: "signal: "},
		{name: "graph config error", backend: graphBackend(t), cfg: signal.Config{SampleRate: testRate, Impedance: -1}, err: "sigraph: signal: "},
		{name: "graph options error", backend: graphBackend(t), cfg: cfg, opts: Options{DirectMax: -1}, err: "sigraph: direct DFT limit -1"},
		{name: "CPU path ignores graph options", cfg: cfg, opts: Options{DirectMax: -1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, release, err := NewFeatureExtractor(c.backend, c.cfg, c.opts)
			if c.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), c.err) || e != nil || release != nil {
					t.Fatalf("got %T, release %v, error %v; want an error starting %q", e, release != nil, err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			g, isGraph := e.(*Extractor)
			if _, isCPU := e.(*signal.Extractor); isGraph != c.graph || isCPU == c.graph {
				t.Fatalf("extractor %T, want the graph one: %v", e, c.graph)
			}
			wantOpts := c.opts
			if wantOpts.DirectMax == 0 {
				wantOpts.DirectMax = DefaultDirectMax
			}
			if isGraph && (g.Backend() != c.backend || g.opts != wantOpts || g.records != 1) {
				t.Errorf("graph extractor on %v with %+v, %d records; want %v with %+v, 1 record", g.Backend(), g.opts, g.records, c.backend, wantOpts)
			}
			var f signal.Features
			if err := e.Extract(x, &f); err != nil {
				t.Fatal(err)
			}
			checkParity(t, &f, want, 1e-4)
			release()
			if isGraph && g.exec != nil {
				t.Error("release kept the compiled graph")
			}
		})
	}
}

// TestBenchmarkPaths runs Benchmark without a backend (signal.Benchmark,
// the CPU path: Workers goroutines, no graph batch) and on simplego.
func TestBenchmarkPaths(t *testing.T) {
	o := signal.SynthOptions{Mod: signal.QPSK, SampleRate: testRate, Samples: 4096, SNRdB: 10, Seed: 1}
	for _, c := range []struct {
		name                string
		backend             backends.Backend
		workers, graphBatch int
	}{
		{"CPU path", nil, 2, 0},
		{"simplego", graphBackend(t), 1, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := Benchmark(c.backend, Options{}, signal.BenchOptions{Synth: o, Runs: 1, Records: 2, Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			if r.Workers != c.workers || r.GraphBatch != c.graphBatch || r.BatchRecords != 2 || !(r.FeaturesMS > 0 && r.RecordsPerSecond > 0) {
				t.Errorf("result %+v; want %d workers, graph batch %d", r, c.workers, c.graphBatch)
			}
		})
	}
}

// fakeEngine is an Engine as package device's: native, or simplego.
type fakeEngine struct {
	name   string
	native bool
	b      backends.Backend
	err    error
}

func (e fakeEngine) Name() string                       { return e.name }
func (e fakeEngine) Native() bool                       { return e.native }
func (e fakeEngine) Backend() (backends.Backend, error) { return e.b, e.err }
func (e fakeEngine) DeviceNum() int                     { return 0 }

// TestExtractFileAndBenchmarkOn runs a record file and the benchmark on
// a native and a simplego engine: the features match the CPU path's, the
// report names the engine, the graph path is taken only on the graph
// engine, and a backend that cannot be opened is the error.
func TestExtractFileAndBenchmarkOn(t *testing.T) {
	x := record(t, "qpsk", 10, 4096, 1)
	in := filepath.Join(t.TempDir(), "rec.cf32")
	rec := &signal.Recording{Meta: signal.Meta{SampleRate: testRate, Datatype: "cf32_le"}, Samples: x}
	if _, _, err := signal.Save(in, "", rec); err != nil {
		t.Fatal(err)
	}
	want := cpuFeatures(t, signal.Config{SampleRate: testRate, Impedance: 50}, x)
	o := signal.SynthOptions{Mod: signal.QPSK, SampleRate: testRate, Samples: 4096, SNRdB: 10, Seed: 1}
	for _, c := range []struct {
		e     fakeEngine
		graph bool
	}{
		{fakeEngine{name: "cpu", native: true}, false},
		{fakeEngine{name: "go", b: graphBackend(t)}, true},
	} {
		t.Run(c.e.name, func(t *testing.T) {
			rep, err := ExtractFile(c.e, signal.FeaturesSpec{In: in, Rate: testRate, Impedance: 50})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Device != c.e.name || (rep.CompileMS > 0) != c.graph {
				t.Errorf("report on %q with compile %g ms; want %q, graph %v", rep.Device, rep.CompileMS, c.e.name, c.graph)
			}
			checkParity(t, rep.Features, want, 1e-4)
			r, err := BenchmarkOn(c.e, signal.BenchOptions{Synth: o, Runs: 1, Records: 2, Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			if r.Device != c.e.name || (r.GraphBatch > 0) != c.graph {
				t.Errorf("benchmark on %q with graph batch %d; want %q, graph %v", r.Device, r.GraphBatch, c.e.name, c.graph)
			}
		})
	}
	bad := fakeEngine{name: "gpu", err: errors.New("no CUDA plugin")}
	if _, err := ExtractFile(bad, signal.FeaturesSpec{In: in, Rate: testRate}); err == nil || err.Error() != "no CUDA plugin" {
		t.Errorf("ExtractFile on an engine that cannot open: %v", err)
	}
	if _, err := BenchmarkOn(bad, signal.BenchOptions{Synth: o, Runs: 1, Records: 1}); err == nil || err.Error() != "no CUDA plugin" {
		t.Errorf("BenchmarkOn on an engine that cannot open: %v", err)
	}
}

// TestExtractFileAnnotationsMatchCPU checks signal features --annotations
// on a graph device: each annotated segment's features match the CPU
// path's features of the same samples.
func TestExtractFileAnnotationsMatchCPU(t *testing.T) {
	x := record(t, "qpsk", 10, 12000, 3)
	in := filepath.Join(t.TempDir(), "rec")
	rec := &signal.Recording{Meta: signal.Meta{SampleRate: testRate, Datatype: signal.CF32, Annotations: []signal.Annotation{
		{SampleStart: 0, SampleCount: 5000, Label: "a"}, {SampleStart: 6000, Label: "b"}}}, Samples: x}
	if err := signal.WriteSigMF(in, rec); err != nil {
		t.Fatal(err)
	}
	rep, err := ExtractFile(fakeEngine{name: "go", b: graphBackend(t)}, signal.FeaturesSpec{In: in, Impedance: 50, Annotations: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Segments) != 2 {
		t.Fatalf("%d segments, want 2", len(rep.Segments))
	}
	cfg := signal.Config{SampleRate: testRate, Impedance: 50}
	for _, sg := range rep.Segments {
		checkParity(t, sg.Features, cpuFeatures(t, cfg, x[sg.SampleStart:sg.SampleStart+sg.SampleCount]), 1e-4)
	}
}
