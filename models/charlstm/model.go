package charlstm

import (
	"fmt"
	"math"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/context/initializers"

	"github.com/gotrain/gotrain/train"
)

// Scope is the context scope of the model's weights; MetaScope holds the
// vocabulary and the architecture, saved with the weights in checkpoints.
const (
	Scope     = "/charlstm"
	MetaScope = "/charlstm_meta"
)

// Arch is the architecture of a model.
type Arch struct {
	// Vocab is the vocabulary size (the width of the one-hot inputs and of the logits).
	Vocab int `json:"vocab"`
	// Hidden is the hidden (and cell) state size of every layer.
	Hidden int `json:"hidden"`
	// Layers is the number of stacked LSTM layers.
	Layers int `json:"layers"`
}

// MaxParams bounds an architecture's parameters (Arch.Validate): 2^31,
// 8 GiB as float32, checked before anything is sized by the architecture.
const MaxParams = 1 << 31

// Params returns the number of parameters of the model: every layer's
// gate weights and biases and the output layer's. It is a float64 so that
// sizes far beyond MaxParams do not overflow.
func (a Arch) Params() float64 {
	v, h := float64(a.Vocab), float64(a.Hidden)
	first := (v+h)*4*h + 4*h
	rest := (h+h)*4*h + 4*h
	return first + float64(a.Layers-1)*rest + h*v + v
}

// Validate reports an invalid architecture.
func (a Arch) Validate() error {
	if a.Vocab < 1 || a.Hidden < 1 || a.Layers < 1 {
		return fmt.Errorf("charlstm: vocabulary %d, Hidden %d, Layers %d: want all >= 1", a.Vocab, a.Hidden, a.Layers)
	}
	if p := a.Params(); p > MaxParams {
		return fmt.Errorf("charlstm: vocabulary %d, Hidden %d, Layers %d make %.4g parameters: want at most %d (MaxParams)",
			a.Vocab, a.Hidden, a.Layers, p, int64(MaxParams))
	}
	return nil
}

// weights returns layer l's fused gate weights [in+hidden, 4·hidden] and
// bias [4·hidden] (forget-gate bias initialised to 1), or the output layer's
// [hidden, vocab] and [vocab] for l == a.Layers, converted to the compute dtype.
func (a Arch) weights(ctx *context.Context, g *graph.Graph, l int) (w, b *graph.Node) {
	dt := train.ComputeDType(ctx)
	root := ctx.InAbsPath(Scope)
	var c *context.Context
	var in, out int
	var bias []float32
	if l == a.Layers {
		c, in, out = root.In("output"), a.Hidden, a.Vocab
		bias = make([]float32, out)
	} else {
		in = a.Hidden
		if l == 0 {
			in = a.Vocab
		}
		c, in, out = root.In(fmt.Sprintf("lstm_%d", l)), in+a.Hidden, 4*a.Hidden
		bias = make([]float32, out)
		for j := a.Hidden; j < 2*a.Hidden; j++ {
			bias[j] = 1
		}
	}
	lim := 1 / math.Sqrt(float64(a.Hidden))
	w = c.WithInitializer(initializers.RandomUniformFn(c, -lim, lim)).
		VariableWithShape("w", shapes.Make(dtypes.Float32, in, out)).ValueGraph(g)
	b = c.VariableWithValue("b", bias).ValueGraph(g)
	if dt != dtypes.Float32 {
		w, b = graph.ConvertDType(w, dt), graph.ConvertDType(b, dt)
	}
	return w, b
}

// cell runs one LSTM step: z = [x, h]·W + b, split into the gates i, f, g, o;
// c' = σ(f)⊙c + σ(i)⊙tanh(g), h' = σ(o)⊙tanh(c').
func cell(x, h, c, w, b *graph.Node, hidden int) (h2, c2 *graph.Node) {
	z := graph.Add(graph.Dot(graph.Concatenate([]*graph.Node{x, h}, 1), w), graph.InsertAxes(b, 0))
	z = graph.Reshape(z, z.Shape().Dimensions[0], 4, hidden)
	gate := func(k int) *graph.Node {
		// A masked reduction instead of Slice: Slice's gradient needs Pad,
		// which simplego lacks; ReduceSum's gradient is a broadcast.
		mask := make([]float32, 4)
		mask[k] = 1
		m := graph.Reshape(graph.ConvertDType(graph.Const(z.Graph(), mask), z.DType()), 1, 4, 1)
		return graph.ReduceSum(graph.Mul(z, m), 1)
	}
	i, f, gg, o := graph.Sigmoid(gate(0)), graph.Sigmoid(gate(1)), graph.Tanh(gate(2)), graph.Sigmoid(gate(3))
	c2 = graph.Add(graph.Mul(f, c), graph.Mul(i, gg))
	h2 = graph.Mul(o, graph.Tanh(c2))
	return h2, c2
}

