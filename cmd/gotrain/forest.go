package main

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/gomlx/gomlx/backends"
	"github.com/spf13/cobra"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/forest"
	"github.com/gotrain/gotrain/forest/forestgraph"
)

func newForestCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "forest", Short: "Train random forests and predict with them"}
	cmd.AddCommand(newForestTrainCmd(g), newForestPredictCmd(g))
	return cmd
}

type forestTrainFlags struct {
	dataset, dataDir, trainFile, testFile, target, task, criterion, maxFeatures, save string
	trees, maxDepth, minLeaf, minSplit, bins, threads, repeats, permRepeats           int
	seed                                                                              uint64
	maxSamples, holdout                                                               float64
	noBootstrap, noOOB, importance                                                    bool
}

// forestReport is the JSON printed by `forest train --json`.
type forestReport struct {
	Device        string             `json:"device"`
	Engine        string             `json:"engine"`
	Task          string             `json:"task"`
	Data          string             `json:"data"`
	TrainRows     int                `json:"train_rows"`
	TestRows      int                `json:"test_rows"`
	Features      int                `json:"features"`
	Trees         int                `json:"trees"`
	Seed          uint64             `json:"seed"`
	Threads       int                `json:"threads"`
	FitSeconds    float64            `json:"fit_seconds"`
	FitRuns       []float64          `json:"fit_seconds_runs,omitempty"`
	PredictSecs   *float64           `json:"predict_seconds,omitempty"`
	PredictRuns   []float64          `json:"predict_seconds_runs,omitempty"`
	TestMSE       *float64           `json:"test_mse,omitempty"`
	TestR2        *float64           `json:"test_r2,omitempty"`
	TestAccuracy  *float64           `json:"test_accuracy,omitempty"`
	OOBScore      *float64           `json:"oob_score,omitempty"`
	Nodes         int                `json:"nodes"`
	MaxDepth      int                `json:"max_depth_reached"`
	Importances   map[string]float64 `json:"impurity_importance,omitempty"`
	PermImport    map[string]float64 `json:"permutation_importance,omitempty"`
	PermImportSD  map[string]float64 `json:"permutation_importance_std,omitempty"`
	Model         string             `json:"model,omitempty"`
	Options       forest.Options     `json:"options"`
	FallbackNotes string             `json:"fallback,omitempty"`
	// The graph learner (engine "graph"): compile time (fit_seconds
	// excludes it), the largest histogram and scatter buffers of one graph
	// execution, and the trees grown together.
	CompileSecs      *float64 `json:"compile_seconds,omitempty"`
	PeakHistBytes    int64    `json:"peak_histogram_bytes,omitempty"`
	PeakScatterBytes int64    `json:"peak_scatter_bytes,omitempty"`
	TreesPerBatch    int      `json:"trees_per_batch,omitempty"`
}

