package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/signal"
	"github.com/gotrain/gotrain/signal/sigraph"
)

func newSignalCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "signal", Short: "Synthesize IQ records, extract RF features, benchmark the pipeline"}
	cmd.AddCommand(newSignalSynthCmd(g), newSignalFeaturesCmd(g), newSignalBenchCmd(g))
	cmd.AddCommand(newSignalDatasetCmd(g))
	cmd.AddCommand(newSignalClassifyCmd(g))
	return cmd
}

// signalDevice selects the engine for the signal commands that run only on
// the CPU path (synthesis, datasets, the classifier): any other device is
// rejected with the reason, or replaced with --fallback. `signal features`
// and `signal bench` use signalGraphEngine, which runs the graph extractor.
func signalDevice(cmd *cobra.Command, g *globals) (*device.Engine, error) {
	cpuOnly := func(d device.Device) error {
		if d.Kind == device.Native {
			return nil
		}
		return fmt.Errorf("`signal %s` runs on the CPU path only (the graph extractor serves `signal features` and `signal bench`; use --device cpu)", cmd.Name())
	}
	e, err := g.engine(cmd, device.Request{PreferNative: true, Accept: cpuOnly})
	if err != nil {
		return nil, fmt.Errorf("signal: %w", err)
	}
	return e, nil
}

// signalGraphEngine selects the engine for feature extraction: cpu runs the
// CPU path; go (simplego), gpu, tpu and xla:... run the graph extractor on
// that device; auto runs it on an accelerator when there is one and the
// CPU path otherwise (on a CPU the native path is faster than XLA's CPU
// plugin and simplego). --fallback applies as for every command.
func signalGraphEngine(cmd *cobra.Command, g *globals) (*device.Engine, error) {
	e, err := g.engine(cmd, device.Request{PreferNative: true})
	if err != nil {
		return nil, fmt.Errorf("signal: %w", err)
	}
	return e, nil
}

// signalExtractor returns the extractor of e for cfg, batching up to
// records records per graph execution on graph devices.
func signalExtractor(e *device.Engine, cfg signal.Config, records int) (signal.FeatureExtractor, error) {
	if e.Native() {
		return signal.NewExtractor(cfg)
	}
	b, err := e.Backend()
	if err != nil {
		return nil, err
	}
	return sigraph.NewWithOptions(b, cfg, records, sigraph.Options{DeviceNum: e.DeviceNum()})
}

// synthFlags are the flags of `signal synth` (and the record of `signal bench`).
type synthFlags struct {
	mod, out, format, datatype, multipath string
	rate, seconds, snr                    float64
	samples                               int
	seed                                  uint64
	esn0, noNoise                         bool
	opts                                  signal.SynthOptions
}

