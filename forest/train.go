package forest

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"time"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/internal/stats"
)

// A Learner grows forests. Native is forest.Fit; package forestgraph's
// Learner grows the same trees as GoMLX graphs on a device.
type Learner interface {
	// Fit fits a forest on d with opt and says how long it took.
	Fit(d *data.Dataset, opt Options) (*Forest, FitStats, error)
}

// FitStats is what a Learner reports about one fit.
type FitStats struct {
	// Seconds is the fit's time, graph compilation excluded.
	Seconds float64
	// Graph describes a graph learner's fit; nil for Native.
	Graph *GraphStats
	// Dist describes a distributed fit (TreeParallel); nil otherwise.
	Dist *DistStats
}

// GraphStats describes a fit by a graph learner (package forestgraph).
// Its JSON form is part of TrainResult's.
type GraphStats struct {
	// CompileSeconds is the time spent compiling graphs (in TrainResult,
	// the median over the repeats).
	CompileSeconds float64 `json:"compile_seconds"`
	// TreesPerBatch is the number of trees grown together.
	TreesPerBatch int `json:"trees_per_batch,omitempty"`
	// PeakHistogramBytes is the largest histogram of one graph execution.
	PeakHistogramBytes int64 `json:"peak_histogram_bytes,omitempty"`
	// PeakScatterBytes is the largest scatter buffer of one graph execution.
	PeakScatterBytes int64 `json:"peak_scatter_bytes,omitempty"`
}

// Native is the native learner: Fit, timed by the wall clock.
var Native Learner = nativeLearner{}

type nativeLearner struct{}

func (nativeLearner) Fit(d *data.Dataset, opt Options) (*Forest, FitStats, error) {
	start := time.Now()
	f, err := Fit(d, opt)
	return f, FitStats{Seconds: time.Since(start).Seconds()}, err
}

// TrainConfig says what Train does besides fitting: the learner, repeated
// runs for timing, and feature importances.
type TrainConfig struct {
	// Learner grows the forest; nil means Native.
	Learner Learner
	// Repeats fits (and predicts the test set) this many times and
	// reports the median times; 0 means once. The forests are identical.
	Repeats int
	// Importance adds the impurity importances (Forest.ImpurityImportance).
	Importance bool
	// PermutationRepeats, when positive, adds permutation importances on
	// the test set (Forest.PermutationImportance with this many shuffles
	// per feature and the options' Seed); it needs a test set.
	PermutationRepeats int
}

// TrainResult is what Train returns: the forest, its timings and scores.
// Its JSON form is the report of `gotrain forest train --json`, and
// WriteText writes its text. Train leaves Device, Engine, Data, Model and
// Fallback empty: the caller says where the forest was grown, on what and
// where it was saved.
type TrainResult struct {
	// Device names the device, Engine the learner ("native" or "graph")
	// and Data the training data.
	Device string `json:"device"`
	Engine string `json:"engine"`
	Data   string `json:"data"`
	// Forest is the fitted forest (of the last repeat).
	Forest *Forest `json:"-"`
	// Task is the forest's task.
	Task Task `json:"task"`
	// TrainRows and TestRows count the rows (TestRows is 0 without a test set).
	TrainRows int `json:"train_rows"`
	TestRows  int `json:"test_rows"`
	// Features is the number of features.
	Features int `json:"features"`
	// Trees is the number of trees.
	Trees int `json:"trees"`
	// Seed is the options' seed.
	Seed uint64 `json:"seed"`
	// Threads is the number of goroutines the native learner used.
	Threads int `json:"threads"`
	// FitSeconds is the median fit time (graph compilation excluded).
	FitSeconds float64 `json:"fit_seconds"`
	// FitRuns are the fit times of every repeat (only with Repeats > 1).
	FitRuns []float64 `json:"fit_seconds_runs,omitempty"`
	// PredictSeconds is the median time to predict the test set (nil
	// without one): binning its values and walking the trees, not reading
	// it. The first prediction also compiles the predictor, in its time.
	PredictSeconds *float64 `json:"predict_seconds,omitempty"`
	// PredictRuns are the prediction times of every repeat (only with Repeats > 1).
	PredictRuns []float64 `json:"predict_seconds_runs,omitempty"`
	// TestMSE and TestR2 are the regression metrics on the test set.
	TestMSE *float64 `json:"test_mse,omitempty"`
	TestR2  *float64 `json:"test_r2,omitempty"`
	// TestAccuracy is the classification accuracy on the test set.
	TestAccuracy *float64 `json:"test_accuracy,omitempty"`
	// Categorical names the categorical features, when any.
	Categorical []string `json:"categorical,omitempty"`
	// OOBScore is the out-of-bag R² or accuracy, when computed.
	OOBScore *float64 `json:"oob_score,omitempty"`
	// Nodes is the number of nodes of all trees.
	Nodes int `json:"nodes"`
	// MaxDepth is the depth of the deepest leaf.
	MaxDepth int `json:"max_depth_reached"`
	// Importances are the impurity importances by feature name
	// (Forest.FeatureName), with TrainConfig.Importance.
	Importances map[string]float64 `json:"impurity_importance,omitempty"`
	// PermImport and PermImportSD are the permutation importances (mean
	// and standard deviation of the score drop) by feature name, with
	// TrainConfig.PermutationRepeats.
	PermImport   map[string]float64 `json:"permutation_importance,omitempty"`
	PermImportSD map[string]float64 `json:"permutation_importance_std,omitempty"`
	// Options are the forest's options, defaults filled in.
	Options Options `json:"options"`
	// GraphStats is set by graph learners.
	*GraphStats
	// Distributed describes a distributed fit (this rank's view).
	Distributed *DistStats `json:"distributed,omitempty"`
	// Model is the file the forest was saved to, and Fallback the warning
	// of a device that replaced the one asked for.
	Model    string `json:"model,omitempty"`
	Fallback string `json:"fallback,omitempty"`
}

