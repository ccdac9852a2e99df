package moe

import (
	stdcontext "context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/gotrain/gotrain/dist"
	"github.com/gotrain/gotrain/internal/atomicfile"
	"github.com/gotrain/gotrain/train"
)

// Options configure Train.
type Options struct {
	// Model is the model; its Inputs and Classes are taken from Data when 0.
	Model Config
	// Train is the harness configuration (optimizer, batch, epochs,
	// precision, devices, checkpoints, ...).
	Train train.Config
	// Data is the data set.
	Data *Data
	// OutDir receives the plots, the performance summary, epochs.jsonl and,
	// unless Train sets them, metrics.jsonl ("": no files). A resumed run
	// continues epochs.jsonl and metrics.jsonl, its epochs numbered on
	// from the checkpoint's step.
	OutDir string
	// GrowExperts splits the most loaded expert when the validation loss
	// has not improved by GrowMinDelta for GrowPatience epochs.
	GrowExperts  bool
	GrowPatience int
	GrowMinDelta float64
	// GrowEps is the size of the function-preserving perturbation of a
	// split expert (default 0.05).
	GrowEps float64
	// WarmupFraction, when Train.WarmupSteps is 0, warms the learning rate
	// up over this fraction of the run's optimizer steps (rounded up; 0:
	// no warm-up). DefaultOptions sets 0.1.
	WarmupFraction float64
	// MonitorMemory records the process's resident memory every epoch.
	MonitorMemory bool
	// EvalBatch is the batch size of evaluation (default 1000).
	EvalBatch int
	// Logf reports epochs and splits (nil: silent).
	Logf func(format string, args ...any)
	// Progress is where the harness shows progress (nil: none).
	Progress io.Writer
	// AutoBatchSize makes Train pick the batch size instead of using
	// Train.BatchSize (train.AutoBatchSize): on an accelerator the largest
	// that fits (one training step tried with train.FindBatchSize, from 32
	// up to 8192 and the number of training examples), on a host backend,
	// which has no device memory to probe, 256.
	AutoBatchSize bool
}

// DefaultOptions returns the options `gotrain moe train` starts from: the
// model of DefaultConfig trained with Adam for 5 epochs in batches of 256,
// the learning rate warmed up to 0.006 over the first tenth of the steps
// and then decayed to 0 along a half cosine, a split considered after one
// epoch without a validation-loss decrease of 0.001 (when GrowExperts is
// set). Set Data.
//
// Why these: with Adam at a constant 0.001 the default mixture reached
// 96.9-97.2 % on MNIST in 5 epochs; the cosine decay lets a higher peak
// rate learn fast early and settle late, and the warm-up keeps that peak
// from upsetting the fresh gate. Peaks from 0.003 to 0.006 all reached
// 97.7-98.0 % on seeds 1-3; judged on a 10 % validation split of the
// training images (never on the test set), 0.006 had the highest mean
// accuracy over seeds 1-3 (docs/MOE.md).
func DefaultOptions() Options {
	cfg := train.DefaultConfig()
	cfg.Optimizer, cfg.Epochs, cfg.BatchSize = train.OptimizerAdam, 5, 256
	cfg.LearningRate, cfg.Cosine = 0.006, true
	return Options{Model: DefaultConfig(), Train: cfg, GrowPatience: 1, GrowMinDelta: 0.001, WarmupFraction: 0.1}
}

// EpochRecord is what Train records at the end of every epoch.
type EpochRecord struct {
	Epoch       int     `json:"epoch"`
	Step        int64   `json:"step"`
	TrainLoss   float64 `json:"train_loss"`
	ValLoss     float64 `json:"val_loss"`
	ValAccuracy float64 `json:"val_accuracy"`
	Seconds     float64 `json:"epoch_seconds"`
	// Load is each slot's share of the epoch's routing assignments.
	Load []float64 `json:"load"`
	// Dropped is the share of the epoch's assignments over capacity.
	Dropped          float64 `json:"dropped"`
	Experts          int     `json:"experts"`
	ExpertsPerDevice []int   `json:"experts_per_device"`
	RSSMiB           float64 `json:"rss_mib,omitempty"`
}

