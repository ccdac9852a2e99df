package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gotrain/gotrain/forest"
	"github.com/gotrain/gotrain/signal"
	"github.com/gotrain/gotrain/signal/impair"
	"github.com/gotrain/gotrain/signal/modclass"
	"github.com/gotrain/gotrain/train"
)

// addClassifyOutputFlags binds the output flags of train, eval and demo to
// s. Their flags are bound to a modclass.RunSpec: --out (train) and
// --model (eval) both set Options.ModelFile.
func addClassifyOutputFlags(cmd *cobra.Command, s *modclass.RunSpec) {
	f := cmd.Flags()
	f.StringVar(&s.Options.ConfusionPNG, "png-confusion", "", "write the confusion matrix (over --band) as a PNG file")
	f.StringVar(&s.Options.SNRPNG, "png-snr", "", "write the accuracy against the SNR as a PNG file")
	f.StringVar(&s.Band, "band", "10:20", "SNR range (dB) of the headline accuracy and of the confusion matrix")
}

func addClassifyTrainFlags(cmd *cobra.Command, s *modclass.RunSpec) {
	f, fo := cmd.Flags(), &s.Options.Fit.Forest
	*fo = forest.DefaultOptions()
	f.StringVar(&s.Options.Fit.Features, "features", "default", "feature set: default, all, base, cumulants, or a comma-separated list of columns and derived features")
	f.IntVar(&fo.Trees, "trees", 200, "number of trees")
	f.IntVar(&fo.MaxDepth, "max-depth", 0, "maximum tree depth (0 = unlimited)")
	f.IntVar(&fo.Threads, "threads", 0, "worker goroutines (0 = all CPUs); the model does not depend on it")
	f.Uint64Var(&fo.Seed, "seed", 0, "seed of the forest, or of the resnet's initialisation and shuffling (and the --test-fraction split)")
}

func newClassifyTrainCmd(g *globals) *cobra.Command {
	var (
		s     modclass.RunSpec
		model string
		rf    resnetFlags
	)
	cmd := &cobra.Command{
		Use:   "train --data DIR [--test DIR | --test-fraction F] --out MODEL [--model forest|resnet]",
		Short: "Train the classifier on a data set and evaluate it on a held-out one",
		Long: `signal classify train fits a random forest (the forest learner) on the
features of a "signal dataset" folder, by default on the extracted features less
the power levels plus the derived features of docs/SIGNAL.md (--features). It
evaluates on --test (a data set generated with another seed) or on a random
--test-fraction of the rows, and prints the overall accuracy, the accuracy in
--band (default 10:20 dB), the accuracy per SNR and the confusion matrix over
--band. The model file is a forest model (forest predict reads it too).

--model resnet trains instead the 1-D convolutional residual network of
O'Shea, Roy and Clancy (2018) on raw IQ: each record of the data sets (written
with signal dataset --iq) cut into windows of --window samples, with the
training harness on --device (checkpoints in --out, --resume, --time-budget);
a test record is classified by the sum of its windows' log-probabilities.
The flags marked "resnet:" are its own; --features, --trees, --max-depth and
--threads are the forest's. docs/SIGNAL.md ("ResNet on raw IQ") has the details.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkModelFlags(cmd, model, &rf); err != nil {
				return err
			}
			if model == classifierResNet {
				return flagError(runClassifyResNet(cmd, g, &s, &rf), fieldFlags(cmd.Flags(), &s, &rf.opts))
			}
			return flagError(runClassify(cmd, g, &s), fieldFlags(cmd.Flags(), &s))
		},
	}
	cmd.Flags().StringVar(&model, "model", classifierForest, "classifier: forest (on the features) or resnet (on the raw IQ records)")
	cmd.Flags().StringVar(&s.Data, "data", "", "training data set folder (or its features.csv); required")
	cmd.Flags().StringVar(&s.Test, "test", "", "test data set folder (generate it with another --seed)")
	cmd.Flags().Float64Var(&s.Options.TestFraction, "test-fraction", 0, "hold out this fraction of --data for testing instead of --test")
	cmd.Flags().StringVar(&s.Options.ModelFile, "out", "", "write the model to this file (resnet: the folder of its runs' checkpoints)")
	addClassifyTrainFlags(cmd, &s)
	addClassifyOutputFlags(cmd, &s)
	addResNetFlags(cmd, &rf)
	return cmd
}

func newClassifyEvalCmd(g *globals) *cobra.Command {
	s := modclass.RunSpec{Evaluate: true}
	cmd := &cobra.Command{
		Use:   "eval --model MODEL --data DIR",
		Short: "Evaluate a saved classifier on a data set",
		Long: `signal classify eval evaluates a forest model file, or a resnet checkpoint (a
checkpoint file, or a run folder: its newest) written by classify train --model
resnet --out, on a data set (the resnet reads its IQ records, signal dataset
--iq), and prints the report classify train prints.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if s.Options.ModelFile != "" && s.Data != "" && !isForestModel(s.Options.ModelFile) {
				return flagError(runEvalResNet(cmd, g, &s), fieldFlags(cmd.Flags(), &s))
			}
			return flagError(runClassify(cmd, g, &s), fieldFlags(cmd.Flags(), &s))
		},
	}
	cmd.Flags().StringVar(&s.Options.ModelFile, "model", "", "model file written by classify train --out (a forest), or a resnet checkpoint file or run folder; required")
	cmd.Flags().StringVar(&s.Data, "data", "", "data set folder (or its features.csv); required")
	addClassifyOutputFlags(cmd, &s)
	return cmd
}