func addSynthFlags(cmd *cobra.Command, fl *synthFlags) {
	f := cmd.Flags()
	o := &fl.opts
	f.StringVar(&fl.mod, "mod", "qpsk", "modulation: bpsk, qpsk, 8psk, 16qam, 64qam, 2fsk, 4fsk, gfsk, fm, am, ofdm, tone, chirp")
	f.Float64Var(&fl.rate, "rate", 200000, "sample rate in Hz")
	f.Float64Var(&fl.seconds, "seconds", 1, "record length in seconds (ignored with --samples)")
	f.IntVar(&fl.samples, "samples", 0, "record length in samples (overrides --seconds)")
	f.Float64Var(&fl.snr, "snr", 10, "SNR in dB over the full sampled band (Es/N0 with --esn0)")
	f.BoolVar(&fl.esn0, "esn0", false, "read --snr as Es/N0 (digital modulations)")
	f.BoolVar(&fl.noNoise, "no-noise", false, "add no noise")
	f.Uint64Var(&fl.seed, "seed", 1, "random seed (symbols and noise)")
	f.Float64Var(&o.SymbolRate, "sym-rate", 0, "symbol rate in Bd (default rate/8; must divide the rate)")
	f.Float64Var(&o.RollOff, "rolloff", 0.35, "root-raised-cosine roll-off")
	f.IntVar(&o.SpanSymbols, "span", 8, "RRC span in symbols (even)")
	f.Float64Var(&o.CarrierOffset, "offset", 0, "carrier offset in Hz (tone frequency, chirp centre)")
	f.Float64Var(&o.Phase, "phase", 0, "carrier phase in radians")
	f.Float64Var(&o.ModIndex, "mod-index", 0, "FSK/GFSK modulation index h (default 1, GFSK 0.5) or AM depth (default 0.5)")
	f.Float64Var(&o.BT, "bt", 0.5, "GFSK bandwidth-time product")
	f.Float64Var(&o.ModFreq, "mod-freq", 1000, "FM/AM message tone in Hz")
	f.Float64Var(&o.Deviation, "deviation", 10000, "FM peak deviation in Hz")
	f.IntVar(&o.Subcarriers, "subcarriers", 64, "OFDM FFT size (power of two)")
	f.IntVar(&o.CyclicPrefix, "cp", 0, "OFDM cyclic prefix in samples (default subcarriers/4)")
	f.Float64Var(&o.Bandwidth, "bandwidth", 0, "chirp sweep in Hz (default rate/4)")
	f.Float64Var(&o.ChirpPeriod, "chirp-period", 0, "chirp period in seconds (default the record)")
	f.StringVar(&fl.multipath, "multipath", "", "tapped delay line, one complex tap per sample, e.g. \"1,0.4-0.2i,0.1i\"")
	f.Float64Var(&o.IQGainDB, "iq-gain-db", 0, "IQ gain imbalance in dB")
	f.Float64Var(&o.IQPhaseDeg, "iq-phase-deg", 0, "IQ phase imbalance in degrees")
}

// options turns the flags into synthesis options.
func (fl *synthFlags) options() (signal.SynthOptions, error) {
	o := fl.opts
	m, err := signal.ParseModulation(fl.mod)
	if err != nil {
		return o, err
	}
	o.Mod, o.SampleRate, o.SNRdB, o.EsN0, o.NoNoise, o.Seed = m, fl.rate, fl.snr, fl.esn0, fl.noNoise, fl.seed
	o.Samples = fl.samples
	if o.Samples == 0 {
		n := math.Round(fl.seconds * fl.rate)
		if !(n >= 1 && n <= signal.MaxSamples) {
			return o, fmt.Errorf("signal: --seconds %v at --rate %v gives %v samples; want 1..%d", fl.seconds, fl.rate, n, signal.MaxSamples)
		}
		o.Samples = int(n)
	}
	if fl.multipath != "" {
		for i, s := range strings.Split(fl.multipath, ",") {
			v, err := strconv.ParseComplex(strings.TrimSpace(s), 128)
			if err != nil {
				return o, fmt.Errorf("signal: --multipath tap %d %q: not a complex number", i+1, s)
			}
			o.Multipath = append(o.Multipath, v)
		}
	}
	return o, nil
}

