package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/models/charlstm"
	"github.com/gotrain/gotrain/train"
)

// trainCommands are the neural training commands, built fresh.
func trainCommands() map[string]*cobra.Command {
	g := &globals{}
	return map[string]*cobra.Command{
		"lm lstm train": newLMTrainCmd(g), "lm transformer train": newLMTransformerTrainCmd(g), "moe train": newMoETrainCmd(g),
	}
}

// TestTrainFlagVocabulary checks that every training command spells the
// shared options the same way, with the same kind of value.
func TestTrainFlagVocabulary(t *testing.T) {
	want := map[string]string{
		"lr": "float64", "early-stop-patience": "int", "early-stop-monitor": "string", "early-stop-mode": "string",
		"early-stop-min-delta": "float64", "steps": "int", "epochs": "int", "batch-size": "string", "out": "string",
		"resume": "string", "seed": "int64", "accumulate": "int", "precision": "string", "devices": "string",
		"optimizer": "string", "no-checkpoint": "bool", "metrics-log": "string", "progress": "string",
	}
	for name, cmd := range trainCommands() {
		for flag, typ := range want {
			f := cmd.Flags().Lookup(flag)
			if f == nil {
				t.Errorf("%s: no --%s", name, flag)
				continue
			}
			if f.Value.Type() != typ || f.Hidden || f.Deprecated != "" {
				t.Errorf("%s: --%s is a %s (hidden %v, deprecated %q), want a visible %s", name, flag, f.Value.Type(), f.Hidden, f.Deprecated, typ)
			}
		}
		if f := cmd.Flags().Lookup("resume"); f != nil && f.NoOptDefVal != train.ResumeLatest {
			t.Errorf("%s: a bare --resume means %q, want %q", name, f.NoOptDefVal, train.ResumeLatest)
		}
		if f := cmd.Flags().Lookup("checkpoint-dir"); f == nil || !f.Hidden || f.Deprecated == "" {
			t.Errorf("%s: --checkpoint-dir should be a hidden, deprecated flag: %+v", name, f)
		}
		// Every hidden flag is a deprecated one, and says what to use.
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Hidden && !strings.HasPrefix(f.Deprecated, "use --") {
				t.Errorf("%s: --%s is hidden without a deprecation naming its replacement", name, f.Name)
			}
		})
	}
}

// TestConfigFieldFlags checks that every train.Config field has a flag on
// every training command (save those a command sets itself) and that the
// error mapping (fieldFlags) finds it.
func TestConfigFieldFlags(t *testing.T) {
	c := train.DefaultConfig()
	fs := trainFlagSet(&c)
	fields := fieldFlags(fs, &c)
	set := map[string]map[string]bool{ // flags a command does not offer, because it sets the field itself
		"moe train":            {"plots-dir": true, "perf-summary": true},
		"lm lstm train":        {},
		"lm transformer train": {"distributed": true, "time-limit": true}, // trains in one process, two phases (a budget of each is not offered)
	}
	typ := reflect.TypeOf(train.Config{})
	for i := range typ.NumField() {
		field := typ.Field(i).Name
		if field == "Run" {
			continue // set by the models: what a run trains, for its manifest
		}
		flag, ok := fields[field]
		if !ok {
			t.Errorf("train.Config.%s has no flag", field)
			continue
		}
		for name, cmd := range trainCommands() {
			if !set[name][flag] && cmd.Flags().Lookup(flag) == nil {
				t.Errorf("%s: no --%s for Config.%s", name, flag, field)
			}
		}
	}
	for field, want := range map[string]string{"LearningRate": "lr", "CheckpointDir": "out", "GPUSampleInterval": "gpu-sample-interval",
		"EarlyStopMinDelta": "early-stop-min-delta", "StopOnNonFinite": "stop-on-nan", "BatchSize": "batch-size"} {
		if fields[field] != want {
			t.Errorf("Config.%s: flag %q, want %q", field, fields[field], want)
		}
	}
}

