package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/forest"
	"github.com/gotrain/gotrain/signal/modclass"
)

func newSignalClassifyCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "classify",
		Short: "Train and evaluate a random-forest modulation classifier on signal dataset features",
	}
	cmd.AddCommand(newClassifyTrainCmd(g), newClassifyEvalCmd(g), newClassifyDemoCmd(g))
	return cmd
}

// classifyFlags are the flags shared by train, eval and demo.
type classifyFlags struct {
	dataDir, testDir, out, model, pngConfusion, pngSNR, features, band string
	testFraction                                                       float64
	trees, threads, maxDepth                                           int
	seed                                                               uint64
}

func addClassifyOutputFlags(cmd *cobra.Command, fl *classifyFlags) {
	f := cmd.Flags()
	f.StringVar(&fl.pngConfusion, "png-confusion", "", "write the confusion matrix (over --band) as a PNG file")
	f.StringVar(&fl.pngSNR, "png-snr", "", "write the accuracy against the SNR as a PNG file")
	f.StringVar(&fl.band, "band", "10:20", "SNR range (dB) of the headline accuracy and of the confusion matrix")
}

func addClassifyTrainFlags(cmd *cobra.Command, fl *classifyFlags) {
	f := cmd.Flags()
	f.StringVar(&fl.features, "features", "default", "feature set: default, all, base, cumulants, or a comma-separated list of columns and derived features")
	f.IntVar(&fl.trees, "trees", 200, "number of trees")
	f.IntVar(&fl.maxDepth, "max-depth", 0, "maximum tree depth (0 = unlimited)")
	f.IntVar(&fl.threads, "threads", 0, "worker goroutines (0 = all CPUs); the model does not depend on it")
	f.Uint64Var(&fl.seed, "seed", 0, "forest seed (and the --test-fraction split)")
}

