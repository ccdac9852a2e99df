package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/signal"
	"github.com/gotrain/gotrain/signal/sigraph"
)

// signalCPU checks that a signal command that runs only on the CPU path
// (synthesis, data sets, the classifier) may run: any other device is
// rejected with the reason, or replaced with --fallback. `signal features`
// and `signal bench` run the graph extractor on graph devices.
func signalCPU(cmd *cobra.Command, g *globals) error {
	return g.onEngine(cmd, "signal", func(d device.Device) error {
		if d.Kind == device.Native {
			return nil
		}
		return fmt.Errorf("`signal %s` runs on the CPU path only (the graph extractor serves `signal features` and `signal bench`; use --device cpu)", cmd.Name())
	}, func(*device.Engine) error { return nil }) // the CPU path opens no backend
}

// addSynthFlags binds the flags of the record of `signal synth` and
// `signal bench` to s.
func addSynthFlags(cmd *cobra.Command, s *signal.SynthSpec) {
	f := cmd.Flags()
	o := &s.Options
	f.StringVar(&s.Mod, "mod", "qpsk", "modulation: "+signal.ModulationNames())
	f.Float64Var(&o.SampleRate, "rate", 200000, "sample rate in Hz")
	f.Float64Var(&s.Seconds, "seconds", 1, "record length in seconds (ignored with --samples)")
	f.IntVar(&o.Samples, "samples", 0, "record length in samples (overrides --seconds)")
	f.Float64Var(&o.SNRdB, "snr", 10, "SNR in dB over the full sampled band (Es/N0 with --esn0)")
	f.BoolVar(&o.EsN0, "esn0", false, "read --snr as Es/N0 (digital modulations)")
	f.BoolVar(&o.NoNoise, "no-noise", false, "add no noise")
	f.Uint64Var(&o.Seed, "seed", 1, "random seed (symbols and noise)")
	f.Float64Var(&o.SymbolRate, "sym-rate", 0, "symbol rate in Bd (default rate/8; must divide the rate)")
	f.Float64Var(&o.RollOff, "rolloff", 0.35, "root-raised-cosine roll-off")
	f.IntVar(&o.SpanSymbols, "span", 8, "RRC span in symbols (even)")
	f.Float64Var(&o.CarrierOffset, "offset", 0, "carrier offset in Hz (tone frequency, chirp centre)")
	f.Float64Var(&o.Phase, "phase", 0, "carrier phase in radians")
	f.Float64Var(&o.ModIndex, "mod-index", 0, "FSK/GFSK modulation index h (default 1, GFSK 0.5) or AM depth of am, am-dsb-wc, am-ssb-wc (default 0.5)")
	f.Float64Var(&o.BT, "bt", 0.5, "GFSK bandwidth-time product (GMSK's is 0.3)")
	f.Float64Var(&o.ModFreq, "mod-freq", 1000, "FM/AM message tone in Hz (the am-* classes too)")
	f.Float64Var(&o.Deviation, "deviation", 10000, "FM peak deviation in Hz")
	f.IntVar(&o.Subcarriers, "subcarriers", 64, "OFDM FFT size (power of two)")
	f.IntVar(&o.CyclicPrefix, "cp", 0, "OFDM cyclic prefix in samples (default subcarriers/4)")
	f.Float64Var(&o.Bandwidth, "bandwidth", 0, "chirp sweep in Hz (default rate/4)")
	f.Float64Var(&o.ChirpPeriod, "chirp-period", 0, "chirp period in seconds (default the record)")
	f.StringVar(&s.Multipath, "multipath", "", "tapped delay line, one complex tap per sample, e.g. \"1,0.4-0.2i,0.1i\"")
	f.Float64Var(&o.IQGainDB, "iq-gain-db", 0, "IQ gain imbalance in dB")
	f.Float64Var(&o.IQPhaseDeg, "iq-phase-deg", 0, "IQ phase imbalance in degrees")
}