// TestFieldFlags checks the mapping from option names to flags: bound
// fields by name, by type and by parent field, the first root first,
// deprecated aliases ignored, unbound options only where the flag exists,
// and nothing for a flag bound to no option (--out of a CLI variable).
func TestFieldFlags(t *testing.T) {
	type phase struct{ Steps, Epochs int }
	type opts struct {
		Trees    int
		Pretrain phase
		Arch     struct{ FFN string }
		hidden   int
	}
	var o opts
	var both phase
	var out string
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	fs.IntVar(&both.Steps, "steps", 0, "")
	fs.IntVar(&o.Trees, "trees", 0, "")
	fs.IntVar(&o.Pretrain.Steps, "pretrain-max-steps", 0, "")
	fs.StringVar(&o.Arch.FFN, "ffn", "", "")
	fs.StringVar(&out, "out", "", "")
	fs.String("hidden", "", "")
	deprecatedAlias(fs, "trees", "n-trees")
	got := fieldFlags(fs, &both, &o)
	want := map[string]string{"Steps": "steps", "phase.Steps": "steps", "Trees": "trees", "opts.Trees": "trees",
		"Pretrain.Steps": "pretrain-max-steps", "FFN": "ffn", "Arch.FFN": "ffn", "CheckpointDir": "out", "Hidden": "hidden"}
	for name, flag := range want {
		if got[name] != flag {
			t.Errorf("%s: flag %q, want %q", name, got[name], flag)
		}
	}
	for _, name := range []string{"Out", "Epochs", "BatchSize", "Resume", "hidden", ".FFN"} {
		if flag, ok := got[name]; ok {
			t.Errorf("%s maps to --%s, want no flag", name, flag)
		}
	}
}

// TestFlagsDocumented checks that every Config flag exists with the
// default of train.DefaultConfig and is listed, with that default, in
// docs/TRAINING.md, and that the flags parse into the Config.
func TestFlagsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/TRAINING.md")
	if err != nil {
		t.Fatal(err)
	}
	c := train.DefaultConfig()
	fs := trainFlagSet(&c)
	n := 0
	fs.VisitAll(func(f *pflag.Flag) {
		n++
		def := f.DefValue
		row := fmt.Sprintf("| `--%s` | `%s` |", f.Name, def)
		if def == "" {
			row = fmt.Sprintf("| `--%s` | `\"\"`", f.Name)
		}
		if !strings.Contains(string(doc), row) {
			t.Errorf("docs/TRAINING.md lacks the row %q", row)
		}
	})
	if n < 30 {
		t.Errorf("only %d flags", n)
	}
	if err := fs.Parse([]string{"--accumulate", "4", "--precision", "bf16-mixed", "--clip-norm", "1.5", "--seed", "-3"}); err != nil {
		t.Fatal(err)
	}
	if c.Accumulate != 4 || c.Precision != train.PrecisionBF16Mixed || c.ClipNorm != 1.5 || c.Seed != -3 {
		t.Errorf("parsed %+v", c)
	}
}

func TestFlagError(t *testing.T) {
	fields := map[string]string{"TopK": "top-k", "BatchSize": "batch-size", "Resume": "resume", "NoCheckpoint": "no-checkpoint",
		"DeviceDataBudgetMiB": "device-data-budget", "Devices": "devices", "Epochs": "epochs", "Pretrain.Steps": "pretrain-max-steps",
		"Both.Steps": "steps", "DataSpec.Dataset": "dataset", "FFN": "ffn"}
	base := errors.New("moe: TopK 3: want 1 or 2")
	err := flagError(fmt.Errorf("moe train: %w", base), fields)
	if err.Error() != "moe train: moe: --top-k 3: want 1 or 2" || !errors.Is(err, base) {
		t.Errorf("flagError = %q (wraps the library error: %v)", err, errors.Is(err, base))
	}
	for in, want := range map[string]string{
		"train: BatchSize 600 is larger than the data set (500 examples)": "train: --batch-size 600 is larger than the data set (500 examples)",
		"train: Resume and NoCheckpoint exclude each other":               "train: --resume and --no-checkpoint exclude each other",
		"train: Resume=runs/x: no such file":                              "train: --resume=runs/x: no such file",
		"x: too short for one window of SeqLength+1 = 9":                  "x: too short for one window of SeqLength+1 = 9", // not an option of this command
		"train: DeviceDataBudgetMiB works on one device only (Devices 2)": "train: --device-data-budget works on one device only (--devices 2)",
		"corpus /home/Steps/x.txt is empty: ctx.Seed":                     "corpus /home/Steps/x.txt is empty: ctx.Seed",
		`"Epochs": 3`: `"--epochs": 3`,
		// Qualified names count whole (and only as words of their own).
		"x: Pretrain.Steps -2, not ctx.Pretrain.Steps": "x: --pretrain-max-steps -2, not ctx.Pretrain.Steps",
		"x: Both.Steps 0":                         "x: --steps 0",
		"forest: DataSpec.Dataset \"x\": unknown": "forest: --dataset \"x\": unknown",
		"transformer: FFN \"bogus\"":              "transformer: --ffn \"bogus\"",
		// Words that are no option of the command stay.
		"train: RESOURCE_EXHAUSTED: Out of memory while trying to allocate": "train: RESOURCE_EXHAUSTED: Out of memory while trying to allocate",
	} {
		if got := flagError(errors.New(in), fields).Error(); got != want {
			t.Errorf("flagError(%q) = %q, want %q", in, got, want)
		}
	}
	if flagError(nil, fields) != nil {
		t.Error("flagError(nil) is not nil")
	}
}

