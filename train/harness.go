package train

import (
	stdcontext "context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/distributed"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	gtrain "github.com/gomlx/gomlx/pkg/ml/train"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"
)

// ModelFn builds the model graph; it is GoMLX's train.ModelFn.
type ModelFn = gtrain.ModelFn

// LossFn is a GoMLX loss function (see package train/losses of GoMLX).
type LossFn = gtrain.LossFn

// Harness trains one model on one Dataset with a Config.
type Harness struct {
	// resumedFrom and restored, after Resume until the first step, are the
	// checkpoint and the trainable variables it held (checkRestored).
	resumedFrom string
	restored    map[string]bool
	cfg         Config
	backend     backends.Backend
	ctx         *context.Context
	trainer     *gtrain.Trainer
	data        *Dataset
	stopper     *EarlyStopping
	evaluator   Evaluator
	lastEval    map[string]float64
	scaler      *LossScaler
	logf        func(msg string)
	skipped     bool // the last step was skipped by the loss scaler
	totalSteps  int
	step        int64 // optimizer steps done
	lastLoss    float64
	perf        Perf
	// runStart is when RunContext began its steps (the "wall" of the
	// metrics records); zero outside RunContext.
	runStart  time.Time
	log       *MetricsLog
	ckpt      *Checkpointer
	progressW io.Writer
	stepHook  func(step int64, loss float64)
	gpu       *gpuSampler
	history   []map[string]any // records logged in this run (for plots)
	dp        *dataParallel    // nil on one device
	ranks     *ranks           // nil in one process (Config.Comm)
	// runCtx is RunContext's context while it runs (TrainStep tells the
	// other ranks when it is cancelled).
	runCtx      stdcontext.Context
	sharder     Sharder
	stepInputs  func(x *tensors.Tensor) ([]*tensors.Tensor, error)
	opt         *optimizer
	csv         *csvLog   // the metrics log's CSV twin
	tb          *tbWriter // the TensorBoard event file
	stepMetrics map[string]StepMetricFn
	// emaApplied: the weights' variables hold their moving averages (after
	// Run), the averages' variables the trained weights.
	emaApplied bool
	// limit is the time limit of the run in progress (Config.TimeLimit);
	// plannedSteps the last step it planned, or that the checkpoint a
	// resumed run restored recorded (0: none).
	limit        *timeLimit
	plannedSteps int64
	// evalTime is how long the last evaluation took, and evalStep the step
	// it followed.
	evalTime time.Duration
	evalStep int64
	// evalTotal is the time of this run's evaluations, and runSteps and
	// runStepTime its steps' number and time when it began (RunContext).
	evalTotal   time.Duration
	runSteps    int
	runStepTime time.Duration
	// clock, when set, replaces time.Now for the steps' and evaluations'
	// times and the time limit (tests).
	clock func() time.Time
}

// now is the harness's time: h.clock, or time.Now.
func (h *Harness) now() time.Time {
	if h.clock != nil {
		return h.clock()
	}
	return time.Now()
}

// ErrInterrupted is wrapped by the error RunContext returns when its
// context is cancelled (SIGINT or SIGTERM with NotifyContext).
var ErrInterrupted = errors.New("training interrupted")

