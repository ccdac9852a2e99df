// Package transformer is a decoder-only transformer language model trained
// with gotrain's harness (package train): character-level tokens (the
// vocabulary of package models/text), learned token and position embeddings,
// blocks of pre-norm causal multi-head attention and a pre-norm gated (GLU)
// feed-forward, and an output head tied to the token embedding.
//
// Two attentions (softmax, or a polynomial kernel normalised per query) and
// two feed-forwards (SwiGLU, or a GLU gated by a Richards curve with
// learnable per-channel shape) are offered. Training runs in two phases,
// pretraining on plain text and instruction tuning on prompt/response pairs
// with the loss on the response tokens only. Sampling uses a key/value
// cache: one fixed-shape graph per generated token.
//
// The graphs are written for GoMLX's simplego backend: no Slice of a
// differentiated tensor (its gradient needs Pad), no DynamicSlice or
// DynamicUpdateSlice (the cache is updated with a one-hot blend), separate
// query, key and value weights rather than one fused matrix to split.
package transformer

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
	Scope     = "/transformer"
	MetaScope = "/transformer_meta"
)

// Attention kinds (--attention).
const (
	// AttentionSoftmax is scaled dot-product attention with a softmax.
	AttentionSoftmax = "softmax"
	// AttentionPoly replaces exp by the polynomial kernel PolyKernel,
	// normalised per query.
	AttentionPoly = "poly"
)

// Feed-forward kinds (--ffn).
const (
	// FFNSwiGLU is W2·(swish(W1·x) ⊙ W3·x).
	FFNSwiGLU = "swiglu"
	// FFNRichards is W2·(a·R(a) ⊙ W3·x) with a = W1·x and R the Richards
	// (generalised logistic) curve of RichardsGate.
	FFNRichards = "richards"
)

// Norm kinds (--norm).
const (
	// NormRMS is RMSNorm: x / sqrt(mean(x²) + eps) · g.
	NormRMS = "rms"
	// NormLayer is LayerNorm: (x − mean) / sqrt(var + eps) · g + b.
	NormLayer = "layer"
)

// Numerical constants of the model.
const (
	// NormEpsilon is added to the mean square (RMSNorm) or variance (LayerNorm).
	NormEpsilon = 1e-5
	// PolyEpsilon is added to the denominator of the polynomial attention.
	PolyEpsilon = 1e-6
	// maskedLogit is added to the scores of masked (future) keys before the softmax.
	maskedLogit = -1e9
	// Richards shape parameters are kept in [RichardsMin, RichardsMax].
	RichardsMin = 0.1
	RichardsMax = 10.0
)

var kindCodes = map[string]int32{AttentionSoftmax: 0, AttentionPoly: 1, FFNSwiGLU: 0, FFNRichards: 1, NormRMS: 0, NormLayer: 1}

// Arch is the architecture of a model.
type Arch struct {
	// Vocab is the vocabulary size.
	Vocab int `json:"vocab"`
	// Layers is the number of transformer blocks.
	Layers int `json:"layers"`
	// Heads is the number of attention heads; Width must be a multiple of it.
	Heads int `json:"heads"`
	// Width is the model (embedding) width.
	Width int `json:"width"`
	// Context is the longest sequence the model reads (the position table's size).
	Context int `json:"context"`
	// Hidden is the feed-forward's inner width (0: DefaultHidden(Width)).
	Hidden int `json:"hidden"`
	// Attention is AttentionSoftmax or AttentionPoly.
	Attention string `json:"attention"`
	// FFN is FFNSwiGLU or FFNRichards.
	FFN string `json:"ffn"`
	// Norm is NormRMS or NormLayer.
	Norm string `json:"norm"`
}

// DefaultHidden is the feed-forward width that gives a GLU about the
// parameters of a 4×width MLP: 8/3·width rounded up to a multiple of 8.
func DefaultHidden(width int) int { return (8*width/3 + 7) / 8 * 8 }

// withDefaults fills the optional fields.
func (a Arch) withDefaults() Arch {
	if a.Hidden == 0 {
		a.Hidden = DefaultHidden(a.Width)
	}
	if a.Attention == "" {
		a.Attention = AttentionSoftmax
	}
	if a.FFN == "" {
		a.FFN = FFNSwiGLU
	}
	if a.Norm == "" {
		a.Norm = NormRMS
	}
	return a
}

