package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/dist"
	"github.com/gotrain/gotrain/forest"
	"github.com/gotrain/gotrain/forest/forestdist"
	"github.com/gotrain/gotrain/forest/forestgraph"
)

// forestTrainFlags are bound to the library's settings where they match.
type forestTrainFlags struct {
	data    forest.DataSpec
	opt     forest.Options
	cfg     forest.TrainConfig
	holdout float64 // the flag: negative means the default, 0 none
	noOOB   bool
	save    string
	// distributed is --distributed: "", trees or data.
	distributed string
}

func newForestTrainCmd(g *globals) *cobra.Command {
	fl := forestTrainFlags{opt: forest.DefaultOptions()}
	cmd := &cobra.Command{
		Use:   "train (--dataset diabetes|digits|mnist | --train FILE.csv)",
		Short: "Train a random forest on an embedded data set, MNIST or a CSV file",
		Long: `forest train fits a random forest (regression or classification) with
scikit-learn's option names and defaults, reports hold-out metrics and the
out-of-bag score, and optionally saves the model. Without --test, an embedded
data set is split with a fixed seed; --dataset mnist has MNIST's own test set.

--device cpu (and auto without an accelerator) runs the native learner; go
(simplego), gpu, tpu and xla:... grow the same trees, node for node, as GoMLX
graphs on that device (package forest/forestgraph; the entropy criterion only
on go); the report then gives the graphs' compile time apart from the fit.
The library call behind this command is forestgraph.TrainOn (forest.LoadData,
then forest.Train with the learner of the device's engine).`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return flagError(runForestTrain(cmd, g, &fl), fieldFlags(cmd.Flags(), &fl.opt, &fl.cfg, &fl.data))
		},
	}
	f := cmd.Flags()
	f.StringVar(&fl.data.Dataset, "dataset", "", "data set: diabetes (regression) or digits (classification), both embedded, or mnist (IDX files from --data-dir)")
	f.StringVar(&fl.data.DataDir, "data-dir", "", `folder with the MNIST IDX files, for --dataset mnist (default: data.MNISTDir(""), that is $`+data.DataDirEnv+`/mnist, else $XDG_DATA_HOME/gotrain/mnist, else ~/.local/share/gotrain/mnist)`)
	f.BoolVar(&fl.data.Download, "download", false, "download MNIST into --data-dir from its canonical mirrors (checksums verified) when its files are not there")
	f.StringVar(&fl.data.Train, "train", "", "training data file: CSV with a header row, Parquet or Arrow IPC")
	f.StringVar(&fl.data.Test, "test", "", "test data file (CSV, Parquet or Arrow IPC) with the same columns")
	f.StringVar(&fl.data.Target, "target", "", "target column name (default: the last column)")
	f.StringSliceVar(&fl.data.Categorical, "categorical", nil, "feature columns of --train to treat as categories even when they hold numbers, comma-separated (a column with a value that is not a number is categorical anyway); CPU only")
	f.StringVar(&fl.data.Weight, "weight-column", "", "column of --train holding sample weights (>= 0), not a feature; dropped from --test when there (test scores are unweighted)")
	f.StringVar((*string)(&fl.data.Task), "task", "", "regression or classification (default: from --dataset, else regression)")
	f.StringVar((*string)(&fl.opt.Criterion), "criterion", "", "squared_error (regression), gini or entropy (classification)")
	f.IntVar(&fl.opt.Trees, "trees", fl.opt.Trees, "number of trees")
	f.IntVar(&fl.opt.MaxDepth, "max-depth", 0, "maximum tree depth (0 = unlimited)")
	f.StringVar(&fl.opt.MaxFeatures, "max-features", "", "features per split: sqrt, log2, all, a fraction or an integer (default: all for regression, sqrt for classification)")
	f.IntVar(&fl.opt.MinSamplesLeaf, "min-samples-leaf", fl.opt.MinSamplesLeaf, "fewest rows in a leaf")
	f.IntVar(&fl.opt.MinSamplesSplit, "min-samples-split", fl.opt.MinSamplesSplit, "fewest rows to split a node")
	f.IntVar(&fl.opt.Bins, "bins", fl.opt.Bins, "most bins per feature, the missing-value bin included (2..256)")
	f.Uint64Var(&fl.opt.Seed, "seed", 0, "random seed")
	f.IntVar(&fl.opt.Threads, "threads", 0, "worker goroutines (0 = all CPUs); the model does not depend on it")
	f.Float64Var(&fl.opt.MaxSamples, "max-samples", 0, "bootstrap draws per tree: a fraction of rows if <= 1, else a count (0 = all rows)")
	f.BoolVar(&fl.opt.NoBootstrap, "no-bootstrap", false, "grow every tree on all rows")
	f.Float64Var(&fl.opt.MinWeightFractionLeaf, "min-weight-fraction-leaf", 0, "least fraction (0 to 0.5) of a tree's total weight each leaf keeps")
	f.StringVar(&fl.opt.ClassWeight, "class-weight", "", "class weights (classification): balanced, or LABEL=WEIGHT,... (others 1); they multiply the sample weights")
	f.BoolVar(&fl.opt.KeepLeafSamples, "keep-leaf-samples", false, "keep every leaf's training rows in the model, for forest predict --quantiles (regression)")
	f.StringVar((*string)(&fl.opt.Splitter), "splitter", "", "best (random forests) or random (extremely randomized trees: each feature examined is split at a random bin; scikit-learn's ExtraTrees, which also default to --no-bootstrap)")
	f.BoolVar(&fl.noOOB, "no-oob", false, "skip the out-of-bag score")
	f.Float64Var(&fl.holdout, "holdout", -1, "fraction held out for testing when --test is not given (default 0.2 for --dataset, 0 for --train)")
	f.BoolVar(&fl.cfg.Importance, "importance", false, "report impurity feature importances")
	f.IntVar(&fl.cfg.PermutationRepeats, "permutation-importance", 0, "also report permutation importances on the test set, averaged over this many shuffles per feature (0: off)")
	f.StringVar(&fl.save, "save", "", "write the model to this file (atomically)")
	f.StringVar(&fl.distributed, "distributed", "", "train across the processes of an MPI launcher (mpirun -np N gotrain ..., srun, an MPIJob; a binary built with -tags mpi): trees (each process reads all the data and grows its share of the trees) or data (each process grows every tree over its share of the rows, histograms summed across processes); the model equals one process's byte for byte, and rank 0 prints and saves it (docs/DISTRIBUTED.md)")
	f.IntVar(&fl.cfg.Repeats, "repeats", 1, "fit (and predict) this many times and report the median times (benchmarking)")
	return cmd
}