// New creates a Harness. The model's variables are created on the first
// step (or restored by Resume).
func New(backend backends.Backend, cfg Config, model ModelFn, loss LossFn, data *Dataset) (*Harness, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("train: invalid configuration: %w", err)
	}
	if backend == nil || data == nil || model == nil || loss == nil {
		return nil, errors.New("train: New needs a backend, a model, a loss and a dataset")
	}
	prec, err := ResolvePrecision(cfg.Precision, backend, IsAccelerator(backend))
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	cfg.Precision = prec
	if cfg.BatchSize > data.Len() {
		return nil, fmt.Errorf("train: BatchSize %d is larger than the data set (%d examples)", cfg.BatchSize, data.Len())
	}
	h := &Harness{cfg: cfg, backend: backend, data: data}
	var numDevices int
	if err := Catch(func() { numDevices = backend.NumDevices() }); err != nil {
		return nil, fmt.Errorf("train: counting the backend's devices: %w", err)
	}
	nDev, err := ParseDevices(cfg.Devices, numDevices)
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	if h.ranks, cfg, err = setupRanks(cfg, nDev); err != nil {
		return nil, err
	}
	h.cfg = cfg
	if nDev > 1 {
		switch {
		case cfg.Accumulate > 1:
			return nil, fmt.Errorf("train: Devices %d with Accumulate %d: GoMLX v0.26 has no distributed gradient accumulation", nDev, cfg.Accumulate)
		case cfg.BatchSize%nDev != 0:
			return nil, fmt.Errorf("train: BatchSize %d is not a multiple of Devices %d", cfg.BatchSize, nDev)
		case cfg.DeviceDataBudgetMiB > 0:
			return nil, fmt.Errorf("train: DeviceDataBudgetMiB works on one device only (Devices %d)", nDev)
		}
		if h.dp, err = newDataParallel(nDev); err != nil {
			return nil, err
		}
		inner := model
		model = func(ctx *context.Context, spec any, inputs []*graph.Node) []*graph.Node {
			out := inner(ctx, spec, inputs)
			if h.sharder != nil {
				if err := applySharder(ctx, h.dp.mesh, h.sharder); err != nil {
					panic(err) // inside graph building: TrainStep returns it as an error
				}
			}
			return out
		}
	}
	h.totalSteps = cfg.Steps
	if h.totalSteps == 0 {
		h.totalSteps = cfg.Epochs * (data.Len() / cfg.BatchSize) / cfg.Accumulate
		if h.totalSteps == 0 {
			return nil, fmt.Errorf("train: %d epoch(s) of %d examples make no optimizer step at batch %d x %d accumulated",
				cfg.Epochs, data.Len(), cfg.BatchSize, cfg.Accumulate)
		}
	}
	h.ctx = context.New().Checked(false)
	h.ctx.SetParam(context.ParamInitialSeed, cfg.Seed)
	h.ctx.SetParam(ParamComputeDType, prec.ComputeDType().String())
	if prec != Precision32 {
		model = mixedModel(model, prec.ComputeDType())
	}
	if err := h.ctx.ResetRNGState(); err != nil {
		return nil, fmt.Errorf("train: seeding the random number generator: %w", err)
	}
	opt, err := newOptimizer(cfg, h.totalSteps)
	if err != nil {
		return nil, err
	}
	h.opt = opt
	opt.ranks = h.ranks
	h.logf = func(msg string) { log.Print(msg) }
	loss = h.metricsLoss(loss)
	if cfg.DynamicLossScaling || prec == Precision16Mixed {
		opt.scaling = true
		h.scaler = NewLossScaler()
		loss = h.scaledLoss(loss)
	}
	if err := Catch(func() {
		h.trainer = gtrain.NewTrainer(backend, h.ctx, model, loss, opt, nil, nil)
	}); err != nil {
		return nil, fmt.Errorf("train: creating the GoMLX trainer: %w", err)
	}
	if cfg.Accumulate > 1 {
		if err := h.trainer.AccumulateGradients(cfg.Accumulate); err != nil {
			return nil, fmt.Errorf("train: Accumulate %d: %w", cfg.Accumulate, err)
		}
	}
	if cfg.EarlyStopMonitor != "" {
		h.stopper = NewEarlyStopping(cfg.EarlyStopMode, cfg.EarlyStopPatience, cfg.EarlyStopMinDelta)
	}
	if !cfg.NoCheckpoint && cfg.Rank() == 0 {
		// A new run writes into a folder of its own under CheckpointDir
		// (Resume moves it to the folder of the run it continues).
		name := NewRunName()
		h.ckpt = &Checkpointer{Dir: filepath.Join(cfg.CheckpointDir, name), KeepBest: cfg.KeepBest, Mode: cfg.EarlyStopMode,
			manifest: &Manifest{Format: manifestFormat, Run: name, RunInfo: cfg.Run, Seed: cfg.Seed, Version: moduleVersion()}}
	}
	dataPlace := "host (streamed per batch)"
	if cfg.DeviceDataBudgetMiB > 0 {
		onDev, err := data.PlaceOnDevice(backend, int64(cfg.DeviceDataBudgetMiB)<<20)
		if err != nil {
			return nil, fmt.Errorf("train: DeviceDataBudgetMiB %d: %w", cfg.DeviceDataBudgetMiB, err)
		}
		if onDev {
			dataPlace = fmt.Sprintf("device-resident (%.1f MiB)", float64(data.Bytes())/(1<<20))
		} else {
			dataPlace = fmt.Sprintf("host (streamed per batch: %.1f MiB exceeds DeviceDataBudgetMiB %d)", float64(data.Bytes())/(1<<20), cfg.DeviceDataBudgetMiB)
		}
	}
	h.progressW = os.Stderr
	h.gpu = newGPUSampler(cfg.GPUSampleInterval)
	h.perf = Perf{Device: backend.Name(), Devices: nDev, Precision: string(prec), BatchSize: cfg.BatchSize, Ranks: cfg.Ranks(), Accumulate: cfg.Accumulate, Data: dataPlace}
	return h, nil
}