// TestDeprecatedAliases trains with the spellings of earlier releases: they
// still set the options, and each prints a deprecation warning on standard
// error, none on standard output (which holds the JSON report).
func TestDeprecatedAliases(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ckpt")
	out, errOut, err := run(t, "--json", "--device", "go", "lm", "lstm", "train", "--data", lmCorpus(t), "--hidden-size", "8",
		"--layers", "1", "--seq-length", "8", "--batch-size", "16", "--progress", "off",
		"--learning-rate", "0.02", "--patience", "3", "--max-steps", "2", "--checkpoint-dir", dir)
	if err != nil {
		t.Fatalf("train: %v\n%s\n%s", err, out, errOut)
	}
	var rep charlstm.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("standard output is not the JSON report: %v\n%s", err, out)
	}
	c := rep.Config
	if c.LearningRate != 0.02 || c.EarlyStopPatience != 3 || c.Steps != 2 || c.CheckpointDir != dir || rep.Result.Train.Steps != 2 {
		t.Errorf("config %+v: the aliases did not take effect", c)
	}
	for _, w := range []string{"--learning-rate has been deprecated, use --lr", "--patience has been deprecated, use --early-stop-patience",
		"--max-steps has been deprecated, use --steps", "--checkpoint-dir has been deprecated, use --out"} {
		if !strings.Contains(errOut, w) {
			t.Errorf("standard error lacks %q:\n%s", w, errOut)
		}
	}
	// The canonical spellings print no warning.
	_, errOut, err = run(t, "--device", "go", "lm", "lstm", "train", "--data", lmCorpus(t), "--hidden-size", "8", "--layers", "1",
		"--seq-length", "8", "--batch-size", "16", "--progress", "off", "--lr", "0.02", "--steps", "1", "--no-checkpoint")
	if err != nil || strings.Contains(errOut, "deprecated") {
		t.Errorf("canonical flags: %v, warnings:\n%s", err, errOut)
	}
}