func newSignalSynthCmd(g *globals) *cobra.Command {
	var fl synthFlags
	cmd := &cobra.Command{
		Use:   "synth --out FILE",
		Short: "Write one synthetic IQ record (SigMF, or raw by extension)",
		Long: `signal synth writes one record of a modulated signal with white Gaussian
noise, deterministic for a seed. The output is a SigMF pair (FILE.sigmf-meta and
FILE.sigmf-data, cf32_le unless --datatype says otherwise) unless FILE ends in a
raw extension (.cf32, .cfile, .ci16, .cs16, .ci8, .cu8) or --format names a raw
format. --snr is over the full sampled band: the signal has unit power and the
noise total power 10^(-snr/10); with --esn0 it is Es/N0 instead.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runSignalSynth(cmd, g, &fl) },
	}
	addSynthFlags(cmd, &fl)
	cmd.Flags().StringVar(&fl.out, "out", "", "output file (required)")
	cmd.Flags().StringVar(&fl.format, "format", "", "sigmf or a raw format (cf32, ci16, ci8, cu8); default from the extension, else sigmf")
	cmd.Flags().StringVar(&fl.datatype, "datatype", "cf32_le", "SigMF data type: cf32_le, cf32_be, ci16_le, ci16_be, ci8, cu8")
	return cmd
}

func runSignalSynth(cmd *cobra.Command, g *globals, fl *synthFlags) error {
	eng, err := signalDevice(cmd, g)
	if err != nil {
		return err
	}
	eng.Close() // the CPU path opens no backend
	if fl.out == "" {
		return errors.New("signal synth: --out is required")
	}
	o, err := fl.options()
	if err != nil {
		return err
	}
	t0 := time.Now()
	x, err := signal.Synthesize(o)
	if err != nil {
		return err
	}
	synthMS := signalMSSince(t0)
	format := fl.format
	if format == "" && !signal.IsSigMF(fl.out) {
		if f := signal.FormatFromExt(fl.out); f != "" {
			format = string(f)
		}
	}
	written := []string{fl.out}
	var dt signal.Format
	if format == "" || strings.EqualFold(format, "sigmf") {
		if dt, err = signal.ParseFormat(fl.datatype); err != nil {
			return err
		}
		rec := &signal.Recording{Samples: x, Meta: signal.Meta{
			Datatype: dt, SampleRate: o.SampleRate, Label: string(o.Mod), Synth: &o,
			Description: fmt.Sprintf("gotrain signal synth: %s, %d samples at %g Hz, SNR %g dB, seed %d", o.Mod, o.Samples, o.SampleRate, o.SNRdB, o.Seed),
		}}
		if err := signal.WriteSigMF(fl.out, rec); err != nil {
			return err
		}
		m, d := signal.SigMFPaths(fl.out)
		written = []string{m, d}
	} else {
		if dt, err = signal.ParseFormat(format); err != nil {
			return err
		}
		if err := signal.WriteRaw(fl.out, x, dt); err != nil {
			return err
		}
	}
	rep := map[string]any{"files": written, "format": string(dt), "mod": o.Mod, "samples": o.Samples,
		"sample_rate": o.SampleRate, "snr_db": o.SNRdB, "esn0": o.EsN0, "seed": o.Seed, "synth_ms": synthMS}
	if g.json {
		return printJSON(cmd.OutOrStdout(), rep)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %s, %d samples at %g Hz, %s, seed %d (%.1f ms)\n",
		strings.Join(written, " + "), o.Mod, o.Samples, o.SampleRate, signalSNRText(o), o.Seed, synthMS)
	return nil
}

func signalSNRText(o signal.SynthOptions) string {
	switch {
	case o.NoNoise:
		return "no noise"
	case o.EsN0:
		return fmt.Sprintf("Es/N0 %g dB", o.SNRdB)
	}
	return fmt.Sprintf("SNR %g dB (full band)", o.SNRdB)
}

func signalMSSince(t time.Time) float64 { return float64(time.Since(t).Nanoseconds()) / 1e6 }

type featuresFlags struct {
	in, format, spectrogram, csv string
	rate, impedance              float64
	arrays                       bool
}

// featuresReport is the JSON printed by `signal features --json`.
type featuresReport struct {
	File       string     `json:"file"`
	Format     string     `json:"format"`
	Device     string     `json:"device"`
	ExtractMS  float64    `json:"extract_ms"`
	CompileMS  float64    `json:"compile_ms,omitempty"` // graph path: building and compiling the graph, before extract_ms
	Label      string     `json:"label,omitempty"`
	C20        float64    `json:"c20"`
	C40        float64    `json:"c40"`
	C41        float64    `json:"c41"`
	C20Complex [2]float64 `json:"c20_complex"`
	C40Complex [2]float64 `json:"c40_complex"`
	C41Complex [2]float64 `json:"c41_complex"`
	*signal.Features
	PSD         []float64    `json:"psd,omitempty"`
	Autocorr    [][2]float64 `json:"autocorr,omitempty"`
	MFCCFrames  [][]float64  `json:"mfcc_frames,omitempty"`
	SpecShape   [2]int       `json:"spectrogram_shape"`
	Spectrogram string       `json:"spectrogram_file,omitempty"`
}

func newSignalFeaturesCmd(g *globals) *cobra.Command {
	var fl featuresFlags
	cmd := &cobra.Command{
		Use:   "features --in FILE",
		Short: "Extract RF features from one IQ record",
		Long: `signal features reads one record (SigMF, or raw cf32/ci16/ci8/cu8) and prints
its features: RSSI, SNR estimates, spectral shape, occupied bandwidth, cumulants,
instantaneous amplitude/phase/frequency statistics and 13 MFCC means. The
definitions are in docs/SIGNAL.md. --arrays adds the Welch PSD, the
autocorrelation and the per-frame MFCCs to the JSON; --spectrogram writes the dB
spectrogram as raw little-endian float32 (bins x frames, row-major).
--device cpu runs the CPU path; go (simplego), gpu, tpu and xla:<plugin> run
the same features as GoMLX graphs on that device; auto runs the graphs on an
accelerator when there is one and the CPU path otherwise. The JSON's device
names the device used; compile_ms is the graph's build and compile time.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runSignalFeatures(cmd, g, &fl) },
	}
	f := cmd.Flags()
	f.StringVar(&fl.in, "in", "", "input file (required): .sigmf-meta/.sigmf-data, or raw")
	f.StringVar(&fl.format, "format", "", "sigmf, cf32, ci16, ci8 or cu8 (default: from the extension)")
	f.Float64Var(&fl.rate, "rate", 0, "sample rate in Hz (required for raw files; overrides SigMF's)")
	f.Float64Var(&fl.impedance, "impedance", 50, "impedance in ohms for RSSI in dBm")
	f.BoolVar(&fl.arrays, "arrays", false, "include the PSD, autocorrelation and per-frame MFCCs in the JSON")
	f.StringVar(&fl.spectrogram, "spectrogram", "", "write the dB spectrogram to this file (float32 LE)")
	f.StringVar(&fl.csv, "csv", "", "write the scalar features as a one-row CSV file")
	return cmd
}

