package transformer

import (
	stdcontext "context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/gotrain/gotrain/internal/atomicfile"
	"github.com/gotrain/gotrain/internal/readlimit"
	"github.com/gotrain/gotrain/models/text"
	"github.com/gotrain/gotrain/train"
)

// Phase configures one training phase; its fields override Options.Train.
type Phase struct {
	// Epochs is the number of passes over the phase's data when Steps is 0.
	Epochs int `json:"epochs"`
	// Steps caps the phase's optimizer steps (0: Epochs).
	Steps int `json:"steps"`
	// BatchSize is the micro-batch size (clamped to the number of
	// examples); 0 means 32, or an automatic size with
	// Options.AutoBatchSize.
	BatchSize int `json:"batch_size"`
	// Accumulate is the number of micro-batches per optimizer step.
	Accumulate int `json:"accumulate"`
	// LearningRate is the peak learning rate (0: Options.Train's).
	LearningRate float64 `json:"learning_rate"`
}

// active tells whether the phase makes any step.
func (p Phase) active() bool { return p.Epochs > 0 || p.Steps > 0 }

// Options configures Train.
type Options struct {
	// Arch is the architecture; its Vocab is set from the data.
	Arch Arch
	// PretrainPath names the pretraining corpus (read when PretrainText is
	// empty; when both are empty and pretraining is on, Train reads the
	// default corpus, text.DefaultCorpusPath).
	PretrainPath string
	// PretrainText is the pretraining corpus.
	PretrainText string
	// InstructionPath names the instruction data (read when Instructions is nil).
	InstructionPath string
	// Instructions are the instruction-tuning examples.
	Instructions []Example
	// MaxBytes caps each file read from PretrainPath and InstructionPath:
	// a larger one is an error naming it and this option, wrapping
	// text.ErrTooLarge. 0 means text.DefaultMaxBytes (1 GiB).
	MaxBytes int64
	// Pretrain and Instruct configure the two phases; a phase with neither
	// epochs nor steps is skipped.
	Pretrain, Instruct Phase
	// Stride is the distance between the starts of two pretraining windows
	// (default 1).
	Stride int
	// ValFraction is the fraction of the corpus, at its end, held out for
	// validation (0: 0.1; negative: none).
	ValFraction float64
	// EvalBatch is the batch size of evaluations (default 64).
	EvalBatch int
	// Train is the harness configuration shared by both phases. Its
	// CheckpointDir gets a "pretrain" and an "instruct" subdirectory; with
	// Resume, a run continues the phase it was in.
	Train train.Config
	// Logf receives progress notes (nil: none).
	Logf func(format string, args ...any)
	// Progress receives the harness's progress display (nil: none).
	Progress io.Writer
	// AutoBatchSize picks the batch size of every phase whose BatchSize is
	// 0 (train.AutoBatchSize): on an accelerator the largest that fits (one
	// training step tried with train.FindBatchSize, from 8 up to 4096 and
	// the phase's number of examples), on a host backend, which has no
	// device memory to probe, 32.
	AutoBatchSize bool
}

// DefaultOptions returns the options `gotrain lm transformer train`
// starts from: 4 blocks of 4 heads, width 128, a context of 64 characters,
// softmax attention, a SwiGLU feed-forward and RMSNorm; pretraining
// windows every 4 characters, the last 10% of the corpus held out, one
// pretraining epoch in batches of 32 and three instruction-tuning epochs
// in batches of 16; AdamW at 0.001 with the gradient norm clipped to 1.
// Set the data (PretrainPath or PretrainText, else the default corpus;
// InstructionPath or Instructions).
func DefaultOptions() Options {
	cfg := train.DefaultConfig()
	cfg.Optimizer, cfg.LearningRate, cfg.ClipNorm = train.OptimizerAdamW, 0.001, 1
	return Options{
		Arch:     Arch{Layers: 4, Heads: 4, Width: 128, Context: 64, Attention: AttentionSoftmax, FFN: FFNSwiGLU, Norm: NormRMS},
		Pretrain: Phase{Epochs: 1, BatchSize: 32, Accumulate: 1}, Instruct: Phase{Epochs: 3, BatchSize: 16, Accumulate: 1},
		Stride: 4, ValFraction: 0.1, Train: cfg,
	}
}

