package modclass

import (
	stdcontext "context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gotrain/gotrain/forest"
	"github.com/gotrain/gotrain/internal/readlimit"
	"github.com/gotrain/gotrain/signal"
	"github.com/gotrain/gotrain/signal/impair"
)

// DatasetSpec describes a data set the way `gotrain signal dataset` (and
// `signal classify demo`) take it on their command lines: [DatasetOptions]
// with the modulations, the SNR range, the record length in seconds and the
// samples-per-symbol choices given as text. [DatasetSpec.DatasetOptions]
// parses them, its errors naming the DatasetSpec field at fault
// (DatasetSpec.SNR); [Generate] validates the result, naming the
// DatasetOptions fields.
type DatasetSpec struct {
	// Dir is the folder [DatasetSpec.Generate] writes the data set to (and
	// [RunSpec.Demo] its two), and Force lets Generate replace the data
	// set of a folder that is not empty.
	Dir   string
	Force bool
	// Options are the data set's options. DatasetOptions sets their Mods,
	// SNRMinDB, SNRMaxDB, SNRStepDB, SPS and (when 0) Samples from the
	// fields below.
	Options DatasetOptions
	// Mods lists the modulations, comma-separated ([ParseMods]; "" means
	// [DefaultMods]).
	Mods string
	// SNR is the full-band SNR range in dB, MIN:MAX[:STEP] or one value
	// ([ParseSNRRange]).
	SNR string
	// Seconds is the record length in seconds at Options.SampleRate
	// ([signal.SamplesFor]); it is used only when Options.Samples is 0.
	Seconds float64
	// SPS lists the samples-per-symbol choices of the digital modes as
	// comma-separated integers, such as "4,8,16".
	SPS string
	// Impairments sets Options.Impairments: "default" (impair.DefaultRecipeName)
	// the built-in impair.DefaultRecipe, "none" no impairments, any other
	// value a recipe file (impair.LoadRecipe; ./default names a file
	// called default); "" leaves them as they are.
	Impairments string
}

// DatasetOptions returns the data set options s describes. It does not
// validate them beyond parsing; [Generate] does.
func (s DatasetSpec) DatasetOptions() (DatasetOptions, error) {
	o := s.Options
	var err error
	if o.Mods, err = ParseMods(s.Mods); err != nil {
		return o, err
	}
	if o.SNRMinDB, o.SNRMaxDB, o.SNRStepDB, err = ParseSNRRange(s.SNR); err != nil {
		return o, fmt.Errorf("DatasetSpec.SNR: %w", err)
	}
	switch s.Impairments {
	case "":
	case impair.DefaultRecipeName:
		o.Impairments = impair.DefaultRecipe()
	case "none":
		o.Impairments = nil
	default:
		if o.Impairments, err = impair.LoadRecipe(s.Impairments); err != nil {
			return o, err
		}
	}
	if o.Samples == 0 {
		if o.Samples, err = signal.SamplesFor(s.Seconds, o.SampleRate); err != nil {
			return o, fmt.Errorf("DatasetSpec.Seconds: %w", err)
		}
	}
	o.SPS = nil
	for _, p := range strings.Split(s.SPS, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return o, fmt.Errorf("DatasetSpec.SPS %q: %q is not an integer", s.SPS, p)
		}
		o.SPS = append(o.SPS, k)
	}
	return o, nil
}

// Generate parses s ([DatasetSpec.DatasetOptions]) and generates the data
// set in s.Dir with [GenerateContext] (s.Force replaces a data set in a
// non-empty folder), as `gotrain signal dataset` does, and reports.
func (s DatasetSpec) Generate(ctx stdcontext.Context) (*DatasetReport, error) {
	o, err := s.DatasetOptions()
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	info, err := GenerateContext(ctx, s.Dir, o, s.Force)
	if err != nil {
		return nil, err
	}
	return &DatasetReport{Dataset: info, Dir: s.Dir, RecordsPerSecond: float64(info.Rows) / info.Seconds,
		Seconds: time.Since(t0).Seconds(), SNR: s.SNR}, nil
}

// DatasetReport is what [DatasetSpec.Generate] did. Its JSON is the report
// of `gotrain signal dataset --json` (keys in alphabetical order, as the
// command has always printed them), and WriteText writes its text.
type DatasetReport struct {
	// Dataset is the data set's dataset.json.
	Dataset *Info `json:"dataset"`
	// Dir is the data set's folder.
	Dir string `json:"dir"`
	// RecordsPerSecond is the generation's throughput (Dataset.Rows over
	// Dataset.Seconds).
	RecordsPerSecond float64 `json:"records_per_second"`
	// Seconds is the wall time of the whole call, writing included.
	Seconds float64 `json:"seconds"`
	// SNR is the SNR range as the spec gave it ([DatasetSpec].SNR), for
	// the text.
	SNR string `json:"-"`
}