func newClassifyTrainCmd(g *globals) *cobra.Command {
	var fl classifyFlags
	cmd := &cobra.Command{
		Use:   "train --data DIR [--test DIR | --test-fraction F] --out MODEL",
		Short: "Train the classifier on a data set and evaluate it on a held-out one",
		Long: `signal classify train fits a random forest (the forest learner) on the
features of a "signal dataset" folder, by default on the extracted features less
the power levels plus the derived features of docs/SIGNAL.md (--features). It
evaluates on --test (a data set generated with another seed) or on a random
--test-fraction of the rows, and prints the overall accuracy, the accuracy in
--band (default 10:20 dB), the accuracy per SNR and the confusion matrix over
--band. The model file is a forest model (forest predict reads it too).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runClassifyTrain(cmd, g, &fl) },
	}
	cmd.Flags().StringVar(&fl.dataDir, "data", "", "training data set folder (or its features.csv); required")
	cmd.Flags().StringVar(&fl.testDir, "test", "", "test data set folder (generate it with another --seed)")
	cmd.Flags().Float64Var(&fl.testFraction, "test-fraction", 0, "hold out this fraction of --data for testing instead of --test")
	cmd.Flags().StringVar(&fl.out, "out", "", "write the model to this file")
	addClassifyTrainFlags(cmd, &fl)
	addClassifyOutputFlags(cmd, &fl)
	return cmd
}

func newClassifyEvalCmd(g *globals) *cobra.Command {
	var fl classifyFlags
	cmd := &cobra.Command{
		Use:   "eval --model MODEL --data DIR",
		Short: "Evaluate a saved classifier on a data set",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runClassifyEval(cmd, g, &fl) },
	}
	cmd.Flags().StringVar(&fl.model, "model", "", "model file written by classify train --out; required")
	cmd.Flags().StringVar(&fl.dataDir, "data", "", "data set folder (or its features.csv); required")
	addClassifyOutputFlags(cmd, &fl)
	return cmd
}

// classifyReport is the JSON printed by classify train/eval/demo --json.
type classifyReport struct {
	Train       string            `json:"train,omitempty"`
	TrainRows   int               `json:"train_rows,omitempty"`
	Test        string            `json:"test"`
	TestRows    int               `json:"test_rows"`
	Model       string            `json:"model,omitempty"`
	Features    []string          `json:"features"`
	Derived     map[string]string `json:"derived,omitempty"`
	Trees       int               `json:"trees"`
	Seed        uint64            `json:"seed"`
	FitSeconds  float64           `json:"fit_seconds,omitempty"`
	OOBAccuracy *float64          `json:"oob_accuracy,omitempty"`
	Accuracy    float64           `json:"accuracy"`
	Band        [2]float64        `json:"band_db"`
	BandAcc     *float64          `json:"band_accuracy,omitempty"`
	BandConf    [][]int           `json:"band_confusion,omitempty"`
	Eval        *modclass.Eval    `json:"eval"`
	PNGs        []string          `json:"png,omitempty"`
	Generate    []float64         `json:"generate_seconds,omitempty"`
}

func runClassifyTrain(cmd *cobra.Command, g *globals, fl *classifyFlags) error {
	eng, err := signalDevice(cmd, g)
	if err != nil {
		return err
	}
	eng.Close() // the CPU path opens no backend
	if fl.dataDir == "" {
		return errors.New("signal classify train: --data is required")
	}
	if fl.testDir != "" && fl.testFraction != 0 {
		return errors.New("signal classify train: give --test or --test-fraction, not both")
	}
	if fl.testFraction < 0 || fl.testFraction >= 1 || math.IsNaN(fl.testFraction) {
		return fmt.Errorf("signal classify train: --test-fraction %v must be in [0, 1)", fl.testFraction)
	}
	if _, _, _, err := parseSNRRange(fl.band); err != nil {
		return fmt.Errorf("signal classify train: --band: %w", err)
	}
	train, err := modclass.Load(fl.dataDir)
	if err != nil {
		return err
	}
	var test *modclass.Data
	switch {
	case fl.testDir != "":
		if test, err = modclass.Load(fl.testDir); err != nil {
			return err
		}
	case fl.testFraction > 0:
		tr, te := data.TrainTestSplit(train.Rows, fl.testFraction, fl.seed)
		if len(tr) == 0 || len(te) == 0 {
			return fmt.Errorf("signal classify train: --test-fraction %v leaves %d training and %d test rows", fl.testFraction, len(tr), len(te))
		}
		train, test = train.Subset(tr), train.Subset(te)
	}
	rep, f, err := trainAndEval(train, test, fl)
	if err != nil {
		return err
	}
	if fl.out != "" {
		if err := f.SaveFile(fl.out); err != nil {
			return err
		}
		rep.Model = fl.out
	}
	return printClassify(cmd, g, rep, test, fl)
}

// trainAndEval fits the classifier and, when test is set, evaluates it.
func trainAndEval(train, test *modclass.Data, fl *classifyFlags) (*classifyReport, *forest.Forest, error) {
	t0 := time.Now()
	f, err := modclass.Train(train, modclass.TrainOptions{Features: fl.features, Forest: forest.Options{
		Trees: fl.trees, MaxDepth: fl.maxDepth, Seed: fl.seed, Threads: fl.threads, OOB: test == nil}})
	if err != nil {
		return nil, nil, err
	}
	rep := &classifyReport{Train: train.Name, TrainRows: train.Rows, Features: f.Features, Trees: len(f.Trees), Seed: fl.seed,
		FitSeconds: time.Since(t0).Seconds(), Derived: derivedUsed(f.Features)}
	if !math.IsNaN(f.OOBScore) {
		rep.OOBAccuracy = &f.OOBScore
	}
	if test != nil {
		if err := evalInto(rep, f, test, fl); err != nil {
			return nil, nil, err
		}
	}
	return rep, f, nil
}

// derivedUsed returns the definitions of the derived features among names.
func derivedUsed(names []string) map[string]string {
	doc := modclass.DerivedDoc()
	m := map[string]string{}
	for _, n := range names {
		if d, ok := doc[n]; ok {
			m[n] = d
		}
	}
	return m
}

// evalInto evaluates f on test and fills the report's accuracy fields.
func evalInto(rep *classifyReport, f *forest.Forest, test *modclass.Data, fl *classifyFlags) error {
	e, err := modclass.Evaluate(f, test)
	if err != nil {
		return err
	}
	lo, hi, _, _ := parseSNRRange(fl.band)
	rep.Test, rep.TestRows, rep.Eval, rep.Accuracy, rep.Band = test.Name, test.Rows, e, e.Accuracy, [2]float64{lo, hi}
	if b := e.Range(lo, hi); b != nil {
		rep.BandAcc, rep.BandConf = &b.Accuracy, b.Confusion
	}
	if fl.pngConfusion != "" {
		b := e.Range(lo, hi)
		title := fmt.Sprintf("Confusion, %g to %g dB (row %%)", lo, hi)
		if b == nil {
			b, title = e, "Confusion, all SNRs (row %)"
		}
		if err := modclass.WriteConfusionPNG(fl.pngConfusion, b, title); err != nil {
			return err
		}
		rep.PNGs = append(rep.PNGs, fl.pngConfusion)
	}
	if fl.pngSNR != "" {
		if err := modclass.WriteSNRPNG(fl.pngSNR, e, "Modulation classifier accuracy vs SNR"); err != nil {
			return err
		}
		rep.PNGs = append(rep.PNGs, fl.pngSNR)
	}
	return nil
}

func runClassifyEval(cmd *cobra.Command, g *globals, fl *classifyFlags) error {
	eng, err := signalDevice(cmd, g)
	if err != nil {
		return err
	}
	eng.Close() // the CPU path opens no backend
	if fl.model == "" || fl.dataDir == "" {
		return errors.New("signal classify eval: --model and --data are required")
	}
	if _, _, _, err := parseSNRRange(fl.band); err != nil {
		return fmt.Errorf("signal classify eval: --band: %w", err)
	}
	f, err := forest.LoadFile(fl.model)
	if err != nil {
		return err
	}
	test, err := modclass.Load(fl.dataDir)
	if err != nil {
		return err
	}
	rep := &classifyReport{Model: fl.model, Features: f.Features, Trees: len(f.Trees), Seed: f.Options.Seed, Derived: derivedUsed(f.Features)}
	if err := evalInto(rep, f, test, fl); err != nil {
		return err
	}
	return printClassify(cmd, g, rep, test, fl)
}

func printClassify(cmd *cobra.Command, g *globals, rep *classifyReport, test *modclass.Data, fl *classifyFlags) error {
	if g.json {
		return printJSON(cmd.OutOrStdout(), rep)
	}
	w := cmd.OutOrStdout()
	if rep.Train != "" {
		fmt.Fprintf(w, "trained on %s: %d records, %d features, %d trees, %.2f s\n", rep.Train, rep.TrainRows, len(rep.Features), rep.Trees, rep.FitSeconds)
	}
	if rep.OOBAccuracy != nil {
		fmt.Fprintf(w, "out-of-bag accuracy %.4f\n", *rep.OOBAccuracy)
	}
	if rep.Model != "" {
		fmt.Fprintf(w, "model %s\n", rep.Model)
	}
	if test == nil {
		return nil
	}
	e := rep.Eval
	fmt.Fprintf(w, "test %s: %d records, accuracy %.4f", rep.Test, rep.TestRows, e.Accuracy)
	if rep.BandAcc != nil {
		fmt.Fprintf(w, "; %g..%g dB: %.4f", rep.Band[0], rep.Band[1], *rep.BandAcc)
	}
	fmt.Fprintln(w)
	printSNRTable(w, e)
	if rep.BandConf != nil {
		fmt.Fprintf(w, "confusion matrix, %g..%g dB (rows: true, columns: predicted):\n", rep.Band[0], rep.Band[1])
		printConfusion(w, e.Classes, rep.BandConf)
	}
	for _, p := range rep.PNGs {
		fmt.Fprintf(w, "wrote %s\n", p)
	}
	return nil
}

// printSNRTable prints the accuracy per SNR bin, overall and per class.
func printSNRTable(w io.Writer, e *modclass.Eval) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "SNR dB\trecords\taccuracy\t%s\t\n", strings.Join(e.Classes, "\t"))
	for _, b := range e.PerSNR {
		cells := make([]string, len(b.PerClass))
		for i, v := range b.PerClass {
			cells[i] = "-"
			if v >= 0 {
				cells[i] = fmt.Sprintf("%.2f", v)
			}
		}
		fmt.Fprintf(tw, "%g\t%d\t%.4f\t%s\t\n", b.SNRdB, b.Rows, b.Accuracy, strings.Join(cells, "\t"))
	}
	tw.Flush()
}

func printConfusion(w io.Writer, classes []string, m [][]int) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "\t%s\t\n", strings.Join(classes, "\t"))
	for t, row := range m {
		cells := make([]string, len(row))
		for p, v := range row {
			cells[p] = fmt.Sprint(v)
		}
		fmt.Fprintf(tw, "%s\t%s\t\n", classes[t], strings.Join(cells, "\t"))
	}
	tw.Flush()
}

func newClassifyDemoCmd(g *globals) *cobra.Command {
	var fl classifyFlags
	var dfl datasetFlags
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Generate a small train/test pair in a temporary folder, train, and print the accuracy per SNR",
		Long: `signal classify demo runs the whole pipeline at a small scale: it generates a
training set (--seed) and a test set (--seed + 1) of the eight default
modulations in a temporary folder (removed afterwards), trains the forest and
prints the accuracy per SNR and the confusion matrix over --band. The numbers of
docs/SIGNAL.md come from larger runs of "signal dataset" and "classify train".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runClassifyDemo(cmd, g, &fl, &dfl) },
	}
	f := cmd.Flags()
	f.StringVar(&dfl.mods, "mods", "bpsk,qpsk,8psk,16qam,64qam,gfsk,fm,am", "comma-separated modulations")
	f.IntVar(&dfl.perClass, "per-class", 64, "training records per modulation (the test set has as many)")
	f.StringVar(&dfl.snr, "snr", "-10:20:2", "SNR range MIN:MAX[:STEP] in dB")
	f.Float64Var(&dfl.seconds, "seconds", 0.05, "record length in seconds")
	f.Float64Var(&dfl.rate, "rate", 200000, "sample rate in Hz")
	f.IntVar(&dfl.workers, "workers", 0, "goroutines for the data sets (0 = GOMAXPROCS)")
	addClassifyTrainFlags(cmd, &fl)
	addClassifyOutputFlags(cmd, &fl)
	return cmd
}