// PhaseResult is the outcome of one phase.
type PhaseResult struct {
	// Examples is the number of training rows (windows or instruction examples).
	Examples int `json:"examples"`
	// Phase is the phase's configuration, with the batch size used.
	Phase Phase `json:"phase"`
	// Train is the harness result.
	Train train.Result `json:"train"`
	// FirstLoss is the loss of the first step run in this process (0 if none).
	FirstLoss float64 `json:"first_loss"`
	// ResumedFrom is the checkpoint restored, if any.
	ResumedFrom string `json:"resumed_from,omitempty"`
	// FirstStepSec and StepSec are the first step's time and the median of
	// the later ones, in seconds.
	FirstStepSec float64 `json:"first_step_seconds"`
	StepSec      float64 `json:"median_step_seconds"`
	// Skipped says why the phase did not run, if it did not.
	Skipped string `json:"skipped,omitempty"`
}

// Result is the outcome of Train.
type Result struct {
	// PretrainPath is Options.PretrainPath, or the default corpus when
	// Train read it.
	PretrainPath string `json:"-"`
	// Arch is the architecture (with the vocabulary size).
	Arch Arch `json:"arch"`
	// Params is the number of trainable parameters.
	Params int `json:"params"`
	// TrainChars and ValChars are the pretraining corpus's two parts, in runes.
	TrainChars int `json:"train_chars"`
	ValChars   int `json:"val_chars"`
	// Pretrain and Instruct are the phases' outcomes (nil when not configured).
	Pretrain *PhaseResult `json:"pretrain,omitempty"`
	Instruct *PhaseResult `json:"instruct,omitempty"`
	// ValLoss is the validation loss in nats per character at the end
	// (NaN without validation text).
	ValLoss float64 `json:"-"`
	// ResponseLossBefore and ResponseLossAfter are the mean loss, in nats
	// per response token, of the instruction examples before and after
	// instruction tuning (NaN when it did not run).
	ResponseLossBefore float64 `json:"-"`
	ResponseLossAfter  float64 `json:"-"`
	// Checkpoint is the last checkpoint written.
	Checkpoint string `json:"checkpoint,omitempty"`
	// DeviceNote is the line logged about where the parameters live.
	DeviceNote string `json:"device_note,omitempty"`
	// Context holds the trained weights.
	Context *context.Context `json:"-"`
	// Vocab is the vocabulary.
	Vocab *text.Vocab `json:"-"`
}

// PhaseDir returns the checkpoint directory of a phase ("pretrain" or
// "instruct") under dir.
func PhaseDir(dir, phase string) string { return filepath.Join(dir, phase) }