func newSignalSynthCmd(g *globals) *cobra.Command {
	var fl signal.SynthFileSpec
	cmd := &cobra.Command{
		Use:   "synth --out FILE",
		Short: "Write one synthetic IQ record (SigMF, or raw by extension)",
		Long: `signal synth writes one record of a modulated signal with white Gaussian
noise, deterministic for a seed. The output is a SigMF pair (FILE.sigmf-meta and
FILE.sigmf-data, cf32_le unless --datatype says otherwise) unless FILE ends in a
raw extension (.cf32, .cfile, .ci16, .cs16, .ci8, .cu8) or --format names a raw
format. --snr is over the full sampled band: the signal has unit power and the
noise total power 10^(-snr/10); with --esn0 it is Es/N0 instead.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return flagError(runSignalSynth(cmd, g, &fl), fieldFlags(cmd.Flags(), &fl))
		},
	}
	addSynthFlags(cmd, &fl.SynthSpec)
	cmd.Flags().StringVar(&fl.Out, "out", "", "output file (required)")
	cmd.Flags().StringVar(&fl.Format, "format", "", "sigmf or a raw format (cf32, ci16, ci8, cu8); default from the extension, else sigmf")
	cmd.Flags().StringVar(&fl.Datatype, "datatype", "cf32_le", "SigMF data type: cf32_le, cf32_be, ci16_le, ci16_be, ci8, cu8")
	return cmd
}

func runSignalSynth(cmd *cobra.Command, g *globals, fl *signal.SynthFileSpec) error {
	if err := signalCPU(cmd, g); err != nil {
		return err
	}
	if fl.Out == "" {
		return errors.New("signal synth: --out is required")
	}
	if fl.Out == "-" && (fl.Format == "" || fl.Format == "sigmf") {
		return errors.New("signal synth: --out - (standard output) needs a raw --format (cf32, ci16, ci8 or cu8): a SigMF record is two files")
	}
	if err := g.outputs(cmd, []string{"out"}, nil, nil); err != nil {
		return err
	}
	rep, err := fl.Synthesize()
	if err != nil {
		return err
	}
	return g.print(cmd, rep)
}

func newSignalFeaturesCmd(g *globals) *cobra.Command {
	var fl signal.FeaturesSpec
	cmd := &cobra.Command{
		Use:   "features --in FILE",
		Short: "Extract RF features from one IQ record",
		Long: `signal features reads one record (SigMF, or raw cf32/ci16/ci8/cu8) and prints
its features: RSSI, SNR estimates, spectral shape, occupied bandwidth, cumulants,
instantaneous amplitude/phase/frequency statistics and 13 MFCC means, defined in
docs/SIGNAL.md (--arrays adds the Welch PSD; the --spectrogram file is bins x
frames, row-major).
--device cpu runs the CPU path; go (simplego), gpu, tpu and xla:<plugin> run
the same features as GoMLX graphs on that device; auto runs the graphs on an
accelerator when there is one and the CPU path otherwise. The JSON's device
names the device used; compile_ms is the graph's build and compile time.`,
		RunE: func(cmd *cobra.Command, _ []string) error { return runSignalFeatures(cmd, g, &fl) },
	}
	f := cmd.Flags()
	f.StringVar(&fl.In, "in", "", "input file (required): .sigmf-meta/.sigmf-data, or raw")
	f.StringVar(&fl.Format, "format", "", "sigmf, cf32, ci16, ci8 or cu8 (default: from the extension)")
	f.Float64Var(&fl.Rate, "rate", 0, "sample rate in Hz (required for raw files; overrides SigMF's)")
	f.Float64Var(&fl.Impedance, "impedance", 50, "impedance in ohms for RSSI in dBm")
	f.BoolVar(&fl.Arrays, "arrays", false, "include the PSD, autocorrelation and per-frame MFCCs in the JSON")
	f.StringVar(&fl.Spectrogram, "spectrogram", "", "write the dB spectrogram to this file (float32 LE)")
	f.StringVar(&fl.CSV, "csv", "", "write the scalar features as a one-row CSV file (with --annotations: a row per annotated segment)")
	f.BoolVar(&fl.Annotations, "annotations", false, "also extract the features of each annotated segment of a SigMF recording")
	return cmd
}

func runSignalFeatures(cmd *cobra.Command, g *globals, fl *signal.FeaturesSpec) error {
	if fl.In == "" {
		return errors.New("signal features: --in is required")
	}
	if err := g.outputs(cmd, []string{"csv", "spectrogram"}, []string{"in"}, nil); err != nil {
		return err
	}
	return g.onEngine(cmd, "signal", nil, func(eng *device.Engine) error {
		rep, err := sigraph.ExtractFile(eng, *fl)
		if err != nil {
			return fmt.Errorf("signal features: %w", err)
		}
		return g.print(cmd, rep)
	})
}

func newSignalBenchCmd(g *globals) *cobra.Command {
	var fl signal.BenchSpec
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
		RunE: func(cmd *cobra.Command, _ []string) error {
			return flagError(runSignalBench(cmd, g, &fl), fieldFlags(cmd.Flags(), &fl))
		},
	}
	addSynthFlags(cmd, &fl.Synth)
	_ = cmd.Flags().Set("offset", "25000")
	cmd.Flags().IntVar(&fl.Options.Runs, "runs", 20, "timed runs after one warm-up")
	cmd.Flags().IntVar(&fl.Options.Records, "records", 32, "records in the batched throughput run")
	cmd.Flags().IntVar(&fl.Options.Workers, "workers", 0, "goroutines for the batched run (0 = GOMAXPROCS)")
	cmd.Flags().IntVar(&fl.Options.Threads, "threads", 1, "goroutines per record in the single-record timings (CPU path)")
	return cmd
}

func runSignalBench(cmd *cobra.Command, g *globals, fl *signal.BenchSpec) error {
	bo, err := fl.BenchOptions()
	if err != nil {
		return err
	}
	if bo.Runs < 1 || bo.Records < 1 || bo.Threads < 1 {
		return errors.New("signal bench: --runs, --records and --threads must be positive")
	}
	return g.onEngine(cmd, "signal", nil, func(eng *device.Engine) error {
		rep, err := sigraph.BenchmarkOn(eng, bo)
		if err != nil {
			return err
		}
		return g.print(cmd, &rep)
	})
}
