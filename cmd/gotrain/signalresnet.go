package main

// The ResNet classifier of `signal classify train --model resnet` and
// `classify eval` on its checkpoints, and `classify compare`.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gomlx/gomlx/backends"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/models/iqresnet"
	"github.com/gotrain/gotrain/signal/modclass"
	"github.com/gotrain/gotrain/train"
)

// Classifier kinds of `signal classify train --model`.
const (
	classifierForest = "forest"
	classifierResNet = iqresnet.Classifier
)

// resnetFlags are the flags of `classify train` that configure the ResNet
// (--model resnet): the shared training vocabulary (trainflags.go, less
// --seed, which the forest's flag sets) and the network's own.
type resnetFlags struct {
	run    runFlags
	opts   iqresnet.Options
	hop    int
	budget time.Duration
	// names are the flags that only the ResNet reads.
	names []string
}

// forestOnlyFlags are the flags of `classify train` that only the forest
// reads.
var forestOnlyFlags = []string{"features", "trees", "max-depth", "threads"}

// addResNetFlags registers the ResNet's flags on cmd.
func addResNetFlags(cmd *cobra.Command, rf *resnetFlags) {
	rf.opts = iqresnet.DefaultOptions()
	rf.opts.Logf = logf
	var fs pflag.FlagSet
	a := &rf.opts.Arch
	fs.IntVar(&a.Window, "window", a.Window, "resnet: samples per window (the network's input is window x 2)")
	fs.IntVar(&rf.hop, "hop", 0, "resnet: samples between the starts of a record's windows (0: --window, side by side)")
	fs.IntVar(&a.Stacks, "stacks", a.Stacks, "resnet: residual stacks (each halves the length)")
	fs.IntVar(&a.Filters, "filters", a.Filters, "resnet: filters of every convolution")
	fs.IntVar(&a.Kernel, "kernel", a.Kernel, "resnet: length of the residual units' convolutions (odd)")
	fs.IntVar(&a.Dense, "dense", a.Dense, "resnet: width of the two SELU dense layers")
	fs.Float64Var(&a.Dropout, "dropout", a.Dropout, "resnet: alpha-dropout rate after the first dense layer")
	fs.DurationVar(&rf.budget, "time-budget", 0, "resnet: stop training after this wall time (0: none), as after its last step")
	addConfigFlags(&fs, &rf.opts.Train, "seed", "eval-every", "time-limit") // --time-budget is its own
	rf.run.batchSize = fmt.Sprint(rf.opts.Train.BatchSize)
	fs.StringVar(&rf.run.batchSize, "batch-size", rf.run.batchSize, "resnet: batch size")
	fs.StringVar(&rf.run.resume, "resume", "", "resnet: continue the newest run in --out (--resume), or the run folder or checkpoint file PATH (--resume=PATH)")
	fs.Lookup("resume").NoOptDefVal = train.ResumeLatest
	fs.VisitAll(func(f *pflag.Flag) {
		if !strings.HasPrefix(f.Usage, "resnet: ") {
			f.Usage = "resnet: " + f.Usage
		}
		rf.names = append(rf.names, f.Name)
		cmd.Flags().AddFlag(f)
	})
}

// checkModelFlags refuses flags of the classifier not chosen by --model.
func checkModelFlags(cmd *cobra.Command, model string, rf *resnetFlags) error {
	var other []string
	switch model {
	case classifierForest:
		other = rf.names
	case classifierResNet:
		other = forestOnlyFlags
	default:
		return fmt.Errorf("signal classify train: --model %q: want forest or resnet", model)
	}
	for _, name := range other {
		if cmd.Flags().Changed(name) {
			return fmt.Errorf("signal classify train: --%s is not an option of --model %s", name, model)
		}
	}
	return nil
}

// runClassifyResNet trains the ResNet on s's data (--model resnet) and
// evaluates it on the test data, printing its report.
func runClassifyResNet(cmd *cobra.Command, g *globals, s *modclass.RunSpec, rf *resnetFlags) error {
	const name = "signal classify train"
	if s.Data == "" {
		return errors.New(name + ": --data is required")
	}
	if err := g.outputs(cmd, []string{"png-confusion", "png-snr", "metrics-log", "perf-summary"}, []string{"data", "test"}, s.DataFiles()); err != nil {
		return err
	}
	seed := s.Options.Fit.Forest.Seed
	if seed > math.MaxInt64 {
		return fmt.Errorf("%s: --seed %d: the resnet's seed is at most %d", name, seed, int64(math.MaxInt64))
	}
	o := rf.opts
	o.Train.Seed = int64(seed)
	out := s.Options.ModelFile
	auto, err := o.Train.SetRun(rf.run.batchSize, out, rf.run.resume, train.ResumeDir)
	switch {
	case err != nil:
		return fmt.Errorf("%s: %w", name, err)
	case auto:
		return fmt.Errorf("%s: --batch-size auto: the resnet takes a number", name)
	case out == "" && !o.Train.Resume:
		o.Train.NoCheckpoint = true // no --out: no model written, as for the forest
	}
	o.TimeBudget, o.Progress = rf.budget, cmd.ErrOrStderr()
	s.MaxBytes = g.maxInput()
	lo, err := s.Load()
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	ro := iqresnet.RunOptions{Train: lo.Train, Test: lo.Test, TestFraction: lo.TestFraction, Net: o, Hop: rf.hop,
		BandDB: lo.BandDB, ConfusionPNG: lo.ConfusionPNG, SNRPNG: lo.SNRPNG}
	return g.runTraining(cmd, name, func(ctx context.Context, eng *device.Engine, b backends.Backend) (textReport, error) {
		ro.Device = eng.Name()
		rep, err := iqresnet.Run(ctx, b, ro)
		if err != nil {
			return nil, err
		}
		return rep, nil
	})
}

