package forest

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/data"
)

// writeFile writes content to name in dir and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// writeMNIST writes a tiny MNIST (2 training and 1 test image of 2×2
// pixels) in dir.
func writeMNIST(t *testing.T, dir string) {
	t.Helper()
	idx := func(magic uint32, dims []uint32, b []byte) string {
		var buf bytes.Buffer
		binary.Write(&buf, binary.BigEndian, magic)
		binary.Write(&buf, binary.BigEndian, dims)
		buf.Write(b)
		return buf.String()
	}
	writeFile(t, dir, "train-images-idx3-ubyte", idx(0x803, []uint32{2, 2, 2}, []byte{0, 255, 51, 102, 0, 0, 0, 0}))
	writeFile(t, dir, "train-labels-idx1-ubyte", idx(0x801, []uint32{2}, []byte{3, 8}))
	writeFile(t, dir, "t10k-images-idx3-ubyte", idx(0x803, []uint32{1, 2, 2}, []byte{0, 255, 51, 102}))
	writeFile(t, dir, "t10k-labels-idx1-ubyte", idx(0x801, []uint32{1}, []byte{5}))
}

func TestLoadData(t *testing.T) {
	dir := t.TempDir()
	train := writeFile(t, dir, "train.csv", "a,b,y\n1,2,3\n4,5,6\n7,8,9\n10,11,12\n")
	test := writeFile(t, dir, "test.csv", "a,b,y\n1,1,1\n")
	bigTest := writeFile(t, dir, "big-test.csv", "a,b,y\n"+strings.Repeat("1,1,1\n", 20))
	swapped := writeFile(t, dir, "swapped.csv", "b,a,y\n1,1,1\n")
	narrow := writeFile(t, dir, "narrow.csv", "a,y\n1,1\n")
	bad := writeFile(t, dir, "bad.csv", "a,b,y\n1,2,3\n4,inf,6\n")
	labels := writeFile(t, dir, "labels.csv", "a,label\n1,cat\n2,dog\n3,eel\n")
	labelsTest := writeFile(t, dir, "labels-test.csv", "a,label\n1,eel\n2,cat\n")
	unknown := writeFile(t, dir, "unknown.csv", "a,label\n1,cow\n")
	numeric := writeFile(t, dir, "numeric.csv", "a,label\n1,0\n")
	mnist := filepath.Join(dir, "mnist")
	os.Mkdir(mnist, 0o755)
	writeMNIST(t, mnist)
	empty := t.TempDir()

	tests := []struct {
		name  string
		spec  DataSpec
		env   string // $GOTRAIN_DATA
		want  string // the error, or ""
		check func(t *testing.T, s *Split)
	}{
		{name: "neither", spec: DataSpec{}, want: "exactly one of DataSpec.Dataset and DataSpec.Train"},
		{name: "train beyond MaxBytes", spec: DataSpec{Train: train, MaxBytes: 20}, want: train + " is larger than the 20 bytes limit; raise it with DataSpec.MaxBytes"},
		{name: "test beyond MaxBytes", spec: DataSpec{Train: train, Test: bigTest, MaxBytes: 40}, want: bigTest + " is larger than the 40 bytes limit; raise it with DataSpec.MaxBytes"},
		{name: "mnist beyond MaxBytes", spec: DataSpec{Dataset: "mnist", DataDir: mnist, MaxBytes: 16}, want: "is larger than the 16 bytes limit; raise it with DataSpec.MaxBytes"},
		{name: "negative MaxBytes", spec: DataSpec{Dataset: "diabetes", MaxBytes: -1}, want: "DataSpec.MaxBytes -1"},
		{name: "both", spec: DataSpec{Dataset: "diabetes", Train: train}, want: "exactly one"},
		{name: "holdout 1", spec: DataSpec{Dataset: "diabetes", Holdout: 1}, want: "DataSpec.Holdout 1 must be below 1"},
		{name: "unknown data set", spec: DataSpec{Dataset: "iris"}, want: `"iris"`},
		{name: "diabetes default holdout", spec: DataSpec{Dataset: "diabetes"}, check: func(t *testing.T, s *Split) {
			if s.Train.Rows != 353 || s.Test.Rows != 89 || s.Name != "diabetes" || s.Task != Regression {
				t.Errorf("got %d/%d rows, name %q, task %s; want 353/89, diabetes, regression", s.Train.Rows, s.Test.Rows, s.Name, s.Task)
			}
			tr, te := data.TrainTestSplit(442, 0.2, 42)
			d, _ := data.Diabetes()
			if !slices.Equal(s.Train.Y, d.Subset(tr).Y) || !slices.Equal(s.Test.Y, d.Subset(te).Y) {
				t.Error("the split is not data.TrainTestSplit(rows, 0.2, 42)")
			}
		}},
		{name: "digits holdout 0.5", spec: DataSpec{Dataset: "digits", Holdout: 0.5}, check: func(t *testing.T, s *Split) {
			if s.Train.Rows+s.Test.Rows != 1797 || s.Test.Rows != 899 || s.Task != Classification {
				t.Errorf("got %d/%d rows, task %s", s.Train.Rows, s.Test.Rows, s.Task)
			}
		}},
		{name: "no holdout", spec: DataSpec{Dataset: "diabetes", Holdout: NoHoldout}, check: func(t *testing.T, s *Split) {
			if s.Train.Rows != 442 || s.Test != nil {
				t.Errorf("got %d rows and a test set %v, want 442 rows and none", s.Train.Rows, s.Test != nil)
			}
		}},
		{name: "task overrides the default", spec: DataSpec{Dataset: "digits", Task: Regression}, check: func(t *testing.T, s *Split) {
			if s.Task != Regression {
				t.Errorf("task %s", s.Task)
			}
		}},
		{name: "csv whole", spec: DataSpec{Train: train}, check: func(t *testing.T, s *Split) {
			if s.Train.Rows != 4 || s.Test != nil || s.Name != train || s.Train.TargetName != "y" {
				t.Errorf("got %d rows, test %v, name %q, target %q", s.Train.Rows, s.Test != nil, s.Name, s.Train.TargetName)
			}
		}},
		{name: "csv target and holdout", spec: DataSpec{Train: train, Target: "a", Holdout: 0.5}, check: func(t *testing.T, s *Split) {
			if s.Train.Rows != 2 || s.Test.Rows != 2 || s.Train.TargetName != "a" || !slices.Equal(s.Train.FeatureNames, []string{"b", "y"}) {
				t.Errorf("got %d/%d rows, target %q, features %v", s.Train.Rows, s.Test.Rows, s.Train.TargetName, s.Train.FeatureNames)
			}
		}},
		{name: "csv train and test", spec: DataSpec{Train: train, Test: test, Holdout: 0.5}, check: func(t *testing.T, s *Split) {
			if s.Train.Rows != 4 || s.Test.Rows != 1 || s.Test.Y[0] != 1 {
				t.Errorf("got %d/%d rows (a test file overrides the holdout)", s.Train.Rows, s.Test.Rows)
			}
		}},
		{name: "csv value error", spec: DataSpec{Train: bad}, want: `bad.csv line 3, column "b" (2)`},
		{name: "missing file", spec: DataSpec{Train: filepath.Join(dir, "none.csv")}, want: "none.csv"},
		{name: "test columns swapped", spec: DataSpec{Train: train, Test: swapped}, want: `swapped.csv: feature column 1 is "b", the training data has "a"`},
		{name: "test columns missing", spec: DataSpec{Train: train, Test: narrow}, want: "narrow.csv has 1 feature columns, the training data 2"},
		{name: "test target missing", spec: DataSpec{Train: train, Test: labels}, want: `labels.csv: target column "y" not found`},
		{name: "classes aligned", spec: DataSpec{Train: labels, Test: labelsTest, Task: Classification}, check: func(t *testing.T, s *Split) {
			if !slices.Equal(s.Test.Y, []float64{2, 0}) || !slices.Equal(s.Test.Classes, []string{"cat", "dog", "eel"}) {
				t.Errorf("test labels %v classes %v, want [2 0] on [cat dog eel]", s.Test.Y, s.Test.Classes)
			}
		}},
		{name: "class unknown", spec: DataSpec{Train: labels, Test: unknown, Task: Classification}, want: `unknown.csv: row 1: class "cow" does not occur in the training data`},
		{name: "classes numeric and text", spec: DataSpec{Train: labels, Test: numeric, Task: Classification}, want: "numeric.csv: class labels are numeric in one file and text in the other"},
		{name: "mnist", spec: DataSpec{Dataset: "mnist", DataDir: mnist, Holdout: 0.5}, check: func(t *testing.T, s *Split) {
			if s.Train.Rows != 2 || s.Test.Rows != 1 || s.Task != Classification || s.Name != "mnist ("+mnist+")" {
				t.Errorf("got %d/%d rows, task %s, name %q", s.Train.Rows, s.Test.Rows, s.Task, s.Name)
			}
			// The pixels stay bytes (data.OpenMNIST), read a column at a time.
			if s.Train.X != nil || s.Train.Source == nil || s.Test.X != nil || s.Test.Source == nil {
				t.Errorf("mnist held as float64 rows (train X %v, test X %v), want data.OpenMNIST's columns", s.Train.X != nil, s.Test.X != nil)
			}
		}},
		{name: "mnist from $GOTRAIN_DATA", spec: DataSpec{Dataset: "mnist"}, env: dir, check: func(t *testing.T, s *Split) {
			if s.Name != "mnist ("+mnist+")" {
				t.Errorf("name %q, want the mnist folder of $%s", s.Name, data.DataDirEnv)
			}
		}},
		{name: "mnist present, no download", spec: DataSpec{Dataset: "mnist", DataDir: mnist, Download: true}, check: func(t *testing.T, s *Split) {
			if s.Train.Rows != 2 {
				t.Errorf("got %d rows", s.Train.Rows)
			}
		}},
		{name: "mnist with a test file", spec: DataSpec{Dataset: "mnist", DataDir: mnist, Test: test}, want: "mnist brings its own test set"},
		{name: "mnist missing", spec: DataSpec{Dataset: "mnist", DataDir: empty}, want: "MNIST not found in " + empty},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(data.DataDirEnv, tt.env)
			s, err := LoadData(context.Background(), tt.spec)
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("err = %v, want one containing %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, s)
		})
	}
	if _, err := LoadData(context.Background(), DataSpec{Dataset: "mnist", DataDir: empty}); !errors.Is(err, data.ErrMNISTMissing) {
		t.Errorf("missing MNIST: err = %v, want one wrapping data.ErrMNISTMissing", err)
	}
	// With Download, missing files are fetched (here the context is
	// cancelled already, so the download fails without the network).
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := LoadData(ctx, DataSpec{Dataset: "mnist", DataDir: empty, Download: true}); err == nil || !strings.Contains(err.Error(), "downloading MNIST") {
		t.Errorf("download: err = %v, want a failed download", err)
	}
}