// Summary is what a run measured: the data, the test scores and the
// training's steps and speed. Result and Report both carry it.
type Summary struct {
	Data           string  `json:"data"`
	TestAccuracy   float64 `json:"test_accuracy"`
	TestLoss       float64 `json:"test_loss"`
	Epochs         int     `json:"epochs"`
	Steps          int64   `json:"steps"`
	StepsPerSecond float64 `json:"steps_per_second"`
	MedianStepMS   float64 `json:"median_step_ms"`
	FirstStepMS    float64 `json:"first_step_ms"`
}

// Result is the outcome of Train.
type Result struct {
	Summary
	// Load is each active expert's share of all routing assignments of the
	// run, by slot (free slots omitted: see Active).
	Load             map[int]float64 `json:"load"`
	DroppedShare     float64         `json:"dropped_share"`
	Experts          int             `json:"experts"`
	Active           []bool          `json:"active"`
	ExpertsPerDevice []int           `json:"experts_per_device"`
	Grown            []GrowEvent     `json:"grown,omitempty"`
	History          []EpochRecord   `json:"history"`
	Files            []string        `json:"files,omitempty"`
	PeakMemoryMiB    float64         `json:"peak_memory_mib"`
	Train            train.Result    `json:"train"`
	Perf             train.Perf      `json:"-"`
	// BatchSize is the batch size trained with (Options.Train.BatchSize,
	// or the one Options.AutoBatchSize picked).
	BatchSize int `json:"batch_size"`
	// Devices is the number of devices trained on (Model.Devices, or
	// Train.Devices resolved against the backend).
	Devices int `json:"devices"`
	// Parallel is how the run placed the experts: "expert" (sharded over
	// the devices) or "data" (every device holds every expert: data
	// parallel, which on one device is plain single-device training).
	Parallel string `json:"parallel"`
	// ParallelNote says why Parallel is not what Model.ExpertParallel
	// asked for ("" when it is).
	ParallelNote string `json:"parallel_note,omitempty"`
}