// check turns --holdout (negative: the default, 0: none) into
// DataSpec.Holdout (forestgraph.TrainOn checks it with the other data
// options) and checks --repeats, which the library would read as once
// when 0.
func (fl *forestTrainFlags) check() error {
	switch {
	case fl.holdout == 0:
		fl.data.Holdout = forest.NoHoldout
	case fl.holdout > 0:
		fl.data.Holdout = fl.holdout
	}
	if fl.cfg.Repeats < 1 {
		return fmt.Errorf("--repeats %d must be >= 1", fl.cfg.Repeats)
	}
	fl.opt.OOB = !fl.opt.NoBootstrap && !fl.noOOB
	return nil
}

func runForestTrain(cmd *cobra.Command, g *globals, fl *forestTrainFlags) error {
	if err := g.outputs(cmd, []string{"save"}, []string{"train", "test"}, nil); err != nil {
		return err
	}
	if err := fl.check(); err != nil {
		return fmt.Errorf("forest train: %w", err)
	}
	if fl.distributed != "" {
		return runForestDistributed(cmd, g, fl)
	}
	return g.onEngine(cmd, "forest train", nil, func(eng *device.Engine) error {
		fl.data.MaxBytes = g.maxInput()
		res, err := forestgraph.TrainOn(cmd.Context(), eng, fl.data, fl.opt, fl.cfg, slog.Info)
		if err != nil {
			return fmt.Errorf("forest train: %w", err)
		}
		res.Fallback = eng.Warning()
		if fl.save != "" {
			if err := res.Forest.SaveFile(fl.save); err != nil {
				return err
			}
			res.Model = fl.save
		}
		return g.print(cmd, res)
	})
}