func newForestTrainCmd(g *globals) *cobra.Command {
	var fl forestTrainFlags
	cmd := &cobra.Command{
		Use:   "train (--dataset diabetes|digits | --train FILE.csv)",
		Short: "Train a random forest on an embedded data set or a CSV file",
		Long: `forest train fits a random forest (regression or classification) with
scikit-learn's option names and defaults, reports hold-out metrics and the
out-of-bag score, and optionally saves the model.

Without --test, an embedded data set is split 80/20 with a fixed seed
(--holdout changes the fraction); a --train file is used whole unless
--holdout is given. CSV files need a header row; the target is --target
(default: the last column).

--device cpu (and auto without an accelerator) runs the native learner; go
(simplego), gpu, tpu and xla:... grow the trees as GoMLX graphs on that
device (package forest/forestgraph): the same trees node for node (the
entropy criterion only on go, whose Log is Go's math.Log). The JSON report names the device and
engine, and gives the graphs' compile time apart from fit_seconds and the
peak histogram memory.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runForestTrain(cmd, g, &fl) },
	}
	f := cmd.Flags()
	f.StringVar(&fl.dataset, "dataset", "", "data set: diabetes (regression) or digits (classification), both embedded, or mnist (IDX files from --data-dir)")
	f.StringVar(&fl.dataDir, "data-dir", "../shared/data/mnist", "folder with the MNIST IDX files, for --dataset mnist")
	f.StringVar(&fl.trainFile, "train", "", "training CSV file (header row required)")
	f.StringVar(&fl.testFile, "test", "", "test CSV file with the same columns")
	f.StringVar(&fl.target, "target", "", "target column name (default: the last column)")
	f.StringVar(&fl.task, "task", "", "regression or classification (default: from --dataset, else regression)")
	f.StringVar(&fl.criterion, "criterion", "", "squared_error (regression), gini or entropy (classification)")
	f.IntVar(&fl.trees, "trees", 100, "number of trees")
	f.IntVar(&fl.maxDepth, "max-depth", 0, "maximum tree depth (0 = unlimited)")
	f.StringVar(&fl.maxFeatures, "max-features", "", "features per split: sqrt, log2, all, a fraction or an integer (default: all for regression, sqrt for classification)")
	f.IntVar(&fl.minLeaf, "min-samples-leaf", 1, "fewest rows in a leaf")
	f.IntVar(&fl.minSplit, "min-samples-split", 2, "fewest rows to split a node")
	f.IntVar(&fl.bins, "bins", 256, "most bins per feature, the missing-value bin included (2..256)")
	f.Uint64Var(&fl.seed, "seed", 0, "random seed")
	f.IntVar(&fl.threads, "threads", 0, "worker goroutines (0 = all CPUs); the model does not depend on it")
	f.Float64Var(&fl.maxSamples, "max-samples", 0, "bootstrap draws per tree: a fraction of rows if <= 1, else a count (0 = all rows)")
	f.BoolVar(&fl.noBootstrap, "no-bootstrap", false, "grow every tree on all rows")
	f.BoolVar(&fl.noOOB, "no-oob", false, "skip the out-of-bag score")
	f.Float64Var(&fl.holdout, "holdout", -1, "fraction held out for testing when --test is not given (default 0.2 for --dataset, 0 for --train)")
	f.BoolVar(&fl.importance, "importance", false, "report impurity feature importances")
	f.IntVar(&fl.permRepeats, "permutation-importance", 0, "also report permutation importances on the test set, averaged over this many shuffles per feature (0: off)")
	f.StringVar(&fl.save, "save", "", "write the model to this file (atomically)")
	f.IntVar(&fl.repeats, "repeats", 1, "fit (and predict) this many times and report the median times (benchmarking)")
	return cmd
}

// loadTrainTest returns the training and test sets the flags describe.
func loadTrainTest(fl *forestTrainFlags, task forest.Task) (train, test *data.Dataset, name string, err error) {
	if (fl.dataset == "") == (fl.trainFile == "") {
		return nil, nil, "", errors.New("forest train: give exactly one of --dataset and --train")
	}
	holdout := fl.holdout
	if fl.dataset == "mnist" {
		if fl.testFile != "" {
			return nil, nil, "", errors.New("forest train: --dataset mnist brings its own test set; drop --test")
		}
		train, test, err = data.LoadMNIST(fl.dataDir)
		if err != nil {
			return nil, nil, "", fmt.Errorf("forest train: %w (put the four MNIST IDX files, gzipped or not, in a folder and pass it with --data-dir)", err)
		}
		return train, test, "mnist (" + fl.dataDir + ")", nil
	}
	if fl.dataset != "" {
		train, err = data.Embedded(fl.dataset)
		name = fl.dataset
		if holdout < 0 {
			holdout = 0.2
		}
	} else {
		train, err = data.LoadCSV(fl.trainFile, data.CSVOptions{Target: fl.target, Classification: task == forest.Classification})
		name = fl.trainFile
		if holdout < 0 {
			holdout = 0
		}
	}
	if err != nil {
		return nil, nil, "", err
	}
	if fl.testFile != "" {
		test, err = data.LoadCSV(fl.testFile, data.CSVOptions{Target: train.TargetName, Classification: task == forest.Classification})
		if err != nil {
			return nil, nil, "", err
		}
		if err := sameColumns(train, test, fl.testFile); err != nil {
			return nil, nil, "", err
		}
		if task == forest.Classification {
			if err := alignClasses(train, test); err != nil {
				return nil, nil, "", fmt.Errorf("forest train: %s: %w", fl.testFile, err)
			}
		}
		return train, test, name, nil
	}
	if holdout > 0 {
		if holdout >= 1 {
			return nil, nil, "", fmt.Errorf("forest train: --holdout %v must be below 1", holdout)
		}
		tr, te := data.TrainTestSplit(train.Rows, holdout, 42)
		return train.Subset(tr), train.Subset(te), name, nil
	}
	return train, nil, name, nil
}

func sameColumns(train, test *data.Dataset, file string) error {
	if len(train.FeatureNames) != len(test.FeatureNames) {
		return fmt.Errorf("forest train: %s has %d feature columns, the training data %d", file, len(test.FeatureNames), len(train.FeatureNames))
	}
	for j, n := range train.FeatureNames {
		if test.FeatureNames[j] != n {
			return fmt.Errorf("forest train: %s column %d is %q, the training data has %q", file, j+1, test.FeatureNames[j], n)
		}
	}
	return nil
}

// alignClasses re-indexes test labels onto the training classes.
func alignClasses(train, test *data.Dataset) error {
	if train.Classes == nil && test.Classes == nil {
		return nil
	}
	if train.Classes == nil || test.Classes == nil {
		return errors.New("class labels are numeric in one file and text in the other")
	}
	idx := map[string]int{}
	for i, c := range train.Classes {
		idx[c] = i
	}
	for i, y := range test.Y {
		c := test.Classes[int(y)]
		k, ok := idx[c]
		if !ok {
			return fmt.Errorf("row %d: class %q does not occur in the training data", i+1, c)
		}
		test.Y[i] = float64(k)
	}
	test.Classes = train.Classes
	return nil
}

func runForestTrain(cmd *cobra.Command, g *globals, fl *forestTrainFlags) error {
	eng, err := forestEngine(cmd, g, "forest train")
	if err != nil {
		return err
	}
	defer eng.Close()
	task := forest.Task(fl.task)
	if task == "" {
		task = forest.Regression
		if fl.dataset == "digits" || fl.dataset == "mnist" {
			task = forest.Classification
		}
	}
	train, test, name, err := loadTrainTest(fl, task)
	if err != nil {
		return err
	}
	opt := forest.Options{
		Task: task, Criterion: forest.Criterion(fl.criterion), Trees: fl.trees, MaxDepth: fl.maxDepth,
		MinSamplesSplit: fl.minSplit, MinSamplesLeaf: fl.minLeaf, MaxFeatures: fl.maxFeatures,
		NoBootstrap: fl.noBootstrap, MaxSamples: fl.maxSamples, Seed: fl.seed, Bins: fl.bins,
		Threads: fl.threads, OOB: !fl.noBootstrap && !fl.noOOB,
	}
	if fl.repeats < 1 {
		return fmt.Errorf("forest train: --repeats %d must be >= 1", fl.repeats)
	}
	if fl.trees < 1 {
		return fmt.Errorf("forest train: --trees %d must be >= 1", fl.trees)
	}
	engine := "native"
	var backend backends.Backend
	if !eng.Native() {
		engine = "graph"
		if backend, err = eng.Backend(); err != nil {
			return fmt.Errorf("forest train: %w", err)
		}
	}
	slog.Info("forest: training", "data", name, "rows", train.Rows, "features", train.Cols, "task", task, "trees", fl.trees, "device", eng.Name(), "engine", engine)
	var f *forest.Forest
	var runs, compiles []float64
	var grow *forestgraph.GrowReport
	for range fl.repeats {
		start := time.Now()
		if backend != nil {
			// The graph learner: the same trees as the native one, grown as
			// GoMLX graphs on the device; compile time is reported apart.
			f, grow, err = forestgraph.Fit(backend, train, opt, forestgraph.GrowOptions{DeviceNum: eng.DeviceNum()})
			if err != nil {
				return fmt.Errorf("forest train on %s: %w", eng.Name(), err)
			}
			runs = append(runs, grow.RunSeconds)
			compiles = append(compiles, grow.CompileSeconds)
			continue
		}
		f, err = forest.Fit(train, opt)
		if err != nil {
			return err
		}
		runs = append(runs, time.Since(start).Seconds())
	}
	rep := forestReport{
		Device: eng.Name(), Engine: engine, Task: string(task), Data: name, TrainRows: train.Rows,
		Features: train.Cols, Trees: len(f.Trees), Seed: fl.seed, Threads: f.Options.Threads,
		FitSeconds: device.Median(runs), Options: f.Options, FallbackNotes: eng.Warning(),
	}
	if grow != nil {
		rep.CompileSecs = ptr(device.Median(compiles))
		rep.PeakHistBytes = grow.PeakHistogramBytes
		rep.PeakScatterBytes = grow.PeakScatterBytes
		rep.TreesPerBatch = grow.TreesPerBatch
	}
	if len(runs) > 1 {
		rep.FitRuns = runs
	}
	for i := range f.Trees {
		rep.Nodes += f.Trees[i].NumNodes()
		rep.MaxDepth = max(rep.MaxDepth, f.Trees[i].Depth())
	}
	if !math.IsNaN(f.OOBScore) {
		rep.OOBScore = ptr(f.OOBScore)
	}
	if test != nil {
		rep.TestRows = test.Rows
		var pred []float64
		var pruns []float64
		for range fl.repeats {
			start := time.Now()
			pred, err = f.Predict(test.X, test.Rows)
			if err != nil {
				return err
			}
			pruns = append(pruns, time.Since(start).Seconds())
		}
		rep.PredictSecs = ptr(device.Median(pruns))
		if len(pruns) > 1 {
			rep.PredictRuns = pruns
		}
		if task == forest.Regression {
			rep.TestMSE = ptr(forest.MeanSquaredError(pred, test.Y))
			rep.TestR2 = ptr(forest.R2(pred, test.Y))
		} else {
			ok := 0
			for i := range pred {
				if pred[i] == test.Y[i] {
					ok++
				}
			}
			rep.TestAccuracy = ptr(float64(ok) / float64(test.Rows))
		}
	}
	if fl.importance {
		rep.Importances = map[string]float64{}
		for j, v := range f.ImpurityImportance() {
			rep.Importances[featureName(f, j)] = v
		}
	}
	if fl.permRepeats > 0 {
		if test == nil {
			return errors.New("forest train: --permutation-importance needs a test set (--test, or --holdout)")
		}
		mean, sd, err := f.PermutationImportance(test.X, test.Rows, test.Y, fl.permRepeats, fl.seed)
		if err != nil {
			return err
		}
		rep.PermImport, rep.PermImportSD = map[string]float64{}, map[string]float64{}
		for j := range mean {
			rep.PermImport[featureName(f, j)], rep.PermImportSD[featureName(f, j)] = mean[j], sd[j]
		}
	}
	if fl.save != "" {
		if err := f.SaveFile(fl.save); err != nil {
			return err
		}
		rep.Model = fl.save
	}
	if g.json {
		return printJSON(cmd.OutOrStdout(), rep)
	}
	printForestReport(cmd.OutOrStdout(), rep, f)
	return nil
}

func featureName(f *forest.Forest, j int) string {
	if j < len(f.Features) {
		return f.Features[j]
	}
	return "f" + strconv.Itoa(j)
}

func ptr(v float64) *float64 { return &v }

func printForestReport(w io.Writer, rep forestReport, f *forest.Forest) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "data\t%s (%d train rows, %d test rows, %d features)\n", rep.Data, rep.TrainRows, rep.TestRows, rep.Features)
	fmt.Fprintf(tw, "device\t%s (%s)\n", rep.Device, rep.Engine)
	fmt.Fprintf(tw, "forest\t%s, %d trees, %d nodes, deepest leaf %d\n", rep.Task, rep.Trees, rep.Nodes, rep.MaxDepth)
	if rep.CompileSecs != nil {
		fmt.Fprintf(tw, "fit\t%.3f s + %.3f s compiling graphs (%d trees per batch, peak histogram %d bytes)\n", rep.FitSeconds, *rep.CompileSecs, rep.TreesPerBatch, rep.PeakHistBytes)
	} else {
		fmt.Fprintf(tw, "fit\t%.3f s (%d threads)\n", rep.FitSeconds, rep.Threads)
	}
	if rep.PredictSecs != nil {
		fmt.Fprintf(tw, "predict\t%.4f s for %d rows\n", *rep.PredictSecs, rep.TestRows)
	}
	if rep.TestMSE != nil {
		fmt.Fprintf(tw, "test MSE\t%.2f\ntest R²\t%.4f\n", *rep.TestMSE, *rep.TestR2)
	}
	if rep.TestAccuracy != nil {
		fmt.Fprintf(tw, "test accuracy\t%.4f\n", *rep.TestAccuracy)
	}
	if rep.OOBScore != nil {
		what := "R²"
		if rep.Task == string(forest.Classification) {
			what = "accuracy"
		}
		fmt.Fprintf(tw, "OOB %s\t%.4f (%d rows)\n", what, *rep.OOBScore, f.OOBRows)
	}
	for j := 0; j < f.NumFeatures && rep.Importances != nil; j++ {
		fmt.Fprintf(tw, "importance %s\t%.4f\n", featureName(f, j), rep.Importances[featureName(f, j)])
	}
	for j := 0; j < f.NumFeatures && rep.PermImport != nil; j++ {
		n := featureName(f, j)
		fmt.Fprintf(tw, "permutation importance %s\t%.4f ± %.4f\n", n, rep.PermImport[n], rep.PermImportSD[n])
	}
	if rep.Model != "" {
		fmt.Fprintf(tw, "model\t%s\n", rep.Model)
	}
	_ = tw.Flush()
}

func newForestPredictCmd(g *globals) *cobra.Command {
	var modelFile, dataFile, outFile string
	var proba bool
	var batchRows int
	cmd := &cobra.Command{
		Use:   "predict --model FILE --data FILE.csv",
		Short: "Predict with a saved forest",
		Long: `forest predict reads a model saved by forest train --save and a CSV file with a
header row holding (at least) the model's feature columns, by name; other
columns are ignored. It writes a CSV with one "prediction" column, or with
--proba one column per class.

--device cpu (and auto without an accelerator) runs the native predictor;
go (simplego), gpu, tpu and xla:... run the inference graph on that device
(package forest/forestgraph), with the same predictions bit for bit. With
--json and --out, a JSON report on stdout names the device used and gives
the compile time apart from the prediction time.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if modelFile == "" || dataFile == "" {
				return errors.New("forest predict: --model and --data are required")
			}
			if g.json && outFile == "" {
				return errors.New("forest predict: --json needs --out (the predictions go to the file, the JSON report to stdout)")
			}
			if batchRows < 1 {
				return fmt.Errorf("forest predict: --batch-rows %d must be >= 1", batchRows)
			}
			eng, err := forestEngine(cmd, g, "forest predict")
			if err != nil {
				return err
			}
			defer eng.Close()
			f, err := forest.LoadFile(modelFile)
			if err != nil {
				return err
			}
			if proba && f.Options.Task != forest.Classification {
				return fmt.Errorf("forest predict: --proba needs a classification model; %s is %s", modelFile, f.Options.Task)
			}
			in, err := data.LoadCSV(dataFile, data.CSVOptions{NoTarget: true})
			if err != nil {
				return err
			}
			x, err := selectFeatures(in, f, dataFile)
			if err != nil {
				return err
			}
			rep := forestPredictReport{Device: eng.Name(), Engine: "native", Model: modelFile, Data: dataFile, Out: outFile, Rows: in.Rows, Trees: len(f.Trees)}
			var pred forestPredictor = f
			if !eng.Native() {
				start := time.Now()
				backend, err := eng.Backend()
				if err != nil {
					return fmt.Errorf("forest predict: %w", err)
				}
				gp, err := forestgraph.NewPredictorWithOptions(backend, f, min(batchRows, max(1, in.Rows)), forestgraph.Options{DeviceNum: eng.DeviceNum()})
				if err != nil {
					return fmt.Errorf("forest predict: %w", err)
				}
				defer gp.Close()
				if err := gp.Compile(); err != nil {
					return fmt.Errorf("forest predict: %w", err)
				}
				rep.CompileSecs = ptr(time.Since(start).Seconds())
				rep.Engine, rep.Strategy, rep.BatchRows, rep.Depth = "graph", string(gp.Strategy()), gp.BatchRows(), gp.Depth()
				rep.TableBytes, rep.BatchBytes = gp.TableBytes(), gp.BatchBytes()
				pred = gp
			}
			slog.Info("forest: predicting", "rows", in.Rows, "device", eng.Name(), "engine", rep.Engine)
			start := time.Now()
			v, err := predictRows(pred, x, in.Rows, proba)
			if err != nil {
				return err
			}
			rep.PredictSecs = time.Since(start).Seconds()
			out := cmd.OutOrStdout()
			if outFile != "" {
				fh, err := os.CreateTemp(dirOf(outFile), ".gotrain-predict-*")
				if err != nil {
					return fmt.Errorf("forest predict: %w", err)
				}
				defer os.Remove(fh.Name())
				defer fh.Close()
				if err := writePredictions(fh, f, v, in.Rows, proba); err != nil {
					return err
				}
				if err := fh.Close(); err != nil {
					return fmt.Errorf("forest predict: writing %s: %w", outFile, err)
				}
				if err := os.Rename(fh.Name(), outFile); err != nil {
					return fmt.Errorf("forest predict: %w", err)
				}
				slog.Info("forest: predictions written", "file", outFile, "rows", in.Rows)
				if g.json {
					return printJSON(out, rep)
				}
				return nil
			}
			return writePredictions(out, f, v, in.Rows, proba)
		},
	}
	cmd.Flags().StringVar(&modelFile, "model", "", "model file written by forest train --save")
	cmd.Flags().StringVar(&dataFile, "data", "", "CSV file with the model's feature columns")
	cmd.Flags().StringVar(&outFile, "out", "", "write predictions to this CSV file (default: stdout)")
	cmd.Flags().BoolVar(&proba, "proba", false, "write class probabilities, one column per class")
	cmd.Flags().IntVar(&batchRows, "batch-rows", 8192, "rows per graph execution on graph devices (bounds device memory)")
	return cmd
}