func runSignalFeatures(cmd *cobra.Command, g *globals, fl *featuresFlags) error {
	if fl.in == "" {
		return errors.New("signal features: --in is required")
	}
	tgt, err := signalGraphEngine(cmd, g)
	if err != nil {
		return err
	}
	defer tgt.Close()
	dev := tgt.Name()
	rec, err := signal.Load(fl.in, fl.format, fl.rate)
	if err != nil {
		return err
	}
	cfg := signal.Config{SampleRate: rec.Meta.SampleRate, Impedance: fl.impedance}
	e, err := signalExtractor(tgt, cfg, 1)
	if err != nil {
		return err
	}
	var compileMS float64
	if ge, ok := e.(*sigraph.Extractor); ok {
		defer ge.Close()
		if len(rec.Samples) >= cfg.MinSamples() { // shorter records get Extract's error
			t0 := time.Now()
			if err := ge.Compile(1, len(rec.Samples)); err != nil {
				return fmt.Errorf("signal features: %s: %w", fl.in, err)
			}
			compileMS = signalMSSince(t0)
		}
	}
	var f signal.Features
	t0 := time.Now()
	if err := e.Extract(rec.Samples, &f); err != nil {
		return fmt.Errorf("signal features: %s: %w", fl.in, err)
	}
	ms := signalMSSince(t0)
	if fl.spectrogram != "" {
		if err := signalWriteFloat32s(fl.spectrogram, f.Spectrogram); err != nil {
			return err
		}
	}
	if fl.csv != "" {
		if err := signalWriteCSV(fl.csv, &f); err != nil {
			return err
		}
	}
	rep := featuresReport{File: fl.in, Format: string(rec.Meta.Datatype), Device: dev, ExtractMS: ms, CompileMS: compileMS, Label: rec.Meta.Label,
		C20: signalCAbs(f.C20), C40: signalCAbs(f.C40), C41: signalCAbs(f.C41),
		C20Complex: [2]float64{real(f.C20), imag(f.C20)}, C40Complex: [2]float64{real(f.C40), imag(f.C40)}, C41Complex: [2]float64{real(f.C41), imag(f.C41)},
		Features: &f, SpecShape: [2]int{f.SpecBins, f.SpecFrames}, Spectrogram: fl.spectrogram}
	if fl.arrays {
		rep.PSD = f.PSD
		for _, v := range f.Autocorr {
			rep.Autocorr = append(rep.Autocorr, [2]float64{real(v), imag(v)})
		}
		nc := len(f.MFCC)
		for i := 0; i+nc <= len(f.MFCCFrames); i += nc {
			rep.MFCCFrames = append(rep.MFCCFrames, f.MFCCFrames[i:i+nc])
		}
	}
	if g.json {
		return printJSON(cmd.OutOrStdout(), rep)
	}
	signalPrintFeatures(cmd.OutOrStdout(), fl.in, rec, &f, ms, dev)
	return nil
}