// Validate reports an invalid architecture.
func (a Arch) Validate() error {
	a = a.withDefaults()
	if a.Vocab < 1 || a.Layers < 1 || a.Heads < 1 || a.Width < 1 || a.Context < 1 || a.Hidden < 1 {
		return fmt.Errorf("transformer: vocabulary %d, Layers %d, Heads %d, Width %d, Context %d, Hidden %d: want all >= 1",
			a.Vocab, a.Layers, a.Heads, a.Width, a.Context, a.Hidden)
	}
	if a.Width%a.Heads != 0 {
		return fmt.Errorf("transformer: Width %d is not a multiple of Heads %d", a.Width, a.Heads)
	}
	if p := a.paramsFloat(); p > MaxParams {
		return fmt.Errorf("transformer: vocabulary %d, Layers %d, Width %d, Context %d, Hidden %d make %.4g parameters: want at most %d (MaxParams)",
			a.Vocab, a.Layers, a.Width, a.Context, a.Hidden, p, int64(MaxParams))
	}
	if a.Attention != AttentionSoftmax && a.Attention != AttentionPoly {
		return fmt.Errorf("transformer: Attention %q: want softmax or poly", a.Attention)
	}
	if a.FFN != FFNSwiGLU && a.FFN != FFNRichards {
		return fmt.Errorf("transformer: FFN %q: want swiglu or richards", a.FFN)
	}
	if a.Norm != NormRMS && a.Norm != NormLayer {
		return fmt.Errorf("transformer: Norm %q: want rms or layer", a.Norm)
	}
	return nil
}

// MaxParams bounds an architecture's parameters (Arch.Validate): 2^31,
// 8 GiB as float32, checked before anything is sized by the architecture.
const MaxParams = 1 << 31

// paramsFloat is Params in float64, so that it does not overflow for any
// sizes (a defaults-filled a).
func (a Arch) paramsFloat() float64 {
	d, f := float64(a.Width), float64(a.Hidden)
	norm := d
	if a.Norm == NormLayer {
		norm = 2 * d
	}
	block := 2*norm + 4*d*d + 3*d*f
	if a.FFN == FFNRichards {
		block += 2 * f
	}
	return float64(a.Vocab)*d + float64(a.Context)*d + float64(a.Layers)*block + norm
}

// HeadDim is the width of one head.
func (a Arch) HeadDim() int { return a.Width / a.Heads }

// Params is the number of trainable parameters.
func (a Arch) Params() int {
	a = a.withDefaults()
	d, f := a.Width, a.Hidden
	norm := d
	if a.Norm == NormLayer {
		norm = 2 * d
	}
	block := 2*norm + 4*d*d + 3*d*f
	if a.FFN == FFNRichards {
		block += 2 * f
	}
	return a.Vocab*d + a.Context*d + a.Layers*block + norm
}

// weight returns the float32 variable name of scope c, created with a
// normal initialiser of standard deviation std, converted to dt.
func weight(c *context.Context, g *graph.Graph, name string, std float64, dt dtypes.DType, dims ...int) *graph.Node {
	w := c.WithInitializer(initializers.RandomNormalFn(c, std)).
		VariableWithShape(name, shapes.Make(dtypes.Float32, dims...)).ValueGraph(g)
	return toDType(w, dt)
}

// constVar returns the float32 variable name of scope c initialised to
// value everywhere, converted to dt.
func constVar(c *context.Context, g *graph.Graph, name string, value float32, dt dtypes.DType, n int) *graph.Node {
	vals := make([]float32, n)
	for i := range vals {
		vals[i] = value
	}
	return toDType(c.VariableWithValue(name, vals).ValueGraph(g), dt)
}

func toDType(x *graph.Node, dt dtypes.DType) *graph.Node {
	if x.DType() != dt {
		return graph.ConvertDType(x, dt)
	}
	return x
}

// norm applies the architecture's normalisation over the last axis of x
// (in float32), with scope c's gain (and bias for LayerNorm).
func (a Arch) norm(c *context.Context, x *graph.Node) *graph.Node {
	g := x.Graph()
	gain := c.VariableWithValue("gain", onesF32(a.Width)).ValueGraph(g)
	var bias *graph.Node
	if a.Norm == NormLayer {
		bias = c.VariableWithValue("bias", make([]float32, a.Width)).ValueGraph(g)
	}
	return train.InFloat32(x, func(x *graph.Node) *graph.Node {
		return Normalize(x, gain, bias)
	})
}