// IsAccelerator tells whether b runs on a GPU or TPU, from its name and
// description (for --precision auto).
func IsAccelerator(b backends.Backend) (acc bool) {
	if b == nil || IsPureGo(b) {
		return false
	}
	defer func() {
		if recover() != nil {
			acc = false
		}
	}()
	text := strings.ToLower(b.Name() + " " + b.Description() + " " + b.DeviceDescription(0))
	for _, w := range []string{"cuda", "gpu", "tpu", "rocm", "nvidia"} {
		if strings.Contains(text, w) {
			return true
		}
	}
	return false
}

// ParamComputeDType is the context parameter holding the name of the dtype
// the model computes in ("Float32", "BFloat16" or "Float16"); read it with
// ComputeDType.
const ParamComputeDType = "train_compute_dtype"

// ComputeDType is the dtype a model should compute in. Under mixed
// precision the weights stay float32 (master weights) and the harness feeds
// the model inputs already converted to this dtype; the model converts each
// weight with graph.ConvertDType(w, ComputeDType(ctx)) before using it.
func ComputeDType(ctx *context.Context) dtypes.DType {
	name := context.GetParamOr(ctx, ParamComputeDType, dtypes.Float32.String())
	dt, err := dtypes.DTypeString(name)
	if err != nil {
		return dtypes.Float32
	}
	return dt
}

// mixedModel converts the float inputs of model to dt and its predictions
// back to float32, so the loss and the gradients of the master weights are
// computed in float32.
func mixedModel(model ModelFn, dt dtypes.DType) ModelFn {
	return func(ctx *context.Context, spec any, inputs []*graph.Node) []*graph.Node {
		in := make([]*graph.Node, len(inputs))
		for i, x := range inputs {
			if x.DType().IsFloat() && x.DType() != dt {
				x = graph.ConvertDType(x, dt)
			}
			in[i] = x
		}
		out := model(ctx, spec, in)
		for i, y := range out {
			if y.DType().IsFloat() && y.DType() != dtypes.Float32 {
				out[i] = graph.ConvertDType(y, dtypes.Float32)
			}
		}
		return out
	}
}

// scaledLoss multiplies the (mean) loss by the loss-scale variable.
func (h *Harness) scaledLoss(loss LossFn) LossFn {
	return func(labels, predictions []*graph.Node) *graph.Node {
		l := loss(labels, predictions)
		if !l.Shape().IsScalar() {
			l = graph.ReduceAllMean(l)
		}
		scale := lossScaleVar(h.ctx).ValueGraph(l.Graph())
		return graph.Mul(l, graph.ConvertDType(scale, l.DType()))
	}
}

// SetLogger sets where the harness reports events such as skipped steps
// (default: the standard logger).
func (h *Harness) SetLogger(fn func(msg string)) {
	if fn == nil {
		fn = func(string) {}
	}
	h.logf = fn
}

// SetProgressWriter sets where progress is shown (default: standard
// error); nil shows none.
func (h *Harness) SetProgressWriter(w io.Writer) { h.progressW = w }

// SetStepHook sets a function Run calls after every optimizer step with the
// step number and its loss (nil: none). It runs on Run's goroutine, before
// the step's checkpoint.
func (h *Harness) SetStepHook(fn func(step int64, loss float64)) { h.stepHook = fn }

// SetSharder sets the sharding hook that places the model's variables on
// the devices when training on more than one (--devices); call it before
// the first step. On one device it is not used.
func (h *Harness) SetSharder(s Sharder) { h.sharder = s }

// SetStepInputs sets a function that computes, from each training batch's
// inputs x (this rank's share across ranks), more inputs of the training
// graph: the model function then gets x followed by them. Across ranks
// (Config.Comm) it runs on every rank for every batch and may make
// collective calls, as moe does to route the whole global batch. Not
// with Devices > 1. Call it before the first step.
func (h *Harness) SetStepInputs(fn func(x *tensors.Tensor) ([]*tensors.Tensor, error)) {
	h.stepInputs = fn
}

// Devices returns the number of devices training runs on.
func (h *Harness) Devices() int {
	if h.dp == nil {
		return 1
	}
	return len(h.dp.devices)
}

// Scaler returns the dynamic loss scaler, or nil when loss scaling is off.
func (h *Harness) Scaler() *LossScaler { return h.scaler }

// Skipped tells whether the last step was skipped by the loss scaler.
func (h *Harness) Skipped() bool { return h.skipped }

// Catch runs fn and turns a panic (GoMLX reports graph errors by panicking)
// into an error, for model packages that build and run graphs themselves.
func Catch(fn func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				err = e
			} else {
				err = fmt.Errorf("%v", r)
			}
		}
	}()
	fn()
	return nil
}

// Context returns the GoMLX context holding the model and optimizer variables.
func (h *Harness) Context() *context.Context { return h.ctx }

// Step returns the number of optimizer steps done.
func (h *Harness) Step() int64 { return h.step }

// TotalSteps returns the number of optimizer steps Run aims for.
func (h *Harness) TotalSteps() int { return h.totalSteps }

