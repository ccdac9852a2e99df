package transformer

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/gotrain/gotrain/models/text"
	"github.com/gotrain/gotrain/train"
)

// cacheShape is the shape of the key/value cache of a batch of b sequences.
func cacheShape(a Arch, b int) shapes.Shape {
	return shapes.Make(dtypes.Float32, a.Layers, 2, b, a.Context, a.Heads, a.HeadDim())
}

// Model is a trained model loaded for sampling.
type Model struct {
	// Vocab is the model's vocabulary.
	Vocab *text.Vocab
	// Arch is its architecture.
	Arch Arch
	// Step is the optimizer step of the checkpoint (0 when not loaded from one).
	Step     int64
	backend  backends.Backend
	ctx      *context.Context
	stepExec *context.Exec
	fullExec *context.Exec
}

// NewModel wraps the weights of ctx (as Train left them) for sampling.
func NewModel(backend backends.Backend, ctx *context.Context) (*Model, error) {
	v, a, err := readMeta(ctx)
	if err != nil {
		return nil, fmt.Errorf("transformer: %w", err)
	}
	m := &Model{Vocab: v, Arch: a, backend: backend, ctx: ctx}
	err = train.Catch(func() {
		var err error
		m.stepExec, err = context.NewExec(backend, ctx.Reuse(), func(ctx *context.Context, ids, pos, cache *graph.Node) (*graph.Node, *graph.Node) {
			return a.StepLogits(ctx, ids, pos, cache)
		})
		if err != nil {
			panic(err)
		}
		m.fullExec, err = context.NewExec(backend, ctx.Reuse(), func(ctx *context.Context, ids *graph.Node) *graph.Node {
			return a.Logits(ctx, ids)
		})
		if err != nil {
			panic(err)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("transformer: building the sampler: %w", err)
	}
	return m, nil
}

// Load reads a model from a checkpoint written by Train: path is a
// checkpoint file, or a directory whose newest valid checkpoint is used
// (train.RunCheckpoints: for an output directory, the newest run of the
// instruction phase when there is one, else of the pretraining phase). The checksum is verified and the
// vocabulary comes from the file.
func Load(backend backends.Backend, path string) (*Model, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("transformer: model: %w", err)
	}
	src := path
	if fi.IsDir() {
		for _, phase := range []string{"instruct", "pretrain"} {
			if files, err := train.RunCheckpoints(PhaseDir(path, phase)); err == nil && len(files) > 0 {
				src = PhaseDir(path, phase)
				break
			}
		}
	}
	h, err := train.LoadForInference(backend, src, Arch{Vocab: 1, Layers: 1, Heads: 1, Width: 1, Context: 1}.ModelFn(), Loss)
	if err != nil {
		return nil, fmt.Errorf("transformer: model %s: %w", path, err)
	}
	m, err := NewModel(backend, h.Context())
	if err != nil {
		return nil, fmt.Errorf("transformer: model %s: %w", path, err)
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
	// TopK, when positive, draws only among the TopK most likely characters.
	TopK int
	// Seed seeds the sampling; the same seed gives the same text.
	Seed uint64
	// NoCache recomputes the whole window for every token instead of using
	// the key/value cache (the reference the cache is tested against).
	NoCache bool
}

// stepper feeds tokens to the model one at a time.
type stepper interface {
	// reset empties the model's window.
	reset()
	// feed appends id at position pos of the window and returns the logits
	// of the next token.
	feed(id, pos int, window []int) ([]float32, error)
}

// cachedStepper runs StepLogits with the key/value cache.
type cachedStepper struct {
	m     *Model
	cache *tensors.Tensor
}

func (s *cachedStepper) reset() { s.cache = tensors.FromShape(cacheShape(s.m.Arch, 1)) }

func (s *cachedStepper) feed(id, pos int, _ []int) ([]float32, error) {
	var logits []float32
	err := train.Catch(func() {
		out, err := s.m.stepExec.Exec(tensors.FromFlatDataAndDimensions([]int32{int32(id)}, 1), tensors.FromScalar(int32(pos)), s.cache)
		if err != nil {
			panic(err)
		}
		logits = tensors.MustCopyFlatData[float32](out[0])
		s.cache = out[1]
	})
	return logits, err
}

// fullStepper recomputes the whole window (padded to the context) per token.
type fullStepper struct{ m *Model }

func (s *fullStepper) reset() {}

func (s *fullStepper) feed(_, pos int, window []int) ([]float32, error) {
	c, v := s.m.Arch.Context, s.m.Arch.Vocab
	ids := make([]float32, c)
	for i, id := range window {
		ids[i] = float32(id)
	}
	var logits []float32
	err := train.Catch(func() {
		out, err := s.m.fullExec.Exec(tensors.FromFlatDataAndDimensions(ids, 1, c))
		if err != nil {
			panic(err)
		}
		all := tensors.MustCopyFlatData[float32](out[0])
		logits = append([]float32(nil), all[pos*v:(pos+1)*v]...)
	})
	return logits, err
}

// reader feeds tokens through a stepper with a window of at most Context
// tokens: when the window is full it keeps its last Context/2 tokens and
// re-reads them from position 0 (learned positions cannot shift), so every
// token costs O(1) steps on average.
type reader struct {
	s      stepper
	ctx    int
	window []int
}

func (r *reader) feed(id int) ([]float32, error) {
	if len(r.window) == r.ctx {
		keep := append([]int(nil), r.window[len(r.window)-r.ctx/2:]...)
		r.s.reset()
		r.window = r.window[:0]
		for _, k := range keep {
			r.window = append(r.window, k)
			if _, err := r.s.feed(k, len(r.window)-1, r.window); err != nil {
				return nil, err
			}
		}
	}
	r.window = append(r.window, id)
	return r.s.feed(id, len(r.window)-1, r.window)
}

func (m *Model) newReader(noCache bool) *reader {
	var s stepper = &cachedStepper{m: m}
	if noCache {
		s = &fullStepper{m: m}
	}
	s.reset()
	return &reader{s: s, ctx: m.Arch.Context}
}

// trace feeds ids and returns the logits after each (for tests).
func (m *Model) trace(ids []int, noCache bool) ([][]float32, error) {
	r := m.newReader(noCache)
	out := make([][]float32, 0, len(ids))
	for _, id := range ids {
		l, err := r.feed(id)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

// Sample reads the prompt and generates opts.Length characters, returning
// only the generated ones. Characters outside the vocabulary are an error
// listing them.
func (m *Model) Sample(opts SampleOptions) (string, error) {
	if opts.Prompt == "" {
		return "", errors.New("transformer: sample: the prompt is empty")
	}
	if opts.Length < 0 || opts.Length > MaxSampleLength || opts.TopK < 0 || opts.Temperature < 0 || math.IsNaN(opts.Temperature) || math.IsInf(opts.Temperature, 0) {
		return "", fmt.Errorf("transformer: sample: Length %d, TopK %d, Temperature %g: want a length of 0 to %d (MaxSampleLength), top-k >= 0 and a finite temperature >= 0",
			opts.Length, opts.TopK, opts.Temperature, MaxSampleLength)
	}
	ids, err := m.Vocab.Encode(opts.Prompt)
	if err != nil {
		return "", fmt.Errorf("transformer: sample: prompt: %w", err)
	}
	rng := rand.New(rand.NewPCG(opts.Seed, 0x7472616e73666d72))
	r := m.newReader(opts.NoCache)
	var logits []float32
	for _, id := range ids {
		if logits, err = r.feed(id); err != nil {
			return "", fmt.Errorf("transformer: sample: %w", err)
		}
	}
	gen := make([]int, 0, opts.Length)
	for len(gen) < opts.Length {
		id := Pick(logits, opts.Temperature, opts.TopK, rng)
		gen = append(gen, id)
		if len(gen) == opts.Length {
			break
		}
		if logits, err = r.feed(id); err != nil {
			return "", fmt.Errorf("transformer: sample: %w", err)
		}
	}
	return m.Vocab.Decode(gen)
}

// Pick draws an id from softmax(logits/temperature) restricted to the topK
// largest logits (all when topK is 0), or returns the argmax (the first on
// ties) at temperature 0.
func Pick(logits []float32, temperature float64, topK int, r *rand.Rand) int {
	idx := make([]int, len(logits))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return logits[idx[a]] > logits[idx[b]] })
	if temperature == 0 {
		return idx[0]
	}
	if topK > 0 && topK < len(idx) {
		idx = idx[:topK]
	}
	top := float64(logits[idx[0]])
	p := make([]float64, len(idx))
	var sum float64
	for i, id := range idx {
		p[i] = math.Exp((float64(logits[id]) - top) / temperature)
		sum += p[i]
	}
	u := r.Float64() * sum
	for i, v := range p {
		u -= v
		if u < 0 {
			return idx[i]
		}
	}
	return idx[len(idx)-1]
}

// Generate loads the checkpoint r.Model (a file, or a run's directory,
// see Load) on backend and generates r.Length runes after r.Prompt with
// r.Temperature, r.TopK (nil: all runes) and r.Seed (Model.Sample),
// filling in r.Step and r.Text: what `gotrain lm transformer sample`
// reports.
func Generate(backend backends.Backend, r *text.SampleReport) error {
	m, err := Load(backend, r.Model)
	if err != nil {
		return err
	}
	o := SampleOptions{Prompt: r.Prompt, Length: r.Length, Temperature: r.Temperature, Seed: r.Seed}
	if r.TopK != nil {
		o.TopK = *r.TopK
	}
	r.Step = m.Step
	r.Text, err = m.Sample(o)
	return err
}