func onesF32(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = 1
	}
	return v
}

// Normalize is RMSNorm of x over its last axis, x / sqrt(mean(x²) + eps) ·
// gain, when bias is nil, and LayerNorm, (x − mean) / sqrt(var + eps) ·
// gain + bias, otherwise. gain and bias have x's last dimension.
func Normalize(x, gain, bias *graph.Node) *graph.Node {
	if bias != nil {
		x = graph.Sub(x, graph.ReduceAndKeep(x, graph.ReduceMean, -1))
	}
	ms := graph.ReduceAndKeep(graph.Square(x), graph.ReduceMean, -1)
	y := graph.Div(x, graph.Sqrt(graph.AddScalar(ms, NormEpsilon))) // Rsqrt has no gradient in GoMLX v0.26
	y = graph.Mul(y, atRank(gain, y.Rank()))
	if bias != nil {
		y = graph.Add(y, atRank(bias, y.Rank()))
	}
	return y
}

// PolyKernel is the polynomial attention kernel φ(s) = 1 + s + s²/2 =
// ((1 + s)² + 1)/2, the second-order Taylor polynomial of exp: it is at
// least 1/2 for every s, so the normalised weights φ/Σφ are positive and
// the denominator never vanishes.
func PolyKernel(s *graph.Node) *graph.Node {
	one := graph.OnesLike(s)
	return graph.MulScalar(graph.Add(graph.Square(graph.Add(one, s)), one), 0.5)
}

// AttentionWeights turns scores [..., Tq, Tk] (already scaled by 1/√d) and
// a 0/1 mask broadcastable to them (1: the query may attend the key) into
// attention weights that sum to 1 over the unmasked keys of each query.
// softmax: softmax(s + (mask − 1)·1e9); poly: φ(s)·mask / (Σ φ(s)·mask +
// PolyEpsilon). Computed in float32; the result has the scores' dtype.
func AttentionWeights(kind string, scores, mask *graph.Node) *graph.Node {
	return train.InFloat32(scores, func(s *graph.Node) *graph.Node {
		m := graph.ConvertDType(mask, dtypes.Float32)
		if kind == AttentionPoly {
			// Clamp the score so that φ stays far from float32's range.
			s = graph.ClipScalar(s, -1e4, 1e4)
			phi := graph.Mul(PolyKernel(s), m)
			den := graph.AddScalar(graph.ReduceAndKeep(phi, graph.ReduceSum, -1), PolyEpsilon)
			return graph.Div(phi, den)
		}
		// (m − 1)·1e9 is 0 on allowed keys and −1e9 on masked ones.
		return graph.Softmax(graph.Add(s, graph.MulScalar(graph.AddScalar(m, -1), -maskedLogit)), -1)
	})
}

// attend computes multi-head attention: q [B, Tq, H, dh], k and v
// [B, Tk, H, dh] and mask broadcastable to [B, H, Tq, Tk] give [B, Tq, H·dh].
func attend(kind string, q, k, v, mask *graph.Node) *graph.Node {
	dims := q.Shape().Dimensions
	b, tq, h, dh := dims[0], dims[1], dims[2], dims[3]
	scores := graph.DotGeneral(q, []int{3}, []int{0, 2}, k, []int{3}, []int{0, 2}) // [B, H, Tq, Tk]
	scores = graph.MulScalar(scores, 1/math.Sqrt(float64(dh)))
	w := AttentionWeights(kind, scores, mask)
	out := graph.DotGeneral(w, []int{3}, []int{0, 1}, v, []int{1}, []int{0, 2}) // [B, H, Tq, dh]
	out = graph.TransposeAllAxes(out, 0, 2, 1, 3)                               // [B, Tq, H, dh]
	return graph.Reshape(out, b, tq, h*dh)
}

