// Package train is gotrain's training harness for GoMLX models: optimizer and
// learning-rate schedule, gradient accumulation, global-norm clipping,
// precision, early stopping, atomic checkpoints with exact resume (also
// after SIGINT/SIGTERM, see RunContext and NotifyContext), a JSON-lines
// metrics log with optional GPU samples and its CSV twin, TensorBoard
// event files, a progress display, PNG plots per logged step, a
// performance summary, an exponential moving average of the weights, a
// learning-rate range test, safetensors export of a checkpoint's weights,
// device-resident data, batch-size finders and data-parallel training on
// several devices (with a Sharder hook). It builds on GoMLX's train
// package (Trainer, optimizers, AccumulateGradients).
//
// The harness takes a GoMLX backend; package device opens it (an Engine's
// Backend), with the one configuration of each kind: on the pure-Go
// backends operations run one at a time (which avoids a worker-pool
// deadlock of simplego) and Dot gradients are written as DotGenerals.
package train

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"time"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"

	"github.com/gotrain/gotrain/cpubackend"
	"github.com/gotrain/gotrain/dist"
	"github.com/gotrain/gotrain/gemm"
)

// Precision is the numeric precision of training.
type Precision string

const (
	// Precision32 trains in float32.
	Precision32 Precision = "32"
	// PrecisionBF16Mixed keeps float32 weights and computes in bfloat16.
	PrecisionBF16Mixed Precision = "bf16-mixed"
	// Precision16Mixed keeps float32 weights, computes in float16 and uses
	// dynamic loss scaling (see LossScaler).
	Precision16Mixed Precision = "16-mixed"
	// PrecisionAuto picks bf16-mixed on an accelerator that supports
	// bfloat16, and 32 otherwise.
	PrecisionAuto Precision = "auto"
)

// Optimizer names accepted by Config.Optimizer.
const (
	OptimizerAdam  = "adam"
	OptimizerAdamW = "adamw"
	OptimizerSGD   = "sgd"
)

// Early-stopping modes.
const (
	ModeMin = "min"
	ModeMax = "max"
)