// Train trains a mixture of experts on opts.Data with the harness and
// evaluates it on the test part. Cancelling ctx stops it like the
// harness's RunContext (a checkpoint is written; the error wraps
// train.ErrInterrupted).
//
// A Model.Devices of 0 is Train.Devices resolved against the backend
// (train.ParseDevices); Model.ExpertParallel on one device is off (the
// Result's Parallel and ParallelNote say so); with GrowExperts, a
// Model.MaxExperts of 0 is Experts + 4.
func Train(ctx stdcontext.Context, backend backends.Backend, opts Options) (*Result, error) {
	if ctx == nil {
		ctx = stdcontext.Background()
	}
	if err := opts.Data.validate(); err != nil {
		return nil, err
	}
	if err := opts.check(); err != nil {
		return nil, err
	}
	if backend == nil {
		return nil, errors.New("moe: no backend")
	}
	d := opts.Data
	mc := opts.Model
	if mc.Inputs == 0 {
		mc.Inputs = d.Inputs
	}
	if mc.Classes == 0 {
		mc.Classes = d.Classes
	}
	if mc.Devices == 0 {
		var available int
		if err := train.Catch(func() { available = backend.NumDevices() }); err != nil {
			return nil, fmt.Errorf("moe: counting the backend's devices: %w", err)
		}
		n, err := train.ParseDevices(opts.Train.Devices, available)
		if err != nil {
			return nil, fmt.Errorf("moe: %w", err)
		}
		mc.Devices = n
	}
	parallelNote := ""
	if mc.Devices <= 1 && mc.ExpertParallel {
		mc.ExpertParallel = false // nothing to shard on one device
		parallelNote = fmt.Sprintf("expert parallelism was requested but needs more than one device to shard the experts over; "+
			"this run has %d, so it trained single-device (data parallel over one device, every expert on it)", mc.Devices)
	}
	if opts.GrowExperts && mc.MaxExperts == 0 {
		mc.MaxExperts = mc.Experts + 4
	}
	if mc.Inputs != d.Inputs || mc.Classes != d.Classes {
		return nil, fmt.Errorf("moe: the model takes %d inputs and %d classes, the data %s has %d and %d",
			mc.Inputs, mc.Classes, d.Name, d.Inputs, d.Classes)
	}
	m, err := New(mc, opts.Train.Seed)
	if err != nil {
		return nil, err
	}
	if opts.GrowEps == 0 {
		opts.GrowEps = 0.05
	}
	if opts.GrowPatience < 1 {
		opts.GrowPatience = 1
	}
	if opts.EvalBatch < 1 {
		opts.EvalBatch = 1000
	}
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	cfg := opts.Train
	if cfg.Ranks() > 1 && opts.GrowExperts {
		return nil, fmt.Errorf("moe: GrowExperts across %d ranks (Train.Comm): grow experts in one process", cfg.Ranks())
	}
	if cfg.Ranks() > 1 && opts.AutoBatchSize {
		return nil, fmt.Errorf("moe: an automatic batch size across %d ranks (Train.Comm): every rank must use the same global batch; give it", cfg.Ranks())
	}
	if cfg.Rank() != 0 {
		opts.OutDir = "" // rank 0 writes the run's files
	}
	if opts.OutDir != "" {
		if err := os.MkdirAll(opts.OutDir, 0o755); err != nil {
			return nil, fmt.Errorf("moe: output directory: %w", err)
		}
		if cfg.MetricsLog == "" {
			cfg.MetricsLog = filepath.Join(opts.OutDir, "metrics.jsonl")
		}
	}
	cfg.PerfSummary = "" // written below, with the experts' figures
	ds, err := train.NewDataset(d.TrainX, d.Inputs, d.TrainY, 1, cfg.Seed, true)
	if err != nil {
		return nil, fmt.Errorf("moe: %w", err)
	}
	if opts.AutoBatchSize {
		n, note, err := train.AutoBatchSize(backend, min(256, ds.Len()), func() (int, error) {
			probe, err := New(mc, cfg.Seed)
			if err != nil {
				return 0, err
			}
			limit := min(8192, ds.Len())
			return train.FindBatchSize(min(32, limit), limit, train.StepFits(backend, cfg, probe.ModelFn(), Loss, ds))
		})
		if err != nil {
			return nil, fmt.Errorf("moe: %w", err)
		}
		logf("moe: %s", note)
		cfg.BatchSize = n
	}
	if cfg.WarmupSteps == 0 && opts.WarmupFraction > 0 {
		cfg.WarmupSteps = int(math.Ceil(opts.WarmupFraction * float64(runSteps(cfg, len(d.TrainY)))))
	}
	// The architecture of a run: what the checkpoint's shapes depend on.
	shape := struct {
		Inputs, Classes, Experts, MaxExperts, GateHidden int
		Hidden                                           []int
	}{mc.Inputs, mc.Classes, mc.Experts, mc.MaxExperts, mc.GateHidden, mc.Hidden}
	cfg.Run = train.RunInfo{Kind: "moe", Arch: train.ArchJSON(shape), Data: train.Fingerprint(float32Bytes(d.TrainX), float32Bytes(d.TrainY))}
	h, err := train.New(backend, cfg, m.ModelFn(), Loss, ds)
	if err != nil {
		return nil, fmt.Errorf("moe: %w", err)
	}
	if m.cfg.ExpertParallel {
		h.SetSharder(m)
	}
	if cfg.Ranks() > 1 {
		m.ranks = cfg.Ranks()
		h.SetStepInputs(m.acrossRanks(backend, h.Context(), cfg.Comm))
	}
	h.SetStepMetric("accuracy", Accuracy)
	h.SetProgressWriter(opts.Progress)
	h.SetLogger(func(msg string) { logf("%s", msg) })

	t := &tracker{m: m, h: h, opts: opts, backend: backend, logf: logf,
		load: make([]float64, m.cfg.MaxExperts), runLoad: make([]float64, m.cfg.MaxExperts),
		sinceGrow: make([]float64, m.cfg.MaxExperts), best: math.Inf(1), epochStart: time.Now()}
	t.stepsPerEpoch = max(ds.Len()/cfg.BatchSize/cfg.Accumulate, 1)
	runCtx, cancel := stdcontext.WithCancelCause(ctx)
	defer cancel(nil)
	h.SetStepHook(func(step int64, loss float64) {
		if t.err != nil {
			return
		}
		if err := t.afterStep(step, loss); err != nil {
			t.err = err
			cancel(err)
		}
	})
	tr, runErr := h.RunContext(runCtx)
	if t.err != nil {
		return nil, t.err
	}
	res := &Result{Summary: Summary{Data: d.Name, Steps: tr.Steps}, Train: tr, Grown: t.grown, History: t.history, Perf: h.Perf(),
		BatchSize: cfg.BatchSize, Devices: mc.Devices, Parallel: parallelName(m.cfg.ExpertParallel), ParallelNote: parallelNote}
	if runErr != nil && !errors.Is(runErr, train.ErrInterrupted) {
		return nil, fmt.Errorf("moe: %w", runErr)
	}
	if len(d.TestY) > 0 {
		if res.TestLoss, res.TestAccuracy, err = t.evaluate(d.TestX, d.TestY); err != nil {
			return nil, err
		}
	}
	res.Epochs = len(t.history)
	perf := h.Perf()
	if med := perf.SteadyMedian(); med > 0 {
		res.StepsPerSecond = float64(time.Second) / float64(med)
		res.MedianStepMS = float64(med.Microseconds()) / 1000
	}
	res.FirstStepMS = float64(perf.First.Microseconds()) / 1000
	if res.Active, err = m.Active(h.Context()); err != nil {
		return nil, err
	}
	res.Load = map[int]float64{}
	for s, a := range res.Active {
		if a {
			res.Experts++
			res.Load[s] = t.runLoad[s] / math.Max(t.runAssigned, 1)
		}
	}
	res.DroppedShare = t.runDropped / math.Max(t.runAssigned, 1)
	res.ExpertsPerDevice = Placement(res.Active, m.cfg.Devices)
	res.PeakMemoryMiB = float64(train.PeakMemoryBytes()) / (1 << 20)
	if opts.OutDir != "" {
		if res.Files, err = writeOutputs(opts.OutDir, res, perf, m.cfg, stepRecords(cfg.MetricsLog, h)); err != nil {
			return res, err
		}
	}
	if runErr != nil {
		return res, fmt.Errorf("moe: %w", runErr)
	}
	return res, nil
}