// isForestModel tells whether path is a forest model file (by its magic
// bytes), rather than a ResNet checkpoint or run folder.
func isForestModel(path string) bool {
	fh, err := os.Open(path)
	if err != nil {
		return true // let the forest's loader report it
	}
	defer fh.Close()
	if fi, err := fh.Stat(); err != nil || fi.IsDir() {
		return err != nil
	}
	magic := []byte("GOTRAINFOREST\n")
	b := make([]byte, len(magic))
	n, _ := io.ReadFull(fh, b)
	return bytes.Equal(b[:n], magic)
}

// runEvalResNet evaluates the ResNet checkpoint --model on --data.
func runEvalResNet(cmd *cobra.Command, g *globals, s *modclass.RunSpec) error {
	const name = "signal classify eval"
	if err := g.outputs(cmd, []string{"png-confusion", "png-snr"}, []string{"data"}, s.DataFiles()); err != nil {
		return err
	}
	o, err := s.RunOptions()
	if err != nil {
		return flagError(fmt.Errorf("%s: %w", name, err), fieldFlags(cmd.Flags(), s))
	}
	d, err := modclass.LoadMax(s.Data, g.maxInput())
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	ro := iqresnet.RunOptions{Test: d, Checkpoint: o.ModelFile, Net: iqresnet.DefaultOptions(),
		BandDB: o.BandDB, ConfusionPNG: o.ConfusionPNG, SNRPNG: o.SNRPNG}
	return g.runTraining(cmd, name, func(ctx context.Context, eng *device.Engine, b backends.Backend) (textReport, error) {
		ro.Device = eng.Name()
		rep, err := iqresnet.Run(ctx, b, ro)
		if err != nil {
			return nil, err
		}
		return rep, nil
	})
}

// compareReport is the outcome of `classify compare`: its JSON names the
// classifiers and their reports, the band and each one's SNR bins; its
// text is the comparison's table.
type compareReport struct {
	c           *modclass.Comparison
	markdown    bool
	Classifiers []string            `json:"classifiers"`
	Reports     []string            `json:"reports"`
	Band        [2]float64          `json:"band_db"`
	PerSNR      [][]modclass.SNRBin `json:"per_snr"`
	PNG         string              `json:"png,omitempty"`
}

func (r *compareReport) WriteText(w io.Writer) error {
	if err := r.c.WriteTable(w, r.markdown); err != nil {
		return err
	}
	if r.PNG != "" {
		_, err := fmt.Fprintf(w, "wrote %s\n", r.PNG)
		return err
	}
	return nil
}

func newClassifyCompareCmd(g *globals) *cobra.Command {
	var (
		reports  []string
		band     string
		png      string
		markdown bool
	)
	cmd := &cobra.Command{
		Use:   "compare --report [NAME=]REPORT.json --report [NAME=]REPORT.json [--png F]",
		Short: "Put the accuracy per SNR of several classifiers side by side (a table and a PNG)",
		Long: `signal classify compare reads the --json reports of classify train (with test
data) or classify eval, of any classifier, and prints their accuracy per SNR
side by side, then over --band and over every SNR (--markdown: as a Markdown
table); --png draws the curves. NAME defaults to the report's classifier
(forest, resnet). Compare reports evaluated on the same test data.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(reports) == 0 {
				return errors.New("signal classify compare: give at least one --report")
			}
			if err := g.outputs(cmd, []string{"png"}, nil, nil); err != nil {
				return err
			}
			lo, hi, _, err := modclass.ParseSNRRange(band)
			if err != nil {
				return fmt.Errorf("signal classify compare: --band: %w", err)
			}
			r := &compareReport{c: &modclass.Comparison{BandDB: [2]float64{lo, hi}}, markdown: markdown, Band: [2]float64{lo, hi}}
			for _, spec := range reports {
				name, path, ok := strings.Cut(spec, "=")
				if !ok {
					name, path = "", spec
				}
				re, err := modclass.ReadReportEval(path)
				if err != nil {
					return fmt.Errorf("signal classify compare: --report %s: %w", spec, err)
				}
				if name == "" {
					name = re.Classifier
				}
				if name == "" {
					name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
				}
				r.c.Names, r.c.Evals = append(r.c.Names, name), append(r.c.Evals, re.Eval)
				r.Classifiers, r.Reports, r.PerSNR = append(r.Classifiers, name), append(r.Reports, path), append(r.PerSNR, re.Eval.PerSNR)
			}
			if png != "" {
				if err := r.c.WritePNG(png, "Accuracy vs SNR: "+strings.Join(r.c.Names, " vs ")); err != nil {
					return fmt.Errorf("signal classify compare: %w", err)
				}
				r.PNG = png
			}
			return g.print(cmd, r)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&reports, "report", nil, "a classify --json report, [NAME=]FILE (repeat)")
	f.StringVar(&band, "band", "10:20", "SNR range (dB) of the band row")
	f.StringVar(&png, "png", "", "draw the accuracy against the SNR of every report as a PNG file")
	f.BoolVar(&markdown, "markdown", false, "print the table as Markdown")
	return cmd
}