func newForestPredictCmd(g *globals) *cobra.Command {
	var modelFile, dataFile, outFile, quantiles string
	var proba, distributed bool
	var batchRows int
	cmd := &cobra.Command{
		Use:   "predict --model FILE --data FILE.csv",
		Short: "Predict with a saved forest",
		Long: `forest predict writes a CSV with one "prediction" column (or one column per
class) for the rows of --data, whose header names the model's feature columns
(found by name; other columns are ignored).

--device cpu (and auto without an accelerator) runs the native predictor;
go (simplego), gpu, tpu and xla:... run the inference graph on that device
(package forest/forestgraph), with the same predictions bit for bit. The JSON
report (--json with --out) names the device and gives the graph's compile
time apart from the prediction time.
The library call behind this command is forestgraph.PredictFile
(Forest.PredictData on the device's engine), then Predictions.WriteCSV or
WriteFile.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if outFile == "-" {
				outFile = "" // standard output, as without --out
			}
			switch {
			case modelFile == "" || dataFile == "":
				return errors.New("forest predict: --model and --data are required")
			case g.json && outFile == "":
				return errors.New("forest predict: --json needs --out (the predictions go to the file, the JSON report to stdout)")
			case batchRows < 1:
				return fmt.Errorf("forest predict: --batch-rows %d must be >= 1", batchRows)
			}
			popt := forestgraph.PredictOptions{Proba: proba, BatchRows: batchRows}
			if quantiles != "" {
				qs, err := forest.ParseQuantiles(quantiles)
				if err != nil {
					return fmt.Errorf("forest predict: --quantiles: %w", err)
				}
				popt.Quantiles = qs
			}
			if err := g.outputs(cmd, []string{"out"}, []string{"data", "model"}, nil); err != nil {
				return err
			}
			if distributed {
				return runForestPredictDistributed(cmd, g, modelFile, dataFile, outFile, forest.PredictOptions{Proba: popt.Proba, Quantiles: popt.Quantiles})
			}
			return g.onEngine(cmd, "forest predict", nil, func(eng *device.Engine) error {
				rep, err := forestgraph.PredictFile(eng, modelFile, dataFile, g.maxInput(), popt)
				if err != nil {
					return flagError(fmt.Errorf("forest predict: %w", err), fieldFlags(cmd.Flags()))
				}
				rep.Out = outFile
				return g.writeTable(cmd, outFile, rep.Predictions, rep, "forest: predictions written", "rows", rep.Predictions.Rows, "device", eng.Name(), "engine", rep.Engine)
			})
		},
	}
	cmd.Flags().StringVar(&modelFile, "model", "", "model file written by forest train --save")
	cmd.Flags().StringVar(&dataFile, "data", "", "data file (CSV, Parquet or Arrow IPC) with the model's feature columns")
	cmd.Flags().StringVar(&outFile, "out", "", "write predictions to this CSV file (Parquet when it ends in .parquet), atomically (default: stdout)")
	cmd.Flags().BoolVar(&proba, "proba", false, "write class probabilities, one column per class")
	cmd.Flags().StringVar(&quantiles, "quantiles", "", "write these quantiles of each row's predicted distribution, one column each (for example 0.05,0.5,0.95; a regression model trained with --keep-leaf-samples; CPU only)")
	cmd.Flags().IntVar(&batchRows, "batch-rows", forestgraph.DefaultBatchRows, "rows per graph execution on graph devices (bounds device memory)")
	cmd.Flags().BoolVar(&distributed, "distributed", false, "predict across the processes of an MPI launcher (a binary built with -tags mpi): each reads its shard of --data (a CSV file's lines by byte ranges) and rank 0 writes every prediction, in the file's order (docs/DISTRIBUTED.md)")
	return cmd
}

// runForestPredictDistributed is forest predict --distributed: every
// process predicts its shard (forestdist.PredictFile) on its CPU; rank 0
// writes the predictions and the report.
func runForestPredictDistributed(cmd *cobra.Command, g *globals, modelFile, dataFile, outFile string, popt forest.PredictOptions) error {
	if dev := cmd.Flags().Lookup("device"); dev != nil && dev.Changed && dev.Value.String() != "cpu" {
		return fmt.Errorf("forest predict: --distributed runs the native predictor on each process's CPU; --device %s is refused (use --device cpu or leave it out)", dev.Value.String())
	}
	comm, err := dist.World()
	if err != nil {
		return fmt.Errorf("forest predict --distributed: %w", err)
	}
	p, err := forestdist.PredictFile(comm, modelFile, dataFile, g.maxInput(), popt)
	rank := comm.Rank()
	if cerr := leaveRanks(comm, err); cerr != nil {
		err = cerr
	}
	if err != nil {
		return flagError(fmt.Errorf("forest predict: %w", err), fieldFlags(cmd.Flags()))
	}
	if rank != 0 {
		return nil
	}
	rep := &forestgraph.PredictReport{Device: "cpu", Engine: forestgraph.NativeEngine, Model: modelFile, Data: dataFile, Out: outFile, Predictions: p}
	return g.writeTable(cmd, outFile, p, rep, "forest: predictions written", "rows", p.Rows, "device", "cpu", "engine", rep.Engine)
}

// table is what forest predict and forest explain write: a CSV table.
type table interface {
	WriteCSV(io.Writer) error
	WriteFile(path string) error
}

// writeTable writes t to standard output when file is "", else
// atomically to file, logging msg with attrs, and then prints the JSON
// report rep with --json.
func (g *globals) writeTable(cmd *cobra.Command, file string, t table, rep any, msg string, attrs ...any) error {
	if file == "" {
		return t.WriteCSV(cmd.OutOrStdout())
	}
	if err := t.WriteFile(file); err != nil {
		return err
	}
	slog.Info(msg, append([]any{"file", file}, attrs...)...)
	if g.json {
		return printJSON(cmd.OutOrStdout(), rep)
	}
	return nil
}

func newForestExplainCmd(g *globals) *cobra.Command {
	var modelFile, dataFile, outFile string
	cmd := &cobra.Command{
		Use:   "explain --model FILE --data FILE.csv",
		Short: "Write each row's feature contributions (SHAP values) to a saved forest's prediction",
		Long: `forest explain writes, for the rows of --data (columns found by name, as
forest predict does), each feature's contribution to the forest's prediction
by exact path-dependent TreeSHAP, and the expected value they start from:
one column per feature and "expected_value"; for a classifier the same for
each class's probability, named FEATURE:CLASS. Contributions plus the expected
value equal the prediction. It runs on the CPU (--device cpu or auto).
The library call behind this command is forest.ExplainFile, then
Explanation.WriteCSV or WriteFile.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if outFile == "-" {
				outFile = "" // standard output, as without --out
			}
			switch {
			case modelFile == "" || dataFile == "":
				return errors.New("forest explain: --model and --data are required")
			case g.json && outFile == "":
				return errors.New("forest explain: --json needs --out (the values go to the file, the JSON report to stdout)")
			}
			if err := g.outputs(cmd, []string{"out"}, []string{"data", "model"}, nil); err != nil {
				return err
			}
			cpuOnly := func(d device.Device) error {
				if d.Kind == device.Native {
					return nil
				}
				return errors.New("`forest explain` runs on the CPU only (use --device cpu)")
			}
			return g.onEngine(cmd, "forest explain", cpuOnly, func(*device.Engine) error {
				ex, err := forest.ExplainFile(modelFile, dataFile, g.maxInput())
				if err != nil {
					return flagError(fmt.Errorf("forest explain: %w", err), fieldFlags(cmd.Flags()))
				}
				ex.Out = outFile
				return g.writeTable(cmd, outFile, ex, ex, "forest: SHAP values written", "rows", ex.Rows)
			})
		},
	}
	cmd.Flags().StringVar(&modelFile, "model", "", "model file written by forest train --save")
	cmd.Flags().StringVar(&dataFile, "data", "", "data file (CSV, Parquet or Arrow IPC) with the model's feature columns")
	cmd.Flags().StringVar(&outFile, "out", "", "write the values to this CSV file, atomically (default: stdout)")
	return cmd
}