// RichardsGate is the Richards (generalised logistic) curve
// R(x) = (1 + exp(−β·x))^(−1/ν), computed as exp(−softplus(−β·x)/ν) with a
// stable softplus, so it is finite and in [0, 1] for every finite input in
// any float dtype (an overflowing β·x gives exactly 0 or 1). β and ν
// broadcast against x. With β = ν = 1 it is the logistic sigmoid.
func RichardsGate(x, beta, nu *graph.Node) *graph.Node {
	return graph.Exp(graph.Neg(graph.Div(stableSoftplus(graph.Neg(graph.Mul(beta, x))), nu)))
}

// stableSoftplus is log(1 + exp(z)) = max(z, 0) + log1p(exp(−|z|)).
func stableSoftplus(z *graph.Node) *graph.Node {
	return graph.Add(graph.Max(z, graph.ZerosLike(z)), graph.Log1p(graph.Exp(graph.Neg(graph.Abs(z)))))
}

// RichardsShape maps a raw parameter to a shape parameter:
// clamp(softplus(raw), RichardsMin, RichardsMax).
func RichardsShape(raw *graph.Node) *graph.Node {
	return graph.ClipScalar(stableSoftplus(raw), RichardsMin, RichardsMax)
}

// richardsInit is the raw value whose RichardsShape is 1: log(e − 1).
var richardsInit = float32(math.Log(math.E - 1))

// ffn is the gated feed-forward of scope c on h [..., Width].
func (a Arch) ffn(c *context.Context, h *graph.Node, dt dtypes.DType) *graph.Node {
	g := h.Graph()
	d, f := a.Width, a.Hidden
	std := 0.02
	w1 := weight(c, g, "w1", std, dt, d, f)
	w3 := weight(c, g, "w3", std, dt, d, f)
	w2 := weight(c, g, "w2", std/math.Sqrt(2*float64(a.Layers)), dt, f, d)
	last := h.Rank() - 1
	x1 := graph.DotGeneral(h, []int{last}, nil, w1, []int{0}, nil)
	x3 := graph.DotGeneral(h, []int{last}, nil, w3, []int{0}, nil)
	var act *graph.Node
	if a.FFN == FFNRichards {
		beta := RichardsShape(c.VariableWithValue("beta_raw", fill(f, richardsInit)).ValueGraph(g))
		nu := RichardsShape(c.VariableWithValue("nu_raw", fill(f, richardsInit)).ValueGraph(g))
		act = graph.Mul(x1, RichardsGate(x1, atRank(toDType(beta, dt), x1.Rank()), atRank(toDType(nu, dt), x1.Rank())))
	} else {
		act = graph.Mul(x1, graph.Sigmoid(x1))
	}
	return graph.DotGeneral(graph.Mul(act, x3), []int{last}, nil, w2, []int{0}, nil)
}

// atRank reshapes a vector [n] to [1, ..., 1, n] of the given rank, to
// broadcast against a tensor whose last axis has n entries.
func atRank(v *graph.Node, rank int) *graph.Node {
	dims := make([]int, rank)
	for i := range dims {
		dims[i] = 1
	}
	dims[rank-1] = v.Shape().Size()
	return graph.Reshape(v, dims...)
}

func fill(n int, v float32) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// blockWeights are the attention projections of one block.
type blockWeights struct{ wq, wk, wv, wo *graph.Node }

func (a Arch) attnWeights(c *context.Context, g *graph.Graph, dt dtypes.DType) blockWeights {
	d := a.Width
	std := 0.02
	return blockWeights{
		wq: weight(c, g, "wq", std, dt, d, d),
		wk: weight(c, g, "wk", std, dt, d, d),
		wv: weight(c, g, "wv", std, dt, d, d),
		wo: weight(c, g, "wo", std/math.Sqrt(2*float64(a.Layers)), dt, d, d),
	}
}

// embeddings returns the token table [Vocab, Width] and position table
// [Context, Width] in dt.
func (a Arch) embeddings(ctx *context.Context, g *graph.Graph, dt dtypes.DType) (tok, pos *graph.Node) {
	root := ctx.InAbsPath(Scope)
	tok = weight(root, g, "token_embedding", 0.02, dt, a.Vocab, a.Width)
	pos = weight(root, g, "position_embedding", 0.01, dt, a.Context, a.Width)
	return tok, pos
}

