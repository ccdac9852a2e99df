package iqresnet

import (
	stdcontext "context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/gotrain/gotrain/train"
)

// Options configures Train.
type Options struct {
	// Arch is the architecture; Train sets its Classes from the classes
	// it is given.
	Arch Arch
	// Train is the harness configuration (optimizer, batch size, epochs or
	// steps, seed, checkpoints, resume, metrics log, progress).
	Train train.Config
	// TimeBudget, when positive, stops training after this much wall time
	// (checked after every optimizer step): the run then ends as if its
	// last step were the last, with a checkpoint, and Result.Stopped says
	// why.
	TimeBudget time.Duration
	// PredictBatch is the batch size of prediction (default 256).
	PredictBatch int
	// Logf receives messages such as resume notes (nil: none).
	Logf func(format string, args ...any)
	// Progress receives the harness's progress display (nil: none).
	Progress io.Writer
}

// DefaultOptions returns the options `gotrain signal classify train
// --model resnet` starts from: DefaultArch, Adam at 0.001 (a constant
// rate, so that a time budget may cut training anywhere), batches of 32,
// 10 epochs, a checkpoint every 500 steps, seed 0.
func DefaultOptions() Options {
	cfg := train.DefaultConfig()
	cfg.Optimizer, cfg.LearningRate, cfg.BatchSize, cfg.Epochs, cfg.Seed = train.OptimizerAdam, 0.001, 32, 10, 0
	cfg.CheckpointEvery = 500
	return Options{Arch: DefaultArch(0), Train: cfg, PredictBatch: 256}
}

// ErrTimeBudget is the cause of the cancellation that ends training when
// Options.TimeBudget runs out.
var ErrTimeBudget = errors.New("time budget reached")

// Result is the outcome of Train.
type Result struct {
	// Train is the harness's result (steps, last loss, checkpoint).
	Train train.Result `json:"train"`
	// FirstLoss is the loss of this run's first step (0 if it made none).
	FirstLoss float64 `json:"first_loss"`
	// Windows is the number of training windows.
	Windows int `json:"windows"`
	// Epochs is the number of passes over the windows done, fractional.
	Epochs float64 `json:"epochs"`
	// Seconds is the wall time of the training loop.
	Seconds float64 `json:"seconds"`
	// Stopped says why training ended before its last step ("" when it
	// did not): the time budget or early stopping.
	Stopped string `json:"stopped,omitempty"`
	// BatchSize is the batch size trained with.
	BatchSize int `json:"batch_size"`
	// ResumedFrom is the checkpoint restored, if any.
	ResumedFrom string `json:"resumed_from,omitempty"`
	// Perf is the harness's step timing.
	Perf train.Perf `json:"-"`
	// Model is the trained network, ready to predict.
	Model *Model `json:"-"`
}

// spec is what a checkpoint says of its network, in MetaScope.
type spec struct {
	Arch    Arch     `json:"arch"`
	Classes []string `json:"classes"`
}

