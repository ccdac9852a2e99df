package charlstm

import (
	stdcontext "context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/gotrain/gotrain/models/text"
	"github.com/gotrain/gotrain/train"
)

// Options configures Train.
type Options struct {
	// Path names the corpus in messages (and is read when Text is empty;
	// when both are empty, Train reads the default corpus,
	// text.DefaultCorpusPath, and reports its path).
	Path string
	// Text is the corpus; when empty, Path is read with text.LoadTextMax.
	Text string
	// MaxBytes caps the corpus file read from Path: a larger one is an
	// error naming it and this option, wrapping text.ErrTooLarge. 0 means
	// text.DefaultMaxBytes (1 GiB).
	MaxBytes int64
	// Hidden and Layers are the architecture.
	Hidden, Layers int
	// SeqLength is the window length in characters.
	SeqLength int
	// Step is the stride between windows.
	Step int
	// ValFraction is the fraction of the text, at its end, held out for
	// validation (default 0.1 when 0; negative: none).
	ValFraction float64
	// EvalBatch is the batch size of validation (default 64).
	EvalBatch int
	// Train is the harness configuration. With Train.Resume, Train restores
	// the newest valid checkpoint of Train.CheckpointDir first.
	Train train.Config
	// Logf receives messages such as resume notes (nil: none).
	Logf func(format string, args ...any)
	// Progress receives the harness's progress display (nil: none).
	Progress io.Writer
	// AutoBatchSize makes Train pick the batch size instead of using
	// Train.BatchSize (train.AutoBatchSize): on an accelerator the largest
	// that fits (AutoBatchSize, from 32 up to 4096), on a host backend,
	// which has no device memory to probe, 64.
	AutoBatchSize bool
}

// DefaultOptions returns the options `gotrain lm lstm train` starts from:
// two LSTM layers of 512 units on windows of 100 characters every 3, the
// last 10% of the text held out; Adam at a constant 0.002 with the gradient norm
// clipped to 5, batches of 32, 50 epochs, a validation every 200 steps and
// early stopping after 20 validations without a lower validation loss, on
// the default corpus (text.DefaultCorpusPath) unless Path or Text is set.
//
// The batch and learning rate are those of a CPU, where the step's time
// grows with the batch (2x512 on two cores: 0.8 s at 16 windows, 1.4 s at 32,
// 2.7 s at 64): small batches give the most updates an hour, and 0.002 is
// the classic char-RNN rate for them (docs/LSTM.md, "Defaults"). Validation
// every 200 steps shows the loss falling every few minutes instead of once
// an epoch (hours at this batch size).
func DefaultOptions() Options {
	cfg := train.DefaultConfig()
	cfg.Optimizer, cfg.LearningRate, cfg.ClipNorm, cfg.BatchSize, cfg.Epochs = train.OptimizerAdam, 0.002, 5, 32, 50
	cfg.EarlyStopMonitor, cfg.EarlyStopPatience, cfg.EvalEvery = "val_loss", 20, 200
	return Options{Hidden: 512, Layers: 2, SeqLength: 100, Step: 3, ValFraction: 0.1, Train: cfg}
}

// Result is the outcome of Train.
type Result struct {
	// Data is the corpus path.
	Data string `json:"data"`
	// Vocab is the vocabulary size.
	Vocab int `json:"vocab"`
	// TrainChars and ValChars are the sizes of the two parts of the text, in runes.
	TrainChars int `json:"train_chars"`
	ValChars   int `json:"val_chars"`
	// Windows is the number of training windows.
	Windows int `json:"windows"`
	// SeqLength is the window length in characters (Options.SeqLength).
	SeqLength int `json:"-"`
	// Arch is the architecture.
	Arch Arch `json:"arch"`
	// Train is the harness result (steps, last loss, checkpoint, early stop).
	Train train.Result `json:"train"`
	// FirstLoss is the loss of the first step of this run (0 if it made none).
	FirstLoss float64 `json:"first_loss"`
	// ValLoss is the validation loss in nats per character (NaN without validation).
	ValLoss float64 `json:"-"`
	// ValPerplexity is exp(ValLoss).
	ValPerplexity float64 `json:"-"`
	// ResumedFrom is the checkpoint restored, if any.
	ResumedFrom string `json:"resumed_from,omitempty"`
	// Perf is the harness's step timing.
	Perf train.Perf `json:"-"`
	// Context holds the trained weights.
	Context *context.Context `json:"-"`
	// VocabRunes is the vocabulary.
	VocabRunes *text.Vocab `json:"-"`
	// BatchSize is the batch size trained with (Options.Train.BatchSize, or
	// the one Options.AutoBatchSize picked).
	BatchSize int `json:"batch_size"`
	// Config is Options.Train with the batch size trained with.
	Config train.Config `json:"-"`
}

