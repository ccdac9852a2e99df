package forest

import (
	"context"
	"errors"
	"fmt"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/internal/readlimit"
)

// NoHoldout is the DataSpec.Holdout that keeps every row for training.
const NoHoldout = -1.0

// holdoutSeed is the seed of the hold-out split (data.TrainTestSplit).
const holdoutSeed = 42

// DataSpec names a training set and its test set the way `gotrain forest
// train` does with its flags (--dataset, --data-dir, --train, --test,
// --target, --task, --holdout). Give exactly one of Dataset and Train.
type DataSpec struct {
	// Dataset is an embedded data set, "diabetes" (regression) or "digits"
	// (classification), or "mnist" (classification), read from DataDir by
	// data.OpenMNIST (pixels kept as bytes) with its own test set.
	Dataset string
	// DataDir is MNIST's folder; "" means data.MNISTDir("").
	DataDir string
	// Download fetches MNIST into DataDir when its files are missing
	// (data.DownloadMNIST: the canonical mirrors, checksums verified).
	Download bool
	// Train is a training file: CSV with a header row, Parquet or Arrow
	// IPC, told apart by their content (data.LoadFile). A Parquet or
	// Arrow file without a hold-out split is opened without its features
	// (data.OpenFile): Fit reads them one column at a time.
	Train string
	// Test is a test file (CSV, Parquet or Arrow) with the training
	// data's feature columns, in the same order; its class labels are
	// re-indexed onto the training ones. Not with mnist.
	Test string
	// Target is the target column of Train; "" means the last column.
	Target string
	// Task decides how targets are read (text labels become classes
	// for classification); "" means DefaultTask.
	Task Task
	// Holdout is the fraction of the rows held out as the test set when
	// there is no Test file, split with seed 42 (data.TrainTestSplit). 0
	// means the default: 0.2 for Dataset, none for Train; NoHoldout (or any
	// negative value) means none. It must be below 1.
	Holdout float64
	// Weight names the training file's column of sample weights
	// (data.CSVOptions.Weight); a test file's column of that name, when
	// it has one, is dropped (test scores are unweighted). Data files only.
	Weight string
	// Categorical names feature columns of Train (and Test) to read as
	// categories even when their values are numbers
	// (data.CSVOptions.Categorical); a column with a value that is not a
	// number is categorical without being named.
	Categorical []string
	// Shard and Shards, when Shards > 1, read only shard Shard (0 ..
	// Shards-1) of Train (data.LoadFileShard: a CSV file's lines by byte
	// ranges), for data-parallel training; not with a hold-out split.
	Shard, Shards int
	// MaxBytes caps each file read (a CSV, Parquet or Arrow file, an MNIST
	// file decompressed): a larger one is an error naming it and this option,
	// wrapping data.ErrTooLarge. 0 means data.DefaultMaxBytes (1 GiB).
	MaxBytes int64
}

// DefaultTask returns the task of the data s names when s.Task is empty:
// classification for the digits and mnist data sets, else regression.
func (s DataSpec) DefaultTask() Task {
	if s.Dataset == "digits" || s.Dataset == "mnist" {
		return Classification
	}
	return Regression
}

// Validate checks the fields of s that LoadData checks before reading
// anything, each error naming the fields at fault: exactly one of Dataset
// and Train, no Test with mnist (it brings its own test set), a Holdout
// below 1 and a MaxBytes that is not negative. A caller may call it
// first, to report a wrong combination before any other work.
func (s DataSpec) Validate() error {
	switch {
	case (s.Dataset == "") == (s.Train == ""):
		return errors.New("forest: give exactly one of DataSpec.Dataset and DataSpec.Train")
	case s.Dataset == "mnist" && s.Test != "":
		return errors.New("forest: DataSpec.Dataset mnist brings its own test set; drop DataSpec.Test")
	case s.Holdout >= 1:
		return fmt.Errorf("forest: DataSpec.Holdout %v must be below 1", s.Holdout)
	case len(s.Categorical) > 0 && s.Train == "":
		return errors.New("forest: DataSpec.Categorical needs a training file (DataSpec.Train)")
	case s.Weight != "" && s.Train == "":
		return errors.New("forest: DataSpec.Weight needs a training file (DataSpec.Train)")
	case s.Shards > 1 && s.Train == "":
		return errors.New("forest: DataSpec.Shards needs a training file (DataSpec.Train)")
	case s.Shards > 1 && s.Holdout > 0:
		return errors.New("forest: DataSpec.Shards: a hold-out split needs every row; give a test file (DataSpec.Test)")
	case s.Shards > 1 && (s.Shard < 0 || s.Shard >= s.Shards):
		return fmt.Errorf("forest: DataSpec.Shard %d of %d shards", s.Shard, s.Shards)
	case s.MaxBytes < 0:
		return fmt.Errorf("forest: DataSpec.MaxBytes %d: want a positive number of bytes (0: the default %d)", s.MaxBytes, data.DefaultMaxBytes)
	}
	return nil
}