// TrainOptions returns opt for training on the split with cfg: its Task
// set to the split's, checked with Options.Validate (so an explicit 0 is
// an error: start from DefaultOptions); and it checks cfg against the
// split: permutation importances (cfg.PermutationRepeats) need a test set.
// Errors name the options and DataSpec fields at fault.
func (sp *Split) TrainOptions(opt Options, cfg TrainConfig) (Options, error) {
	if sp == nil || sp.Train == nil {
		return opt, errors.New("forest: train options: no training set")
	}
	if cfg.PermutationRepeats > 0 && sp.Test == nil {
		return opt, errors.New("forest: PermutationRepeats needs a test set (DataSpec.Test, or DataSpec.Holdout)")
	}
	opt.Task = sp.Task
	if err := opt.Validate(); err != nil {
		return opt, err
	}
	return opt, nil
}

// Train fits a forest on train with opt as `gotrain forest train` does:
// cfg.Repeats times with cfg.Learner, then predicts test (when not nil) as
// many times and scores it (MSE and R² for regression, accuracy for
// classification), and adds the importances cfg asks for.
func Train(train, test *data.Dataset, opt Options, cfg TrainConfig) (*TrainResult, error) {
	switch {
	case train == nil:
		return nil, errors.New("forest: train: nil training set")
	case cfg.Repeats < 0:
		return nil, fmt.Errorf("forest: train: Repeats %d: want >= 0 (0: once)", cfg.Repeats)
	case cfg.PermutationRepeats < 0:
		return nil, fmt.Errorf("forest: train: PermutationRepeats %d: want >= 0 (0: no permutation importances)", cfg.PermutationRepeats)
	case cfg.PermutationRepeats > 0 && test == nil:
		return nil, errors.New("forest: train: permutation importance needs a test set")
	}
	learner := cfg.Learner
	if learner == nil {
		learner = Native
	}
	repeats := max(1, cfg.Repeats)
	var f *Forest
	var st FitStats
	var runs, compiles []float64
	trainRows := train.Rows
	fit := func(d *data.Dataset) error {
		var err error
		if f, st, err = learner.Fit(d, opt); err != nil {
			return err
		}
		runs = append(runs, st.Seconds)
		if st.Graph != nil {
			compiles = append(compiles, st.Graph.CompileSeconds)
		}
		return nil
	}
	for range repeats - 1 {
		if err := fit(train); err != nil {
			return nil, err
		}
	}
	// The last use of train: nothing here holds the training set through
	// the last fit (a loop would), so when the caller does not either,
	// the native learner lets it go once it is binned (MNIST's pixels:
	// 47 MB; TestTrainLetsTheDataGo).
	if err := fit(train); err != nil {
		return nil, err
	}
	// The fit's scratch (the codes: 47 MB for MNIST) is garbage now;
	// collecting it before the predictor and the test set's codes are
	// made keeps the process's peak at the fit's. The trees hold no
	// pointers, so the collection marks little (about a millisecond).
	runtime.GC()
	r := &TrainResult{
		Forest: f, Task: f.Options.Task, TrainRows: trainRows, Features: f.NumFeatures, Trees: len(f.Trees),
		Seed: f.Options.Seed, Threads: f.Options.Threads, FitSeconds: stats.Median(runs), Options: f.Options,
	}
	if st.Graph != nil {
		g := *st.Graph
		g.CompileSeconds = stats.Median(compiles)
		r.GraphStats = &g
	}
	r.Distributed = st.Dist
	if repeats > 1 {
		r.FitRuns = runs
	}
	for i := range f.Trees {
		r.Nodes += f.Trees[i].NumNodes()
		r.MaxDepth = max(r.MaxDepth, f.Trees[i].Depth())
	}
	if !math.IsNaN(f.OOBScore) {
		r.OOBScore = ptr(f.OOBScore)
	}
	for j := range f.NumFeatures {
		if f.Binner.IsCategorical(j) {
			r.Categorical = append(r.Categorical, f.FeatureName(j))
		}
	}
	if test != nil && test.X == nil && test.Source != nil && (f.Binner.HasCategorical() || test.HasCategories() || cfg.PermutationRepeats > 0) {
		// Read a column at a time (data.OpenFile, data.OpenMNIST), with
		// categories to map or columns to shuffle: read it whole. A copy,
		// the caller's data set unchanged. (Otherwise evaluate bins it a
		// column at a time.)
		m := *test
		if err := m.Materialize(); err != nil {
			return nil, fmt.Errorf("forest: reading the test set: %w", err)
		}
		test = &m
	}
	if test != nil && (f.Binner.HasCategorical() || test.HasCategories()) {
		// The test set's categories, onto the forest's dictionaries.
		x, err := f.FeatureMatrix(test)
		if err != nil {
			return nil, err
		}
		aligned := *test
		aligned.X, aligned.Cols, aligned.Categories, aligned.FeatureNames = x, f.NumFeatures, nil, f.Features
		test = &aligned
	}
	if test != nil {
		if err := r.evaluate(test, repeats); err != nil {
			return nil, err
		}
	}
	if cfg.Importance {
		r.Importances = map[string]float64{}
		for j, v := range f.ImpurityImportance() {
			r.Importances[f.FeatureName(j)] = v
		}
	}
	if cfg.PermutationRepeats > 0 {
		mean, sd, err := f.PermutationImportance(test.X, test.Rows, test.Y, cfg.PermutationRepeats, f.Options.Seed)
		if err != nil {
			return nil, err
		}
		r.PermImport, r.PermImportSD = map[string]float64{}, map[string]float64{}
		for j := range mean {
			r.PermImport[f.FeatureName(j)], r.PermImportSD[f.FeatureName(j)] = mean[j], sd[j]
		}
	}
	return r, nil
}