// TestDataSpecValidate checks each combination Validate refuses, with the
// fields it names, and that it accepts what LoadData can read.
func TestDataSpecValidate(t *testing.T) {
	tests := []struct {
		name string
		spec DataSpec
		want string // the error, or "" for none
	}{
		{"neither", DataSpec{}, "forest: give exactly one of DataSpec.Dataset and DataSpec.Train"},
		{"both", DataSpec{Dataset: "diabetes", Train: "t.csv"}, "forest: give exactly one of DataSpec.Dataset and DataSpec.Train"},
		{"mnist with a test file", DataSpec{Dataset: "mnist", Test: "t.csv"}, "forest: DataSpec.Dataset mnist brings its own test set; drop DataSpec.Test"},
		{"holdout 1", DataSpec{Dataset: "diabetes", Holdout: 1}, "forest: DataSpec.Holdout 1 must be below 1"},
		{"holdout 1.5", DataSpec{Train: "t.csv", Holdout: 1.5}, "forest: DataSpec.Holdout 1.5 must be below 1"},
		{"negative MaxBytes", DataSpec{Dataset: "diabetes", MaxBytes: -1}, "forest: DataSpec.MaxBytes -1: want a positive number of bytes"},
		{"data set", DataSpec{Dataset: "diabetes"}, ""},
		{"mnist", DataSpec{Dataset: "mnist", DataDir: "m", Holdout: 0.5}, ""},
		{"csv with a test file", DataSpec{Train: "t.csv", Test: "u.csv", Holdout: 0.99}, ""},
		{"no holdout", DataSpec{Train: "t.csv", Holdout: NoHoldout}, ""},
		{"any negative holdout", DataSpec{Dataset: "digits", Holdout: -5}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.spec.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("Validate() = %v, want %q...", err, tt.want)
			}
		})
	}
}