// Config holds the training options. DefaultConfig returns the defaults;
// Validate's errors name the fields. The gotrain command exposes each
// field as a flag, named in parentheses below (docs/TRAINING.md); package
// train itself parses no flags.
type Config struct {
	// Optimizer is adam, adamw or sgd (--optimizer, default adamw).
	Optimizer string `json:"optimizer"`
	// LearningRate is the peak learning rate (--lr, default 0.001).
	LearningRate float64 `json:"learning_rate"`
	// WeightDecay is adamw's decoupled weight decay (--weight-decay, default 0.004).
	WeightDecay float64 `json:"weight_decay"`
	// WarmupSteps ramps the learning rate linearly from 0 over this many
	// optimizer steps (--warmup-steps, default 0).
	WarmupSteps int `json:"warmup_steps"`
	// Cosine decays the learning rate to MinLearningRate along a half cosine
	// after warm-up, ending at the last step (--cosine, default false).
	Cosine bool `json:"cosine"`
	// MinLearningRate is the floor of the cosine schedule (--min-lr, default 0).
	MinLearningRate float64 `json:"min_learning_rate"`
	// Accumulate is the number of micro-batches whose gradients are averaged
	// for one optimizer step (--accumulate, default 1: none).
	Accumulate int `json:"accumulate"`
	// ClipNorm, when positive, scales the gradients so that their global L2
	// norm is at most ClipNorm (--clip-norm, default 0: off).
	ClipNorm float64 `json:"clip_norm"`
	// BatchSize is the micro-batch size (--batch-size N, default 32;
	// --batch-size auto: see AutoBatchSize).
	BatchSize int `json:"batch_size"`
	// Steps caps the optimizer steps (--steps, default 0: use Epochs).
	Steps int `json:"steps"`
	// Epochs is the number of passes over the data when Steps is 0
	// (--epochs, default 1).
	Epochs int `json:"epochs"`
	// TimeLimit, when positive, is the run's wall-clock budget
	// (--time-limit, default 0: none), counted from the start of its steps
	// (RunContext). After max(WarmupSteps, PlanAfterSteps) steps the run
	// times its steps (the first, which compiles, left out) and one
	// evaluation, run then, and plans the last step that leaves time for
	// the evaluations every EvalEvery steps and at the end; Steps or Epochs
	// cap it. The plan becomes the run's total: with Cosine the schedule
	// ends there (warm-up, then a half cosine to MinLearningRate), so that
	// --steps N with the same flags repeats the run exactly; without it
	// each later evaluation plans again from the times measured so far.
	// Should the steps slow down, the run stops early, before a step that
	// would leave no time for the final evaluation. Either way it ends as a
	// finished run: final evaluation, checkpoint, reports. A resumed run
	// with Cosine keeps the plan its checkpoint recorded; its TimeLimit
	// then only stops it.
	TimeLimit time.Duration `json:"time_limit,omitempty"`
	// Seed seeds weight initialisation, shuffling and the graph RNG
	// (--seed, default 42).
	Seed int64 `json:"seed"`
	// Precision is 32, bf16-mixed, 16-mixed or auto (--precision, default 32).
	Precision Precision `json:"precision"`
	// DynamicLossScaling turns on dynamic loss scaling (see LossScaler) at
	// any precision; 16-mixed always uses it (--loss-scaling, default false).
	DynamicLossScaling bool `json:"dynamic_loss_scaling"`

	// EarlyStopMonitor is the metric watched for early stopping: "loss" (the
	// training loss, every step) or the name of a metric the evaluator set
	// with Harness.SetEvaluator returns, such as "val_loss", checked at each
	// evaluation (--early-stop-monitor, default "": off).
	EarlyStopMonitor string `json:"early_stop_monitor,omitempty"`
	// EarlyStopPatience is the number of checks without improvement before
	// stopping (--early-stop-patience, default 5; the command turns early
	// stopping off at 0).
	EarlyStopPatience int `json:"early_stop_patience"`
	// EarlyStopMinDelta is the least change that counts as an improvement
	// (--early-stop-min-delta, default 0).
	EarlyStopMinDelta float64 `json:"early_stop_min_delta"`
	// EarlyStopMode is min or max (--early-stop-mode, default min).
	EarlyStopMode string `json:"early_stop_mode"`
	// StopOnNonFinite stops training with an error when the loss is NaN or
	// infinite (--stop-on-nan, default true).
	StopOnNonFinite bool `json:"stop_on_non_finite"`

	// CheckpointDir is where runs write their checkpoints (--out, default
	// "checkpoints"; moe train uses <out>/checkpoints): each run in a folder
	// of its own, run-<time>-<random>, with a manifest (run.json), so that
	// runs sharing CheckpointDir never prune each other's files.
	CheckpointDir string `json:"checkpoint_dir"`
	// CheckpointEvery writes a checkpoint every N optimizer steps
	// (--checkpoint-every, default 1000; 0: only at the end).
	CheckpointEvery int `json:"checkpoint_every"`
	// KeepBest keeps the K checkpoints with the best monitored value, besides
	// the last one (--keep-best, default 1).
	KeepBest int `json:"keep_best"`
	// Resume continues the newest compatible run in CheckpointDir, or the
	// run folder CheckpointDir names, from its latest valid checkpoint
	// (--resume, default false; --resume=PATH sets CheckpointDir too, see
	// ResumeDir and Harness.Resume). Nothing valid to resume from is an
	// error.
	Resume bool `json:"resume"`
	// Run says what the run trains, for its manifest (models set it);
	// resuming from a run of another kind or architecture is an error.
	Run RunInfo `json:"-"`
	// NoCheckpoint disables checkpoints (--no-checkpoint, default false).
	NoCheckpoint bool `json:"no_checkpoint"`

	// MetricsLog is the JSON-lines metrics file (--metrics-log, default "":
	// none). A log that is a file gets a CSV twin beside it (CSVLogPath)
	// with the same rows. A resumed run continues both, first dropping
	// the lines of steps after the checkpoint it resumes from.
	MetricsLog string `json:"metrics_log,omitempty"`
	// LogEvery logs metrics every N optimizer steps, at the first step of a
	// run and at the last (--log-every, default 10).
	LogEvery int `json:"log_every"`
	// EvalEvery runs the evaluator (Harness.SetEvaluator) every N optimizer
	// steps and at the end; 0 means every LogEvery steps (--eval-every,
	// default 0).
	EvalEvery int `json:"eval_every"`
	// PerfSummary is the file Run writes the performance summary to
	// (--perf-summary, default "": none; the CLI uses
	// <run dir>/performance_summary.txt).
	PerfSummary string `json:"perf_summary,omitempty"`

	// Progress is how progress is shown on standard error: auto (a bar on
	// a terminal, else a plain line every ProgressInterval), bar, plain or
	// off (--progress, default auto).
	Progress string `json:"progress"`
	// ProgressInterval is the least time between two plain progress lines
	// (--progress-interval, default 10s).
	ProgressInterval time.Duration `json:"progress_interval"`
	// GPUSampleInterval is the least time between two samples of GPU
	// utilisation and memory (nvidia-smi) added to the metrics log
	// (--gpu-sample-interval, default 30s; 0: off).
	GPUSampleInterval time.Duration `json:"gpu_sample_interval"`
	// PlotsDir is where Run writes PNG plots of the metrics at the end
	// (--plots-dir, default "": none).
	PlotsDir string `json:"plots_dir,omitempty"`
	// DeviceDataBudgetMiB uploads the whole data set to the device once,
	// and gathers batches there, when it takes at most this many MiB; a
	// larger one is streamed from the host batch by batch
	// (--device-data-budget, default 0: always stream from the host).
	DeviceDataBudgetMiB int `json:"device_data_budget_mib"`
	// Devices is the number of devices to train on, data parallel: N or
	// "all" (--devices, default 1). More than one needs a backend with
	// several devices (XLA); see docs/TRAINING.md.
	Devices string `json:"devices"`

	// TensorBoardDir is the folder where Run writes a TensorBoard event
	// file of its own, with a scalar per number of every metrics line
	// (--tensorboard, default "": none).
	TensorBoardDir string `json:"tensorboard_dir,omitempty"`
	// EMADecay, when positive, keeps an exponential moving average of the
	// trainable weights with this decay per optimizer step (--ema, default
	// 0: off): the evaluator and the weights after Run (a model's final
	// evaluation, sampling, exports) use the average; checkpoints hold
	// both.
	EMADecay float64 `json:"ema_decay,omitempty"`
	// FindLR makes Run do the learning-rate range test instead of
	// training (--find-lr, default false): it returns an *LRFound error.
	FindLR bool `json:"find_lr,omitempty"`
	// FindLRSteps is the range test's number of steps (--find-lr-steps,
	// default 100).
	FindLRSteps int `json:"find_lr_steps,omitempty"`
	// FindLRMin and FindLRMax are the learning rates of its first and
	// last step (--find-lr-min, default 1e-7; --find-lr-max, default 10).
	FindLRMin float64 `json:"find_lr_min,omitempty"`
	FindLRMax float64 `json:"find_lr_max,omitempty"`

	// Comm, when it has more than one rank, trains data parallel across
	// its ranks (--distributed under an MPI launcher, see
	// docs/DISTRIBUTED.md): every rank runs the harness on its own device
	// with its share of each global batch of BatchSize examples (a
	// multiple of the ranks), the gradients are summed across the ranks
	// before each optimizer step, and the loss and step metrics are
	// averaged before they are logged. Rank 0 alone writes checkpoints,
	// logs, plots and reports; Resume on every rank continues from the
	// checkpoint rank 0 reads, which it sends to the others. nil or one
	// rank: training in this process only.
	Comm dist.Comm `json:"-"`
}