// evaluate predicts test repeats times and records the times and the scores.
func (r *TrainResult) evaluate(test *data.Dataset, repeats int) error {
	f := r.Forest
	r.TestRows = test.Rows
	var pred, runs []float64
	// A test set read a column at a time is binned a column at a time
	// (no matrix of float64), once: each run's time is that binning's
	// (its reads excluded, as a matrix's are) and the trees' walk.
	var codes []uint8
	var binning time.Duration
	if test.X == nil {
		var ok bool
		var err error
		if codes, binning, ok, err = f.columnCodes(test); err != nil {
			return fmt.Errorf("forest: predicting the test set: %w", err)
		}
		if !ok {
			m := *test
			if err := m.Materialize(); err != nil {
				return fmt.Errorf("forest: reading the test set: %w", err)
			}
			test = &m
		}
	}
	for range repeats {
		start := time.Now()
		var err error
		if codes != nil {
			pred, err = f.predictCodes(codes, test.Rows)
		} else {
			pred, err = f.Predict(test.X, test.Rows)
		}
		if err != nil {
			return fmt.Errorf("forest: predicting the test set: %w", err)
		}
		runs = append(runs, (binning + time.Since(start)).Seconds())
	}
	if len(test.Y) != test.Rows {
		return fmt.Errorf("forest: %w: the test set has %d targets for %d rows", ErrShape, len(test.Y), test.Rows)
	}
	r.PredictSeconds = ptr(stats.Median(runs))
	if repeats > 1 {
		r.PredictRuns = runs
	}
	if f.Options.Task == Regression {
		r.TestMSE = ptr(MeanSquaredError(pred, test.Y))
		r.TestR2 = ptr(R2(pred, test.Y))
	} else {
		r.TestAccuracy = ptr(Accuracy(pred, test.Y))
	}
	return nil
}

// FeatureName returns the name of feature j: Features[j], or "f<j>" when
// the forest has no feature names.
func (f *Forest) FeatureName(j int) string {
	if j < len(f.Features) {
		return f.Features[j]
	}
	return fmt.Sprintf("f%d", j)
}

func ptr(v float64) *float64 { return &v }
