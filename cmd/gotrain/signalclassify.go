package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gotrain/gotrain/forest"
	"github.com/gotrain/gotrain/signal"
	"github.com/gotrain/gotrain/signal/modclass"
	"github.com/gotrain/gotrain/train"
)

func newSignalClassifyCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "classify",
		Short: "Train and evaluate a random-forest modulation classifier on signal dataset features",
	}
	cmd.AddCommand(newClassifyTrainCmd(g), newClassifyEvalCmd(g), newClassifyDemoCmd(g))
	return cmd
}

// classifyFlags are the flags of train, eval and demo: --out (train) and
// --model (eval) both set o.ModelFile.
type classifyFlags struct {
	dataDir, testDir, band string
	o                      modclass.RunOptions
}

func addClassifyOutputFlags(cmd *cobra.Command, fl *classifyFlags) {
	f := cmd.Flags()
	f.StringVar(&fl.o.ConfusionPNG, "png-confusion", "", "write the confusion matrix (over --band) as a PNG file")
	f.StringVar(&fl.o.SNRPNG, "png-snr", "", "write the accuracy against the SNR as a PNG file")
	f.StringVar(&fl.band, "band", "10:20", "SNR range (dB) of the headline accuracy and of the confusion matrix")
}

func addClassifyTrainFlags(cmd *cobra.Command, fl *classifyFlags) {
	f, fo := cmd.Flags(), &fl.o.Fit.Forest
	*fo = forest.DefaultOptions()
	f.StringVar(&fl.o.Fit.Features, "features", "default", "feature set: default, all, base, cumulants, or a comma-separated list of columns and derived features")
	f.IntVar(&fo.Trees, "trees", 200, "number of trees")
	f.IntVar(&fo.MaxDepth, "max-depth", 0, "maximum tree depth (0 = unlimited)")
	f.IntVar(&fo.Threads, "threads", 0, "worker goroutines (0 = all CPUs); the model does not depend on it")
	f.Uint64Var(&fo.Seed, "seed", 0, "forest seed (and the --test-fraction split)")
}