// Train runs pretraining and then instruction tuning on backend, each
// with its own harness (checkpoints under Train.CheckpointDir/pretrain and
// /instruct), the instruction phase starting from the pretrained weights.
// Call CheckBackend or PrepareBackend first to check the device.
// Cancelling ctx (e.g. on Ctrl-C, see train.NotifyContext) stops the phase
// in progress like the harness's RunContext: a checkpoint and the reports
// are written and the error wraps train.ErrInterrupted.
func Train(ctx stdcontext.Context, backend backends.Backend, opts Options) (*Result, error) {
	if ctx == nil {
		ctx = stdcontext.Background()
	}
	runCtx := ctx
	defer holdPipes(opts.Train.MetricsLog, opts.Train.PerfSummary)()
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	corpus := opts.PretrainText
	if corpus == "" && opts.PretrainPath == "" && opts.Pretrain.active() {
		p, err := text.DefaultCorpusPath()
		if err != nil {
			return nil, fmt.Errorf("transformer: no pretraining corpus given, and %w", err)
		}
		opts.PretrainPath = p
	}
	if corpus == "" && opts.Pretrain.active() {
		var err error
		if corpus, err = text.LoadTextMax(opts.PretrainPath, opts.MaxBytes); err != nil {
			return nil, readlimit.Rename(fmt.Errorf("transformer: %w", err), "Options.MaxBytes")
		}
	}
	exs := opts.Instructions
	if exs == nil && opts.InstructionPath != "" && opts.Instruct.active() {
		var err error
		if exs, err = LoadInstructionsMax(opts.InstructionPath, opts.MaxBytes); err != nil {
			return nil, readlimit.Rename(err, "Options.MaxBytes")
		}
	}
	doPre := opts.Pretrain.active() && corpus != ""
	doInst := opts.Instruct.active() && len(exs) > 0
	if !doPre && !doInst {
		return nil, errors.New("transformer: nothing to train: give pretraining text (PretrainText or PretrainPath) with Pretrain.Epochs or Pretrain.Steps, and/or instructions with Instruct.Epochs or Instruct.Steps")
	}
	vocab, err := text.NewVocab(corpus + instructionText(exs))
	if err != nil {
		return nil, fmt.Errorf("transformer: %w", err)
	}
	arch := opts.Arch.withDefaults()
	arch.Vocab = vocab.Size()
	if err := arch.Validate(); err != nil {
		return nil, err
	}
	if p := opts.Train.Precision; p != train.Precision32 && p != "" && arch.Vocab > 256 {
		return nil, fmt.Errorf("transformer: Precision %s: a vocabulary of %d runes does not fit the 16-bit float ids (at most 256); use Precision 32", p, arch.Vocab)
	}
	if opts.Stride < 1 {
		opts.Stride = 1
	}
	if opts.EvalBatch < 1 {
		opts.EvalBatch = 64
	}
	if opts.ValFraction == 0 {
		opts.ValFraction = 0.1
	}
	res := &Result{Arch: arch, Params: arch.Params(), ValLoss: math.NaN(), ResponseLossBefore: math.NaN(),
		ResponseLossAfter: math.NaN(), Vocab: vocab}
	base := opts.Train
	instDir := PhaseDir(base.CheckpointDir, "instruct")
	resumeInst := false
	base.Run = train.RunInfo{Kind: "transformer", Arch: train.ArchJSON(arch), Data: train.Fingerprint([]byte(corpus), []byte(instructionText(exs)))}
	if base.Resume && doInst && !base.NoCheckpoint {
		// Continue instruction tuning when it has a run with a valid
		// checkpoint to resume; else resume pretraining and start
		// instruction tuning afresh from it.
		var err error
		if resumeInst, err = train.Resumable(instDir, base.Run); err != nil {
			return nil, fmt.Errorf("transformer: %w", err)
		}
	}

	// Pretraining.
	var vx, vy []float32
	var prevCtx *context.Context
	if doPre {
		res.PretrainPath = opts.PretrainPath
		ids, _ := vocab.Encode(corpus)
		trainIDs, valIDs := text.Split(ids, opts.ValFraction)
		if len(valIDs) < arch.Context+1 {
			trainIDs, valIDs = ids, nil
		}
		res.TrainChars, res.ValChars = len(trainIDs), len(valIDs)
		if len(trainIDs) < arch.Context+1 {
			return nil, fmt.Errorf("transformer: corpus %s: %d characters are too short for one window of Context+1 = %d", opts.PretrainPath, len(trainIDs), arch.Context+1)
		}
		x, y, n, err := text.Windows(trainIDs, arch.Context, opts.Stride)
		if err != nil {
			return nil, fmt.Errorf("transformer: %w", err)
		}
		if len(valIDs) > 0 {
			if vx, vy, _, err = text.Windows(valIDs, arch.Context, arch.Context); err != nil {
				return nil, fmt.Errorf("transformer: validation: %w", err)
			}
		}
		pr := &PhaseResult{Examples: n}
		res.Pretrain = pr
		if resumeInst {
			pr.Skipped = "resuming instruction tuning: pretraining finished before"
			logf("transformer: resuming the instruction phase from %s; pretraining is done", instDir)
		} else {
			var evalFn train.Evaluator
			if vx != nil {
				evalFn = func(h *train.Harness) (map[string]float64, error) {
					v, err := EvalLoss(backend, h.Context(), arch, vx, vy, opts.EvalBatch)
					if err != nil {
						return nil, err
					}
					return map[string]float64{"val_loss": v, "val_perplexity": math.Exp(v)}, nil
				}
			}
			h, err := runPhase(runCtx, backend, "pretrain", arch, vocab, opts.Pretrain, base, x, y, n, nil, evalFn, pr, res, logf, opts)
			if err != nil {
				return nil, err
			}
			prevCtx = h.Context()
			res.Checkpoint, res.Context = pr.Train.Checkpoint, h.Context()
			if vx != nil {
				if res.ValLoss, err = EvalLoss(backend, h.Context(), arch, vx, vy, opts.EvalBatch); err != nil {
					return nil, err
				}
			}
		}
	}

	// Instruction tuning.
	if doInst {
		x, y, n, err := InstructionRows(vocab, exs, arch.Context)
		if err != nil {
			return nil, err
		}
		pr := &PhaseResult{Examples: n}
		res.Instruct = pr
		evalFn := func(h *train.Harness) (map[string]float64, error) {
			v, err := EvalLoss(backend, h.Context(), arch, x, y, opts.EvalBatch)
			if err != nil {
				return nil, err
			}
			return map[string]float64{"response_loss": v}, nil
		}
		before := func(h *train.Harness) error {
			if h.Step() > 0 {
				return nil // resumed mid-phase: the pretrained weights are gone
			}
			v, err := EvalLoss(backend, h.Context(), arch, x, y, opts.EvalBatch)
			res.ResponseLossBefore = v
			return err
		}
		instBase := base
		instBase.Resume = resumeInst
		h, err := runPhase(runCtx, backend, "instruct", arch, vocab, opts.Instruct, instBase, x, y, n, prevCtx, evalFn, pr, res, logf, opts, before)
		if err != nil {
			return nil, err
		}
		res.Checkpoint, res.Context = pr.Train.Checkpoint, h.Context()
		if res.ResponseLossAfter, err = EvalLoss(backend, h.Context(), arch, x, y, opts.EvalBatch); err != nil {
			return nil, err
		}
		if vx != nil {
			if res.ValLoss, err = EvalLoss(backend, h.Context(), arch, vx, vy, opts.EvalBatch); err != nil {
				return nil, err
			}
		}
	}
	return res, nil
}

