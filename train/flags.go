package train

import (
	"github.com/spf13/pflag"
)

// AddFlags registers a flag for every option of c on fs, with c's current
// values as defaults (call it on DefaultConfig()). docs/TRAINING.md lists
// them.
func (c *Config) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.Optimizer, "optimizer", c.Optimizer, "optimizer: adam, adamw or sgd")
	fs.Float64Var(&c.LearningRate, "lr", c.LearningRate, "peak learning rate")
	fs.Float64Var(&c.WeightDecay, "weight-decay", c.WeightDecay, "adamw decoupled weight decay")
	fs.IntVar(&c.WarmupSteps, "warmup-steps", c.WarmupSteps, "linear learning-rate warm-up, in optimizer steps")
	fs.BoolVar(&c.Cosine, "cosine", c.Cosine, "cosine learning-rate decay to --min-lr after warm-up")
	fs.Float64Var(&c.MinLearningRate, "min-lr", c.MinLearningRate, "final learning rate of the cosine schedule")
	fs.IntVar(&c.Accumulate, "accumulate", c.Accumulate, "micro-batches whose gradients are averaged per optimizer step")
	fs.Float64Var(&c.ClipNorm, "clip-norm", c.ClipNorm, "clip the global gradient L2 norm to this value (0: off)")
	fs.IntVar(&c.BatchSize, "batch-size", c.BatchSize, "micro-batch size")
	fs.IntVar(&c.Steps, "steps", c.Steps, "optimizer steps (0: use --epochs)")
	fs.IntVar(&c.Epochs, "epochs", c.Epochs, "passes over the data when --steps is 0")
	fs.Int64Var(&c.Seed, "seed", c.Seed, "seed of initialisation, shuffling and the graph RNG")
	fs.StringVar((*string)(&c.Precision), "precision", string(c.Precision), "precision: 32, bf16-mixed, 16-mixed or auto")
	fs.BoolVar(&c.DynamicLossScaling, "loss-scaling", c.DynamicLossScaling, "dynamic loss scaling (always on with 16-mixed)")
	fs.StringVar(&c.EarlyStopMonitor, "early-stop-monitor", c.EarlyStopMonitor, `metric watched for early stopping ("loss"; empty: off)`)
	fs.IntVar(&c.EarlyStopPatience, "early-stop-patience", c.EarlyStopPatience, "checks without improvement before stopping")
	fs.Float64Var(&c.EarlyStopMinDelta, "early-stop-min-delta", c.EarlyStopMinDelta, "least change that counts as an improvement")
	fs.StringVar(&c.EarlyStopMode, "early-stop-mode", c.EarlyStopMode, "min or max: whether lower or higher is better")
	fs.BoolVar(&c.StopOnNonFinite, "stop-on-nan", c.StopOnNonFinite, "stop with an error on a NaN or infinite loss")
	fs.StringVar(&c.CheckpointDir, "checkpoint-dir", c.CheckpointDir, "checkpoint directory")
	fs.IntVar(&c.CheckpointEvery, "checkpoint-every", c.CheckpointEvery, "checkpoint every N optimizer steps (0: only at the end)")
	fs.IntVar(&c.KeepBest, "keep-best", c.KeepBest, "best checkpoints kept besides the last")
	fs.BoolVar(&c.Resume, "resume", c.Resume, "resume from the latest valid checkpoint in --checkpoint-dir")
	fs.BoolVar(&c.NoCheckpoint, "no-checkpoint", c.NoCheckpoint, "write no checkpoints")
	fs.StringVar(&c.MetricsLog, "metrics-log", c.MetricsLog, "JSON-lines metrics file (empty: none)")
	fs.IntVar(&c.LogEvery, "log-every", c.LogEvery, "log metrics every N optimizer steps")
	fs.IntVar(&c.EvalEvery, "eval-every", c.EvalEvery, "run the evaluation (validation metrics) every N optimizer steps and at the end (0: every --log-every steps)")
	fs.StringVar(&c.PerfSummary, "perf-summary", c.PerfSummary, "performance summary file (empty: none)")
	fs.StringVar(&c.Progress, "progress", c.Progress, "progress display: auto, bar, plain or off")
	fs.DurationVar(&c.ProgressInterval, "progress-interval", c.ProgressInterval, "least time between plain progress lines")
	fs.DurationVar(&c.GPUSampleInterval, "gpu-sample-interval", c.GPUSampleInterval, "least time between GPU samples in the metrics log (0: off)")
	fs.IntVar(&c.DeviceDataBudgetMiB, "device-data-budget", c.DeviceDataBudgetMiB, "upload the data set to the device when it takes at most this many MiB (0: stream from the host)")
	fs.StringVar(&c.Devices, "devices", c.Devices, "devices to train on, data parallel: N or all")
	fs.StringVar(&c.PlotsDir, "plots-dir", c.PlotsDir, "directory for PNG plots of the metrics at the end of a run (empty: none)")
}