// Data returns the data set.
func (h *Harness) Data() *Dataset { return h.data }

// Perf returns the performance measurements so far.
func (h *Harness) Perf() Perf { return h.perf }

// TrainStep runs one optimizer step (cfg.Accumulate micro-batches) and
// returns its loss, the mean of the micro-batch losses.
func (h *Harness) TrainStep() (float64, error) {
	start := h.now()
	var sum float64
	scale := 1.0
	if h.scaler != nil {
		scale = h.scaler.Scale
		t := tensors.FromScalar(float32(scale))
		if err := lossScaleVar(h.ctx).SetValue(t); err != nil {
			return 0, fmt.Errorf("train: step %d: setting the loss scale: %w", h.step+1, err)
		}
	}
	if h.ranks != nil {
		if err := h.ranks.checkSetup(h); err != nil {
			return 0, err
		}
		if err := h.ranks.reseed(h); err != nil {
			return 0, err
		}
	}
	for range h.cfg.Accumulate {
		// Batches go straight into the backend's buffers when nothing reads
		// them on the host (no SetStepInputs, one device, one rank).
		var shared backends.Backend
		if h.stepInputs == nil && h.dp == nil && h.ranks == nil {
			shared = h.backend
		}
		x, y, _, err := h.data.nextPart(h.cfg.BatchSize, h.cfg.Rank(), h.cfg.Ranks(), shared)
		if err != nil {
			return 0, err
		}
		inputs := []*tensors.Tensor{x}
		if h.stepInputs != nil {
			if h.dp != nil {
				return 0, fmt.Errorf("train: step %d: SetStepInputs with Devices %d: not supported", h.step+1, len(h.dp.devices))
			}
			extra, err := h.stepInputs(x)
			if err != nil {
				return 0, fmt.Errorf("train: step %d: %w", h.step+1, err)
			}
			inputs = append(inputs, extra...)
		}
		var ms []*tensors.Tensor
		var stepErr error
		err = Catch(func() {
			if h.dp == nil {
				ms, stepErr = h.trainer.TrainStep(nil, inputs, []*tensors.Tensor{y})
				return
			}
			xd, err := h.dp.shard(x)
			if err != nil {
				panic(err)
			}
			yd, err := h.dp.shard(y)
			if err != nil {
				panic(err)
			}
			ms, stepErr = h.trainer.DistributedTrainStep(distributed.AutoSharding, h.dp.devices, nil,
				[]*distributed.Tensor{xd}, []*distributed.Tensor{yd})
		})
		if err == nil {
			err = stepErr
		}
		if shared != nil {
			// The batch's buffers go back to the backend's pool now, not
			// when the collector finds the tensors.
			_ = x.FinalizeAll()
			_ = y.FinalizeAll()
		}
		if err != nil {
			return 0, fmt.Errorf("train: step %d: %w", h.step+1, err)
		}
		if len(ms) == 0 {
			return 0, fmt.Errorf("train: step %d: the trainer returned no loss", h.step+1)
		}
		l, err := scalarValue(ms[0])
		if err != nil {
			return 0, fmt.Errorf("train: step %d: reading the loss: %w", h.step+1, err)
		}
		sum += l
	}
	if h.ranks != nil {
		cancelled := h.runCtx != nil && h.runCtx.Err() != nil
		var err error
		if sum, err = h.ranks.step(h, sum, cancelled); err != nil {
			return 0, fmt.Errorf("train: step %d: %w", h.step+1, err)
		}
	}
	if err := h.checkRestored(); err != nil {
		return 0, err
	}
	h.step++
	if h.ranks != nil && !h.ranks.checked {
		if err := h.ranks.agree(h); err != nil {
			return 0, err
		}
	}
	h.lastLoss = sum / float64(h.cfg.Accumulate) / scale
	h.perf.addStep(h.now().Sub(start))
	h.skipped = false
	if h.scaler != nil {
		f, err := h.HarnessValue(GradsFiniteVar)
		if err != nil {
			return 0, fmt.Errorf("train: step %d: %w", h.step, err)
		}
		ev := h.scaler.Update(f == 1)
		if ev.Skip {
			h.skipped = true
			h.logf(fmt.Sprintf("train: step %d skipped: non-finite gradients at loss scale %g; loss scale now %g",
				h.step, ev.OldScale, ev.NewScale))
			if err := h.emit(map[string]any{"step": h.step, "event": "skipped",
				"loss_scale": ev.OldScale, "new_loss_scale": ev.NewScale}); err != nil {
				return 0, err
			}
			if ev.OldScale <= minLossScale {
				return h.lastLoss, fmt.Errorf("train: step %d: %w: gradients are not finite even at loss scale %g",
					h.step, ErrNonFiniteLoss, ev.OldScale)
			}
		}
	}
	return h.lastLoss, nil
}

