package moe

import (
	stdcontext "context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/internal/readlimit"
)

// Data is a classification data set split into training, validation and
// test parts. X rows are row-major float32 features; Y holds class indices
// as float32 (one per row), the label layout the harness's Dataset takes.
type Data struct {
	// Name describes the data set.
	Name string
	// Inputs is the number of features; Classes the number of classes.
	Inputs, Classes int
	TrainX, TrainY  []float32
	ValX, ValY      []float32
	TestX, TestY    []float32
}

// Rows returns the number of training, validation and test examples.
func (d *Data) Rows() (train, val, test int) {
	return len(d.TrainY), len(d.ValY), len(d.TestY)
}

func (d *Data) validate() error {
	if d == nil {
		return errors.New("moe: no data")
	}
	if d.Inputs < 1 || d.Classes < 2 {
		return fmt.Errorf("moe: data %s: %d inputs, %d classes", d.Name, d.Inputs, d.Classes)
	}
	for _, p := range []struct {
		name string
		x, y []float32
	}{{"training", d.TrainX, d.TrainY}, {"validation", d.ValX, d.ValY}, {"test", d.TestX, d.TestY}} {
		if len(p.x) != len(p.y)*d.Inputs {
			return fmt.Errorf("moe: data %s: %s part has %d values for %d labels of %d features", d.Name, p.name, len(p.x), len(p.y), d.Inputs)
		}
		for _, c := range p.y {
			if c < 0 || int(c) >= d.Classes || float32(int(c)) != c {
				return fmt.Errorf("moe: data %s: %s label %g: want a class index 0..%d", d.Name, p.name, c, d.Classes-1)
			}
		}
	}
	if len(d.TrainY) == 0 {
		return fmt.Errorf("moe: data %s: no training examples", d.Name)
	}
	return nil
}

// checkValFraction refuses a validation fraction outside [0, 1).
func checkValFraction(f float64) error {
	if !(f >= 0 && f < 1) {
		return fmt.Errorf("moe: ValFraction %v: want 0 (no validation) to below 1", f)
	}
	return nil
}

// split turns a data.Dataset of class labels into Data: the rows whose
// index is in test go to the test part, valFraction of the others (drawn
// with seed) to validation. scale divides every feature.
func split(ds *data.Dataset, test []int, valFraction float64, scale float64, seed uint64) *Data {
	d := &Data{Name: ds.Name, Inputs: ds.Cols, Classes: ds.NumClasses()}
	isTest := make([]bool, ds.Rows)
	for _, i := range test {
		isTest[i] = true
	}
	var rest []int
	for i := range ds.Rows {
		if !isTest[i] {
			rest = append(rest, i)
		}
	}
	r := rand.New(rand.NewPCG(seed, 1))
	r.Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
	nVal := int(valFraction * float64(len(rest)))
	add := func(x, y *[]float32, i int) {
		for _, v := range ds.Row(i) {
			*x = append(*x, float32(v/scale))
		}
		*y = append(*y, float32(ds.Y[i]))
	}
	for k, i := range rest {
		if k < nVal {
			add(&d.ValX, &d.ValY, i)
		} else {
			add(&d.TrainX, &d.TrainY, i)
		}
	}
	for _, i := range test {
		add(&d.TestX, &d.TestY, i)
	}
	return d
}

// Digits returns the embedded 8x8 digits (1797 images, pixels 0..16
// scaled to [0, 1]): 20% test, and valFraction of the rest for validation.
func Digits(valFraction float64, seed int64) (*Data, error) {
	if err := checkValFraction(valFraction); err != nil {
		return nil, err
	}
	ds, err := data.Digits()
	if err != nil {
		return nil, fmt.Errorf("moe: %w", err)
	}
	_, test := data.TrainTestSplit(ds.Rows, 0.2, uint64(seed))
	d := split(ds, test, valFraction, 16, uint64(seed))
	d.Name = "digits (embedded 8x8)"
	return d, nil
}

// MNISTFiles are the files MNIST needs in its directory (each may also be
// gzipped, with a .gz suffix).
var MNISTFiles = []string{"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"}

// ErrNoMNIST is wrapped by MNIST's error when the IDX files are missing:
// it is data.ErrMNISTMissing (the error wraps data.MNISTMissingError).
var ErrNoMNIST = data.ErrMNISTMissing

// missingMNIST lists the MNIST files not found in dir, in any accepted
// spelling (see data.LoadMNIST).
func missingMNIST(dir string) []string {
	var missing []string
	for _, f := range MNISTFiles {
		alt := strings.Replace(f, "-idx", ".idx", 1)
		found := false
		for _, name := range []string{f, f + ".gz", alt, alt + ".gz"} {
			if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, f)
		}
	}
	return missing
}

