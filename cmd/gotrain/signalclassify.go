package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gotrain/gotrain/forest"
	"github.com/gotrain/gotrain/signal/modclass"
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
		RunE: func(cmd *cobra.Command, _ []string) error { return runClassify(cmd, g, &fl) },
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
		RunE:  func(cmd *cobra.Command, _ []string) error { return runClassify(cmd, g, &fl) },
	}
	cmd.Flags().StringVar(&fl.o.ModelFile, "model", "", "model file written by classify train --out; required")
	cmd.Flags().StringVar(&fl.dataDir, "data", "", "data set folder (or its features.csv); required")
	addClassifyOutputFlags(cmd, &fl)
	return cmd
}

// runOptions checks that the command may run and returns the run options
// with --band (without data or model).
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
	o := fl.o
	lo, hi, _, err := modclass.ParseSNRRange(fl.band)
	if err != nil {
		return o, fmt.Errorf("signal classify %s: --band: %w", cmd.Name(), err)
	}
	o.BandDB = [2]float64{lo, hi}
	return o, nil
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
		if o.Test, err = modclass.Load(fl.dataDir); err != nil {
			return err
		}
	} else {
		if o.Train, err = modclass.Load(fl.dataDir); err != nil {
			return err
		}
		if fl.testDir != "" {
			if o.Test, err = modclass.Load(fl.testDir); err != nil {
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