// runPhase trains one phase with its own harness. from, when not nil,
// holds the weights to start from (the previous phase's). hooks run after
// the weights are in place, before the first step.
func runPhase(ctx stdcontext.Context, backend backends.Backend, name string, arch Arch, vocab *text.Vocab, ph Phase, base train.Config,
	x, y []float32, n int, from *context.Context, evalFn train.Evaluator, pr *PhaseResult, res *Result,
	logf func(string, ...any), opts Options, hooks ...func(*train.Harness) error) (*train.Harness, error) {
	cfg := base
	cfg.Epochs, cfg.Steps, cfg.BatchSize, cfg.Accumulate = max(ph.Epochs, 1), ph.Steps, ph.BatchSize, max(ph.Accumulate, 1)
	if ph.LearningRate > 0 {
		cfg.LearningRate = ph.LearningRate
	}
	ds, err := train.NewDataset(x, arch.Context, y, arch.Context, cfg.Seed, true)
	if err != nil {
		return nil, fmt.Errorf("transformer: %s: %w", name, err)
	}
	if cfg.BatchSize < 1 {
		cfg.BatchSize = 32
		if opts.AutoBatchSize {
			bs, note, err := train.AutoBatchSize(backend, min(32, n), func() (int, error) {
				limit := min(4096, n)
				return train.FindBatchSize(min(8, limit), limit, train.StepFits(backend, cfg, arch.ModelFn(), Loss, ds))
			})
			if err != nil {
				return nil, fmt.Errorf("transformer: %s: %w", name, err)
			}
			logf("transformer: %s: %s", name, note)
			cfg.BatchSize = bs
		}
	}
	if cfg.BatchSize > n {
		logf("transformer: %s: batch size %d is larger than the %d examples: using %d", name, cfg.BatchSize, n, n)
		cfg.BatchSize = n
	}
	pr.Phase = ph
	pr.Phase.BatchSize, pr.Phase.Accumulate = cfg.BatchSize, cfg.Accumulate
	cfg.CheckpointDir = PhaseDir(base.CheckpointDir, name)
	if name != "pretrain" {
		cfg.MetricsLog = phaseFile(cfg.MetricsLog, name)
		cfg.PerfSummary = phaseFile(cfg.PerfSummary, name)
		if cfg.PlotsDir != "" {
			cfg.PlotsDir = filepath.Join(cfg.PlotsDir, name)
		}
	}
	if evalFn == nil && (cfg.EarlyStopMonitor != "" && cfg.EarlyStopMonitor != "loss") {
		logf("transformer: %s: no evaluation data: early stopping watches the training loss", name)
		cfg.EarlyStopMonitor = "loss"
	}
	if name == "instruct" && cfg.EarlyStopMonitor == "val_loss" {
		cfg.EarlyStopMonitor = "response_loss"
	}
	if evalFn != nil && cfg.EvalEvery == 0 {
		cfg.EvalEvery = max(1, n/(cfg.BatchSize*cfg.Accumulate)) // once per epoch
	}
	resume := cfg.Resume
	cfg.Resume = false // restored here, to check the model first
	h, err := train.New(backend, cfg, arch.ModelFn(), Loss, ds)
	if err != nil {
		return nil, fmt.Errorf("transformer: %s: %w", name, err)
	}
	h.SetLogger(func(msg string) { logf("%s", msg) })
	h.SetProgressWriter(opts.Progress)
	var resumedStep int64
	if resume && !cfg.NoCheckpoint {
		// The model's metadata comes from the checkpoint: one without it
		// is not a transformer.
		path, err := h.Resume()
		if err != nil {
			return nil, fmt.Errorf("transformer: %s: %w", name, err)
		}
		sv, sa, err := readMeta(h.Context())
		if err != nil {
			return nil, fmt.Errorf("transformer: %s: resume from %s: %w", name, path, err)
		}
		if !sv.Equal(vocab) || sa != arch {
			return nil, fmt.Errorf("transformer: %s: resume from %s: the checkpoint's model (%s) does not match this data and these options (%s)",
				name, path, describe(sa), describe(arch))
		}
		pr.ResumedFrom, resumedStep = path, h.Step()
		logf("transformer: %s: resumed from %s at step %d", name, path, h.Step())
	} else {
		if from != nil {
			if err := copyModel(from, h.Context()); err != nil {
				return nil, fmt.Errorf("transformer: %s: %w", name, err)
			}
		}
		if err := setMeta(h.Context(), vocab, arch); err != nil {
			return nil, fmt.Errorf("transformer: %s: %w", name, err)
		}
	}
	note, err := initParams(backend, h.Context(), arch)
	if err != nil {
		return nil, fmt.Errorf("transformer: %s: %w", name, err)
	}
	if res.DeviceNote == "" {
		res.DeviceNote = note
		logf("%s", note)
	}
	for _, hook := range hooks {
		if err := hook(h); err != nil {
			return nil, fmt.Errorf("transformer: %s: %w", name, err)
		}
	}
	if evalFn != nil {
		h.SetEvaluator(evalFn)
	}
	first := true
	h.SetStepHook(func(_ int64, loss float64) {
		if first {
			pr.FirstLoss, first = loss, false
		}
	})
	logf("transformer: %s: %d examples, batch %d x %d, %d steps", name, n, cfg.BatchSize, cfg.Accumulate, h.TotalSteps())
	if pr.Train, err = h.RunContext(ctx); err != nil {
		return nil, fmt.Errorf("transformer: %s: %w", name, err)
	}
	pr.Train.Resumed = resumedStep
	perf := h.Perf()
	pr.FirstStepSec, pr.StepSec = perf.First.Seconds(), perf.SteadyMedian().Seconds()
	return h, nil
}