// Logits runs the model over ids [batch, T] (any integer or float dtype
// holding ids) from zero states and returns the logits [batch, T, vocab] of
// the next character at every position. Every step is unrolled.
func (a Arch) Logits(ctx *context.Context, ids *graph.Node) *graph.Node {
	g := ids.Graph()
	dt := train.ComputeDType(ctx)
	if ids.DType() != dtypes.Int32 {
		ids = graph.ConvertDType(ids, dtypes.Int32)
	}
	batch, steps := ids.Shape().Dimensions[0], ids.Shape().Dimensions[1]
	layers := make([][2]*graph.Node, a.Layers)
	ws := make([][2]*graph.Node, a.Layers)
	for l := range a.Layers {
		w, b := a.weights(ctx, g, l)
		ws[l] = [2]*graph.Node{w, b}
		zero := graph.Zeros(g, shapes.Make(dt, batch, a.Hidden))
		layers[l] = [2]*graph.Node{zero, zero}
	}
	outs := make([]*graph.Node, steps)
	for t := range steps {
		// The ids are not differentiated, so slicing them needs no Pad.
		col := graph.Reshape(graph.Slice(ids, graph.AxisRange(), graph.AxisElem(t)), batch)
		x := graph.OneHot(col, a.Vocab, dt)
		for l := range a.Layers {
			h, c := cell(x, layers[l][0], layers[l][1], ws[l][0], ws[l][1], a.Hidden)
			layers[l] = [2]*graph.Node{h, c}
			x = h
		}
		outs[t] = x
	}
	hs := graph.Stack(outs, 1) // [batch, T, hidden]
	w, b := a.weights(ctx, g, a.Layers)
	logits := graph.DotGeneral(hs, []int{2}, nil, w, []int{0}, nil) // [batch, T, vocab]
	return graph.Add(logits, graph.Reshape(b, 1, 1, a.Vocab))
}

// ModelFn is the model as the harness wants it: inputs[0] is a batch of
// windows [batch, T] of ids (as float32), the output the logits [batch, T, vocab].
func (a Arch) ModelFn() train.ModelFn {
	return func(ctx *context.Context, _ any, inputs []*graph.Node) []*graph.Node {
		return []*graph.Node{a.Logits(ctx, inputs[0])}
	}
}

// WindowLoss is the cross-entropy, in nats per character, of each window:
// labels [batch, T] of ids and logits [batch, T, vocab] give [batch].
func WindowLoss(labels, logits *graph.Node) *graph.Node {
	if logits.DType() != dtypes.Float32 {
		logits = graph.ConvertDType(logits, dtypes.Float32)
	}
	vocab := logits.Shape().Dimensions[2]
	oh := graph.OneHot(graph.ConvertDType(labels, dtypes.Int32), vocab, dtypes.Float32)
	nll := graph.Neg(graph.ReduceSum(graph.Mul(oh, graph.LogSoftmax(logits, -1)), -1)) // [batch, T]
	return graph.ReduceMean(nll, 1)
}

// Loss is the mean cross-entropy in nats per character (a train.LossFn).
func Loss(labels, predictions []*graph.Node) *graph.Node {
	return graph.ReduceAllMean(WindowLoss(labels[0], predictions[0]))
}

// Step runs one step of the model for sampling: ids [batch] and the states
// h, c [layers, batch, hidden] give the logits [batch, vocab] and the new states.
func (a Arch) Step(ctx *context.Context, ids, h, c *graph.Node) (logits, h2, c2 *graph.Node) {
	g := ids.Graph()
	batch := ids.Shape().Dimensions[0]
	x := graph.OneHot(graph.ConvertDType(ids, dtypes.Int32), a.Vocab, train.ComputeDType(ctx))
	hs, cs := make([]*graph.Node, a.Layers), make([]*graph.Node, a.Layers)
	for l := range a.Layers {
		w, b := a.weights(ctx, g, l)
		hl := graph.Reshape(graph.Slice(h, graph.AxisElem(l)), batch, a.Hidden)
		cl := graph.Reshape(graph.Slice(c, graph.AxisElem(l)), batch, a.Hidden)
		hs[l], cs[l] = cell(x, hl, cl, w, b, a.Hidden)
		x = hs[l]
	}
	w, b := a.weights(ctx, g, a.Layers)
	logits = graph.Add(graph.Dot(x, w), graph.InsertAxes(b, 0))
	return logits, graph.Stack(hs, 0), graph.Stack(cs, 0)
}