// HarnessValue reads a scalar harness variable (GradNormVar,
// ClippedGradNormVar) after a step.
func (h *Harness) HarnessValue(name string) (float64, error) {
	v := h.ctx.GetVariableByScopeAndName(HarnessScope, name)
	if v == nil {
		return 0, fmt.Errorf("train: no harness variable %q yet", name)
	}
	t, err := v.Value()
	if err != nil {
		return 0, fmt.Errorf("train: reading %q: %w", name, err)
	}
	return scalarValue(t)
}

// LearningRate returns the learning rate used by the last step.
func (h *Harness) LearningRate() float64 {
	if h.step == 0 {
		return ScheduleValue(0, h.cfg, h.totalSteps)
	}
	return ScheduleValue(int(h.step-1), h.cfg, h.totalSteps)
}

// GlobalStep is the optimizer's step counter in the context.
func (h *Harness) GlobalStep() int64 { return optimizers.GetGlobalStep(h.ctx) }

func scalarValue(t *tensors.Tensor) (float64, error) {
	var out float64
	err := Catch(func() {
		switch t.DType() {
		case dtypes.Float32:
			out = float64(tensors.ToScalar[float32](t))
		case dtypes.Float64:
			out = tensors.ToScalar[float64](t)
		default:
			v := tensors.MustCopyFlatData[float32](t)
			out = float64(v[0])
		}
	})
	return out, err
}

// Result is the outcome of Run.
type Result struct {
	// Steps is the number of optimizer steps done, including resumed ones.
	Steps int64 `json:"steps"`
	// Loss is the last step's loss.
	Loss float64 `json:"loss"`
	// Stopped is the early-stopping reason, if it stopped training.
	Stopped string `json:"stopped,omitempty"`
	// Eval holds the last evaluation's metrics (with SetEvaluator), and
	// EvalStep the step they followed.
	Eval     map[string]float64 `json:"eval,omitempty"`
	EvalStep int64              `json:"eval_step,omitempty"`
	// Resumed is the step Run resumed from (0 for a fresh start).
	Resumed int64 `json:"resumed"`
	// Checkpoint is the last checkpoint written.
	Checkpoint string `json:"checkpoint,omitempty"`
	// Interrupted tells that the run's context was cancelled (RunContext).
	Interrupted bool `json:"interrupted,omitempty"`
	// PlannedSteps is the last step a time-limited run planned
	// (Config.TimeLimit), or that the checkpoint it resumed from recorded;
	// 0 for other runs.
	PlannedSteps int64 `json:"planned_steps,omitempty"`
	// Plots are the PNG files written to Config.PlotsDir.
	Plots []string `json:"plots,omitempty"`
	// CSVLog is the CSV twin of the metrics log (CSVLogPath), when written.
	CSVLog string `json:"csv_log,omitempty"`
	// TensorBoard is the event file written in Config.TensorBoardDir.
	TensorBoard string `json:"tensorboard,omitempty"`
	// EMA tells that the weights after Run are the moving averages
	// (Config.EMADecay).
	EMA bool `json:"ema,omitempty"`
}

// Evaluator computes evaluation metrics (for example "val_loss" on held-out
// data) with the model's current weights.
type Evaluator func(h *Harness) (map[string]float64, error)

// SetEvaluator sets the function run every Config.EvalEvery steps and at the
// end of Run. Its metrics go to the metrics log and Result.Eval, and early
// stopping can monitor one of them (Config.EarlyStopMonitor).
func (h *Harness) SetEvaluator(fn Evaluator) { h.evaluator = fn }

// addWall sets rec's "wall": the seconds since RunContext began, everything
// included (evaluations, checkpoints, logs), where "elapsed" counts the
// training steps only. Curves against wall-clock time (a run stopped after an
// hour) read it.
func (h *Harness) addWall(rec map[string]any) {
	if !h.runStart.IsZero() {
		rec["wall"] = h.now().Sub(h.runStart).Seconds()
	}
}

