package forest

import (
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"
)

// Task is what a forest predicts.
type Task string

const (
	// Regression predicts a real value (squared-error criterion).
	Regression Task = "regression"
	// Classification predicts a class and class probabilities.
	Classification Task = "classification"
)

// Criterion is the impurity a split minimises.
type Criterion string

const (
	// SquaredError is the squared error, for regression.
	SquaredError Criterion = "squared_error"
	// Gini is the Gini impurity, for classification.
	Gini Criterion = "gini"
	// Entropy is the Shannon entropy, for classification.
	Entropy Criterion = "entropy"
)

// Splitter is how a node's split of a feature is chosen.
type Splitter string

const (
	// Best splits at the best boundary of each feature examined (random
	// forests).
	Best Splitter = "best"
	// Random splits each feature examined at one boundary drawn at random
	// between the node's lowest and highest bins (extremely randomized
	// trees), and keeps the best of those.
	Random Splitter = "random"
)

// Options are the learner's settings. Names and defaults follow
// scikit-learn's RandomForestRegressor and RandomForestClassifier.
type Options struct {
	// Task is regression or classification.
	Task Task
	// Criterion defaults to squared_error (regression) or gini (classification).
	Criterion Criterion
	// Trees is the number of trees (n_estimators); default 100.
	Trees int
	// MaxDepth limits tree depth; 0 means unlimited.
	MaxDepth int
	// MinSamplesSplit is the fewest rows a node needs to be split; default 2.
	MinSamplesSplit int
	// MinSamplesLeaf is the fewest rows each child must keep; default 1.
	MinSamplesLeaf int
	// MaxFeatures is how many features each node considers: "sqrt", "log2",
	// "all" (or "1.0"), a fraction in (0,1], or an integer. Default: all for
	// regression, sqrt for classification.
	MaxFeatures string
	// Bootstrap draws each tree's rows with replacement; default true (see NoBootstrap).
	NoBootstrap bool
	// MaxSamples is the number of draws per tree when bootstrapping: a
	// fraction of the rows if in (0,1], else a count; 0 means all rows.
	MaxSamples float64
	// Seed fixes every random choice.
	Seed uint64
	// Bins is the most bins per feature, the missing-value bin included
	// (2..256); default 256.
	Bins int
	// Threads is the number of goroutines; 0 means runtime.NumCPU(). The
	// forest does not depend on it.
	Threads int
	// OOB computes the out-of-bag score (bootstrap only).
	OOB bool
	// KeepLeafSamples keeps, in the forest and its model file, the
	// training rows of every leaf (Forest.LeafSamples), for quantile
	// predictions (Forest.PredictQuantiles); regression only.
	KeepLeafSamples bool
	// MinWeightFractionLeaf is the least fraction of a tree's total
	// weight (bootstrap counts times sample weights) each leaf keeps, in
	// [0, 0.5]; 0, the default, means none.
	MinWeightFractionLeaf float64
	// ClassWeight weighs the classes (classification): "balanced"
	// (scikit-learn's: rows / (classes × rows of the class)) or
	// "LABEL=WEIGHT,..." (unlisted classes weigh 1); it multiplies the
	// data's sample weights (data.Dataset.Weights). "" means none.
	ClassWeight string
	// Splitter is best (the default, random forests) or random
	// (extremely randomized trees, scikit-learn's ExtraTrees*; those
	// default to no bootstrap, which here is NoBootstrap's to set).
	Splitter Splitter
}

// Limits of Options beyond which Validate refuses them.
const (
	// MaxTrees bounds Trees.
	MaxTrees = 1 << 20
	// MaxThreads bounds Threads.
	MaxThreads = 4096
)

// DefaultOptions returns the options whose zero values Fit replaces with
// their defaults, given those defaults: 100 trees, nodes split from 2
// rows, leaves of at least 1 row, 256 bins. The task-dependent ones
// (Criterion, MaxFeatures) stay empty, to be resolved for the Task. Start
// from these when every option is set explicitly (from a command line),
// and check them with Validate.
func DefaultOptions() Options {
	return Options{Trees: 100, MinSamplesSplit: 2, MinSamplesLeaf: 1, Bins: 256}
}

// Validate checks o as given, each error naming the option and its range:
// unlike Fit, it does not read a zero Trees, MinSamplesSplit,
// MinSamplesLeaf or Bins as "the default", so an explicit 0 (a
// MinSamplesLeaf of 0 from a command line) is an error. Use it on options
// that start from DefaultOptions.
func (o Options) Validate() error {
	switch {
	case o.Trees < 1 || o.Trees > MaxTrees:
		return fmt.Errorf("forest: Trees %d: want 1 to %d", o.Trees, MaxTrees)
	case o.MinSamplesSplit < 2:
		return fmt.Errorf("forest: MinSamplesSplit %d: want >= 2", o.MinSamplesSplit)
	case o.MinSamplesLeaf < 1:
		return fmt.Errorf("forest: MinSamplesLeaf %d: want >= 1", o.MinSamplesLeaf)
	case o.Bins < 2 || o.Bins > 256:
		return fmt.Errorf("forest: Bins %d: want 2 to 256", o.Bins)
	}
	_, err := o.withDefaults()
	return err
}

