package main

// The one vocabulary of training flags shared by `lm lstm train`,
// `lm transformer train` and `moe train`: every spelling is defined here
// once. docs/TRAINING.md lists the flags.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/gomlx/gomlx/backends"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/dist"
	"github.com/gotrain/gotrain/models/text"
	"github.com/gotrain/gotrain/train"
)

// runFlags hold the shared training flags that are not plain train.Config
// fields.
type runFlags struct {
	// batchSize is --batch-size: N or auto.
	batchSize string
	// resume is --resume: "" (no), train.ResumeLatest, or a checkpoint
	// file or directory (train.Config.SetRun).
	resume string
	// out is --out, the run's output directory.
	out string
	// distributed is --distributed (addDistributedFlag): train data
	// parallel across the processes of an MPI launch.
	distributed bool
}

// unboundOptions are the options set from a flag that is not bound to
// them (a string parsed into numbers, a CLI-only variable), for
// fieldFlags: each applies to a command that has the flag.
var unboundOptions = map[string]string{"BatchSize": "batch-size", "CheckpointDir": "out", "Resume": "resume",
	"DataSpec.Holdout": "holdout", "Hidden": "hidden", "SNRMinDB": "snr", "SNRMaxDB": "snr", "SNRStepDB": "snr",
	"TopK": "top-k", "Proba": "proba", "Comm": "distributed"}

// fieldFlags maps the option names in library errors to the flags of fs
// that set them: every field of the structs roots point to (nested ones
// too) that a flag is bound to, by its name, by its struct's type and its
// name (RunSpec.Band) and by its parent field and its name (Pretrain.Steps),
// the first root's first; then unboundOptions. Only options of this
// command map, so a word that is no option ("Out of memory") stays.
func fieldFlags(fs *pflag.FlagSet, roots ...any) map[string]string {
	bound := map[uintptr]string{}
	fs.VisitAll(func(f *pflag.Flag) {
		if v := reflect.ValueOf(f.Value); f.Deprecated == "" && v.Kind() == reflect.Pointer {
			bound[v.Pointer()] = f.Name
		}
	})
	fields := map[string]string{}
	var walk func(v reflect.Value, parent string)
	walk = func(v reflect.Value, parent string) {
		for i := range v.NumField() {
			f, fv := v.Type().Field(i), v.Field(i)
			if flag, ok := bound[fv.Addr().Pointer()]; ok && f.IsExported() && fv.Kind() != reflect.Struct {
				for _, name := range []string{f.Name, v.Type().Name() + "." + f.Name, parent + "." + f.Name} {
					if _, taken := fields[name]; !taken && name[0] != '.' { // no type or parent: no qualified name
						fields[name] = flag
					}
				}
			} else if fv.Kind() == reflect.Struct && f.IsExported() {
				walk(fv, f.Name)
			}
		}
	}
	for _, r := range roots {
		walk(reflect.ValueOf(r).Elem(), "")
	}
	for option, flag := range unboundOptions {
		if _, taken := fields[option]; !taken && fs.Lookup(flag) != nil {
			fields[option] = flag
		}
	}
	return fields
}

