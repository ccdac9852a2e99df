package sigraph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/signal"
)

const testRate = 200000

// record returns a test record: a synthesized modulation, complex white
// Gaussian noise for mod "noise", or a noise-free QPSK burst whose second
// half is exactly zero for mod "burst" (zero samples: skipped phasors,
// zero phase steps, empty spectrogram and MFCC frames).
func record(t testing.TB, mod string, snr float64, samples int, seed uint64) []complex64 {
	t.Helper()
	if mod == "burst" {
		x, err := signal.Synthesize(signal.SynthOptions{Mod: signal.QPSK, SampleRate: testRate, Samples: samples, NoNoise: true, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		clear(x[samples/2:])
		return x
	}
	if mod == "noise" {
		rng := rand.New(rand.NewPCG(seed, 99))
		x := make([]complex64, samples)
		for i := range x {
			x[i] = complex(float32(rng.NormFloat64()*math.Sqrt(0.5)), float32(rng.NormFloat64()*math.Sqrt(0.5)))
		}
		return x
	}
	m, err := signal.ParseModulation(mod)
	if err != nil {
		t.Fatal(err)
	}
	o := signal.SynthOptions{Mod: m, SampleRate: testRate, Samples: samples, SNRdB: snr, CarrierOffset: 12500, Seed: seed}
	if m == signal.Tone {
		o.CarrierOffset = 31000
	}
	x, err := signal.Synthesize(o)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// cpuFeatures extracts x on the CPU path.
func cpuFeatures(t testing.TB, cfg signal.Config, x []complex64) *signal.Features {
	t.Helper()
	e, err := signal.NewExtractor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var f signal.Features
	if err := e.Extract(x, &f); err != nil {
		t.Fatal(err)
	}
	return &f
}

// checkParity fails t for every feature of got beyond its tolerance
// against want: 1e-4 for the relative errors, 1e-3 absolute for the MFCCs
// and the autocorrelation.
func checkParity(t *testing.T, got, want *signal.Features, tol float64) {
	t.Helper()
	for _, e := range Compare(got, want) {
		lim := tol
		if e.Metric == "abs" {
			lim = max(tol, 1e-3*tol/1e-4)
		}
		if !(e.Err <= lim) {
			t.Errorf("%s: %s error %.3g > %.0g", e.Name, e.Metric, e.Err, lim)
		}
	}
}

func TestFeaturesMatchCPU(t *testing.T) {
	b := graphBackend(t)
	cfg := signal.Config{SampleRate: testRate}
	cases := []struct {
		mod  string
		snr  float64
		opts Options
	}{
		{"qpsk", 10, Options{}},
		{"qpsk", -5, Options{}},
		{"16qam", 20, Options{}},
		{"fm", 15, Options{}},
		{"tone", 0, Options{}},
		{"tone", 30, Options{}},
		{"noise", 0, Options{}},
		{"qpsk", 10, Options{MFCCFloat64: true}},
		{"fm", 15, Options{SpectrogramFloat32: true}},
		{"qpsk", 10, Options{DirectMax: 1 << 12}}, // every FFT one DFT matrix
		{"fm", 5, Options{SeparateTwiddles: true}},
		{"bpsk", 5, Options{}},
		{"am", 20, Options{}},
		{"ofdm", 10, Options{}},
		{"chirp", 10, Options{}},
		{"gfsk", 10, Options{}},
		{"burst", 0, Options{}},
	}
	for i, c := range cases {
		name := fmt.Sprintf("%s_%gdB_%+v", c.mod, c.snr, c.opts)
		t.Run(name, func(t *testing.T) {
			x := record(t, c.mod, c.snr, 10000, uint64(i+1)) // 0.05 s
			e, err := NewWithOptions(b, cfg, 1, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			var f signal.Features
			if err := e.Extract(x, &f); err != nil {
				t.Fatal(err)
			}
			checkParity(t, &f, cpuFeatures(t, cfg, x), 1e-4)
		})
	}
}

func TestBatchEqualsOneByOne(t *testing.T) {
	b := graphBackend(t)
	cfg := signal.Config{SampleRate: testRate}
	recs := [][]complex64{
		record(t, "qpsk", 10, 6000, 1),
		record(t, "fm", 5, 6000, 2),
		record(t, "noise", 0, 6000, 3),
		record(t, "16qam", 15, 6000, 4),
		record(t, "tone", 10, 4096, 5), // another length: its own batch
	}
	e, err := New(b, cfg, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	batch := make([]signal.Features, len(recs))
	if err := e.ExtractBatch(recs, batch); err != nil {
		t.Fatal(err)
	}
	one, err := New(b, cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	for i, x := range recs {
		var f signal.Features
		if err := one.Extract(x, &f); err != nil {
			t.Fatal(err)
		}
		for _, d := range Compare(&batch[i], &f) {
			if !(d.Err <= 1e-12) {
				t.Errorf("record %d: %s differs between batch and single extraction: %.3g", i, d.Name, d.Err)
			}
		}
		checkParity(t, &batch[i], cpuFeatures(t, cfg, x), 1e-4)
	}
}

func TestErrors(t *testing.T) {
	b := graphBackend(t)
	cfg := signal.Config{SampleRate: testRate}
	if _, err := New(nil, cfg, 1); err == nil {
		t.Error("nil backend accepted")
	}
	if _, err := New(b, cfg, 0); err == nil {
		t.Error("0 records accepted")
	}
	if _, err := New(b, signal.Config{}, 1); err == nil {
		t.Error("missing sample rate accepted")
	}
	e, err := New(b, cfg, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.Compile(1, 100); err == nil {
		t.Error("Compile for a short record accepted")
	}
	if err := e.Compile(2, 4096); err != nil {
		t.Errorf("Compile: %v", err)
	}
	var f signal.Features
	if err := e.Extract(make([]complex64, 100), &f); err == nil || !strings.Contains(err.Error(), "shorter") {
		t.Errorf("short record: %v", err)
	}
	if err := e.ExtractBatch(make([][]complex64, 2), make([]signal.Features, 1)); err == nil {
		t.Error("mismatched output slots accepted")
	}
}

// TestOneSecondRecord checks the record (1 s of QPSK at 200 kHz,
// +25 kHz, 10 dB) against the CPU path.
func TestOneSecondRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("1-s record: skipped with -short")
	}
	x, err := signal.Synthesize(signal.SynthOptions{Mod: signal.QPSK, SampleRate: testRate, Samples: testRate, SNRdB: 10, CarrierOffset: 25000, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	cfg := signal.Config{SampleRate: testRate}
	e, err := New(graphBackend(t), cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var f signal.Features
	if err := e.Extract(x, &f); err != nil {
		t.Fatal(err)
	}
	checkParity(t, &f, cpuFeatures(t, cfg, x), 1e-4)
}

// TestOtherConfigs checks non-default parameters: other segment and frame
// lengths, an overlap larger than the step, fewer lags (1) and more (2000), other
// thresholds and fractions.
func TestOtherConfigs(t *testing.T) {
	b := graphBackend(t)
	cfgs := []signal.Config{
		{SampleRate: 48000, WelchSegment: 256, SpectrogramSegment: 128, SpectrogramOverlap: 100, MFCCFrame: 512, MFCCHop: 128,
			MelBands: 20, MFCCs: 10, AutocorrLags: 300, SNRThresholdDB: 6, RolloffFraction: 0.5, OBWFraction: 0.9, Impedance: 75},
		{SampleRate: testRate, WelchSegment: 2048, SpectrogramSegment: 64, MFCCFrame: 1024, MFCCHop: 1000, AutocorrLags: 1},
		{SampleRate: testRate, AutocorrLags: 2000},
	}
	for i, cfg := range cfgs {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			x := record(t, "16qam", 8, 7000, uint64(10+i))
			e, err := New(b, cfg, 2)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			var f signal.Features
			if err := e.Extract(x, &f); err != nil {
				t.Fatal(err)
			}
			checkParity(t, &f, cpuFeatures(t, cfg, x), 1e-4)
		})
	}
}

// TestBenchmarkGraph runs signal.Benchmark through the graph extractors on
// simplego: one worker, every time positive, the graph batch reported.
func TestBenchmarkGraph(t *testing.T) {
	o := signal.SynthOptions{Mod: signal.QPSK, SampleRate: testRate, Samples: 4096, SNRdB: 10, Seed: 1}
	r, err := Benchmark(graphBackend(t), Options{}, signal.BenchOptions{Synth: o, Runs: 1, Records: 2, Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	if r.Workers != 1 || r.BatchRecords != 2 || r.GraphBatch != 2 || r.Runs != 1 || !(r.FeaturesMS > 0 && r.RecordsPerSecond > 0) {
		t.Errorf("result %+v", r)
	}
}