// Rank is this process's rank in Comm (0 without one).
func (c Config) Rank() int {
	if c.Comm == nil {
		return 0
	}
	return c.Comm.Rank()
}

// Ranks is the number of ranks training together (1 without Comm).
func (c Config) Ranks() int {
	if c.Comm == nil {
		return 1
	}
	return c.Comm.Size()
}

// DefaultConfig returns the defaults of every option.
func DefaultConfig() Config {
	return Config{
		Optimizer:         OptimizerAdamW,
		LearningRate:      0.001,
		WeightDecay:       0.004,
		Accumulate:        1,
		BatchSize:         32,
		Epochs:            1,
		Seed:              42,
		Precision:         Precision32,
		EarlyStopPatience: 5,
		EarlyStopMode:     ModeMin,
		StopOnNonFinite:   true,
		CheckpointDir:     "checkpoints",
		CheckpointEvery:   1000,
		KeepBest:          1,
		LogEvery:          10,
		Progress:          ProgressAuto,
		ProgressInterval:  10 * time.Second,
		GPUSampleInterval: 30 * time.Second,
		Devices:           "1",
		FindLRSteps:       100,
		FindLRMin:         1e-7,
		FindLRMax:         10,
	}
}

// Validate reports every invalid option at once.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	switch c.Optimizer {
	case OptimizerAdam, OptimizerAdamW, OptimizerSGD:
	default:
		bad("Optimizer %q: want adam, adamw or sgd", c.Optimizer)
	}
	if !(c.LearningRate > 0) || math.IsInf(c.LearningRate, 0) {
		bad("LearningRate %g: want a positive number", c.LearningRate)
	}
	if c.MinLearningRate < 0 || c.MinLearningRate > c.LearningRate {
		bad("MinLearningRate %g: want 0 <= MinLearningRate <= LearningRate", c.MinLearningRate)
	}
	if c.WeightDecay < 0 {
		bad("WeightDecay %g: want >= 0", c.WeightDecay)
	}
	if c.TimeLimit < 0 {
		bad("TimeLimit %v: want >= 0 (0: no limit)", c.TimeLimit)
	}
	if c.TimeLimit > 0 && c.Cosine && c.WarmupSteps < PlanAfterSteps {
		bad("TimeLimit with Cosine needs WarmupSteps >= %d, not %d: the run times its first steps before it knows where the schedule ends, so they must not depend on it", PlanAfterSteps, c.WarmupSteps)
	}
	if c.TimeLimit > 0 && c.Ranks() > 1 {
		bad("TimeLimit %v with %d ranks: each rank would time its own steps and plan a different end; set Steps instead", c.TimeLimit, c.Ranks())
	}
	if c.WarmupSteps < 0 {
		bad("WarmupSteps %d: want >= 0", c.WarmupSteps)
	}
	if c.Accumulate < 1 {
		bad("Accumulate %d: want >= 1", c.Accumulate)
	}
	if c.ClipNorm < 0 || math.IsNaN(c.ClipNorm) {
		bad("ClipNorm %g: want >= 0 (0 turns clipping off)", c.ClipNorm)
	}
	if c.BatchSize < 1 {
		bad("BatchSize %d: want >= 1", c.BatchSize)
	}
	if c.Steps < 0 || c.Epochs < 0 || (c.Steps == 0 && c.Epochs == 0) {
		bad("Steps %d / Epochs %d: want one of them positive", c.Steps, c.Epochs)
	}
	if _, err := ParsePrecision(string(c.Precision)); err != nil {
		errs = append(errs, err)
	}
	if strings.ContainsAny(c.EarlyStopMonitor, " \t,") {
		bad("EarlyStopMonitor %q: want \"loss\" or the name of an evaluation metric", c.EarlyStopMonitor)
	}
	if c.EvalEvery < 0 {
		bad("EvalEvery %d: want >= 0", c.EvalEvery)
	}
	if c.EarlyStopPatience < 1 {
		bad("EarlyStopPatience %d: want >= 1", c.EarlyStopPatience)
	}
	if c.EarlyStopMinDelta < 0 {
		bad("EarlyStopMinDelta %g: want >= 0", c.EarlyStopMinDelta)
	}
	if c.EarlyStopMode != ModeMin && c.EarlyStopMode != ModeMax {
		bad("EarlyStopMode %q: want min or max", c.EarlyStopMode)
	}
	if c.CheckpointEvery < 0 {
		bad("CheckpointEvery %d: want >= 0", c.CheckpointEvery)
	}
	if c.KeepBest < 0 {
		bad("KeepBest %d: want >= 0", c.KeepBest)
	}
	if !c.NoCheckpoint && c.CheckpointDir == "" {
		bad("CheckpointDir is empty: set it or set NoCheckpoint")
	}
	if c.Resume && c.NoCheckpoint {
		bad("Resume and NoCheckpoint exclude each other")
	}
	if c.LogEvery < 1 {
		bad("LogEvery %d: want >= 1", c.LogEvery)
	}
	switch c.Progress {
	case ProgressAuto, ProgressBar, ProgressPlain, ProgressOff:
	default:
		bad("Progress %q: want auto, bar, plain or off", c.Progress)
	}
	if c.ProgressInterval < 0 {
		bad("ProgressInterval %v: want >= 0", c.ProgressInterval)
	}
	if _, err := ParseDevices(c.Devices, math.MaxInt32); err != nil {
		errs = append(errs, err)
	}
	if c.DeviceDataBudgetMiB < 0 {
		bad("DeviceDataBudgetMiB %d: want >= 0 (MiB; 0 keeps the data on the host)", c.DeviceDataBudgetMiB)
	}
	if c.GPUSampleInterval < 0 {
		bad("GPUSampleInterval %v: want >= 0 (0 turns sampling off)", c.GPUSampleInterval)
	}
	if !(c.EMADecay >= 0 && c.EMADecay < 1) {
		bad("EMADecay %g: want 0 (off) or a decay with 0 < EMADecay < 1, such as 0.999", c.EMADecay)
	}
	if c.FindLR {
		if c.FindLRSteps < 2 {
			bad("FindLRSteps %d: want >= 2", c.FindLRSteps)
		}
		if !(c.FindLRMin > 0) || !(c.FindLRMax > c.FindLRMin) || math.IsInf(c.FindLRMax, 0) {
			bad("FindLRMin %g / FindLRMax %g: want 0 < FindLRMin < FindLRMax", c.FindLRMin, c.FindLRMax)
		}
	}
	return errors.Join(errs...)
}