// addConfigFlags registers a flag for every plain option of c (all but
// BatchSize, Resume and CheckpointDir, which addTrainFlags spells), with
// c's current values as defaults, skipping the names in omit.
func addConfigFlags(fs *pflag.FlagSet, c *train.Config, omit ...string) {
	var all pflag.FlagSet
	all.StringVar(&c.Optimizer, "optimizer", c.Optimizer, "optimizer: adam, adamw or sgd")
	all.Float64Var(&c.LearningRate, "lr", c.LearningRate, "peak learning rate")
	all.Float64Var(&c.WeightDecay, "weight-decay", c.WeightDecay, "adamw decoupled weight decay")
	all.IntVar(&c.WarmupSteps, "warmup-steps", c.WarmupSteps, "linear learning-rate warm-up, in optimizer steps")
	all.BoolVar(&c.Cosine, "cosine", c.Cosine, "cosine learning-rate decay to --min-lr after warm-up")
	all.Float64Var(&c.MinLearningRate, "min-lr", c.MinLearningRate, "final learning rate of the cosine schedule")
	all.IntVar(&c.Accumulate, "accumulate", c.Accumulate, "micro-batches whose gradients are averaged per optimizer step")
	all.Float64Var(&c.ClipNorm, "clip-norm", c.ClipNorm, "clip the global gradient L2 norm to this value (0: off)")
	all.IntVar(&c.Steps, "steps", c.Steps, "cap on the optimizer steps (0: run --epochs)")
	all.IntVar(&c.Epochs, "epochs", c.Epochs, "passes over the data when --steps is 0")
	all.DurationVar(&c.TimeLimit, "time-limit", c.TimeLimit, "wall-clock budget of the run, such as 60m: after the warm-up the run times its steps and an evaluation, plans the steps that fit (the cosine schedule ends there) and ends with a final evaluation and checkpoint within it (0: none)")
	all.Int64Var(&c.Seed, "seed", c.Seed, "seed of initialisation, shuffling and the graph RNG")
	all.StringVar((*string)(&c.Precision), "precision", string(c.Precision), "precision: 32, bf16-mixed, 16-mixed or auto")
	all.BoolVar(&c.DynamicLossScaling, "loss-scaling", c.DynamicLossScaling, "dynamic loss scaling (always on with 16-mixed)")
	all.StringVar(&c.EarlyStopMonitor, "early-stop-monitor", c.EarlyStopMonitor, `metric watched for early stopping: "loss" or an evaluation metric such as "val_loss" (empty: off)`)
	all.IntVar(&c.EarlyStopPatience, "early-stop-patience", c.EarlyStopPatience, "checks without improvement before stopping (0: no early stopping)")
	all.Float64Var(&c.EarlyStopMinDelta, "early-stop-min-delta", c.EarlyStopMinDelta, "least change that counts as an improvement")
	all.StringVar(&c.EarlyStopMode, "early-stop-mode", c.EarlyStopMode, "min or max: whether lower or higher is better")
	all.BoolVar(&c.StopOnNonFinite, "stop-on-nan", c.StopOnNonFinite, "stop with an error on a NaN or infinite loss")
	all.IntVar(&c.CheckpointEvery, "checkpoint-every", c.CheckpointEvery, "checkpoint every N optimizer steps (0: only at the end)")
	all.IntVar(&c.KeepBest, "keep-best", c.KeepBest, "best checkpoints kept besides the last")
	all.BoolVar(&c.NoCheckpoint, "no-checkpoint", c.NoCheckpoint, "write no checkpoints")
	all.StringVar(&c.MetricsLog, "metrics-log", c.MetricsLog, "JSON-lines metrics file (empty: none)")
	all.IntVar(&c.LogEvery, "log-every", c.LogEvery, "log metrics every N optimizer steps")
	all.IntVar(&c.EvalEvery, "eval-every", c.EvalEvery, "run the evaluation (validation metrics) every N optimizer steps and at the end (0: every --log-every steps)")
	all.StringVar(&c.PerfSummary, "perf-summary", c.PerfSummary, "performance summary file (empty: none)")
	all.StringVar(&c.Progress, "progress", c.Progress, "progress display: auto, bar, plain or off")
	all.DurationVar(&c.ProgressInterval, "progress-interval", c.ProgressInterval, "least time between plain progress lines")
	all.DurationVar(&c.GPUSampleInterval, "gpu-sample-interval", c.GPUSampleInterval, "least time between GPU samples in the metrics log (0: off)")
	all.IntVar(&c.DeviceDataBudgetMiB, "device-data-budget", c.DeviceDataBudgetMiB, "upload the data set to the device when it takes at most this many MiB (0: stream from the host)")
	all.StringVar(&c.Devices, "devices", c.Devices, "devices to train on, data parallel: N or all")
	all.StringVar(&c.PlotsDir, "plots-dir", c.PlotsDir, "directory for PNG plots of the metrics at the end of a run (empty: none)")
	all.StringVar(&c.TensorBoardDir, "tensorboard", c.TensorBoardDir, "directory for a TensorBoard event file of the run's metrics (empty: none)")
	all.Float64Var(&c.EMADecay, "ema", c.EMADecay, "keep an exponential moving average of the weights with this decay per step, such as 0.999, used by evaluation and the saved model (0: off)")
	all.BoolVar(&c.FindLR, "find-lr", c.FindLR, "run the learning-rate range test instead of training: print the suggested --lr (and plot it in the plots folder); writes no checkpoint")
	all.IntVar(&c.FindLRSteps, "find-lr-steps", c.FindLRSteps, "steps of the learning-rate range test")
	all.Float64Var(&c.FindLRMin, "find-lr-min", c.FindLRMin, "learning rate of the range test's first step")
	all.Float64Var(&c.FindLRMax, "find-lr-max", c.FindLRMax, "learning rate of the range test's last step (an exponential ramp from --find-lr-min)")
	all.VisitAll(func(f *pflag.Flag) {
		if !slices.Contains(omit, f.Name) {
			fs.AddFlag(f)
		}
	})
}