// evaluate runs the evaluator, logs its metrics and feeds early stopping
// when it monitors one of them. It reports whether to stop, and why.
func (h *Harness) evaluate(ctx stdcontext.Context) (bool, string, error) {
	var m map[string]float64
	began := h.now()
	err := h.WithAveragedWeights(func() (err error) {
		m, err = h.evaluator(h)
		return err
	})
	h.evalTime, h.evalStep = h.now().Sub(began), h.step
	h.evalTotal += h.evalTime
	if h.ranks != nil {
		m, err = h.ranks.shareEval(m, err)
	}
	if err != nil {
		return false, "", fmt.Errorf("train: evaluation at step %d: %w", h.step, err)
	}
	h.lastEval = m
	rec := map[string]any{"step": h.step, "epoch": h.data.Position().Epoch, "elapsed": h.perf.Total.Seconds()}
	h.addWall(rec)
	for k, v := range m {
		rec[k] = v
	}
	h.history = append(h.history, rec)
	if err := h.emit(rec); err != nil {
		return false, "", err
	}
	mon := h.cfg.EarlyStopMonitor
	if h.stopper == nil || mon == "" || mon == "loss" {
		return false, "", nil
	}
	v, ok := m[mon]
	if !ok {
		names := make([]string, 0, len(m))
		for k := range m {
			names = append(names, k)
		}
		sort.Strings(names)
		return false, "", fmt.Errorf("train: EarlyStopMonitor %q is not among the evaluation metrics %v", mon, names)
	}
	return h.stopper.Update(h.step, v)
}

// monitored returns the value checkpoints rank by: the monitored evaluation
// metric when there is one, else the training loss.
func (h *Harness) monitored(loss float64) float64 {
	if mon := h.cfg.EarlyStopMonitor; mon != "" && mon != "loss" {
		if v, ok := h.lastEval[mon]; ok {
			return v
		}
	}
	return loss
}

// Run trains to TotalSteps, or until early stopping, writing checkpoints and
// the metrics log as configured. With cfg.Resume it first restores the
// latest valid checkpoint. A non-finite loss stops it with an error wrapping
// ErrNonFiniteLoss (with cfg.StopOnNonFinite).
func (h *Harness) Run() (Result, error) { return h.RunContext(stdcontext.Background()) }