func dirOf(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' || path[i] == os.PathSeparator {
			return path[:i+1]
		}
	}
	return "."
}

// selectFeatures returns the model's feature columns of in, by name (or all
// columns in order when the model has no names).
func selectFeatures(in *data.Dataset, f *forest.Forest, file string) ([]float64, error) {
	if len(f.Features) == 0 {
		if in.Cols != f.NumFeatures {
			return nil, fmt.Errorf("forest predict: %s has %d columns, the model wants %d", file, in.Cols, f.NumFeatures)
		}
		return in.X, nil
	}
	col := map[string]int{}
	for j, n := range in.FeatureNames {
		col[n] = j
	}
	idx := make([]int, len(f.Features))
	for k, n := range f.Features {
		j, ok := col[n]
		if !ok {
			return nil, fmt.Errorf("forest predict: %s: column %q, which the model needs, is missing", file, n)
		}
		idx[k] = j
	}
	x := make([]float64, in.Rows*len(idx))
	for i := 0; i < in.Rows; i++ {
		for k, j := range idx {
			x[i*len(idx)+k] = in.X[i*in.Cols+j]
		}
	}
	return x, nil
}

// forestPredictor is a forest predictor: the native one (*forest.Forest) or
// the graph one (*forestgraph.Predictor), which give the same values.
type forestPredictor interface {
	PredictValues(x []float64, rows int) ([]float64, error)
	Predict(x []float64, rows int) ([]float64, error)
}