// phaseFile inserts the phase's name before the extension of a file path
// ("" stays ""; a pipe or a device stays as it is: the phases write
// through to it one after the other).
func phaseFile(path, phase string) string {
	if path == "" {
		return ""
	}
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return path // a pipe or a device (standard output): both phases write through to it
	}
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + "-" + phase + ext
}

// describe summarises an architecture for messages.
func describe(a Arch) string {
	return fmt.Sprintf("vocabulary %d, %d layers, %d heads, width %d, context %d, ffn %s/%d, attention %s, norm %s",
		a.Vocab, a.Layers, a.Heads, a.Width, a.Context, a.FFN, a.Hidden, a.Attention, a.Norm)
}

// copyModel copies the model's weights (Scope) from one context to another.
func copyModel(from, to *context.Context) error {
	for v := range from.IterVariables() {
		if !strings.HasPrefix(v.Scope(), Scope+"/") && v.Scope() != Scope {
			continue
		}
		t, err := v.Value()
		if err != nil {
			return fmt.Errorf("copying %s: %w", v.ScopeAndName(), err)
		}
		c, err := t.LocalClone()
		if err != nil {
			return fmt.Errorf("copying %s: %w", v.ScopeAndName(), err)
		}
		trainable := v.Trainable
		if err := train.Catch(func() {
			to.InAbsPath(v.Scope()).Checked(false).VariableWithValue(v.Name(), c).SetTrainable(trainable)
		}); err != nil {
			return fmt.Errorf("copying %s: %w", v.ScopeAndName(), err)
		}
	}
	return nil
}