// addTrainFlags registers the shared training flags of a neural command:
// every Config flag (addConfigFlags, less omit), --batch-size N|auto and
// --out DIR (their defaults rf's values, batchUsage and outUsage their
// help) and --resume[=PATH], and makes deprecation warnings go to the
// command's standard error.
func addTrainFlags(cmd *cobra.Command, cfg *train.Config, rf *runFlags, batchUsage, outUsage string, omit ...string) {
	f := cmd.Flags()
	f.SetOutput(errWriter{cmd})
	addConfigFlags(f, cfg, omit...)
	f.StringVar(&rf.batchSize, "batch-size", rf.batchSize, batchUsage)
	f.StringVar(&rf.out, "out", rf.out, outUsage)
	f.StringVar(&rf.resume, "resume", "", "continue the newest run of this model and architecture in --out (--resume), or the run folder or checkpoint file PATH (--resume=PATH); nothing valid to resume from is an error")
	f.Lookup("resume").NoOptDefVal = train.ResumeLatest
	cmd.Args = resumeArgs(rf)
}

// addDistributedFlag adds --distributed to a training command whose
// model trains across ranks (moe train, lm lstm train).
func addDistributedFlag(cmd *cobra.Command, rf *runFlags) {
	cmd.Flags().BoolVar(&rf.distributed, "distributed", false, "train data parallel across the processes of an MPI launcher (mpirun -np N gotrain ..., srun, an MPIJob; a binary built with -tags mpi): each process takes an equal share of every --batch-size batch on its own --device, gradients are summed across the processes before each step; rank 0 writes the logs, checkpoints and report (docs/DISTRIBUTED.md)")
}

// joinRanks, with --distributed, joins the MPI launch's processes and
// makes cfg train across them; runTraining leaves them.
func (g *globals) joinRanks(name string, rf *runFlags, cfg *train.Config) error {
	if !rf.distributed {
		return nil
	}
	comm, err := dist.World()
	if err != nil {
		return fmt.Errorf("%s --distributed: %w", name, err)
	}
	cfg.Comm, g.comm = comm, comm
	return nil
}

// leaveRanks ends this process's part in a launch of several when its
// command ends with err: with nil it closes comm (MPI_Finalize, which every
// rank calls), and returns the error of that; after a failure it leaves
// without finalising, so that the launcher (mpirun) ends every process of
// the job instead of the others waiting in a collective call for this one
// forever.
//
// An interrupted training run (train.ErrInterrupted) ended on every rank
// at the same step: it closes, so that the other ranks wait in
// MPI_Finalize while rank 0 writes its checkpoint and report, instead of
// their exit making the launcher kill rank 0 halfway.
func leaveRanks(comm dist.Comm, err error) error {
	if err != nil && comm.Size() > 1 && !errors.Is(err, train.ErrInterrupted) {
		return nil
	}
	return comm.Close()
}

// deprecatedAlias registers old names of the flag canonical: each sets
// its value and has its default, is hidden from the help and prints a
// deprecation warning when used.
func deprecatedAlias(fs *pflag.FlagSet, canonical string, old ...string) {
	c := fs.Lookup(canonical)
	for _, name := range old {
		fs.AddFlag(&pflag.Flag{Name: name, Usage: c.Usage, Value: c.Value, DefValue: c.DefValue})
		_ = fs.MarkDeprecated(name, "use --"+canonical) // hides it too
	}
}

// errWriter writes to a command's standard error as it is when written
// to (tests set it after the flags are registered). pflag writes its
// deprecation warnings to the flag set's output; cobra would otherwise
// copy them to standard output when that is set.
type errWriter struct{ cmd *cobra.Command }

func (w errWriter) Write(p []byte) (int, error) { return w.cmd.ErrOrStderr().Write(p) }

// resumeArgs accepts no positional argument, except one right after a
// bare --resume: the spelling `--resume PATH` of earlier releases, which
// still works for one release with a deprecation warning.
func resumeArgs(rf *runFlags) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		if len(args) == 1 && rf.resume == train.ResumeLatest && cmd.Flags().Changed("resume") {
			rf.resume = args[0]
			fmt.Fprintf(cmd.ErrOrStderr(), "warning: --resume %s (with a space) is deprecated and will stop working in the next release: use --resume=%s\n", args[0], args[0])
			return nil
		}
		return fmt.Errorf("unexpected argument(s) %q: %s takes none (resume from a checkpoint with --resume=PATH)", args, cmd.CommandPath())
	}
}

// fieldToken finds the exported identifiers in a library error, which
// name the option that is wrong, qualified ones (Pretrain.Steps) whole.
var fieldToken = regexp.MustCompile(`[A-Z][A-Za-z0-9]*(\.[A-Z][A-Za-z0-9]*)*`)