// tracker follows routing statistics and epochs from the harness's step
// hook, evaluates, and grows experts.
type tracker struct {
	m             *Model
	h             *train.Harness
	opts          Options
	backend       backends.Backend
	logf          func(string, ...any)
	exec          *context.Exec
	stepsPerEpoch int
	err           error

	epochLoss, assigned, dropped float64
	epochSteps                   int
	load, runLoad, sinceGrow     []float64
	runAssigned, runDropped      float64
	epochStart                   time.Time

	best    float64
	plateau int
	noSlot  bool
	grown   []GrowEvent
	history []EpochRecord
}

func (t *tracker) afterStep(step int64, loss float64) error {
	st, err := t.m.LastStats(t.h.Context())
	if err != nil {
		return err
	}
	if st, err = sumStats(t.opts.Train.Comm, st); err != nil {
		return err
	}
	for s, v := range st.Load {
		n := v * st.Assigned
		t.load[s] += n
		t.runLoad[s] += n
		t.sinceGrow[s] += n
	}
	t.assigned += st.Assigned
	t.dropped += st.Dropped
	t.runAssigned += st.Assigned
	t.runDropped += st.Dropped
	t.epochLoss += loss
	t.epochSteps++
	if step%int64(t.stepsPerEpoch) != 0 && step != int64(t.h.TotalSteps()) {
		return nil
	}
	return t.endEpoch(step)
}