func runClassifyDemo(cmd *cobra.Command, g *globals, fl *classifyFlags, dfl *datasetFlags) error {
	eng, err := signalDevice(cmd, g)
	if err != nil {
		return err
	}
	eng.Close() // the CPU path opens no backend
	if _, _, _, err := parseSNRRange(fl.band); err != nil {
		return fmt.Errorf("signal classify demo: --band: %w", err)
	}
	dfl.sps = "4,8,16"
	o, err := dfl.options()
	if err != nil {
		return fmt.Errorf("signal classify demo: %w", err)
	}
	tmp, err := os.MkdirTemp("", "gotrain-modclass-demo-")
	if err != nil {
		return fmt.Errorf("signal classify demo: %w", err)
	}
	defer os.RemoveAll(tmp)
	var gen []float64
	var sets [2]*modclass.Data
	for i, name := range []string{"train", "test"} {
		oo := o
		oo.Seed = fl.seed + uint64(i)
		dir := filepath.Join(tmp, name)
		info, err := modclass.Generate(dir, oo, false)
		if err != nil {
			return fmt.Errorf("signal classify demo: %w", err)
		}
		gen = append(gen, info.Seconds)
		if sets[i], err = modclass.Load(dir); err != nil {
			return err
		}
	}
	rep, _, err := trainAndEval(sets[0], sets[1], fl)
	if err != nil {
		return err
	}
	rep.Generate = gen
	if !g.json {
		fmt.Fprintf(cmd.OutOrStdout(), "demo: %d + %d records of %d samples at %g Hz (%s), generated in %.1f + %.1f s\n",
			sets[0].Rows, sets[1].Rows, o.Samples, o.SampleRate, strings.Join(sets[0].Classes(), " "), gen[0], gen[1])
	}
	return printClassify(cmd, g, rep, sets[1], fl)
}