// TestResumeForms checks --resume (the newest checkpoint of --out),
// --resume=PATH, the deprecated `--resume PATH` and that other positional
// arguments are refused.
func TestResumeForms(t *testing.T) {
	corpus := lmCorpus(t)
	dir := filepath.Join(t.TempDir(), "run")
	train := func(extra ...string) (charlstm.Report, string, error) {
		t.Helper()
		args := append([]string{"--json", "--device", "go", "lm", "lstm", "train", "--data", corpus, "--hidden-size", "8",
			"--layers", "1", "--seq-length", "8", "--batch-size", "16", "--progress", "off"}, extra...)
		out, errOut, err := run(t, args...)
		var rep charlstm.Report
		if err == nil {
			if jerr := json.Unmarshal([]byte(out), &rep); jerr != nil {
				t.Fatalf("not JSON: %v\n%s", jerr, out)
			}
		}
		return rep, errOut, err
	}
	if _, _, err := train("--out", dir, "--steps", "2"); err != nil {
		t.Fatal(err)
	}
	rep, _, err := train("--out", dir, "--steps", "3", "--resume")
	if err != nil || rep.Result.Train.Resumed != 2 || rep.Result.Train.Steps != 3 {
		t.Fatalf("--resume: %v, resumed at %d to %d; want 2 to 3", err, rep.Result.Train.Resumed, rep.Result.Train.Steps)
	}
	// --resume=PATH reads PATH (and writes there), whatever --out says.
	rep, errOut, err := train("--out", filepath.Join(t.TempDir(), "other"), "--steps", "4", "--resume="+dir)
	if err != nil || rep.Result.Train.Resumed != 3 || rep.Result.Train.Steps != 4 || strings.Contains(errOut, "deprecated") {
		t.Fatalf("--resume=PATH: %v, resumed at %d to %d; want 3 to 4\n%s", err, rep.Result.Train.Resumed, rep.Result.Train.Steps, errOut)
	}
	// The old spelling, with a space, still works and warns.
	rep, errOut, err = train("--out", filepath.Join(t.TempDir(), "other"), "--resume", dir, "--steps", "5")
	if err != nil || rep.Result.Train.Resumed != 4 || rep.Result.Train.Steps != 5 {
		t.Fatalf("--resume PATH: %v, resumed at %d to %d; want 4 to 5", err, rep.Result.Train.Resumed, rep.Result.Train.Steps)
	}
	if !strings.Contains(errOut, "use --resume="+dir) {
		t.Errorf("--resume PATH: no deprecation warning:\n%s", errOut)
	}
	// A bare --resume with nothing to resume is an error, not a fresh start.
	if _, _, err = train("--out", filepath.Join(t.TempDir(), "fresh"), "--steps", "1", "--resume"); err == nil || !strings.Contains(err.Error(), "no valid checkpoint") {
		t.Errorf("--resume without checkpoints: %v; want an error", err)
	}
	for _, args := range [][]string{{"--out", dir, "stray"}, {"--out", dir, "--resume", dir, "stray"}, {"--out", dir, "--resume=" + dir, "stray"}} {
		if _, _, err := train(append(args, "--steps", "6")...); err == nil || !strings.Contains(err.Error(), "unexpected argument") {
			t.Errorf("%q: %v, want an unexpected-argument error", args, err)
		}
	}
	// The same flag on the other commands.
	for _, cmd := range [][]string{{"moe", "train", "--dataset", "digits"}, {"lm", "transformer", "train", "--pretrain-data", corpus}} {
		args := append([]string{"--device", "go"}, cmd...)
		if _, _, err := run(t, append(args, "--resume", "nowhere", "--steps", "1", "--out", t.TempDir())...); err == nil || !strings.Contains(err.Error(), "nowhere") {
			t.Errorf("%v --resume nowhere: %v, want an error naming the path", cmd, err)
		}
	}
}