// embed returns the embeddings [B, T, Width] of ids [B, T] at positions 0..T−1.
func (a Arch) embed(ids, tok, pos *graph.Node, dt dtypes.DType) *graph.Node {
	g := ids.Graph()
	t := ids.Shape().Dimensions[1]
	// One-hot products rather than Gather and Slice: their gradients are dots.
	x := graph.DotGeneral(graph.OneHot(ids, a.Vocab, dt), []int{2}, nil, tok, []int{0}, nil)
	p := graph.Iota(g, shapes.Make(dtypes.Int32, t), 0)
	pe := graph.DotGeneral(graph.OneHot(p, a.Context, dt), []int{1}, nil, pos, []int{0}, nil) // [T, Width]
	return graph.Add(x, graph.InsertAxes(pe, 0))
}

// CausalMask is the 0/1 mask [T, T] whose (i, j) is 1 when j ≤ i.
func CausalMask(g *graph.Graph, t int) *graph.Node {
	rows := graph.Iota(g, shapes.Make(dtypes.Int32, t, t), 0)
	cols := graph.Iota(g, shapes.Make(dtypes.Int32, t, t), 1)
	return graph.ConvertDType(graph.GreaterOrEqual(rows, cols), dtypes.Float32)
}

// Logits runs the model over ids [B, T] (T ≤ Context; any integer or float
// dtype holding ids) and returns the logits [B, T, Vocab] of the next token
// at every position. Like GoMLX's graph functions it panics on a graph
// error (more than Context tokens, for one); Train, EvalLoss and the
// sampler call it under train.Catch and return errors.
func (a Arch) Logits(ctx *context.Context, ids *graph.Node) *graph.Node {
	a = a.withDefaults()
	g := ids.Graph()
	dt := train.ComputeDType(ctx)
	ids = toDType(ids, dtypes.Int32)
	dims := ids.Shape().Dimensions
	b, t := dims[0], dims[1]
	if t > a.Context {
		panic(fmt.Errorf("transformer: %d tokens exceed the context of %d", t, a.Context))
	}
	tok, pos := a.embeddings(ctx, g, dt)
	x := a.embed(ids, tok, pos, dt)
	mask := graph.Reshape(CausalMask(g, t), 1, 1, t, t)
	root := ctx.InAbsPath(Scope)
	h, dh := a.Heads, a.HeadDim()
	for l := range a.Layers {
		c := root.In(fmt.Sprintf("block_%d", l))
		w := a.attnWeights(c.In("attention"), g, dt)
		y := a.norm(c.In("norm_1"), x)
		q := graph.Reshape(graph.DotGeneral(y, []int{2}, nil, w.wq, []int{0}, nil), b, t, h, dh)
		k := graph.Reshape(graph.DotGeneral(y, []int{2}, nil, w.wk, []int{0}, nil), b, t, h, dh)
		v := graph.Reshape(graph.DotGeneral(y, []int{2}, nil, w.wv, []int{0}, nil), b, t, h, dh)
		att := attend(a.Attention, q, k, v, mask)
		x = graph.Add(x, graph.DotGeneral(att, []int{2}, nil, w.wo, []int{0}, nil))
		x = graph.Add(x, a.ffn(c.In("ffn"), a.norm(c.In("norm_2"), x), dt))
	}
	x = a.norm(root.In("norm_final"), x)
	return graph.DotGeneral(x, []int{2}, nil, tok, []int{1}, nil) // tied head
}

// ModelFn is the model as the harness wants it: inputs[0] is a batch of
// windows [B, T] of ids (as float32), the output the logits [B, T, Vocab].
func (a Arch) ModelFn() train.ModelFn {
	return func(ctx *context.Context, _ any, inputs []*graph.Node) []*graph.Node {
		return []*graph.Node{a.Logits(ctx, inputs[0])}
	}
}

// TokenNLL returns the cross-entropy of every position, [B, T], and the 0/1
// weight of every position: labels [B, T] hold the next token's id, or a
// negative value for a position that does not count (the prompt of an
// instruction example, padding), whose cross-entropy is 0.
func TokenNLL(labels, logits *graph.Node) (nll, weight *graph.Node) {
	logits = toDType(logits, dtypes.Float32)
	labels = toDType(labels, dtypes.Float32)
	vocab := logits.Shape().Dimensions[2]
	weight = graph.ConvertDType(graph.GreaterOrEqual(labels, graph.ZerosLike(labels)), dtypes.Float32)
	ids := graph.ConvertDType(graph.Max(labels, graph.ZerosLike(labels)), dtypes.Int32)
	oh := graph.OneHot(ids, vocab, dtypes.Float32)
	nll = graph.Neg(graph.ReduceSum(graph.Mul(oh, graph.LogSoftmax(logits, -1)), -1))
	return graph.Mul(nll, weight), weight
}