func (t *tracker) endEpoch(step int64) error {
	d := t.opts.Data
	rec := EpochRecord{Epoch: epochOf(step, t.stepsPerEpoch), Step: step, TrainLoss: t.epochLoss / float64(max(t.epochSteps, 1)),
		Seconds: time.Since(t.epochStart).Seconds(), Load: make([]float64, len(t.load)),
		Dropped: t.dropped / math.Max(t.assigned, 1), ValLoss: math.NaN(), ValAccuracy: math.NaN()}
	for s := range t.load {
		rec.Load[s] = t.load[s] / math.Max(t.assigned, 1)
	}
	if len(d.ValY) > 0 {
		// With the moving averages of the weights, when the run keeps them.
		err := t.h.WithAveragedWeights(func() (err error) {
			rec.ValLoss, rec.ValAccuracy, err = t.evaluate(d.ValX, d.ValY)
			return err
		})
		if err != nil {
			return err
		}
	}
	active, err := t.m.Active(t.h.Context())
	if err != nil {
		return err
	}
	if t.opts.MonitorMemory {
		rec.RSSMiB = currentRSSMiB()
	}
	t.logf("moe: epoch %d step %d: train loss %.4f, val loss %.4f, val accuracy %.4f, %.1fs, dropped %.2f%%",
		rec.Epoch, step, rec.TrainLoss, rec.ValLoss, rec.ValAccuracy, rec.Seconds, 100*rec.Dropped)
	last := step >= int64(t.h.TotalSteps())
	if t.opts.GrowExperts && !math.IsNaN(rec.ValLoss) && !t.noSlot && !last {
		if rec.ValLoss < t.best-t.opts.GrowMinDelta {
			t.best, t.plateau = rec.ValLoss, 0
		} else if t.plateau++; t.plateau >= t.opts.GrowPatience {
			t.plateau = 0
			parent, most := -1, -1.0
			for s, a := range active {
				if a && t.sinceGrow[s] > most {
					parent, most = s, t.sinceGrow[s]
				}
			}
			ev, err := t.m.Grow(t.h.Context(), parent, t.opts.GrowEps, uint64(t.opts.Train.Seed)+uint64(step))
			switch {
			case errors.Is(err, ErrNoFreeSlot):
				t.noSlot = true
				t.logf("moe: validation loss plateaued at epoch %d, but %v", rec.Epoch, err)
			case err != nil:
				return err
			default:
				ev.Step = step
				t.grown = append(t.grown, ev)
				clear(t.sinceGrow)
				t.logf("moe: validation loss plateaued: split expert %d into slot %d on device %d", ev.Parent, ev.Child, ev.Device)
				if active, err = t.m.Active(t.h.Context()); err != nil {
					return err
				}
			}
		}
	}
	rec.ExpertsPerDevice = Placement(active, t.m.cfg.Devices)
	for _, a := range active {
		if a {
			rec.Experts++
		}
	}
	t.history = append(t.history, rec)
	clear(t.load)
	t.assigned, t.dropped, t.epochLoss, t.epochSteps = 0, 0, 0, 0
	t.epochStart = time.Now()
	return nil
}

// evaluate returns the mean cross-entropy and the accuracy of the model on
// rows x with labels y.
func (t *tracker) evaluate(x, y []float32) (loss, acc float64, err error) {
	if t.exec == nil {
		dt := train.ComputeDType(t.h.Context())
		err = train.Catch(func() {
			t.exec, err = context.NewExecAny(t.backend, t.h.Context().Reuse(), func(ctx *context.Context, in *graph.Node) *graph.Node {
				if dt != in.DType() {
					in = graph.ConvertDType(in, dt)
				}
				return graph.ConvertDType(t.m.forward(ctx, in, false), dtypes.Float32)
			})
		})
		if err != nil {
			return 0, 0, fmt.Errorf("moe: building the evaluation graph: %w", err)
		}
	}
	comm := t.opts.Train.Comm
	if comm == nil || comm.Size() == 1 {
		return evalLogits(t.exec, t.opts.EvalBatch, t.m.cfg.Inputs, t.m.cfg.Classes, x, y)
	}
	// Across ranks each scores its share of the rows, and the sums are
	// added up: every rank gets the whole set's figures.
	n, r, size := len(y), comm.Rank(), comm.Size()
	lo, hi := r*n/size, (r+1)*n/size
	sums := []float64{0, 0, float64(hi - lo)}
	if hi > lo {
		l, a, err := evalLogits(t.exec, t.opts.EvalBatch, t.m.cfg.Inputs, t.m.cfg.Classes, x[lo*t.m.cfg.Inputs:hi*t.m.cfg.Inputs], y[lo:hi])
		if err != nil {
			return 0, 0, err
		}
		sums[0], sums[1] = l*sums[2], math.Round(a*sums[2])
	}
	if err := comm.AllreduceFloat64(sums); err != nil {
		return 0, 0, fmt.Errorf("moe: adding up the ranks' evaluations: %w", err)
	}
	return sums[0] / sums[2], sums[1] / sums[2], nil
}