func signalCAbs(c complex128) float64 { return math.Hypot(real(c), imag(c)) }

func signalPrintFeatures(w io.Writer, name string, rec *signal.Recording, f *signal.Features, ms float64, dev string) {
	fmt.Fprintf(w, "%s: %d samples at %g Hz (%s), features in %.1f ms on %s\n", name, f.Samples, f.SampleRate, rec.Meta.Datatype, ms, dev)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	names := signal.FeatureNames(len(f.MFCC))
	vals := f.Vector(nil)
	for i, n := range names {
		if strings.HasPrefix(n, "mfcc") {
			continue
		}
		fmt.Fprintf(tw, "%s\t%.6g\n", n, vals[i])
	}
	parts := make([]string, len(f.MFCC))
	for i, v := range f.MFCC {
		parts[i] = strconv.FormatFloat(v, 'f', 3, 64)
	}
	fmt.Fprintf(tw, "mfcc (means)\t%s\n", strings.Join(parts, " "))
	tw.Flush()
}

func signalWriteFloat32s(path string, v []float32) error {
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		u := math.Float32bits(x)
		b = append(b, byte(u), byte(u>>8), byte(u>>16), byte(u>>24))
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("signal features: %w", err)
	}
	return nil
}

func signalWriteCSV(path string, f *signal.Features) error {
	fh, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("signal features: %w", err)
	}
	werr := data.WriteCSV(fh, signal.FeatureNames(len(f.MFCC)), [][]float64{f.Vector(nil)})
	if err := errors.Join(werr, fh.Close()); err != nil {
		return fmt.Errorf("signal features: %s: %w", path, err)
	}
	return nil
}

type benchFlags struct {
	synth         synthFlags
	runs, records int
	workers       int
	threads       int
}

// benchReport is the JSON printed by `signal bench --json`.
type benchReport struct {
	Device           string    `json:"device"`
	Record           string    `json:"record"`
	Samples          int       `json:"samples"`
	Runs             int       `json:"runs"`
	Threads          int       `json:"threads_per_record"`
	SynthMS          float64   `json:"synth_ms_per_record"`
	FeaturesMS       float64   `json:"features_ms_per_record"`
	TotalMS          float64   `json:"total_ms_per_record"`
	SynthMinMS       float64   `json:"synth_min_ms"`
	FeaturesMinMS    float64   `json:"features_min_ms"`
	TotalMinMS       float64   `json:"total_min_ms"`
	Workers          int       `json:"workers"`
	BatchRecords     int       `json:"batch_records"`
	RecordsPerSecond float64   `json:"records_per_second"`
	RealTimeFactor   float64   `json:"real_time_factor_single"`
	TotalRunsMS      []float64 `json:"total_runs_ms"`
	GoMaxProcs       int       `json:"gomaxprocs"`
}