// TestTransformerBatchSizeBothPhases checks that --batch-size and --epochs
// set both phases unless the phase's flag is given.
func TestTransformerBatchSizeBothPhases(t *testing.T) {
	corpus, inst := transformerFiles(t)
	for _, tc := range []struct {
		args                []string
		wantPre, wantInst   int
		wantPreEp, wantInEp int
	}{
		{nil, 32, 16, 1, 3},
		{[]string{"--batch-size", "6"}, 6, 6, 1, 3},
		{[]string{"--batch-size", "6", "--instruction-batch-size", "4", "--epochs", "2"}, 6, 4, 2, 2},
		{[]string{"--batch-size", "auto", "--pretrain-batch-size", "5", "--instruction-epochs", "1", "--epochs", "4"}, 5, 24, 4, 1}, // auto on the host: 32, at most the 24 examples
	} {
		args := append([]string{"--json", "--device", "go", "lm", "transformer", "train", "--pretrain-data", corpus, "--instruction-data", inst,
			"--layers", "1", "--heads", "2", "--width", "8", "--context", "12", "--stride", "2", "--steps", "1", "--progress", "off", "--no-checkpoint"}, tc.args...)
		out, errOut, err := run(t, args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", tc.args, err, errOut)
		}
		var rep struct {
			Result struct {
				Pretrain, Instruct struct {
					Phase struct {
						BatchSize int `json:"batch_size"`
						Epochs    int `json:"epochs"`
					} `json:"phase"`
				}
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		p, i := rep.Result.Pretrain.Phase, rep.Result.Instruct.Phase
		if p.BatchSize != tc.wantPre || i.BatchSize != tc.wantInst || p.Epochs != tc.wantPreEp || i.Epochs != tc.wantInEp {
			t.Errorf("%v: pretrain batch %d x %d epochs, instruct %d x %d; want %d x %d, %d x %d", tc.args, p.BatchSize, p.Epochs,
				i.BatchSize, i.Epochs, tc.wantPre, tc.wantPreEp, tc.wantInst, tc.wantInEp)
		}
	}
}

// TestMoEMNISTDefaultDir checks that moe train looks for MNIST in
// data.MNISTDir's folder by default, names it when it falls back to the
// digits, and that --dataset mnist without the files is
// data.MNISTMissingError.
func TestMoEMNISTDefaultDir(t *testing.T) {
	base := t.TempDir()
	t.Setenv(data.DataDirEnv, base)
	dir := filepath.Join(base, "mnist")
	_, _, err := run(t, "--device", "go", "moe", "train", "--dataset", "mnist", "--out", t.TempDir())
	if !errors.Is(err, data.ErrMNISTMissing) || !strings.Contains(err.Error(), dir) {
		t.Errorf("--dataset mnist without files: %v; want data.MNISTMissingError(%s)", err, dir)
	}
	_, errOut, err := run(t, "--device", "go", "moe", "train", "--out", t.TempDir(), "--steps", "1", "--hidden", "8", "--experts", "2", "--progress", "off")
	if err != nil || !strings.Contains(errOut, "no MNIST IDX files in "+dir) {
		t.Errorf("--dataset auto without MNIST: %v; want a log line naming %s:\n%s", err, dir, errOut)
	}
	if f := newMoETrainCmd(&globals{}).Flags().Lookup("download"); f == nil || !strings.Contains(f.Usage, dir) {
		t.Errorf("--download's help should say where it downloads (%s): %+v", dir, f)
	}
}

// TestMoECheckpointDirAlias checks that moe train's deprecated
// --checkpoint-dir still names the checkpoints' folder, with a warning.
func TestMoECheckpointDirAlias(t *testing.T) {
	out, ck := t.TempDir(), filepath.Join(t.TempDir(), "ck")
	_, errOut, err := run(t, "--device", "go", "moe", "train", "--dataset", "digits", "--out", out, "--checkpoint-dir", ck,
		"--steps", "1", "--hidden", "8", "--experts", "2", "--progress", "off")
	if err != nil {
		t.Fatal(err)
	}
	if files, _ := filepath.Glob(filepath.Join(ck, "run-*", "ckpt-*")); len(files) == 0 {
		t.Errorf("no checkpoint in --checkpoint-dir %s", ck)
	}
	if !strings.Contains(errOut, "--checkpoint-dir has been deprecated") {
		t.Errorf("no deprecation warning:\n%s", errOut)
	}
}

// TestSharedFlagValues checks --early-stop-patience 0 (early stopping off,
// on every command) and --batch-size auto (the host default).
func TestSharedFlagValues(t *testing.T) {
	out, errOut, err := run(t, "--json", "--device", "go", "lm", "lstm", "train", "--data", lmCorpus(t), "--hidden-size", "8",
		"--layers", "1", "--seq-length", "8", "--progress", "off", "--steps", "1", "--no-checkpoint",
		"--early-stop-patience", "0", "--batch-size", "auto")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	var rep charlstm.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Config.EarlyStopMonitor != "" || rep.BatchSize != 64 || rep.Config.BatchSize != 64 {
		t.Errorf("early-stop monitor %q, batch size %d (config %d); want off and 64 (auto on the host)", rep.Config.EarlyStopMonitor, rep.BatchSize, rep.Config.BatchSize)
	}
	if _, errOut, err := run(t, "--device", "go", "moe", "train", "--dataset", "digits", "--out", t.TempDir(), "--steps", "1",
		"--hidden", "8", "--experts", "2", "--progress", "off", "--early-stop-patience", "0", "--early-stop-monitor", "loss"); err != nil {
		t.Errorf("moe train --early-stop-patience 0: %v\n%s", err, errOut)
	}
	for _, bad := range []string{"0", "-3", "many"} {
		if _, _, err := run(t, "--device", "go", "moe", "train", "--dataset", "digits", "--batch-size", bad); err == nil ||
			!strings.Contains(err.Error(), `--batch-size "`+bad+`"`) {
			t.Errorf("--batch-size %s: %v", bad, err)
		}
	}
}

// trainFlagSet returns a flag set with every shared training flag bound
// to c (addConfigFlags, then --batch-size, --out and --resume with the
// defaults of lm lstm train).
func trainFlagSet(c *train.Config) *pflag.FlagSet {
	fs := pflag.NewFlagSet("train", pflag.ContinueOnError)
	addConfigFlags(fs, c)
	var rf runFlags
	fs.StringVar(&rf.batchSize, "batch-size", "32", "")
	fs.StringVar(&rf.out, "out", "checkpoints", "")
	fs.StringVar(&rf.resume, "resume", "", "")
	fs.BoolVar(&rf.distributed, "distributed", false, "")
	return fs
}