// acrossRanks returns the harness's step-inputs function for training
// across the ranks of comm: it selects the experts of this rank's share of
// the batch and counts the assignments to each slot (the gate alone, in a
// graph of its own), sums every rank's counts in one allreduce, and hands
// the training graph, as int32 [2·slots], the assignments to each slot on
// the lower ranks and on all ranks, and the selection itself. With them each rank numbers its assignments
// where one process would, keeps those within the global batch's
// capacity and weighs the balancing loss with the whole batch's shares:
// the ranks route exactly as one process does.
func (m *Model) acrossRanks(backend backends.Backend, hctx *context.Context, comm dist.Comm) func(*tensors.Tensor) ([]*tensors.Tensor, error) {
	var exec *context.Exec
	S, rank, size := m.cfg.MaxExperts, comm.Rank(), comm.Size()
	return func(x *tensors.Tensor) ([]*tensors.Tensor, error) {
		if exec == nil {
			dt := train.ComputeDType(hctx)
			err := train.Catch(func() {
				var err error
				exec, err = context.NewExecAny(backend, hctx.Reuse(), func(ctx *context.Context, in *graph.Node) (*graph.Node, *graph.Node) {
					if dt != in.DType() {
						in = graph.ConvertDType(in, dt)
					}
					return m.slotSelection(ctx, in)
				})
				if err != nil {
					panic(err)
				}
			})
			if err != nil {
				return nil, fmt.Errorf("moe: building the routing count graph: %w", err)
			}
		}
		var out []*tensors.Tensor
		err := train.Catch(func() {
			var err error
			if out, err = exec.Exec(x); err != nil {
				panic(err)
			}
		})
		if err != nil {
			return nil, fmt.Errorf("moe: counting the batch's routing: %w", err)
		}
		counts, err := tensors.CopyFlatData[int32](out[1])
		if err != nil || len(counts) != S {
			return nil, fmt.Errorf("moe: reading the routing counts (%d of %d): %v", len(counts), S, err)
		}
		all := make([]int64, size*S)
		for s, c := range counts {
			all[rank*S+s] = int64(c)
		}
		if err := comm.AllreduceInt64(all); err != nil {
			return nil, fmt.Errorf("moe: adding up the ranks' routing: %w", err)
		}
		across := make([]int32, 2*S)
		for r := range size {
			for s := range S {
				if r < rank {
					across[s] += int32(all[r*S+s])
				}
				across[S+s] += int32(all[r*S+s])
			}
		}
		return []*tensors.Tensor{tensors.FromFlatDataAndDimensions(across, 2*S), out[0]}, nil
	}
}

// runSteps is the number of optimizer steps cfg makes over n examples,
// as the harness counts them (train.Harness.TotalSteps).
func runSteps(cfg train.Config, n int) int {
	if cfg.Steps > 0 {
		return cfg.Steps
	}
	return cfg.Epochs * (n / max(cfg.BatchSize, 1)) / max(cfg.Accumulate, 1)
}

// sumStats adds up the ranks' routing statistics of a step (st is this
// rank's): the loads weighted by each rank's assignments.
func sumStats(comm dist.Comm, st Stats) (Stats, error) {
	if comm == nil || comm.Size() == 1 {
		return st, nil
	}
	buf := make([]float64, len(st.Load)+2)
	for s, v := range st.Load {
		buf[s] = v * st.Assigned
	}
	buf[len(st.Load)], buf[len(st.Load)+1] = st.Assigned, st.Dropped
	if err := comm.AllreduceFloat64(buf); err != nil {
		return st, fmt.Errorf("moe: adding up the ranks' routing statistics: %w", err)
	}
	out := Stats{Load: make([]float64, len(st.Load)), Assigned: buf[len(st.Load)], Dropped: buf[len(st.Load)+1]}
	for s := range out.Load {
		out.Load[s] = buf[s] / math.Max(out.Assigned, 1)
	}
	return out, nil
}