func TestSameColumns(t *testing.T) {
	ds := func(names ...string) *data.Dataset { return &data.Dataset{FeatureNames: names, Cols: len(names)} }
	tests := []struct {
		train, test *data.Dataset
		want        string
	}{
		{ds("a", "b"), ds("a", "b"), ""},
		{ds(), ds(), ""},
		{ds("a", "b"), ds("a"), "t.csv has 1 feature columns, the training data 2"},
		{ds("a"), ds("a", "b"), "t.csv has 2 feature columns, the training data 1"},
		{ds("a", "b"), ds("a", "c"), `t.csv: feature column 2 is "c", the training data has "b"`},
		{ds("a", "b"), ds("b", "a"), `feature column 1 is "b"`},
	}
	for _, tt := range tests {
		err := sameColumns(tt.train, tt.test, "t.csv")
		if (tt.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.want) {
			t.Errorf("sameColumns(%v, %v) = %v, want %q", tt.train.FeatureNames, tt.test.FeatureNames, err, tt.want)
		}
	}
}

func TestAlignClasses(t *testing.T) {
	tests := []struct {
		name                 string
		trainCls, testCls    []string
		testY, wantY         []float64
		want                 string
		wantClassesUnchanged bool
	}{
		{name: "numeric", testY: []float64{3, 1}, wantY: []float64{3, 1}},
		{name: "same order", trainCls: []string{"a", "b"}, testCls: []string{"a", "b"}, testY: []float64{1, 0}, wantY: []float64{1, 0}},
		{name: "re-indexed", trainCls: []string{"a", "b", "c"}, testCls: []string{"b", "c"}, testY: []float64{0, 1, 1}, wantY: []float64{1, 2, 2}},
		{name: "unknown", trainCls: []string{"a"}, testCls: []string{"a", "z"}, testY: []float64{0, 1}, want: `row 2: class "z" does not occur`, wantY: []float64{0, 1}, wantClassesUnchanged: true},
		{name: "text and numeric", trainCls: []string{"a"}, testY: []float64{0}, want: "numeric in one file and text in the other", wantY: []float64{0}, wantClassesUnchanged: true},
		{name: "numeric and text", testCls: []string{"a"}, testY: []float64{0}, want: "numeric in one file and text in the other", wantY: []float64{0}, wantClassesUnchanged: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			train := &data.Dataset{Classes: tt.trainCls}
			test := &data.Dataset{Classes: tt.testCls, Y: slices.Clone(tt.testY)}
			err := alignClasses(train, test)
			if (tt.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if !slices.Equal(test.Y, tt.wantY) {
				t.Errorf("test Y = %v, want %v", test.Y, tt.wantY)
			}
			if tt.wantClassesUnchanged && !slices.Equal(test.Classes, tt.testCls) || !tt.wantClassesUnchanged && !slices.Equal(test.Classes, tt.trainCls) {
				t.Errorf("test classes = %v", test.Classes)
			}
		})
	}
}