// withDefaults returns o with defaults filled in, or an error for invalid
// values naming the option and its range.
func (o Options) withDefaults() (Options, error) {
	if o.Task == "" {
		o.Task = Regression
	}
	switch o.Task {
	case Regression:
		if o.Criterion == "" {
			o.Criterion = SquaredError
		}
		if o.Criterion != SquaredError {
			return o, fmt.Errorf("forest: criterion %q is not valid for regression (use squared_error)", o.Criterion)
		}
	case Classification:
		if o.Criterion == "" {
			o.Criterion = Gini
		}
		if o.Criterion != Gini && o.Criterion != Entropy {
			return o, fmt.Errorf("forest: criterion %q is not valid for classification (use gini or entropy)", o.Criterion)
		}
	default:
		return o, fmt.Errorf("forest: unknown task %q (use regression or classification)", o.Task)
	}
	if o.Trees == 0 {
		o.Trees = 100
	}
	if o.MinSamplesSplit == 0 {
		o.MinSamplesSplit = 2
	}
	if o.MinSamplesLeaf == 0 {
		o.MinSamplesLeaf = 1
	}
	if o.Bins == 0 {
		o.Bins = 256
	}
	switch o.Splitter {
	case "":
		o.Splitter = Best
	case Best, Random:
	default:
		return o, fmt.Errorf("forest: unknown splitter %q (use best or random)", o.Splitter)
	}
	if o.Threads < 0 || o.Threads > MaxThreads {
		return o, fmt.Errorf("forest: Threads %d: want 0 (all CPUs) to %d", o.Threads, MaxThreads)
	}
	if o.Threads == 0 {
		o.Threads = runtime.NumCPU()
	}
	switch {
	case o.Trees < 1 || o.Trees > MaxTrees:
		return o, fmt.Errorf("forest: Trees %d: want 1 to %d (0: 100)", o.Trees, MaxTrees)
	case o.MaxDepth < 0:
		return o, fmt.Errorf("forest: MaxDepth %d: want >= 0 (0: unlimited)", o.MaxDepth)
	case o.MinSamplesSplit < 2:
		return o, fmt.Errorf("forest: MinSamplesSplit %d: want >= 2 (0: 2)", o.MinSamplesSplit)
	case o.MinSamplesLeaf < 1:
		return o, fmt.Errorf("forest: MinSamplesLeaf %d: want >= 1 (0: 1)", o.MinSamplesLeaf)
	case o.Bins < 2 || o.Bins > 256:
		return o, fmt.Errorf("forest: Bins %d: want 2 to 256 (0: 256)", o.Bins)
	case !(o.MaxSamples >= 0) || math.IsInf(o.MaxSamples, 0):
		return o, fmt.Errorf("forest: MaxSamples %v: want a fraction of the rows in (0, 1] or a count (0: all rows)", o.MaxSamples)
	case o.OOB && o.NoBootstrap:
		return o, fmt.Errorf("forest: the out-of-bag score (OOB) needs bootstrap (not NoBootstrap)")
	case strings.TrimSpace(o.ClassWeight) != "" && o.Task != Classification:
		return o, fmt.Errorf("forest: ClassWeight %q needs a classification task, not %s", o.ClassWeight, o.Task)
	case !(o.MinWeightFractionLeaf >= 0 && o.MinWeightFractionLeaf <= 0.5):
		return o, fmt.Errorf("forest: MinWeightFractionLeaf %v: want 0 to 0.5", o.MinWeightFractionLeaf)
	case o.KeepLeafSamples && o.Task != Regression:
		return o, fmt.Errorf("forest: KeepLeafSamples (for quantiles) needs a regression forest, not %s", o.Task)
	}
	if o.MaxFeatures == "" {
		o.MaxFeatures = "all"
		if o.Task == Classification {
			o.MaxFeatures = "sqrt"
		}
	}
	if _, err := o.featuresPerNode(1); err != nil {
		return o, err
	}
	return o, nil
}

// featuresPerNode resolves MaxFeatures for p features.
func (o Options) featuresPerNode(p int) (int, error) {
	s := strings.ToLower(strings.TrimSpace(o.MaxFeatures))
	var k int
	switch s {
	case "all", "none", "":
		k = p
	case "sqrt", "auto":
		k = int(math.Sqrt(float64(p)))
	case "log2":
		k = int(math.Log2(float64(p)))
	default:
		if n, err := strconv.Atoi(s); err == nil {
			if n < 1 {
				return 0, fmt.Errorf("forest: max features %q: an integer must be >= 1", o.MaxFeatures)
			}
			k = n
		} else if f, err := strconv.ParseFloat(s, 64); err == nil && f > 0 && f <= 1 {
			k = int(f * float64(p))
		} else {
			return 0, fmt.Errorf("forest: max features %q: want sqrt, log2, all, a fraction in (0,1] or an integer >= 1", o.MaxFeatures)
		}
	}
	return min(max(k, 1), p), nil
}

// draws returns the number of bootstrap draws per tree for n rows.
func (o Options) draws(n int) (int, error) {
	switch {
	case o.MaxSamples == 0:
		return n, nil
	case o.MaxSamples <= 1:
		return max(1, int(math.Round(o.MaxSamples*float64(n)))), nil
	case o.MaxSamples != math.Trunc(o.MaxSamples):
		return 0, fmt.Errorf("forest: MaxSamples %v: a count above 1 must be an integer", o.MaxSamples)
	case int(o.MaxSamples) > n:
		return 0, fmt.Errorf("forest: MaxSamples %d exceeds the %d training rows", int(o.MaxSamples), n)
	}
	return int(o.MaxSamples), nil
}