// Train trains a model on the corpus of opts on backend, with the harness
// (checkpoints, resume, early stopping, metrics log as opts.Train says), and
// evaluates the validation loss at the end. Cancelling ctx (e.g. on Ctrl-C,
// see train.NotifyContext) stops training like the harness's RunContext:
// a checkpoint and the reports are written and the error wraps
// train.ErrInterrupted.
func Train(ctx stdcontext.Context, backend backends.Backend, opts Options) (*Result, error) {
	if ctx == nil {
		ctx = stdcontext.Background()
	}
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if n := opts.Train.Ranks(); n > 1 && opts.AutoBatchSize {
		return nil, fmt.Errorf("charlstm: an automatic batch size across %d ranks (Train.Comm): every rank must use the same global batch; give it", n)
	}
	corpus := opts.Text
	if corpus == "" {
		var err error
		if corpus, err = loadCorpus(&opts); err != nil {
			return nil, err
		}
		opts.Text = corpus
	}
	if opts.AutoBatchSize {
		n, note, err := train.AutoBatchSize(backend, 64, func() (int, error) { return AutoBatchSize(backend, opts, 32, 4096) })
		if err != nil {
			return nil, fmt.Errorf("charlstm: %w", err)
		}
		logf("charlstm: %s", note)
		opts.Train.BatchSize = n
	}
	if opts.ValFraction == 0 {
		opts.ValFraction = 0.1
	}
	if opts.ValFraction >= 1 {
		return nil, fmt.Errorf("charlstm: validation fraction %g: want < 1", opts.ValFraction)
	}
	if opts.EvalBatch < 1 {
		opts.EvalBatch = 64
	}
	vocab, err := text.NewVocab(corpus)
	if err != nil {
		return nil, fmt.Errorf("charlstm: corpus %s: %w", opts.Path, err)
	}
	arch := Arch{Vocab: vocab.Size(), Hidden: opts.Hidden, Layers: opts.Layers}
	if err := arch.Validate(); err != nil {
		return nil, err
	}
	ids, _ := vocab.Encode(corpus)
	trainIDs, valIDs := text.Split(ids, opts.ValFraction)
	if len(valIDs) < opts.SeqLength+1 {
		trainIDs, valIDs = ids, nil // too short to hold out a window: no validation
	}
	if opts.SeqLength >= 1 && len(trainIDs) < opts.SeqLength+1 {
		return nil, fmt.Errorf("charlstm: corpus %s: %d characters are too short for one window of SeqLength+1 = %d characters",
			opts.Path, len(trainIDs), opts.SeqLength+1)
	}
	x, y, n, err := text.Windows(trainIDs, opts.SeqLength, opts.Step)
	if err != nil {
		return nil, fmt.Errorf("charlstm: %w", err)
	}
	if p := opts.Train.Precision; p != train.Precision32 && p != "" && arch.Vocab > 256 {
		return nil, fmt.Errorf("charlstm: Precision %s: a vocabulary of %d runes does not fit the 16-bit float ids (at most 256); use Precision 32", p, arch.Vocab)
	}
	ds, err := train.NewDataset(x, opts.SeqLength, y, opts.SeqLength, opts.Train.Seed, true)
	if err != nil {
		return nil, fmt.Errorf("charlstm: %w", err)
	}
	cfg := opts.Train
	resume := cfg.Resume
	cfg.Resume = false // restored here, to check the vocabulary first
	cfg.Run = train.RunInfo{Kind: "charlstm", Arch: train.ArchJSON(arch), Data: train.Fingerprint([]byte(corpus))}
	var vx, vy []float32
	if len(valIDs) > 0 {
		if vx, vy, _, err = text.Windows(valIDs, opts.SeqLength, opts.SeqLength); err != nil {
			return nil, fmt.Errorf("charlstm: validation: %w", err)
		}
	}
	if cfg.EarlyStopMonitor == "val_loss" && vx == nil {
		logf("charlstm: no validation text: early stopping watches the training loss")
		cfg.EarlyStopMonitor = "loss"
	}
	if cfg.EvalEvery == 0 && vx != nil {
		cfg.EvalEvery = max(1, (n+cfg.BatchSize-1)/cfg.BatchSize) // once per epoch, as the seed
	}
	h, err := train.New(backend, cfg, arch.ModelFn(), Loss, ds)
	if err != nil {
		return nil, fmt.Errorf("charlstm: %w", err)
	}
	h.SetLogger(func(msg string) { logf("%s", msg) })
	h.SetProgressWriter(opts.Progress)
	res := &Result{Data: opts.Path, Vocab: vocab.Size(), TrainChars: len(trainIDs), ValChars: len(valIDs),
		Windows: n, SeqLength: opts.SeqLength, Arch: arch, ValLoss: math.NaN(), ValPerplexity: math.NaN(), VocabRunes: vocab,
		BatchSize: opts.Train.BatchSize, Config: opts.Train}
	var resumedStep int64
	if resume {
		// The model's metadata comes from the checkpoint: one without it
		// is not a charlstm model.
		path, err := h.Resume()
		if err != nil {
			return nil, fmt.Errorf("charlstm: %w", err)
		}
		sv, sa, _, err := readMeta(h.Context())
		if err != nil {
			return nil, fmt.Errorf("charlstm: resume from %s: %w", path, err)
		}
		if !sv.Equal(vocab) || sa != arch {
			return nil, fmt.Errorf("charlstm: resume from %s: the checkpoint's model (vocabulary %d, hidden %d, layers %d) does not match this corpus and these options (vocabulary %d, hidden %d, layers %d)",
				path, sv.Size(), sa.Hidden, sa.Layers, arch.Vocab, arch.Hidden, arch.Layers)
		}
		res.ResumedFrom, resumedStep = path, h.Step()
		logf("charlstm: resumed from %s at step %d", path, h.Step())
	} else if err := setMeta(h.Context(), vocab, arch, opts.SeqLength); err != nil {
		return nil, err
	}
	if vx != nil {
		h.SetEvaluator(func(h *train.Harness) (map[string]float64, error) {
			v, err := Evaluate(backend, h.Context(), arch, vx, vy, opts.SeqLength, opts.EvalBatch)
			if err != nil {
				return nil, err
			}
			return map[string]float64{"val_loss": v, "val_perplexity": math.Exp(v)}, nil
		})
	}
	first := true
	h.SetStepHook(func(_ int64, loss float64) {
		if first {
			res.FirstLoss, first = loss, false
		}
	})
	if res.Train, err = h.RunContext(ctx); err != nil {
		return nil, fmt.Errorf("charlstm: %w", err)
	}
	res.Train.Resumed = resumedStep
	res.Perf = h.Perf()
	res.Context = h.Context()
	if vx != nil {
		if v, ok := res.Train.Eval["val_loss"]; ok && res.Train.EvalStep == res.Train.Steps {
			// The harness validated after the last step (the end of
			// the run, of its time limit or early stopping's).
			res.ValLoss = v
		} else if res.ValLoss, err = Evaluate(backend, h.Context(), arch, vx, vy, opts.SeqLength, opts.EvalBatch); err != nil {
			return nil, err
		}
		res.ValPerplexity = math.Exp(res.ValLoss)
	}
	return res, nil
}