// runForestDistributed is forest train --distributed: every process of the
// launch trains (forestdist.Train) on the native learner; rank 0 saves the
// model and prints the report.
func runForestDistributed(cmd *cobra.Command, g *globals, fl *forestTrainFlags) error {
	if fl.distributed != forestdist.ModeTrees && fl.distributed != forestdist.ModeData {
		return fmt.Errorf("forest train: --distributed %q: want trees or data", fl.distributed)
	}
	if dev := cmd.Flags().Lookup("device"); dev != nil && dev.Changed && dev.Value.String() != "cpu" {
		return fmt.Errorf("forest train: --distributed runs the native learner on each process's CPU; --device %s is refused (use --device cpu or leave it out)", dev.Value.String())
	}
	comm, err := dist.World()
	if err != nil {
		return fmt.Errorf("forest train --distributed: %w", err)
	}
	fl.data.MaxBytes = g.maxInput()
	res, err := forestdist.Train(cmd.Context(), comm, fl.distributed, fl.data, fl.opt, fl.cfg)
	if cerr := leaveRanks(comm, err); cerr != nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("forest train: %w", err)
	}
	if d := res.Distributed; d.Rank != 0 {
		// Rank 0 reports; the others log what they sent, on stderr.
		slog.Info("forest train: rank finished", "rank", d.Rank, "ranks", d.Ranks, "mode", d.Mode, "bytes_sent", d.BytesSent, "comm_seconds", d.CommSeconds)
		return nil
	}
	if fl.save != "" {
		if err := res.Forest.SaveFile(fl.save); err != nil {
			return err
		}
		res.Model = fl.save
	}
	return g.print(cmd, res)
}