// MNISTPresent tells whether dir holds the four MNIST files.
func MNISTPresent(dir string) bool {
	fi, err := os.Stat(dir)
	return err == nil && fi.IsDir() && len(missingMNIST(dir)) == 0
}

// MNIST reads MNIST from the IDX files in dir: its 10,000 test images are
// the test part, valFraction of the 60,000 training images (drawn with
// seed) the validation part. Nothing is downloaded (see LoadData). Missing
// files are an error wrapping data.MNISTMissingError(dir), which says how
// to get them.
func MNIST(dir string, valFraction float64, seed int64) (*Data, error) {
	return mnist(dir, valFraction, seed, 0)
}

// mnist is MNIST with a cap of maxBytes on each file (data.LoadMNISTMax;
// 0: data.DefaultMaxBytes), named DataOptions.MaxBytes in its error.
func mnist(dir string, valFraction float64, seed int64, maxBytes int64) (*Data, error) {
	if err := checkValFraction(valFraction); err != nil {
		return nil, err
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("moe: %w (no such folder)", data.MNISTMissingError(dir))
	}
	if missing := missingMNIST(dir); len(missing) > 0 {
		return nil, fmt.Errorf("moe: %w (missing %v)", data.MNISTMissingError(dir), missing)
	}
	trainDS, testDS, err := data.LoadMNISTMax(dir, maxBytes)
	if err != nil {
		return nil, readlimit.Rename(fmt.Errorf("moe: reading MNIST from %s: %w", dir, err), "DataOptions.MaxBytes")
	}
	d := split(trainDS, nil, valFraction, 1, uint64(seed))
	t := split(testDS, nil, 0, 1, 0)
	d.TestX, d.TestY = t.TrainX, t.TrainY
	d.Name, d.Classes = "mnist ("+dir+")", 10
	return d, nil
}

// Data sets LoadData knows.
const (
	// DatasetAuto is MNIST when its files are there, else the digits.
	DatasetAuto = "auto"
	// DatasetMNIST is MNIST (MNIST).
	DatasetMNIST = "mnist"
	// DatasetDigits is the embedded 8x8 digits (Digits).
	DatasetDigits = "digits"
)

// DataOptions configure LoadData.
type DataOptions struct {
	// Dataset is DatasetAuto (or ""), DatasetMNIST or DatasetDigits.
	Dataset string
	// Dir is MNIST's folder; "" is data.MNISTDir's default ($GOTRAIN_DATA/mnist,
	// else the per-user ~/.local/share/gotrain/mnist).
	Dir string
	// Download fetches MNIST into the folder (data.DownloadMNIST, checksums
	// verified) when its files are not there, unless Dataset is
	// DatasetDigits.
	Download bool
	// ValFraction is the share of the training images held out for
	// validation.
	ValFraction float64
	// Seed draws the validation part (and the digits' test part).
	Seed int64
	// MaxBytes caps each MNIST file, decompressed (data.LoadMNISTMax): a
	// larger one is an error naming it and this option, wrapping
	// data.ErrTooLarge. 0 means data.DefaultMaxBytes (1 GiB).
	MaxBytes int64
	// Logf reports a download and the fallback of DatasetAuto (nil: silent).
	Logf func(format string, args ...any)
}

// LoadData loads the data set opts name: MNIST from its folder
// (downloaded first with Download), the embedded digits, or with
// DatasetAuto MNIST when the folder holds it and else the digits, saying
// which folder it searched. MNIST missing under DatasetMNIST is an error
// wrapping data.MNISTMissingError.
func LoadData(ctx stdcontext.Context, opts DataOptions) (*Data, error) {
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	ds := opts.Dataset
	if ds == "" {
		ds = DatasetAuto
	}
	switch ds {
	case DatasetDigits:
		return Digits(opts.ValFraction, opts.Seed)
	case DatasetAuto, DatasetMNIST:
	default:
		return nil, fmt.Errorf("moe: data set %q: want %s, %s or %s", opts.Dataset, DatasetAuto, DatasetMNIST, DatasetDigits)
	}
	dir, err := data.MNISTDir(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("moe: %w", err)
	}
	if opts.Download && !MNISTPresent(dir) {
		logf("moe: downloading MNIST into %s", dir)
		if err := data.DownloadMNIST(ctx, dir, data.MNISTMirrors, data.MNISTChecksums, nil); err != nil {
			return nil, fmt.Errorf("moe: %w", err)
		}
	}
	if ds == DatasetAuto && !MNISTPresent(dir) {
		logf("moe: no MNIST IDX files in %s: using the embedded 8x8 digits", dir)
		return Digits(opts.ValFraction, opts.Seed)
	}
	return mnist(dir, opts.ValFraction, opts.Seed, opts.MaxBytes)
}