// evalLogits runs exec over x in batches and scores its logits against y.
func evalLogits(exec *context.Exec, batch, inputs, classes int, x, y []float32) (loss, acc float64, err error) {
	n := len(y)
	if n == 0 {
		return math.NaN(), math.NaN(), nil
	}
	correct := 0
	for start := 0; start < n; start += batch {
		end := min(start+batch, n)
		var out []*tensors.Tensor
		err = train.Catch(func() {
			out, err = exec.Exec(tensors.FromFlatDataAndDimensions(x[start*inputs:end*inputs], end-start, inputs))
		})
		if err != nil {
			return 0, 0, fmt.Errorf("moe: evaluating: %w", err)
		}
		logits, err := tensors.CopyFlatData[float32](out[0])
		if err != nil {
			return 0, 0, fmt.Errorf("moe: reading logits: %w", err)
		}
		for i := range end - start {
			row := logits[i*classes : (i+1)*classes]
			best, mx := 0, row[0]
			for c, v := range row {
				if v > mx {
					best, mx = c, v
				}
			}
			var sum float64
			for _, v := range row {
				sum += math.Exp(float64(v - mx))
			}
			label := int(y[start+i])
			loss += math.Log(sum) - float64(row[label]-mx)
			if best == label {
				correct++
			}
		}
	}
	return loss / float64(n), float64(correct) / float64(n), nil
}

// currentRSSMiB is the resident memory of the process (VmRSS), or 0.
func currentRSSMiB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb float64
			if _, err := fmt.Sscan(rest, &kb); err == nil {
				return kb / 1024
			}
		}
	}
	return 0
}

// stepRecords are the metrics lines to plot: the whole metrics log when
// it is a file (a resumed run's earlier lines too), else those of this
// run.
func stepRecords(path string, h *train.Harness) []map[string]any {
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		if recs, err := train.ReadMetricsLog(path); err == nil {
			return recs
		}
	}
	return h.History()
}

// writeOutputs writes epochs.jsonl (continued when the run resumed; see
// epochLog), performance_summary.txt and the plots (of every epoch in
// epochs.jsonl and the metrics lines steps) to dir, each atomically.
func writeOutputs(dir string, res *Result, perf train.Perf, cfg Config, steps []map[string]any) ([]string, error) {
	var files []string
	p := filepath.Join(dir, EpochsFile)
	log, all, err := epochLog(p, res.Train.Resumed, res.History)
	if err != nil {
		return files, err
	}
	if err := atomicfile.WriteFile(p, log); err != nil {
		return files, fmt.Errorf("moe: %w", err)
	}
	files = append(files, p)
	p = filepath.Join(dir, "performance_summary.txt")
	if err := atomicfile.WriteFile(p, []byte(summary(res, perf, cfg))); err != nil {
		return files, fmt.Errorf("moe: writing the performance summary: %w", err)
	}
	files = append(files, p)
	plots, err := WriteRunPlots(dir, all, steps, res.Active, cfg.Devices)
	return append(files, plots...), err
}

// summary is performance_summary.txt: the harness's figures and the
// experts'.
func summary(res *Result, perf train.Perf, cfg Config) string {
	var b strings.Builder
	b.WriteString(perf.Summary())
	fmt.Fprintf(&b, "model: mixture of %d experts (%d slots), %v hidden, top-%d, capacity factor %g, balance alpha %g\n",
		res.Experts, cfg.MaxExperts, cfg.Hidden, cfg.TopK, cfg.CapacityFactor, cfg.BalanceAlpha)
	fmt.Fprintf(&b, "data: %s\n", res.Data)
	fmt.Fprintf(&b, "epochs: %d\n", res.Epochs)
	for _, r := range res.History {
		fmt.Fprintf(&b, "epoch %d: %.2f s, train loss %.4f, val accuracy %.4f, dropped %.2f%%",
			r.Epoch, r.Seconds, r.TrainLoss, r.ValAccuracy, 100*r.Dropped)
		if r.RSSMiB > 0 {
			fmt.Fprintf(&b, ", resident memory %.1f MiB", r.RSSMiB)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "test accuracy: %.4f (loss %.4f)\n", res.TestAccuracy, res.TestLoss)
	fmt.Fprintf(&b, "routing assignments dropped over capacity: %.3f%%\n", 100*res.DroppedShare)
	for s, a := range res.Active {
		if a {
			fmt.Fprintf(&b, "expert %d (device %d): %.2f%% of assignments\n", s, DeviceOf(s, len(res.Active), cfg.Devices), 100*res.Load[s])
		}
	}
	fmt.Fprintf(&b, "experts per device: %v\n", res.ExpertsPerDevice)
	for _, g := range res.Grown {
		fmt.Fprintf(&b, "grown: expert %d split into slot %d (device %d) after step %d\n", g.Parent, g.Child, g.Device, g.Step)
	}
	return b.String()
}

// float32Bytes returns the bytes of v (little-endian), for fingerprints.
func float32Bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}