// flagError rewrites the option names in err's message into the flags
// that set them (fields, from fieldFlags), keeping err in the chain
// (errors.Is/As and exit codes still work). A
// name counts only as a word of its own: after a space, "(" or a quote,
// or at the start, and before a space, ":", ",", ")", "+", "=", a quote
// or the end (so paths and qualified names are left alone).
func flagError(err error, fields map[string]string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	var b strings.Builder
	last := 0
	for _, m := range fieldToken.FindAllStringIndex(msg, -1) {
		name, ok := fields[msg[m[0]:m[1]]]
		if !ok || (m[0] > 0 && !strings.ContainsRune(` ("`, rune(msg[m[0]-1]))) ||
			(m[1] < len(msg) && !strings.ContainsRune(` :,)+="`, rune(msg[m[1]]))) {
			continue
		}
		b.WriteString(msg[last:m[0]])
		b.WriteString("--" + name)
		last = m[1]
	}
	if last == 0 {
		return err
	}
	b.WriteString(msg[last:])
	return &cliError{msg: b.String(), err: err}
}

// cliError is a library error whose message names flags.
type cliError struct {
	msg string
	err error
}

func (e *cliError) Error() string { return e.msg }
func (e *cliError) Unwrap() error { return e.err }

// logf is the Logf the commands give the models: an info line on slog.
func logf(format string, args ...any) { slog.Info(fmt.Sprintf(format, args...)) }

// runTraining is the body of a training command: it opens the engine of
// --device (closed at the end), runs fn with a context that Ctrl-C
// cancels and prints the report fn returns, also when fn returns an error
// with it (an interrupted run that still reports), or the learning-rate
// range test of --find-lr (the *train.LRFound error the harness returns
// instead of training). Errors without a report start with name.
func (g *globals) runTraining(cmd *cobra.Command, name string, fn func(context.Context, *device.Engine, backends.Backend) (textReport, error)) error {
	eng, backend, err := device.WithBackend(g.engine(cmd, device.Request{})) // on the CPU: gotrain's cpu backend
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	defer eng.Close()
	ctx, stop := train.NotifyContext(cmd.Context())
	defer stop()
	rep, err := fn(ctx, eng, backend)
	if comm := g.comm; comm != nil {
		g.comm = nil
		sent := comm.BytesSent()
		if cerr := leaveRanks(comm, err); cerr != nil {
			err = fmt.Errorf("%s: %w", name, cerr)
		}
		if comm.Rank() != 0 {
			// Rank 0 reports; the others log what they sent, on stderr.
			if err == nil {
				slog.Info(name+": rank finished", "rank", comm.Rank(), "ranks", comm.Size(), "bytes_sent", sent)
			}
			if errors.Is(err, train.ErrInterrupted) {
				// Every rank stopped at the same step; rank 0 reports it and
				// carries the exit status (a failing exit here could make
				// the launcher stop rank 0 before it has printed).
				slog.Warn(name+": interrupted with the other ranks; rank 0 reports", "rank", comm.Rank(), "error", err)
				return nil
			}
			return err
		}
	}
	var found *train.LRFound
	if errors.As(err, &found) { // --find-lr: the range test instead of training
		return g.print(cmd, found.Test)
	}
	if rep == nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if perr := g.print(cmd, rep); perr != nil {
		return perr
	}
	return err
}

// newSampleCmd returns the `sample` command of the model family lm (as
// "lm lstm"): its flags (--top-k with topK) fill a text.SampleReport, sample
// loads --model and generates its Step and Text.
func newSampleCmd(g *globals, lm, short, long, modelUsage string, topK bool, sample func(backends.Backend, *text.SampleReport) error) *cobra.Command {
	var r text.SampleReport
	name := lm + " sample"
	cmd := &cobra.Command{
		Use: "sample --model CKPT --prompt TEXT", Short: short, Long: long,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if r.Model == "" {
				return fmt.Errorf("%s: --model is required (a checkpoint file or directory written by %s train)", name, lm)
			}
			eng, backend, err := device.WithBackend(g.engine(cmd, device.Request{}))
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			defer eng.Close()
			if err := sample(backend, &r); err != nil {
				return flagError(fmt.Errorf("%s: %w", name, err), fieldFlags(cmd.Flags(), &r))
			}
			r.Device = eng.Name()
			return g.print(cmd, &r)
		},
	}
	f := cmd.Flags()
	f.StringVar(&r.Model, "model", "", modelUsage)
	f.StringVar(&r.Prompt, "prompt", "The ", "text the model reads before generating (every character must be in its vocabulary)")
	f.IntVar(&r.Length, "length", 200, "characters to generate")
	f.Float64Var(&r.Temperature, "temperature", 1, "sampling temperature (0: argmax)")
	if topK {
		r.TopK = new(int)
		f.IntVar(r.TopK, "top-k", 0, "draw among the K most likely characters (0: all)")
	}
	f.Uint64Var(&r.Seed, "seed", 0, "sampling seed")
	return cmd
}