// initParams creates and initialises the model's weights in ctx (those not
// restored or copied already) by running the forward pass once on one
// window, before the training loop, and returns a line saying how many
// there are and which device of which backend holds them.
func initParams(backend backends.Backend, ctx *context.Context, arch Arch) (string, error) {
	had := map[string]bool{}
	for v := range ctx.IterVariables() {
		if v.HasValue() {
			had[v.ScopeAndName()] = true
		}
	}
	err := train.Catch(func() {
		e, err := context.NewExec(backend, ctx, func(ctx *context.Context, ids *graph.Node) *graph.Node {
			return graph.ReduceAllSum(arch.Logits(ctx, ids))
		})
		if err != nil {
			panic(err)
		}
		if _, err := e.Exec(tensors.FromFlatDataAndDimensions(make([]float32, arch.Context), 1, arch.Context)); err != nil {
			panic(err)
		}
	})
	if err != nil {
		return "", fmt.Errorf("initialising the parameters: %w", err)
	}
	tensorsN, values, onDev, fresh := 0, 0, 0, 0
	for v := range ctx.IterVariables() {
		if !strings.HasPrefix(v.Scope(), Scope) || v.Scope() == MetaScope {
			continue
		}
		if !had[v.ScopeAndName()] {
			fresh++
		}
		t, err := v.Value()
		if err != nil {
			return "", fmt.Errorf("parameter %s: %w", v.ScopeAndName(), err)
		}
		tensorsN++
		values += t.Shape().Size()
		if t.IsOnDevice(0) {
			onDev++
		}
	}
	desc := backend.Name()
	_ = train.Catch(func() { desc = fmt.Sprintf("%s, %s", backend.Name(), backend.DeviceDescription(0)) })
	how := "initialised before the training loop"
	if fresh < tensorsN {
		how = fmt.Sprintf("initialised before the training loop (%d new, %d restored from a checkpoint or copied from pretraining)", fresh, tensorsN-fresh)
	}
	return fmt.Sprintf("transformer: %d parameter tensors (%d values) %s; %d of them held on device 0 of backend %s",
		tensorsN, values, how, onDev, desc), nil
}

// setMeta stores the vocabulary and architecture in ctx's MetaScope.
func setMeta(ctx *context.Context, v *text.Vocab, a Arch) error {
	r32 := v.Codes()
	ar := []int32{int32(a.Layers), int32(a.Heads), int32(a.Width), int32(a.Context), int32(a.Hidden),
		kindCodes[a.Attention], kindCodes[a.FFN], kindCodes[a.Norm]}
	return train.Catch(func() {
		m := ctx.InAbsPath(MetaScope).Checked(false)
		m.VariableWithValue("vocab", r32).SetTrainable(false)
		m.VariableWithValue("arch", ar).SetTrainable(false)
	})
}

// readMeta reads what setMeta stored.
func readMeta(ctx *context.Context) (*text.Vocab, Arch, error) {
	get := func(name string) ([]int32, error) {
		v := ctx.GetVariableByScopeAndName(MetaScope, name)
		if v == nil {
			return nil, fmt.Errorf("no %s/%s variable: not a transformer model", MetaScope, name)
		}
		t, err := v.Value()
		if err != nil {
			return nil, err
		}
		var out []int32
		err = train.Catch(func() { out = tensors.MustCopyFlatData[int32](t) })
		return out, err
	}
	r32, err := get("vocab")
	if err != nil {
		return nil, Arch{}, err
	}
	ar, err := get("arch")
	if err != nil {
		return nil, Arch{}, err
	}
	if len(ar) != 8 {
		return nil, Arch{}, fmt.Errorf("%s/arch has %d values, want 8", MetaScope, len(ar))
	}
	v, err := text.VocabFromCodes(r32)
	if err != nil {
		return nil, Arch{}, err
	}
	kinds := [3][2]string{{AttentionSoftmax, AttentionPoly}, {FFNSwiGLU, FFNRichards}, {NormRMS, NormLayer}}
	var names [3]string
	for i := range kinds {
		c := ar[5+i]
		if c < 0 || c > 1 {
			return nil, Arch{}, fmt.Errorf("%s/arch: kind code %d out of range", MetaScope, c)
		}
		names[i] = kinds[i][c]
	}
	a := Arch{Vocab: v.Size(), Layers: int(ar[0]), Heads: int(ar[1]), Width: int(ar[2]), Context: int(ar[3]), Hidden: int(ar[4]),
		Attention: names[0], FFN: names[1], Norm: names[2]}
	if err := checkArch(ctx, a); err != nil {
		return nil, Arch{}, err
	}
	return v, a, nil
}