func newSignalBenchCmd(g *globals) *cobra.Command {
	var fl benchFlags
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Time synthesis and feature extraction of one record, and batched throughput",
		Long: `signal bench times one record (default: 1 s of 200 kHz QPSK, 25 kBd, RRC 0.35,
+25 kHz offset, 10 dB SNR, the peer benchmark's record) on one goroutine: a
warm-up, then the median of --runs runs of synthesis, of all features, and of
both together (--threads 2 splits each record's synthesis and feature stages
over two goroutines; the results are the same bits). Then it times --records records synthesized and extracted on
--workers goroutines (default all CPUs) and reports records per second.
With --device go, gpu or xla:... the features come from the GoMLX graph
extractor on that device (docs/SIGNAL.md, "Graph path"), the batch in graph
executions of up to 8 records; auto uses it only on an accelerator.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runSignalBench(cmd, g, &fl) },
	}
	addSynthFlags(cmd, &fl.synth)
	_ = cmd.Flags().Set("offset", "25000")
	cmd.Flags().IntVar(&fl.runs, "runs", 20, "timed runs after one warm-up")
	cmd.Flags().IntVar(&fl.records, "records", 32, "records in the batched throughput run")
	cmd.Flags().IntVar(&fl.workers, "workers", 0, "goroutines for the batched run (0 = GOMAXPROCS)")
	cmd.Flags().IntVar(&fl.threads, "threads", 1, "goroutines per record in the single-record timings (CPU path)")
	return cmd
}

func runSignalBench(cmd *cobra.Command, g *globals, fl *benchFlags) error {
	o, err := fl.synth.options()
	if err != nil {
		return err
	}
	if fl.runs < 1 || fl.records < 1 || fl.threads < 1 {
		return errors.New("signal bench: --runs, --records and --threads must be positive")
	}
	tgt, err := signalGraphEngine(cmd, g)
	if err != nil {
		return err
	}
	defer tgt.Close()
	dev := tgt.Name()
	cfg := signal.Config{SampleRate: o.SampleRate}
	ecfg := cfg
	ecfg.Threads = fl.threads
	e, err := signalExtractor(tgt, ecfg, 1)
	if err != nil {
		return err
	}
	if ge, ok := e.(*sigraph.Extractor); ok {
		defer ge.Close()
	}
	s := signal.Synthesizer{Threads: fl.threads}
	x := make([]complex64, o.Samples)
	var f signal.Features
	var synth, feat, total []float64
	for i := -1; i < fl.runs; i++ { // i == -1 is the warm-up
		o.Seed = fl.synth.seed + uint64(i+1)
		t0 := time.Now()
		if err := s.Generate(x, o); err != nil {
			return err
		}
		t1 := time.Now()
		if err := e.Extract(x, &f); err != nil {
			return err
		}
		t2 := time.Now()
		if i >= 0 {
			synth = append(synth, signalMS(t1.Sub(t0)))
			feat = append(feat, signalMS(t2.Sub(t1)))
			total = append(total, signalMS(t2.Sub(t0)))
		}
	}
	workers := fl.workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var rps float64
	if !tgt.Native() {
		workers = 1 // graph executions, one at a time
		rps, err = batchThroughputGraph(tgt, o, cfg, fl.records)
	} else {
		rps, err = batchThroughput(o, cfg, fl.records, workers)
	}
	if err != nil {
		return err
	}
	rep := benchReport{Device: dev, Record: fmt.Sprintf("%s, %d samples at %g Hz, offset %g Hz, %s", o.Mod, o.Samples, o.SampleRate, o.CarrierOffset, signalSNRText(o)),
		Samples: o.Samples, Runs: fl.runs, Threads: fl.threads,
		SynthMS: signalMedian(synth), FeaturesMS: signalMedian(feat), TotalMS: signalMedian(total),
		SynthMinMS: slices.Min(synth), FeaturesMinMS: slices.Min(feat), TotalMinMS: slices.Min(total),
		Workers: workers, BatchRecords: fl.records, RecordsPerSecond: rps, TotalRunsMS: total, GoMaxProcs: runtime.GOMAXPROCS(0)}
	rep.RealTimeFactor = float64(o.Samples) / o.SampleRate * 1000 / rep.TotalMS
	if g.json {
		return printJSON(cmd.OutOrStdout(), rep)
	}
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "record: %s\n", rep.Record)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "stage\tmedian ms\tmin ms\n")
	fmt.Fprintf(tw, "synthesis\t%.3f\t%.3f\n", rep.SynthMS, rep.SynthMinMS)
	fmt.Fprintf(tw, "all features\t%.3f\t%.3f\n", rep.FeaturesMS, rep.FeaturesMinMS)
	fmt.Fprintf(tw, "synthesis + features\t%.3f\t%.3f\n", rep.TotalMS, rep.TotalMinMS)
	tw.Flush()
	fmt.Fprintf(w, "%d goroutine(s) per record, median of %d runs after a warm-up; %.0fx faster than real time\n", fl.threads, fl.runs, rep.RealTimeFactor)
	if !tgt.Native() {
		fmt.Fprintf(w, "batched: %d records in graph executions of up to %d on %s: %.1f records/s\n", fl.records, min(fl.records, signalGraphBatch), dev, rps)
	} else {
		fmt.Fprintf(w, "batched: %d records on %d goroutines: %.1f records/s\n", fl.records, workers, rps)
	}
	return nil
}

// batchThroughput synthesizes and extracts n records on workers
// goroutines (after one warm-up record each) and returns records per second.
func batchThroughput(o signal.SynthOptions, cfg signal.Config, n, workers int) (float64, error) {
	type worker struct {
		s signal.Synthesizer
		e *signal.Extractor
		x []complex64
		f signal.Features
	}
	ws := make([]*worker, workers)
	for i := range ws {
		e, err := signal.NewExtractor(cfg)
		if err != nil {
			return 0, err
		}
		w := &worker{e: e, x: make([]complex64, o.Samples)}
		if err := w.s.Generate(w.x, o); err != nil {
			return 0, err
		}
		if err := w.e.Extract(w.x, &w.f); err != nil {
			return 0, err
		}
		ws[i] = w
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		next  = make(chan int, n)
	)
	for i := range n {
		next <- i
	}
	close(next)
	t0 := time.Now()
	for _, w := range ws {
		wg.Go(func() {
			for i := range next {
				oo := o
				oo.Seed = o.Seed + 1000 + uint64(i)
				err := w.s.Generate(w.x, oo)
				if err == nil {
					err = w.e.Extract(w.x, &w.f)
				}
				if err != nil {
					mu.Lock()
					first = signalFirstErr(first, err)
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	if first != nil {
		return 0, first
	}
	return float64(n) / time.Since(t0).Seconds(), nil
}

// signalGraphBatch is the most records `signal bench` extracts per graph
// execution: a 1-s record's intermediate tensors take tens of MB.
const signalGraphBatch = 8

// batchThroughputGraph synthesizes n records and extracts them in graph
// executions of up to signalGraphBatch records (after a warm-up that
// compiles the graphs) and returns records per second, synthesis included.
func batchThroughputGraph(tgt *device.Engine, o signal.SynthOptions, cfg signal.Config, n int) (float64, error) {
	b, err := tgt.Backend()
	if err != nil {
		return 0, err
	}
	e, err := sigraph.NewWithOptions(b, cfg, min(n, signalGraphBatch), sigraph.Options{DeviceNum: tgt.DeviceNum()})
	if err != nil {
		return 0, err
	}
	defer e.Close()
	recs := make([][]complex64, n)
	for i := range recs {
		recs[i] = make([]complex64, o.Samples)
	}
	out := make([]signal.Features, n)
	if err := e.ExtractBatch(recs, out); err != nil { // warm-up: compiles, sizes the buffers
		return 0, err
	}
	var s signal.Synthesizer
	t0 := time.Now()
	for i, x := range recs {
		oo := o
		oo.Seed = o.Seed + 1000 + uint64(i)
		if err := s.Generate(x, oo); err != nil {
			return 0, err
		}
	}
	if err := e.ExtractBatch(recs, out); err != nil {
		return 0, err
	}
	return float64(n) / time.Since(t0).Seconds(), nil
}

// signalFirstErr keeps the first error.
func signalFirstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func signalMS(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

func signalMedian(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