// Train trains a network on the windows x (n windows of 2·Arch.Window
// values, I and Q interleaved, as Windows cuts them) with the class
// indices labels (into classes) on backend, with the harness: its
// checkpoints, resume, metrics log and progress as opts.Train says.
// Cancelling ctx stops training like the harness's RunContext (a
// checkpoint, then an error wrapping train.ErrInterrupted); running out of
// opts.TimeBudget stops it the same way but is no error.
func Train(ctx stdcontext.Context, backend backends.Backend, x []float32, labels []int, classes []string, opts Options) (*Result, error) {
	if ctx == nil {
		ctx = stdcontext.Background()
	}
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	a := opts.Arch
	a.Classes = len(classes)
	if err := a.Validate(); err != nil {
		return nil, err
	}
	width := 2 * a.Window
	if len(x) == 0 || len(x)%width != 0 || len(x)/width != len(labels) {
		return nil, fmt.Errorf("iqresnet: %d values and %d labels: want %d values (2·Window) per window and one label each", len(x), len(labels), width)
	}
	y := make([]float32, len(labels))
	for i, l := range labels {
		if l < 0 || l >= len(classes) {
			return nil, fmt.Errorf("iqresnet: label %d of window %d is not a class index (0 to %d)", l, i, len(classes)-1)
		}
		y[i] = float32(l)
	}
	if opts.TimeBudget < 0 {
		return nil, fmt.Errorf("iqresnet: TimeBudget %v: want >= 0 (0: none)", opts.TimeBudget)
	}
	cfg := opts.Train
	resume := cfg.Resume
	cfg.Resume = false // restored here, to check the network first
	ds, err := train.NewDataset(x, width, y, 1, cfg.Seed, true)
	if err != nil {
		return nil, fmt.Errorf("iqresnet: %w", err)
	}
	sp := spec{Arch: a, Classes: classes}
	cfg.Run = train.RunInfo{Kind: "iqresnet", Arch: train.ArchJSON(sp), Data: fingerprint(labels, len(x))}
	h, err := train.New(backend, cfg, a.ModelFn(), Loss, ds)
	if err != nil {
		return nil, fmt.Errorf("iqresnet: %w", err)
	}
	h.SetLogger(func(msg string) { logf("%s", msg) })
	h.SetProgressWriter(opts.Progress)
	res := &Result{Windows: len(labels), BatchSize: cfg.BatchSize}
	if resume {
		// The network comes from the checkpoint: it must be this one.
		path, err := h.Resume()
		if err != nil {
			return nil, fmt.Errorf("iqresnet: %w", err)
		}
		got, err := readSpec(h.Context())
		if err != nil {
			return nil, fmt.Errorf("iqresnet: resume from %s: %w", path, err)
		}
		if train.ArchJSON(got) != train.ArchJSON(sp) {
			return nil, fmt.Errorf("iqresnet: resume from %s: its network (%s) is not this one (%s)", path, train.ArchJSON(got), train.ArchJSON(sp))
		}
		res.ResumedFrom = path
		logf("iqresnet: resumed from %s at step %d", path, h.Step())
	} else if err := setSpec(h.Context(), sp); err != nil {
		return nil, err
	}
	first := true
	h.SetStepHook(func(_ int64, loss float64) {
		if first {
			res.FirstLoss, first = loss, false
		}
	})
	runCtx := ctx
	if opts.TimeBudget > 0 {
		var cancel stdcontext.CancelFunc
		runCtx, cancel = stdcontext.WithTimeoutCause(ctx, opts.TimeBudget, ErrTimeBudget)
		defer cancel()
	}
	t0 := time.Now()
	res.Train, err = h.RunContext(runCtx)
	res.Seconds = time.Since(t0).Seconds()
	if err != nil {
		if !errors.Is(err, train.ErrInterrupted) || ctx.Err() != nil || !errors.Is(stdcontext.Cause(runCtx), ErrTimeBudget) {
			return nil, fmt.Errorf("iqresnet: %w", err)
		}
		if h.Step() == 0 {
			return nil, fmt.Errorf("iqresnet: the time budget %v ran out before the first step", opts.TimeBudget)
		}
		res.Train.Interrupted = false
		res.Stopped = fmt.Sprintf("time budget %v reached after step %d", opts.TimeBudget, h.Step())
	} else if res.Train.Stopped != "" {
		res.Stopped = res.Train.Stopped
	}
	res.Perf = h.Perf()
	res.Epochs = float64(res.Train.Steps) * float64(cfg.BatchSize*cfg.Accumulate) / float64(len(labels))
	if res.Model, err = NewModel(backend, h.Context(), opts.PredictBatch); err != nil {
		return nil, err
	}
	res.Model.Step = h.Step()
	return res, nil
}

// fingerprint identifies the training data for the run's manifest: the
// labels and the number of values.
func fingerprint(labels []int, values int) string {
	b := binary.LittleEndian.AppendUint64(nil, uint64(values))
	for _, l := range labels {
		b = binary.LittleEndian.AppendUint32(b, uint32(l))
	}
	return train.Fingerprint(b)
}

// setSpec stores the network's architecture and classes in ctx's
// MetaScope (JSON bytes as an int32 variable), so that checkpoints carry
// them.
func setSpec(ctx *context.Context, sp spec) error {
	b, err := json.Marshal(sp)
	if err != nil {
		return fmt.Errorf("iqresnet: %w", err)
	}
	v := make([]int32, len(b))
	for i, c := range b {
		v[i] = int32(c)
	}
	return train.Catch(func() {
		ctx.InAbsPath(MetaScope).Checked(false).VariableWithValue("spec", v).SetTrainable(false)
	})
}

// maxSpecBytes bounds the JSON of a checkpoint's spec.
const maxSpecBytes = 1 << 20

// readSpec reads what setSpec stored and checks it against the weights
// ctx holds: a valid architecture whose every weight is there with its
// shape.
func readSpec(ctx *context.Context) (spec, error) {
	var sp spec
	v := ctx.GetVariableByScopeAndName(MetaScope, "spec")
	if v == nil {
		return sp, fmt.Errorf("no %s/spec variable: not an iqresnet model", MetaScope)
	}
	if s := v.Shape(); s.DType != dtypes.Int32 || s.Rank() != 1 || s.Size() > maxSpecBytes {
		return sp, fmt.Errorf("%s/spec has the shape %s: want int32 [n], n <= %d", MetaScope, s, maxSpecBytes)
	}
	t, err := v.Value()
	if err != nil {
		return sp, err
	}
	var codes []int32
	if err := train.Catch(func() { codes = tensors.MustCopyFlatData[int32](t) }); err != nil {
		return sp, err
	}
	b := make([]byte, len(codes))
	for i, c := range codes {
		if c < 0 || c > 255 {
			return sp, fmt.Errorf("%s/spec: byte %d is %d", MetaScope, i, c)
		}
		b[i] = byte(c)
	}
	if err := json.Unmarshal(b, &sp); err != nil {
		return sp, fmt.Errorf("%s/spec: %w", MetaScope, err)
	}
	if err := sp.Arch.Validate(); err != nil {
		return sp, fmt.Errorf("%s/spec: %w", MetaScope, err)
	}
	if len(sp.Classes) != sp.Arch.Classes {
		return sp, fmt.Errorf("%s/spec: %d class names for %d classes", MetaScope, len(sp.Classes), sp.Arch.Classes)
	}
	for _, w := range sp.Arch.weightShapes() {
		got := ctx.GetVariableByScopeAndName(w.scope, w.name)
		if got == nil {
			return sp, fmt.Errorf("%s/spec: the network has no %s/%s variable", MetaScope, w.scope, w.name)
		}
		if want := shapes.Make(dtypes.Float32, w.dims...); !got.Shape().Equal(want) {
			return sp, fmt.Errorf("%s/spec: %s/%s has the shape %s, the architecture gives it %s", MetaScope, w.scope, w.name, got.Shape(), want)
		}
	}
	return sp, nil
}