// EvalLoss returns the mean cross-entropy, in nats per counted token, of
// the rows x, y (context ids each; labels below 0 do not count) under the
// weights of ctx, in batches of at most batch rows.
func EvalLoss(backend backends.Backend, ctx *context.Context, a Arch, x, y []float32, batch int) (float64, error) {
	t := a.Context
	n := len(x) / t
	if n == 0 || len(y) != len(x) {
		return 0, errors.New("transformer: evaluate: no rows")
	}
	batch = min(batch, n)
	var exec *context.Exec
	err := train.Catch(func() {
		var err error
		exec, err = context.NewExec(backend, ctx.Reuse(), func(ctx *context.Context, xs, ys *graph.Node) (*graph.Node, *graph.Node) {
			nll, w := TokenNLL(ys, a.Logits(ctx, xs))
			return graph.ReduceAllSum(nll), graph.ReduceAllSum(w)
		})
		if err != nil {
			panic(err)
		}
	})
	if err != nil {
		return 0, fmt.Errorf("transformer: evaluate: %w", err)
	}
	var sum, count float64
	for start := 0; start < n; start += batch {
		bx, by := make([]float32, batch*t), make([]float32, batch*t)
		for i := range by {
			by[i] = -1
		}
		real := min(batch, n-start)
		copy(bx, x[start*t:(start+real)*t])
		copy(by, y[start*t:(start+real)*t])
		err := train.Catch(func() {
			out, err := exec.Exec(tensors.FromFlatDataAndDimensions(bx, batch, t), tensors.FromFlatDataAndDimensions(by, batch, t))
			if err != nil {
				panic(err)
			}
			sum += float64(tensors.ToScalar[float32](out[0]))
			count += float64(tensors.ToScalar[float32](out[1]))
		})
		if err != nil {
			return 0, fmt.Errorf("transformer: evaluate: %w", err)
		}
	}
	if count == 0 {
		return 0, errors.New("transformer: evaluate: no token counts (every label is masked)")
	}
	return sum / count, nil
}

// ResumeDir returns the output directory (the Train.CheckpointDir holding
// "pretrain" and "instruct") to resume from, given that directory, one of
// its phase directories, a run folder in one, or a checkpoint file that is
// the newest of its folder (train.ResumeDir). Train with Resume then
// continues the newest compatible run of the phase the run was in.
func ResumeDir(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("transformer: resume from %w", err)
	}
	if fi.IsDir() {
		for _, phase := range []string{"pretrain", "instruct"} {
			if sub, err := os.Stat(PhaseDir(path, phase)); err == nil && sub.IsDir() {
				return path, nil // the run directory
			}
		}
	}
	dir, err := train.ResumeDir(path)
	if err != nil {
		return "", fmt.Errorf("transformer: %w", err)
	}
	dir = filepath.Clean(dir)
	if _, err := os.Stat(filepath.Join(dir, train.ManifestName)); err == nil {
		dir = filepath.Dir(dir) // a run folder: its phase directory
	}
	switch filepath.Base(dir) {
	case "pretrain", "instruct":
		return filepath.Dir(filepath.Clean(dir)), nil
	}
	return "", fmt.Errorf("transformer: resume from %s: not an output directory (with pretrain/ or instruct/), a phase directory, a run folder or a checkpoint in one", path)
}

// holdPipes keeps a write end of each path that is a FIFO open until the
// returned function is called: each phase opens and closes the metrics
// log and the performance summary, and between two phases the FIFO's
// reader would otherwise see the end of its input and go, leaving the next
// phase's open waiting forever for a reader.
func holdPipes(paths ...string) (release func()) {
	var held []io.Closer
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && fi.Mode()&os.ModeNamedPipe != 0 {
			if f, err := atomicfile.OpenAppend(p); err == nil {
				held = append(held, f)
			}
		}
	}
	return func() {
		for _, f := range held {
			_ = f.Close()
		}
	}
}