// Split is a training set and its test set, as LoadData returns them.
type Split struct {
	// Train is the training set.
	Train *data.Dataset
	// Test is the test set; nil when there is none.
	Test *data.Dataset
	// Name describes the data: the data set's name, the training file, or
	// "mnist (DIR)".
	Name string
	// Task is the DataSpec's task, or its default.
	Task Task
}

// LoadData reads the training and test sets s names (after
// DataSpec.Validate); ctx bounds a download. Errors name the file (and, for values, the line and column) or
// the DataSpec field at fault. When MNIST's files are missing (and not
// downloaded), the error wraps data.MNISTMissingError of the folder (test
// with errors.Is(err, data.ErrMNISTMissing)).
func LoadData(ctx context.Context, s DataSpec) (*Split, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	sp := &Split{Name: s.Dataset, Task: s.Task}
	if sp.Task == "" {
		sp.Task = s.DefaultTask()
	}
	csvOpt := data.CSVOptions{Target: s.Target, Classification: sp.Task == Classification, Categorical: s.Categorical, MaxBytes: s.MaxBytes}
	holdout := s.Holdout
	var err error
	switch {
	case s.Dataset == "mnist":
		dir, err := data.MNISTDir(s.DataDir)
		if err != nil {
			return nil, fmt.Errorf("forest: %w", err)
		}
		sp.Train, sp.Test, err = data.OpenMNIST(dir, s.MaxBytes)
		if s.Download && errors.Is(err, data.ErrMNISTMissing) {
			if err = data.DownloadMNIST(ctx, dir, data.MNISTMirrors, data.MNISTChecksums, nil); err == nil {
				sp.Train, sp.Test, err = data.OpenMNIST(dir, s.MaxBytes)
			}
		}
		if err != nil {
			return nil, readlimit.Rename(fmt.Errorf("forest: loading mnist: %w", err), "DataSpec.MaxBytes")
		}
		sp.Name = "mnist (" + dir + ")"
		return sp, nil
	case s.Dataset != "":
		sp.Train, err = data.Embedded(s.Dataset)
		if holdout == 0 {
			holdout = 0.2
		}
	default:
		trainOpt := csvOpt
		trainOpt.Weight = s.Weight
		if s.Shards > 1 {
			sp.Train, err = data.LoadFileShard(s.Train, trainOpt, s.Shard, s.Shards)
		} else {
			sp.Train, err = data.OpenFile(s.Train, trainOpt)
		}
		sp.Name = s.Train
	}
	if err != nil {
		return nil, readlimit.Rename(fmt.Errorf("forest: %w", err), "DataSpec.MaxBytes")
	}
	if s.Test != "" {
		csvOpt.Target = sp.Train.TargetName
		if sp.Test, err = data.LoadFile(s.Test, csvOpt); err != nil {
			return nil, readlimit.Rename(fmt.Errorf("forest: %w", err), "DataSpec.MaxBytes")
		}
		if s.Weight != "" {
			sp.Test.TakeColumn(s.Weight)
		}
		if err := sameColumns(sp.Train, sp.Test, s.Test); err != nil {
			return nil, err
		}
		if sp.Task == Classification {
			if err := alignClasses(sp.Train, sp.Test); err != nil {
				return nil, fmt.Errorf("forest: %s: %w", s.Test, err)
			}
		}
		return sp, nil
	}
	if holdout > 0 {
		if err := sp.Train.Materialize(); err != nil { // Subset needs X
			return nil, readlimit.Rename(fmt.Errorf("forest: %w", err), "DataSpec.MaxBytes")
		}
		tr, te := data.TrainTestSplit(sp.Train.Rows, holdout, holdoutSeed)
		sp.Train, sp.Test = sp.Train.Subset(tr), sp.Train.Subset(te)
	}
	return sp, nil
}

// sameColumns checks that test (read from file) has train's feature columns
// in the same order.
func sameColumns(train, test *data.Dataset, file string) error {
	if len(train.FeatureNames) != len(test.FeatureNames) {
		return fmt.Errorf("forest: %s has %d feature columns, the training data %d", file, len(test.FeatureNames), len(train.FeatureNames))
	}
	for j, n := range train.FeatureNames {
		if test.FeatureNames[j] != n {
			return fmt.Errorf("forest: %s: feature column %d is %q, the training data has %q", file, j+1, test.FeatureNames[j], n)
		}
	}
	return nil
}

// alignClasses re-indexes test's class labels onto train's classes: both
// must have text labels (Classes) or neither, and every test label must
// occur in the training data.
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
	y := make([]float64, len(test.Y))
	for i, v := range test.Y {
		c := test.Classes[int(v)]
		k, ok := idx[c]
		if !ok {
			return fmt.Errorf("row %d: class %q does not occur in the training data", i+1, c)
		}
		y[i] = float64(k)
	}
	test.Y, test.Classes = y, train.Classes
	return nil
}