// ParsePrecision parses a --precision value.
func ParsePrecision(s string) (Precision, error) {
	switch p := Precision(strings.ToLower(strings.TrimSpace(s))); p {
	case Precision32, PrecisionBF16Mixed, Precision16Mixed, PrecisionAuto:
		return p, nil
	case "fp32", "float32":
		return Precision32, nil
	}
	return "", fmt.Errorf("Precision %q: want 32, bf16-mixed, 16-mixed or auto", s)
}

// ComputeDType is the dtype the model computes in under p (p must be
// resolved, not auto).
func (p Precision) ComputeDType() dtypes.DType {
	switch p {
	case PrecisionBF16Mixed:
		return dtypes.BFloat16
	case Precision16Mixed:
		return dtypes.Float16
	}
	return dtypes.Float32
}

// ResolvePrecision checks p against what backend b supports and resolves
// auto. accelerator tells whether b runs on a GPU or TPU: auto only picks
// bf16-mixed there: on a CPU it is faster than float32 only with gotrain's
// cpu backend on AVX-512 BF16, and a precision change is the user's choice.
func ResolvePrecision(p Precision, b backends.Backend, accelerator bool) (Precision, error) {
	p, err := ParsePrecision(string(p))
	if err != nil {
		return "", err
	}
	supports := func(dt dtypes.DType) bool { return b != nil && b.Capabilities().DTypes[dt] }
	name := "<nil>"
	if b != nil {
		name = b.Name()
	}
	switch p {
	case PrecisionAuto:
		if accelerator && supports(dtypes.BFloat16) {
			return PrecisionBF16Mixed, nil
		}
		return Precision32, nil
	case Precision16Mixed:
		if !supports(dtypes.Float16) {
			return "", fmt.Errorf("Precision 16-mixed: backend %q has no float16 support; use Precision bf16-mixed or 32", name)
		}
	case PrecisionBF16Mixed:
		if !supports(dtypes.BFloat16) {
			return "", fmt.Errorf("Precision bf16-mixed: backend %q has no bfloat16 support; use Precision 32", name)
		}
		_, native := b.(*cpubackend.Backend)
		switch {
		case native && gemm.BF16Path() == "avx512bf16":
			// gotrain's cpu backend on AVX-512 BF16: VDPBF16PS products,
			// fused bfloat16 element-wise chains.
		case native:
			// Honest about the cost: without AVX-512 BF16 the products are
			// widened to float32.
			slog.Warn("Precision bf16-mixed without AVX-512 BF16 (or with GOTRAIN_CPU below avx512) is slower than float32 on gotrain's cpu backend: bfloat16 products are widened to float32; use Precision 32 for speed", "backend", name)
		case IsPureGo(b):
			slog.Warn("Precision bf16-mixed on GoMLX's pure-Go backend is slower than float32 (no bfloat16 kernels); use Precision 32 for speed, or gotrain's cpu backend on a CPU with AVX-512 BF16", "backend", name)
		}
	}
	return p, nil
}