// checkClassify checks that the command may run and that s is valid
// (modclass.RunSpec.RunOptions), and prepares the outputs (outputs).
func checkClassify(cmd *cobra.Command, g *globals, s *modclass.RunSpec) error {
	if err := signalCPU(cmd, g); err != nil {
		return err
	}
	switch what := "signal classify " + cmd.Name(); {
	case cmd.Name() == "train" && s.Data == "":
		return errors.New(what + ": --data is required")
	case cmd.Name() == "eval" && (s.Options.ModelFile == "" || s.Data == ""):
		return errors.New(what + ": --model and --data are required")
	}
	if _, err := s.RunOptions(); err != nil {
		return flagError(fmt.Errorf("signal classify %s: %w", cmd.Name(), err), fieldFlags(cmd.Flags(), s))
	}
	outs := []string{"png-confusion", "png-snr"}
	if cmd.Name() == "train" {
		outs = append(outs, "out")
	}
	return g.outputs(cmd, outs, []string{"data", "test", "model"}, s.DataFiles())
}

// runClassify trains (train: on --data, tested on --test) or evaluates
// (eval: --model on --data) and prints the report.
func runClassify(cmd *cobra.Command, g *globals, s *modclass.RunSpec) error {
	if err := checkClassify(cmd, g, s); err != nil {
		return err
	}
	s.MaxBytes = g.maxInput()
	rep, err := s.Run()
	if err != nil {
		return fmt.Errorf("signal classify %s: %w", cmd.Name(), err)
	}
	return g.print(cmd, rep)
}

func newClassifyDemoCmd(g *globals) *cobra.Command {
	var s modclass.RunSpec
	ds := modclass.DatasetSpec{SPS: "4,8,16"}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Generate a small train/test pair in a temporary folder, train, and print the accuracy per SNR",
		Long: `signal classify demo runs the whole pipeline at a small scale: it generates a
training set (--seed) and a test set (--seed + 1) of the eight default
modulations in a temporary folder (removed afterwards), trains the forest and
prints the accuracy per SNR and the confusion matrix over --band. The numbers of
docs/SIGNAL.md come from larger runs of "signal dataset" and "classify train".`,
		RunE: func(cmd *cobra.Command, _ []string) error { return runClassifyDemo(cmd, g, &s, &ds) },
	}
	f := cmd.Flags()
	f.StringVar(&ds.Mods, "mods", "bpsk,qpsk,8psk,16qam,64qam,gfsk,fm,am", "comma-separated modulations")
	f.IntVar(&ds.Options.PerClass, "per-class", 64, "training records per modulation (the test set has as many)")
	f.StringVar(&ds.SNR, "snr", "-10:20:2", "SNR range MIN:MAX[:STEP] in dB")
	f.Float64Var(&ds.Seconds, "seconds", 0.05, "record length in seconds")
	f.Float64Var(&ds.Options.SampleRate, "rate", 200000, "sample rate in Hz")
	f.IntVar(&ds.Options.Workers, "workers", 0, "goroutines for the data sets (0 = GOMAXPROCS)")
	addClassifyTrainFlags(cmd, &s)
	addClassifyOutputFlags(cmd, &s)
	return cmd
}