// Loss is the mean cross-entropy, in nats per token, over the positions
// whose label is not negative (a train.LossFn); 0 when there is none.
func Loss(labels, predictions []*graph.Node) *graph.Node {
	nll, w := TokenNLL(labels[0], predictions[0])
	return graph.Div(graph.ReduceAllSum(nll), graph.Max(graph.ReduceAllSum(w), graph.OnesLike(graph.ReduceAllSum(w))))
}

// StepLogits runs one incremental step for sampling with a key/value cache:
// ids [B] are the tokens at position pos (an int32 scalar, 0 ≤ pos <
// Context), cache [Layers, 2, B, Context, Heads, HeadDim] holds the keys
// and values of positions 0..pos−1. It returns the logits [B, Vocab] of the
// next token and the cache with position pos written. The cache is updated
// by a one-hot blend rather than DynamicUpdateSlice (absent on simplego);
// shapes are fixed, so one graph serves every step.
func (a Arch) StepLogits(ctx *context.Context, ids, pos, cache *graph.Node) (logits, newCache *graph.Node) {
	a = a.withDefaults()
	g := ids.Graph()
	dt := train.ComputeDType(ctx)
	ids = toDType(ids, dtypes.Int32)
	pos = toDType(pos, dtypes.Int32)
	b := ids.Shape().Dimensions[0]
	h, dh, cx := a.Heads, a.HeadDim(), a.Context
	tok, posTable := a.embeddings(ctx, g, dt)
	x := graph.DotGeneral(graph.OneHot(ids, a.Vocab, dt), []int{1}, nil, tok, []int{0}, nil) // [B, Width]
	posOH := graph.OneHot(graph.Reshape(pos, 1), cx, dt)                                     // [1, C]
	x = graph.Add(x, graph.DotGeneral(posOH, []int{1}, nil, posTable, []int{0}, nil))
	sel := graph.Reshape(posOH, 1, cx, 1, 1)
	keep := graph.Sub(graph.OnesLike(sel), sel)
	slots := graph.Iota(g, shapes.Make(dtypes.Int32, cx), 0)
	mask := graph.Reshape(graph.ConvertDType(graph.LessOrEqual(slots, graph.BroadcastToDims(pos, cx)), dtypes.Float32), 1, 1, 1, cx)
	cache = toDType(cache, dt)
	root := ctx.InAbsPath(Scope)
	parts := make([]*graph.Node, 0, 2*a.Layers)
	for l := range a.Layers {
		c := root.In(fmt.Sprintf("block_%d", l))
		w := a.attnWeights(c.In("attention"), g, dt)
		y := a.norm(c.In("norm_1"), x)
		q := graph.Reshape(graph.Dot(y, w.wq), b, 1, h, dh)
		k := graph.Reshape(graph.Dot(y, w.wk), b, 1, h, dh)
		v := graph.Reshape(graph.Dot(y, w.wv), b, 1, h, dh)
		kc := graph.Reshape(graph.Slice(cache, graph.AxisElem(l), graph.AxisElem(0)), b, cx, h, dh)
		vc := graph.Reshape(graph.Slice(cache, graph.AxisElem(l), graph.AxisElem(1)), b, cx, h, dh)
		kc = graph.Add(graph.Mul(kc, keep), graph.Mul(k, sel))
		vc = graph.Add(graph.Mul(vc, keep), graph.Mul(v, sel))
		parts = append(parts, kc, vc)
		att := graph.Reshape(attend(a.Attention, q, kc, vc, mask), b, a.Width)
		x = graph.Add(x, graph.Dot(att, w.wo))
		x = graph.Add(x, a.ffn(c.In("ffn"), a.norm(c.In("norm_2"), x), dt))
	}
	x = a.norm(root.In("norm_final"), x)
	logits = graph.DotGeneral(x, []int{1}, nil, tok, []int{1}, nil)
	newCache = graph.Reshape(graph.Stack(parts, 0), a.Layers, 2, b, cx, h, dh)
	return logits, newCache
}