// weightShape is one trainable variable of an architecture.
type weightShape struct {
	scope, name string
	dims        []int
}

// weightShapes lists the architecture's variables with their shapes.
func (a Arch) weightShapes() []weightShape {
	var ws []weightShape
	add := func(scope string, in, out int) {
		ws = append(ws, weightShape{Scope + "/" + scope, "weights", []int{in, out}}, weightShape{Scope + "/" + scope, "bias", []int{out}})
	}
	in := 2
	for s := range a.Stacks {
		st := fmt.Sprintf("stack_%d", s)
		add(st+"/conv1x1", in, a.Filters)
		for u := range 2 {
			for c := range 2 {
				add(fmt.Sprintf("%s/unit_%d/conv_%d", st, u, c), a.Kernel*a.Filters, a.Filters)
			}
		}
		in = a.Filters
	}
	add("dense_0", a.flatLength()*a.Filters, a.Dense)
	add("dense_1", a.Dense, a.Dense)
	add("output", a.Dense, a.Classes)
	return ws
}

// Model is a trained network, for prediction.
type Model struct {
	// Arch is its architecture, Classes its class names.
	Arch    Arch
	Classes []string
	// Step is the optimizer step of its weights.
	Step    int64
	batch   int
	backend backends.Backend
	ctx     *context.Context
	exec    *context.Exec
}

// NewModel wraps the weights of ctx (as Train leaves them, or a
// checkpoint restored them) for prediction in batches of batch windows
// (0: 256).
func NewModel(backend backends.Backend, ctx *context.Context, batch int) (*Model, error) {
	sp, err := readSpec(ctx)
	if err != nil {
		return nil, fmt.Errorf("iqresnet: %w", err)
	}
	if batch <= 0 {
		batch = 256
	}
	m := &Model{Arch: sp.Arch, Classes: sp.Classes, batch: batch, backend: backend, ctx: ctx}
	a := sp.Arch
	err = train.Catch(func() {
		var err error
		m.exec, err = context.NewExec(backend, ctx.Reuse(), func(ctx *context.Context, x *graph.Node) *graph.Node {
			return graph.LogSoftmax(a.Logits(ctx, x), -1)
		})
		if err != nil {
			panic(err)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("iqresnet: building the predictor: %w", err)
	}
	return m, nil
}

// Load reads a network from a checkpoint written by Train: path is a
// checkpoint file, or a run folder (or a folder of runs) whose newest
// valid checkpoint is used. The file is verified by the harness
// (checksum); the architecture and classes come from it.
func Load(backend backends.Backend, path string, batch int) (*Model, error) {
	h, err := train.LoadForInference(backend, path, DefaultArch(2).ModelFn(), Loss)
	if err != nil {
		return nil, fmt.Errorf("iqresnet: model %s: %w", path, err)
	}
	m, err := NewModel(backend, h.Context(), batch)
	if err != nil {
		return nil, fmt.Errorf("iqresnet: model %s: %w", path, err)
	}
	m.Step = h.Step()
	return m, nil
}

// LogProbs returns the log-probabilities of the classes, n × len(Classes)
// row-major, of the n windows in x (2·Window values each, I and Q
// interleaved).
func (m *Model) LogProbs(x []float32) ([]float32, error) {
	width := 2 * m.Arch.Window
	if len(x)%width != 0 {
		return nil, fmt.Errorf("iqresnet: %d values are not whole windows of %d", len(x), width)
	}
	n, k := len(x)/width, len(m.Classes)
	out := make([]float32, 0, n*k)
	batch := min(m.batch, max(n, 1))
	buf := make([]float32, batch*width)
	for start := 0; start < n; start += batch {
		real := min(batch, n-start)
		copy(buf, x[start*width:(start+real)*width])
		clear(buf[real*width:])
		var lp []float32
		err := train.Catch(func() {
			res, err := m.exec.Exec(tensors.FromFlatDataAndDimensions(buf, batch, width))
			if err != nil {
				panic(err)
			}
			lp = tensors.MustCopyFlatData[float32](res[0])
		})
		if err != nil {
			return nil, fmt.Errorf("iqresnet: predicting: %w", err)
		}
		out = append(out, lp[:real*k]...)
	}
	for i, v := range out {
		if math.IsNaN(float64(v)) {
			return nil, fmt.Errorf("iqresnet: the log-probability of class %s of window %d is NaN", m.Classes[i%k], i/k)
		}
	}
	return out, nil
}