// WriteText writes r as `gotrain signal dataset` prints it: one line on
// the folder, the records, the classes, the record length, the SNR range,
// the seed and the generation's time and throughput.
func (r *DatasetReport) WriteText(w io.Writer) error {
	info, o := r.Dataset, r.Dataset.Options
	_, err := fmt.Fprintf(w, "wrote %s: %d records (%d per class: %s), %d samples at %g Hz, SNR %s dB, seed %d; %.1f s on %d workers (%.1f records/s)\n",
		r.Dir, info.Rows, o.PerClass, strings.Join(info.Classes, " "), o.Samples, o.SampleRate, r.SNR, o.Seed,
		info.Seconds, info.Workers, r.RecordsPerSecond)
	return err
}

// RunSpec names the data of a classifier run the way `gotrain signal
// classify train` and `eval` take them on their command lines: data set
// folders, a model file and the band as text. [RunSpec.RunOptions] checks
// it without reading a file, [RunSpec.Load] reads the files too; errors in
// the text fields name them (RunSpec.Band).
type RunSpec struct {
	// Options are the run's options. RunOptions sets their BandDB, Load
	// also their Train, Test and Model. For a training run their
	// Fit.Forest is checked as given (forest.Options.Validate, which reads
	// no zero as a default): start it from forest.DefaultOptions.
	Options RunOptions
	// Data is a data set folder (or its features.csv file): the training
	// data, or with Evaluate the test data.
	Data string
	// Test is the test data set folder (or features.csv) of a training
	// run; "" means none (see RunOptions.TestFraction).
	Test string
	// Evaluate evaluates the model in Options.ModelFile on Data instead of
	// training one.
	Evaluate bool
	// Band is the SNR range (dB) of the band accuracy and of the
	// confusion matrix, MIN:MAX ([ParseSNRRange]; a step is ignored).
	Band string
	// MaxBytes caps each features.csv read ([LoadMax]); 0 means
	// DefaultMaxCSVBytes. A larger file is an error naming it and this
	// option, wrapping readlimit's ErrTooLarge.
	MaxBytes int64
}

// Demo runs [Demo] with the run s describes ([RunSpec.RunOptions]; its
// data are not read) on the training and test sets ds describes
// ([DatasetSpec.DatasetOptions]), generated in ds.Dir/train and
// ds.Dir/test (ds.Dir must exist; "" means a temporary folder, removed
// afterwards), as `gotrain signal classify demo` does.
func (s RunSpec) Demo(ds DatasetSpec) (*Report, error) {
	o, err := s.RunOptions()
	if err != nil {
		return nil, err
	}
	dso, err := ds.DatasetOptions()
	if err != nil {
		return nil, err
	}
	return Demo(ds.Dir, dso, o)
}

// DataFiles returns the feature files [RunSpec.Load] reads from the data
// set folders Data and Test name, by the folder: its features.csv. A Data
// or Test that names the CSV file itself is not listed (it is the file
// read).
func (s RunSpec) DataFiles() map[string]string {
	files := map[string]string{}
	for _, p := range []string{s.Data, s.Test} {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			files[p] = filepath.Join(p, FeaturesFile)
		}
	}
	return files
}

// RunOptions returns the run options s describes without their data: the
// band parsed, MaxBytes checked and, for a training run, the forest
// options validated.
func (s RunSpec) RunOptions() (RunOptions, error) {
	o := s.Options
	lo, hi, _, err := ParseSNRRange(s.Band)
	if err != nil {
		return o, fmt.Errorf("RunSpec.Band: %w", err)
	}
	o.BandDB = [2]float64{lo, hi}
	if _, err := readlimit.Check(s.MaxBytes, DefaultMaxCSVBytes, "RunSpec.MaxBytes"); err != nil {
		return o, fmt.Errorf("modclass: %w", err)
	}
	if !s.Evaluate {
		if err := o.Fit.Forest.Validate(); err != nil {
			return o, err
		}
	}
	return o, nil
}

// Run loads what s names ([RunSpec.Load]) and trains and evaluates, or
// evaluates, the classifier ([Run]): what `gotrain signal classify train`
// and `eval` do.
func (s RunSpec) Run() (*Report, error) {
	o, err := s.Load()
	if err != nil {
		return nil, err
	}
	return Run(o)
}

// Load returns the run options s describes ([RunSpec.RunOptions]) with
// their data read: with Evaluate the model (Options.ModelFile) and the
// test data (Data), else the training data (Data, when set) and the test
// data (Test, when set), each capped at MaxBytes ([LoadMax]). The result
// is ready for [Run].
func (s RunSpec) Load() (RunOptions, error) {
	o, err := s.RunOptions()
	if err != nil {
		return o, err
	}
	load := func(path string) (*Data, error) {
		d, err := LoadMax(path, s.MaxBytes)
		return d, readlimit.Rename(err, "RunSpec.MaxBytes")
	}
	if s.Evaluate {
		if o.Model, err = forest.LoadFile(o.ModelFile); err != nil {
			return o, err
		}
		o.Test, err = load(s.Data)
		return o, err
	}
	if s.Data != "" {
		if o.Train, err = load(s.Data); err != nil {
			return o, err
		}
	}
	if s.Test != "" {
		o.Test, err = load(s.Test)
	}
	return o, err
}