// predictRows returns the class probabilities (proba) or the predictions of
// the rows of x.
func predictRows(p forestPredictor, x []float64, rows int, proba bool) ([]float64, error) {
	if proba {
		return p.PredictValues(x, rows)
	}
	return p.Predict(x, rows)
}

// writePredictions writes the predictions v as one "prediction" column (the
// class label for classification) or, with proba, the class probabilities v
// as one column per class.
func writePredictions(w io.Writer, f *forest.Forest, v []float64, rows int, proba bool) error {
	cw := csv.NewWriter(w)
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	if proba {
		d := f.Outputs()
		header := make([]string, d)
		for q, c := range f.Classes {
			header[q] = "proba_" + c
		}
		_ = cw.Write(header)
		rec := make([]string, d)
		for i := 0; i < rows; i++ {
			for q := range rec {
				rec[q] = num(v[i*d+q])
			}
			_ = cw.Write(rec)
		}
	} else {
		_ = cw.Write([]string{"prediction"})
		for _, p := range v {
			s := num(p)
			if f.Options.Task == forest.Classification {
				s = f.Classes[int(p)]
			}
			_ = cw.Write([]string{s})
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("forest predict: writing predictions: %w", err)
	}
	return nil
}

// forestPredictReport is the JSON printed by `forest predict --json --out FILE`.
type forestPredictReport struct {
	Device      string   `json:"device"`
	Engine      string   `json:"engine"`
	Strategy    string   `json:"strategy,omitempty"`
	Model       string   `json:"model"`
	Data        string   `json:"data"`
	Out         string   `json:"out"`
	Rows        int      `json:"rows"`
	Trees       int      `json:"trees"`
	Depth       int      `json:"depth,omitempty"`
	BatchRows   int      `json:"batch_rows,omitempty"`
	TableBytes  int64    `json:"table_bytes,omitempty"`
	BatchBytes  int64    `json:"batch_bytes,omitempty"`
	CompileSecs *float64 `json:"compile_seconds,omitempty"`
	PredictSecs float64  `json:"predict_seconds"`
}

// forestEngine selects the engine for `forest train` and `forest predict`
// (what names the command in errors): cpu runs the native learner and
// predictor; go (simplego), gpu, tpu and xla:... grow the trees / run the
// inference graph on that device; auto uses an accelerator when there is
// one and the native code otherwise (on a CPU the native code is the
// faster). --fallback applies as for every command.
func forestEngine(cmd *cobra.Command, g *globals, what string) (*device.Engine, error) {
	e, err := g.engine(cmd, device.Request{PreferNative: true})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return e, nil
}