// RunContext is Run, stopping early when ctx is cancelled: it then finishes
// the optimizer step in progress, logs it, writes a checkpoint (unless
// checkpoints are off), the performance summary and the plots, and returns
// the Result, with Interrupted set, and an error wrapping ErrInterrupted and
// the context's cause. Resuming from that checkpoint continues exactly as
// if there had been no interruption. Use NotifyContext to cancel on SIGINT
// and SIGTERM.
func (h *Harness) RunContext(ctx stdcontext.Context) (res Result, err error) {
	if h.cfg.Resume {
		path, err := h.Resume()
		if err != nil {
			return res, err
		}
		h.logf(fmt.Sprintf("train: resumed from %s at step %d", path, h.step))
		res.Resumed = h.step
	}
	if h.cfg.FindLR {
		return res, h.runFindLR(ctx)
	}
	h.runCtx = ctx
	h.runStart = h.now()
	defer func() { h.runCtx, h.runStart, h.limit = nil, time.Time{}, nil }()
	h.evalStep, h.evalTotal, h.runSteps, h.runStepTime = -1, 0, h.perf.Steps, h.perf.Total
	h.startTimeLimit()
	closeLogs, err := h.openLogs(&res, h.step)
	if err != nil {
		return res, err
	}
	defer func() {
		if cerr := closeLogs(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	h.history = nil
	startStep := h.step
	progW := h.progressW
	if h.cfg.Rank() != 0 {
		progW = nil // rank 0 shows the progress of all
	}
	prog := newProgress(h.cfg.Progress, progW, h.cfg.ProgressInterval, h.step, int64(h.totalSteps))
	if prog != nil {
		defer func() { prog.finish(h.status(startStep, res.Loss)) }()
	}
	timedOut := false
	for h.step < int64(h.totalSteps) {
		if h.stopNow(ctx) {
			return h.interrupted(ctx, res)
		}
		if up, why := h.timeUp(); up {
			res.Stopped, timedOut = why, true
			break
		}
		loss, err := h.TrainStep()
		if err != nil {
			return res, err
		}
		res.Steps, res.Loss = h.step, loss
		if prog != nil {
			prog.update(h.status(startStep, loss))
		}
		if h.stepHook != nil {
			h.stepHook(h.step, loss)
		}
		if h.step%int64(h.cfg.LogEvery) == 0 || h.step == int64(h.totalSteps) || h.step == startStep+1 {
			if err := h.logStep(ctx, loss); err != nil {
				return res, err
			}
		}
		if h.skipped {
			continue // the scaler lowered the scale; nothing was learnt from this step
		}
		if h.cfg.StopOnNonFinite {
			if err := CheckFinite(h.step, loss); err != nil {
				return res, err
			}
		}
		if h.stopper != nil && (h.cfg.EarlyStopMonitor == "" || h.cfg.EarlyStopMonitor == "loss") {
			stop, reason, err := h.stopper.Update(h.step, loss)
			if err != nil {
				return res, err
			}
			if stop {
				res.Stopped = reason
				break
			}
		}
		if h.evaluator != nil && (h.step%int64(h.evalEvery()) == 0 || h.step == int64(h.totalSteps)) {
			stop, reason, err := h.evaluate(ctx)
			res.Eval = h.lastEval
			if err != nil {
				return res, err
			}
			if stop {
				res.Stopped = reason
				break
			}
		}
		if stop, reason, err := h.planEnd(h.evalStep == h.step); err != nil {
			return res, err
		} else if stop {
			res.Stopped = reason
			break
		}
		if h.ckpt != nil && h.cfg.CheckpointEvery > 0 && h.step%int64(h.cfg.CheckpointEvery) == 0 && h.step != int64(h.totalSteps) {
			if res.Checkpoint, err = h.ckpt.Save(h, h.monitored(loss)); err != nil {
				return res, err
			}
		}
	}
	res.Steps, res.PlannedSteps = h.step, h.plannedSteps
	if timedOut && h.evaluator != nil && h.step > 0 && h.evalStep != h.step {
		// The final evaluation the plan left time for.
		if _, _, err := h.evaluate(ctx); err != nil {
			return res, err
		}
		res.Eval = h.lastEval
	}
	if res.Eval != nil {
		res.EvalStep = h.evalStep
	}
	if h.ckpt != nil && h.step > 0 {
		if res.Checkpoint, err = h.ckpt.Save(h, h.monitored(h.lastLoss)); err != nil {
			return res, err
		}
	}
	if err := h.writeReports(&res); err != nil {
		return res, err
	}
	if err := h.applyEMA(); err != nil {
		return res, err
	}
	res.EMA = h.emaApplied
	return res, nil
}

// runFindLR runs the learning-rate range test instead of training
// (Config.FindLR) and returns it as an *LRFound error; with
// Config.PlotsDir it also draws it.
func (h *Harness) runFindLR(ctx stdcontext.Context) error {
	if h.step > 0 {
		return fmt.Errorf("train: FindLR: the harness has trained %d steps already; the range test starts from fresh weights", h.step)
	}
	r, err := h.findLR(ctx)
	if err != nil {
		return err
	}
	if h.cfg.PlotsDir != "" {
		if r.Plot, err = r.writePlot(h.cfg.PlotsDir); err != nil {
			return err
		}
	}
	return &LRFound{Test: r}
}

// writeReports writes the performance summary and the plots, as configured.
func (h *Harness) writeReports(res *Result) error {
	if h.cfg.PerfSummary != "" {
		if err := h.perf.WriteSummary(h.cfg.PerfSummary); err != nil {
			return err
		}
	}
	if h.cfg.PlotsDir != "" {
		var err error
		if res.Plots, err = h.writePlots(); err != nil {
			return err
		}
	}
	return nil
}

// interrupted writes a checkpoint at the current optimizer-step boundary
// and reports the interruption.
func (h *Harness) interrupted(ctx stdcontext.Context, res Result) (Result, error) {
	res.Interrupted, res.Steps = true, h.step
	if n := len(h.history); h.step > 0 && (n == 0 || h.history[n-1]["step"] != h.step) {
		if err := h.logStep(stdcontext.WithoutCancel(ctx), h.lastLoss); err != nil {
			return res, fmt.Errorf("train: interrupted after step %d: %w", h.step, err)
		}
	}
	where := "no checkpoint written"
	if h.ckpt != nil && h.step > 0 {
		path, err := h.ckpt.Save(h, h.lastLoss)
		if err != nil {
			return res, fmt.Errorf("train: interrupted after step %d, and the checkpoint failed: %w", h.step, err)
		}
		res.Checkpoint, where = path, "checkpoint "+path
	}
	if h.step > 0 {
		if err := h.writeReports(&res); err != nil {
			return res, fmt.Errorf("train: interrupted after step %d (%s): %w", h.step, where, err)
		}
		if err := h.applyEMA(); err != nil {
			return res, fmt.Errorf("train: interrupted after step %d (%s): %w", h.step, where, err)
		}
		res.EMA = h.emaApplied
	}
	cause := stdcontext.Cause(ctx)
	if cause == nil {
		cause = errors.New("another rank was interrupted")
	}
	return res, fmt.Errorf("train: %w after step %d (%s; continue with Resume): %w",
		ErrInterrupted, h.step, where, cause)
}

// stopNow tells whether RunContext stops before the next step: when ctx
// is cancelled or, across ranks, when any rank's was by the last step
// (every rank then stops at the same step boundary).
func (h *Harness) stopNow(ctx stdcontext.Context) bool {
	if h.ranks != nil {
		return h.ranks.stop
	}
	return ctx.Err() != nil
}

// status is the progress after the last step; startStep is where this run
// began (steps before it, restored from a checkpoint, were not timed).
func (h *Harness) status(startStep int64, loss float64) ProgressStatus {
	s := ProgressStatus{Step: h.step, Total: int64(h.totalSteps), Loss: loss, Elapsed: h.perf.Total,
		SamplesPerSec: h.perf.SamplesPerSec()}
	if med := h.perf.SteadyMedian(); med > 0 && h.step > startStep {
		s.ETA = time.Duration(int64(h.totalSteps)-h.step) * med
	}
	return s
}

// writePlots plots the whole metrics log when there is one (a resumed run
// continues it), else the records of this run.
func (h *Harness) writePlots() ([]string, error) {
	recs := h.history
	// The whole log (a resumed run's earlier lines too) when it is a file
	// that can be read back; a log written through to a pipe or a device
	// (standard output) cannot, and reading it would wait forever.
	if fi, err := os.Stat(h.cfg.MetricsLog); err == nil && fi.Mode().IsRegular() {
		if recs, err = ReadMetricsLog(h.cfg.MetricsLog); err != nil {
			return nil, err
		}
	}
	return PlotMetrics(recs, h.cfg.PlotsDir, nil)
}

// evalEvery is the evaluation period in steps.
func (h *Harness) evalEvery() int {
	if h.cfg.EvalEvery > 0 {
		return h.cfg.EvalEvery
	}
	return h.cfg.LogEvery
}

// logStep records the step's metrics in the history (for plots) and the
// metrics log, if any.
func (h *Harness) logStep(ctx stdcontext.Context, loss float64) error {
	rec := map[string]any{
		"step":    h.step,
		"epoch":   h.data.Position().Epoch,
		"loss":    loss,
		"lr":      h.LearningRate(),
		"elapsed": h.perf.Total.Seconds(),
	}
	h.addWall(rec)
	if v, err := h.HarnessValue(GradNormVar); err == nil {
		rec["grad_norm"] = v
	}
	if h.perf.Steps > 0 {
		rec["step_ms"] = float64(h.perf.Last.Microseconds()) / 1000
		if h.perf.Last > 0 {
			rec["samples_per_s"] = float64(h.cfg.BatchSize*h.cfg.Accumulate) / h.perf.Last.Seconds()
		}
	}
	if err := h.stepMetricValues(rec); err != nil {
		return err
	}
	if h.ranks != nil {
		var names []string
		for name := range h.stepMetrics {
			if _, ok := rec[name]; ok {
				names = append(names, name)
			}
		}
		sort.Strings(names)
		if err := h.ranks.meanAcross(rec, names); err != nil {
			return err
		}
		if err := h.ranks.agree(h); err != nil {
			return err
		}
	}
	h.gpu.sample(ctx, rec)
	h.history = append(h.history, rec)
	return h.emit(rec)
}

// emit writes rec to the run's logs: the metrics log, its CSV twin and the
// TensorBoard event file, those that are open.
func (h *Harness) emit(rec map[string]any) error {
	if h.log != nil {
		if err := h.log.Write(rec); err != nil {
			return err
		}
	}
	if h.csv != nil {
		if err := h.csv.Write(rec); err != nil {
			return err
		}
	}
	if h.tb != nil {
		if err := h.tb.Write(rec); err != nil {
			return err
		}
	}
	return nil
}

// History returns the records logged in this run (metrics lines and
// evaluations), as the metrics log holds them.
func (h *Harness) History() []map[string]any { return slices.Clone(h.history) }

// openLogs opens the run's logs for a run that starts after step after
// (> 0: it continues a checkpoint): the metrics log and its CSV twin,
// each first trimmed to that step (trimLog), and a new TensorBoard event
// file. It returns the function that closes them.
func (h *Harness) openLogs(res *Result, after int64) (closeAll func() error, err error) {
	var closers []func() error
	closeAll = func() error {
		var errs []error
		for _, c := range closers {
			errs = append(errs, c())
		}
		h.log, h.csv, h.tb = nil, nil, nil
		return errors.Join(errs...)
	}
	defer func() {
		if err != nil {
			_ = closeAll()
		}
	}()
	if path := h.cfg.MetricsLog; path != "" {
		if after > 0 {
			if err := trimMetricsLog(path, after); err != nil {
				return closeAll, err
			}
		}
		if h.log, err = OpenMetricsLog(path); err != nil {
			return closeAll, err
		}
		closers = append(closers, h.log.Close)
		// The CSV twin goes beside a log that is a file (not a pipe or
		// standard output).
		if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
			csvPath := CSVLogPath(path)
			if h.csv, err = openCSVLog(csvPath, after); err != nil {
				return closeAll, err
			}
			closers = append(closers, h.csv.Close)
			res.CSVLog = csvPath
		}
	}
	if dir := h.cfg.TensorBoardDir; dir != "" {
		if h.tb, err = openTensorBoard(dir, after, time.Now); err != nil {
			return closeAll, err
		}
		closers = append(closers, h.tb.Close)
		res.TensorBoard = h.tb.path
	}
	return closeAll, nil
}
