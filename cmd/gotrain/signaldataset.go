package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gotrain/gotrain/signal"
	"github.com/gotrain/gotrain/signal/modclass"
)

// datasetFlags are the flags of `signal dataset` (and of classify demo).
type datasetFlags struct {
	mods, snr, out, sps string
	seconds             float64
	force               bool
	o                   modclass.DatasetOptions
}

func newSignalDatasetCmd(g *globals) *cobra.Command {
	var fl datasetFlags
	cmd := &cobra.Command{
		Use:   "dataset --out DIR",
		Short: "Generate a labelled feature data set of synthetic records (CSV, optional SigMF)",
		Long: `signal dataset synthesizes --per-class records of each modulation in --mods at
full-band SNRs in --snr (MIN:MAX spreads them uniformly, MIN:MAX:STEP cycles
through the grid so every SNR has the same count), extracts the CPU features of
every record on --workers goroutines, and writes DIR/features.csv (label,
snr_db_true, then the features of "signal features --csv"), DIR/dataset.json
(the options, classes, counts and version) and with --iq one SigMF pair per
record (DIR/iq/<label>_<idx>.sigmf-meta/-data).

Each record is a pure function of --seed, its modulation and its index (the
output does not depend on --workers). Per record the carrier phase is uniform,
the carrier offset uniform in +-max-offset, the digital symbol rate rate/sps with
sps drawn from --sps, and FM deviation and tone, AM depth and tone are drawn
from the ranges in docs/SIGNAL.md. A non-empty DIR is refused unless --force.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runSignalDataset(cmd, g, &fl) },
	}
	f := cmd.Flags()
	f.StringVar(&fl.mods, "mods", "bpsk,qpsk,8psk,16qam,64qam,gfsk,fm,am", "comma-separated modulations: "+signal.ModulationNames())
	f.IntVar(&fl.o.PerClass, "per-class", 100, "records per modulation")
	f.StringVar(&fl.snr, "snr", "-10:20:2", "full-band SNR range in dB: MIN:MAX[:STEP] or one value")
	f.Float64Var(&fl.seconds, "seconds", 0.1, "record length in seconds (ignored with --samples)")
	f.IntVar(&fl.o.Samples, "samples", 0, "record length in samples (overrides --seconds)")
	f.Float64Var(&fl.o.SampleRate, "rate", 200000, "sample rate in Hz")
	f.Uint64Var(&fl.o.Seed, "seed", 1, "random seed (every record derives its own from it)")
	f.Float64Var(&fl.o.MaxOffsetHz, "max-offset", 0, "carrier offset bound in Hz (uniform in +-bound; the cumulant features need a corrected carrier, see docs/SIGNAL.md)")
	f.StringVar(&fl.sps, "sps", "4,8,16", "samples-per-symbol choices of the digital modes, comma-separated (one drawn per record)")
	f.StringVar(&fl.out, "out", "", "output folder (required)")
	f.BoolVar(&fl.o.IQ, "iq", false, "also write every record as a SigMF pair under DIR/iq")
	f.BoolVar(&fl.force, "force", false, "replace the data set in a non-empty DIR")
	f.IntVar(&fl.o.Workers, "workers", 0, "goroutines (0 = GOMAXPROCS); the output does not depend on it")
	return cmd
}

// options turns the flags into data set options (modclass.Generate
// validates them).
func (fl *datasetFlags) options() (modclass.DatasetOptions, error) {
	o := fl.o
	var err error
	if o.Mods, err = modclass.ParseMods(fl.mods); err != nil {
		return o, err
	}
	if o.SNRMinDB, o.SNRMaxDB, o.SNRStepDB, err = modclass.ParseSNRRange(fl.snr); err != nil {
		return o, fmt.Errorf("--snr: %w", err)
	}
	if o.Samples == 0 {
		if o.Samples, err = signal.SamplesFor(fl.seconds, o.SampleRate); err != nil {
			return o, fmt.Errorf("--seconds: %w", err)
		}
	}
	for _, p := range strings.Split(fl.sps, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return o, fmt.Errorf("--sps %q: %q is not an integer", fl.sps, p)
		}
		o.SPS = append(o.SPS, k)
	}
	return o, nil
}

func runSignalDataset(cmd *cobra.Command, g *globals, fl *datasetFlags) error {
	if err := signalCPU(cmd, g); err != nil {
		return err
	}
	if fl.out == "" {
		return errors.New("signal dataset: --out is required")
	}
	o, err := fl.options()
	if err != nil {
		return fmt.Errorf("signal dataset: %w", err)
	}
	t0 := time.Now()
	info, err := modclass.Generate(fl.out, o, fl.force)
	if err != nil {
		return fmt.Errorf("signal dataset: %w", err)
	}
	if g.json {
		return printJSON(cmd.OutOrStdout(), map[string]any{"dir": fl.out, "dataset": info, "seconds": time.Since(t0).Seconds(),
			"records_per_second": float64(info.Rows) / info.Seconds})
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %d records (%d per class: %s), %d samples at %g Hz, SNR %s dB, seed %d; %.1f s on %d workers (%.1f records/s)\n",
		fl.out, info.Rows, o.PerClass, strings.Join(info.Classes, " "), o.Samples, o.SampleRate, fl.snr, o.Seed,
		info.Seconds, info.Workers, float64(info.Rows)/info.Seconds)
	return nil
}