// setMeta stores the vocabulary and architecture in ctx's MetaScope, so that
// checkpoints carry them.
func setMeta(ctx *context.Context, v *text.Vocab, a Arch, seqLen int) error {
	r32 := v.Codes()
	return train.Catch(func() {
		m := ctx.InAbsPath(MetaScope).Checked(false)
		m.VariableWithValue("vocab", r32).SetTrainable(false)
		m.VariableWithValue("arch", []int32{int32(a.Hidden), int32(a.Layers), int32(seqLen)}).SetTrainable(false)
	})
}

// readMeta reads what setMeta stored.
func readMeta(ctx *context.Context) (*text.Vocab, Arch, int, error) {
	get := func(name string) ([]int32, error) {
		v := ctx.GetVariableByScopeAndName(MetaScope, name)
		if v == nil {
			return nil, fmt.Errorf("no %s/%s variable: not a charlstm model", MetaScope, name)
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
		return nil, Arch{}, 0, err
	}
	ar, err := get("arch")
	if err != nil {
		return nil, Arch{}, 0, err
	}
	if len(ar) != 3 {
		return nil, Arch{}, 0, fmt.Errorf("%s/arch has %d values, want 3", MetaScope, len(ar))
	}
	v, err := text.VocabFromCodes(r32)
	if err != nil {
		return nil, Arch{}, 0, err
	}
	a := Arch{Vocab: v.Size(), Hidden: int(ar[0]), Layers: int(ar[1])}
	if err := checkArch(ctx, a, int(ar[2])); err != nil {
		return nil, Arch{}, 0, err
	}
	return v, a, int(ar[2]), nil
}

// Evaluate returns the mean cross-entropy in nats per character of the
// windows x, y (rows of seqLen ids, as Windows returns them) under the
// weights of ctx, in batches of at most batch windows.
func Evaluate(backend backends.Backend, ctx *context.Context, a Arch, x, y []float32, seqLen, batch int) (float64, error) {
	n := len(x) / seqLen
	if n == 0 || len(y) != len(x) {
		return 0, errors.New("charlstm: evaluate: no windows")
	}
	batch = min(batch, n)
	var exec *context.Exec
	err := train.Catch(func() {
		var err error
		exec, err = context.NewExec(backend, ctx.Reuse(), func(ctx *context.Context, xs, ys *graph.Node) *graph.Node {
			return WindowLoss(ys, a.Logits(ctx, xs))
		})
		if err != nil {
			panic(err)
		}
	})
	if err != nil {
		return 0, fmt.Errorf("charlstm: evaluate: %w", err)
	}
	var sum float64
	for start := 0; start < n; start += batch {
		bx, by := make([]float32, batch*seqLen), make([]float32, batch*seqLen)
		real := min(batch, n-start)
		copy(bx, x[start*seqLen:(start+real)*seqLen])
		copy(by, y[start*seqLen:(start+real)*seqLen])
		var out []float32
		err := train.Catch(func() {
			res, err := exec.Exec(tensors.FromFlatDataAndDimensions(bx, batch, seqLen), tensors.FromFlatDataAndDimensions(by, batch, seqLen))
			if err != nil {
				panic(err)
			}
			out = tensors.MustCopyFlatData[float32](res[0])
		})
		if err != nil {
			return 0, fmt.Errorf("charlstm: evaluate: %w", err)
		}
		for _, l := range out[:real] {
			sum += float64(l)
		}
	}
	return sum / float64(n), nil
}

// Model is a trained model loaded for sampling.
type Model struct {
	// Vocab is the model's vocabulary.
	Vocab *text.Vocab
	// Arch is its architecture.
	Arch Arch
	// SeqLength is the window length it was trained with.
	SeqLength int
	// Step is the optimizer step of the checkpoint.
	Step    int64
	backend backends.Backend
	ctx     *context.Context
	exec    *context.Exec
}

// NewModel wraps the weights of ctx (as Train left them) for sampling.
func NewModel(backend backends.Backend, ctx *context.Context) (*Model, error) {
	v, a, seq, err := readMeta(ctx)
	if err != nil {
		return nil, fmt.Errorf("charlstm: %w", err)
	}
	m := &Model{Vocab: v, Arch: a, SeqLength: seq, backend: backend, ctx: ctx}
	err = train.Catch(func() {
		var err error
		m.exec, err = context.NewExec(backend, ctx.Reuse(), func(ctx *context.Context, ids, h, c *graph.Node) (*graph.Node, *graph.Node, *graph.Node) {
			return a.Step(ctx, ids, h, c)
		})
		if err != nil {
			panic(err)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("charlstm: building the sampler: %w", err)
	}
	return m, nil
}

// Load reads a model from a checkpoint written by Train: path is a
// checkpoint file, or a directory whose newest valid checkpoint is used. The
// file is verified by the harness (checksum) and the vocabulary comes from it.
func Load(backend backends.Backend, path string) (*Model, error) {
	h, err := train.LoadForInference(backend, path, Arch{Vocab: 1, Hidden: 1, Layers: 1}.ModelFn(), Loss)
	if err != nil {
		return nil, fmt.Errorf("charlstm: model %s: %w", path, err)
	}
	m, err := NewModel(backend, h.Context())
	if err != nil {
		return nil, fmt.Errorf("charlstm: model %s: %w", path, err)
	}
	m.Step = h.Step()
	return m, nil
}

// MaxSampleLength bounds SampleOptions.Length (2^24 characters).
const MaxSampleLength = 1 << 24

// SampleOptions configures Model.Sample.
type SampleOptions struct {
	// Prompt is the text the model reads first; it must not be empty and
	// every character must be in the vocabulary.
	Prompt string
	// Length is the number of characters generated after the prompt.
	Length int
	// Temperature divides the logits before the softmax; 0 picks the most
	// likely character (argmax) at every step.
	Temperature float64
	// Seed seeds the sampling; the same seed gives the same text.
	Seed uint64
}

// Sample reads the prompt and generates opts.Length characters, returning
// only the generated ones.
func (m *Model) Sample(opts SampleOptions) (string, error) {
	if opts.Prompt == "" {
		return "", errors.New("charlstm: sample: the prompt is empty")
	}
	if opts.Length < 0 || opts.Length > MaxSampleLength || opts.Temperature < 0 || math.IsNaN(opts.Temperature) || math.IsInf(opts.Temperature, 0) {
		return "", fmt.Errorf("charlstm: sample: Length %d, Temperature %g: want a length of 0 to %d (MaxSampleLength) and a finite temperature >= 0",
			opts.Length, opts.Temperature, MaxSampleLength)
	}
	ids, err := m.Vocab.Encode(opts.Prompt)
	if err != nil {
		return "", fmt.Errorf("charlstm: sample: prompt: %w", err)
	}
	r := rand.New(rand.NewPCG(opts.Seed, 0x636861726c73746d))
	states := make([]float32, m.Arch.Layers*m.Arch.Hidden)
	h := tensors.FromFlatDataAndDimensions(states, m.Arch.Layers, 1, m.Arch.Hidden)
	c := tensors.FromFlatDataAndDimensions(append([]float32(nil), states...), m.Arch.Layers, 1, m.Arch.Hidden)
	var logits []float32
	step := func(id int) error {
		return train.Catch(func() {
			out, err := m.exec.Exec(tensors.FromFlatDataAndDimensions([]int32{int32(id)}, 1), h, c)
			if err != nil {
				panic(err)
			}
			logits = tensors.MustCopyFlatData[float32](out[0])
			h, c = out[1], out[2]
		})
	}
	for _, id := range ids {
		if err := step(id); err != nil {
			return "", fmt.Errorf("charlstm: sample: %w", err)
		}
	}
	gen := make([]int, 0, opts.Length)
	for range opts.Length {
		id := pick(logits, opts.Temperature, r)
		gen = append(gen, id)
		if len(gen) == opts.Length {
			break
		}
		if err := step(id); err != nil {
			return "", fmt.Errorf("charlstm: sample: %w", err)
		}
	}
	return m.Vocab.Decode(gen)
}

// pick draws an id from softmax(logits/temperature), or the argmax at
// temperature 0.
func pick(logits []float32, temperature float64, r *rand.Rand) int {
	best := 0
	for i, l := range logits {
		if l > logits[best] {
			best = i
		}
	}
	if temperature == 0 {
		return best
	}
	p := make([]float64, len(logits))
	var sum float64
	for i, l := range logits {
		p[i] = math.Exp((float64(l) - float64(logits[best])) / temperature)
		sum += p[i]
	}
	u := r.Float64() * sum
	for i, v := range p {
		u -= v
		if u < 0 {
			return i
		}
	}
	return len(p) - 1
}

// AutoBatchSize returns the largest batch size in [start, limit] (and at most
// the number of training windows) at which one training step of opts fits in
// memory (train.FindBatchSize with train.StepFits).
func AutoBatchSize(backend backends.Backend, opts Options, start, limit int) (int, error) {
	corpus := opts.Text
	if corpus == "" {
		var err error
		if corpus, err = loadCorpus(&opts); err != nil {
			return 0, err
		}
	}
	vocab, err := text.NewVocab(corpus)
	if err != nil {
		return 0, fmt.Errorf("charlstm: corpus %s: %w", opts.Path, err)
	}
	ids, _ := vocab.Encode(corpus)
	x, y, n, err := text.Windows(ids, opts.SeqLength, opts.Step)
	if err != nil {
		return 0, fmt.Errorf("charlstm: corpus %s: %w", opts.Path, err)
	}
	ds, err := train.NewDataset(x, opts.SeqLength, y, opts.SeqLength, opts.Train.Seed, true)
	if err != nil {
		return 0, fmt.Errorf("charlstm: %w", err)
	}
	arch := Arch{Vocab: vocab.Size(), Hidden: opts.Hidden, Layers: opts.Layers}
	if err := arch.Validate(); err != nil {
		return 0, err
	}
	limit = min(limit, n)
	start = min(start, limit)
	return train.FindBatchSize(start, limit, train.StepFits(backend, opts.Train, arch.ModelFn(), Loss, ds))
}

// Generate loads the checkpoint r.Model (a file, or a directory: its
// newest) on backend and generates r.Length runes after r.Prompt with
// r.Temperature and r.Seed (Model.Sample), filling in r.Step and r.Text:
// what `gotrain lm lstm sample` reports. A TopK other than nil or 0 is an error.
func Generate(backend backends.Backend, r *text.SampleReport) error {
	if r.TopK != nil && *r.TopK != 0 {
		return fmt.Errorf("charlstm: TopK %d: the LSTM samples from all runes (leave TopK nil)", *r.TopK)
	}
	m, err := Load(backend, r.Model)
	if err != nil {
		return err
	}
	r.Step = m.Step
	r.Text, err = m.Sample(SampleOptions{Prompt: r.Prompt, Length: r.Length, Temperature: r.Temperature, Seed: r.Seed})
	return err
}