func newClassifyTrainCmd(g *globals) *cobra.Command {
	var fl classifyFlags
	cmd := &cobra.Command{
		Use:   "train --data DIR [--test DIR | --test-fraction F] --out MODEL",
		Short: "Train the classifier on a data set and evaluate it on a held-out one",
		Long: `signal classify train fits a random forest (the forest learner) on the
features of a "signal dataset" folder, by default on the extracted features less
the power levels plus the derived features of docs/SIGNAL.md (--features). It
evaluates on --test (a data set generated with another seed) or on a random
--test-fraction of the rows, and prints the overall accuracy, the accuracy in
--band (default 10:20 dB), the accuracy per SNR and the confusion matrix over
--band. The model file is a forest model (forest predict reads it too).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return flagError(runClassify(cmd, g, &fl), forestFields) },
	}
	cmd.Flags().StringVar(&fl.dataDir, "data", "", "training data set folder (or its features.csv); required")
	cmd.Flags().StringVar(&fl.testDir, "test", "", "test data set folder (generate it with another --seed)")
	cmd.Flags().Float64Var(&fl.o.TestFraction, "test-fraction", 0, "hold out this fraction of --data for testing instead of --test")
	cmd.Flags().StringVar(&fl.o.ModelFile, "out", "", "write the model to this file")
	addClassifyTrainFlags(cmd, &fl)
	addClassifyOutputFlags(cmd, &fl)
	return cmd
}

func newClassifyEvalCmd(g *globals) *cobra.Command {
	var fl classifyFlags
	cmd := &cobra.Command{
		Use:   "eval --model MODEL --data DIR",
		Short: "Evaluate a saved classifier on a data set",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return flagError(runClassify(cmd, g, &fl), forestFields) },
	}
	cmd.Flags().StringVar(&fl.o.ModelFile, "model", "", "model file written by classify train --out; required")
	cmd.Flags().StringVar(&fl.dataDir, "data", "", "data set folder (or its features.csv); required")
	addClassifyOutputFlags(cmd, &fl)
	return cmd
}

// runOptions checks that the command may run and returns the run options
// with --band (without data or model), the outputs prepared (outputs).
func (fl *classifyFlags) runOptions(cmd *cobra.Command, g *globals) (modclass.RunOptions, error) {
	if err := signalCPU(cmd, g); err != nil {
		return fl.o, err
	}
	switch what := "signal classify " + cmd.Name(); {
	case cmd.Name() == "train" && fl.dataDir == "":
		return fl.o, errors.New(what + ": --data is required")
	case cmd.Name() == "eval" && (fl.o.ModelFile == "" || fl.dataDir == ""):
		return fl.o, errors.New(what + ": --model and --data are required")
	}
	lo, hi, _, err := modclass.ParseSNRRange(fl.band)
	if err != nil {
		return fl.o, fmt.Errorf("signal classify %s: --band: %w", cmd.Name(), err)
	}
	if cmd.Name() != "eval" {
		if err := fl.o.Fit.Forest.Validate(); err != nil {
			return fl.o, flagError(fmt.Errorf("signal classify %s: %w", cmd.Name(), err), forestFields)
		}
	}
	extra := map[string]string{}
	for _, dir := range []string{fl.dataDir, fl.testDir} {
		if dir != "" {
			extra[dir] = filepath.Join(dir, modclass.FeaturesFile)
		}
	}
	outs := []string{"png-confusion", "png-snr"}
	if cmd.Name() == "train" {
		outs = append(outs, "out")
	}
	err = g.outputs(cmd, outs, []string{"data", "test", "model"}, extra)
	o := fl.o
	o.BandDB = [2]float64{lo, hi}
	return o, err
}

// runClassify trains (train: on --data, tested on --test) or evaluates
// (eval: --model on --data) and prints the report.
func runClassify(cmd *cobra.Command, g *globals, fl *classifyFlags) error {
	o, err := fl.runOptions(cmd, g)
	if err != nil {
		return err
	}
	if cmd.Name() == "eval" {
		if o.Model, err = forest.LoadFile(o.ModelFile); err != nil {
			return err
		}
		if o.Test, err = modclass.LoadMax(fl.dataDir, g.maxInput()); err != nil {
			return err
		}
	} else {
		if o.Train, err = modclass.LoadMax(fl.dataDir, g.maxInput()); err != nil {
			return err
		}
		if fl.testDir != "" {
			if o.Test, err = modclass.LoadMax(fl.testDir, g.maxInput()); err != nil {
				return err
			}
		}
	}
	rep, err := modclass.Run(o)
	if err != nil {
		return fmt.Errorf("signal classify %s: %w", cmd.Name(), err)
	}
	return g.print(cmd, rep)
}

func newClassifyDemoCmd(g *globals) *cobra.Command {
	var fl classifyFlags
	var dfl datasetFlags
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Generate a small train/test pair in a temporary folder, train, and print the accuracy per SNR",
		Long: `signal classify demo runs the whole pipeline at a small scale: it generates a
training set (--seed) and a test set (--seed + 1) of the eight default
modulations in a temporary folder (removed afterwards), trains the forest and
prints the accuracy per SNR and the confusion matrix over --band. The numbers of
docs/SIGNAL.md come from larger runs of "signal dataset" and "classify train".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o, err := fl.runOptions(cmd, g)
			if err != nil {
				return err
			}
			dfl.sps, dfl.o.Seed = "4,8,16", o.Fit.Forest.Seed
			ds, err := dfl.options()
			if err != nil {
				return fmt.Errorf("signal classify demo: %w", err)
			}
			rep, err := modclass.Demo("", ds, o)
			if err != nil {
				return fmt.Errorf("signal classify demo: %w", err)
			}
			if !g.json {
				fmt.Fprintf(cmd.OutOrStdout(), "demo: %d + %d records of %d samples at %g Hz (%s), generated in %.1f + %.1f s\n",
					rep.TrainRows, rep.TestRows, ds.Samples, ds.SampleRate, strings.Join(rep.Eval.Classes, " "), rep.Generate[0], rep.Generate[1])
			}
			return g.print(cmd, rep)
		},
	}
	f := cmd.Flags()
	f.StringVar(&dfl.mods, "mods", "bpsk,qpsk,8psk,16qam,64qam,gfsk,fm,am", "comma-separated modulations")
	f.IntVar(&dfl.o.PerClass, "per-class", 64, "training records per modulation (the test set has as many)")
	f.StringVar(&dfl.snr, "snr", "-10:20:2", "SNR range MIN:MAX[:STEP] in dB")
	f.Float64Var(&dfl.seconds, "seconds", 0.05, "record length in seconds")
	f.Float64Var(&dfl.o.SampleRate, "rate", 200000, "sample rate in Hz")
	f.IntVar(&dfl.o.Workers, "workers", 0, "goroutines for the data sets (0 = GOMAXPROCS)")
	addClassifyTrainFlags(cmd, &fl)
	addClassifyOutputFlags(cmd, &fl)
	return cmd
}

// datasetFields maps modclass.DatasetOptions' names in the library's
// errors to the flags.
var datasetFields = map[string]string{"PerClass": "per-class", "Samples": "samples", "SampleRate": "rate", "MaxOffsetHz": "max-offset",
	"SPS": "sps", "Workers": "workers", "Mods": "mods", "SNRMinDB": "snr", "SNRMaxDB": "snr", "SNRStepDB": "snr"}

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
through the grid so every SNR has the same count), extracts their CPU features
and writes DIR/features.csv (label, snr_db_true, then the features of "signal
features --csv"), DIR/dataset.json and with --iq one SigMF pair per record.
Each record is a pure function of --seed, its modulation and its index; its
nuisance parameters (phase, offset, symbol rate, FM and AM) are drawn from the
ranges in docs/SIGNAL.md, which describes the files.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return flagError(runSignalDataset(cmd, g, &fl), datasetFields)
		},
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
	ctx, stop := train.NotifyContext(cmd.Context()) // Ctrl-C leaves the folder as it was
	defer stop()
	info, err := modclass.GenerateContext(ctx, fl.out, o, fl.force)
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