// runClassifyDemo runs the demo on data sets of ds (seeded with the
// forest's --seed) and prints the report.
func runClassifyDemo(cmd *cobra.Command, g *globals, s *modclass.RunSpec, ds *modclass.DatasetSpec) error {
	if err := checkClassify(cmd, g, s); err != nil {
		return err
	}
	ds.Options.Seed = s.Options.Fit.Forest.Seed
	rep, err := s.Demo(*ds)
	if err != nil {
		return flagError(fmt.Errorf("signal classify demo: %w", err), fieldFlags(cmd.Flags(), s, ds))
	}
	return g.print(cmd, rep)
}

func newSignalDatasetCmd(g *globals) *cobra.Command {
	var s modclass.DatasetSpec
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
		RunE: func(cmd *cobra.Command, _ []string) error {
			return flagError(runSignalDataset(cmd, g, &s), fieldFlags(cmd.Flags(), &s))
		},
	}
	f := cmd.Flags()
	f.StringVar(&s.Mods, "mods", "bpsk,qpsk,8psk,16qam,64qam,gfsk,fm,am", "comma-separated modulations: "+signal.ModulationNames())
	f.IntVar(&s.Options.PerClass, "per-class", 100, "records per modulation")
	f.StringVar(&s.SNR, "snr", "-10:20:2", "full-band SNR range in dB: MIN:MAX[:STEP] or one value")
	f.Float64Var(&s.Seconds, "seconds", 0.1, "record length in seconds (ignored with --samples)")
	f.IntVar(&s.Options.Samples, "samples", 0, "record length in samples (overrides --seconds)")
	f.Float64Var(&s.Options.SampleRate, "rate", 200000, "sample rate in Hz")
	f.Uint64Var(&s.Options.Seed, "seed", 1, "random seed (every record derives its own from it)")
	f.Float64Var(&s.Options.MaxOffsetHz, "max-offset", 0, "carrier offset bound in Hz (uniform in +-bound; the cumulant features need a corrected carrier, see docs/SIGNAL.md)")
	f.StringVar(&s.SPS, "sps", "4,8,16", "samples-per-symbol choices of the digital modes, comma-separated (one drawn per record)")
	f.StringVar(&s.Impairments, "impairments", impair.DefaultRecipeName, "impair each record by a recipe: default (the built-in one: carrier offset and drift, phase noise, fading, multipath, sample-rate offset, interference, 12-bit quantization; docs/SIGNAL.md, Impairments), none, or a JSON recipe file; each record's parameters go to impairments.jsonl")
	f.StringVar(&s.Dir, "out", "", "output folder (required)")
	f.BoolVar(&s.Options.IQ, "iq", false, "also write every record as a SigMF pair under DIR/iq")
	f.BoolVar(&s.Force, "force", false, "replace the data set in a non-empty DIR")
	f.IntVar(&s.Options.Workers, "workers", 0, "goroutines (0 = GOMAXPROCS); the output does not depend on it")
	return cmd
}

func runSignalDataset(cmd *cobra.Command, g *globals, s *modclass.DatasetSpec) error {
	if err := signalCPU(cmd, g); err != nil {
		return err
	}
	if s.Dir == "" {
		return errors.New("signal dataset: --out is required")
	}
	ctx, stop := train.NotifyContext(cmd.Context()) // Ctrl-C leaves the folder as it was
	defer stop()
	rep, err := s.Generate(ctx)
	if err != nil {
		return fmt.Errorf("signal dataset: %w", err)
	}
	return g.print(cmd, rep)
}
