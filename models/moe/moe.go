// Package moe is a mixture-of-experts classifier for gotrain: a gate (linear
// or a small MLP) routes each example to its top-k experts (MLPs), with a
// capacity limit per expert and the Switch Transformer's load-balancing
// loss, trained with the harness of package train. Experts can be grown
// during training (Model.Grow) by splitting the most loaded one without
// changing the model's predictions, and placed on devices (Placement,
// Model.VariableSharding). docs/MOE.md describes the model and the
// `gotrain moe train` command.
//
// Experts are stored as slots: every expert variable has a leading axis of
// Config.MaxExperts, and a non-trainable "active" vector tells which slots
// are in use. Growing an expert activates a free slot, so variable shapes
// never change and neither the compiled graphs nor the optimizer state have
// to be rebuilt.
package moe

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	gtrain "github.com/gomlx/gomlx/pkg/ml/train"

	"github.com/gotrain/gotrain/train"
)

// Scope is the context scope of the model's variables.
const Scope = "moe"

// Variable names, in Scope. Expert layer l has ExpertWeights+l ([slots,
// in, out]) and ExpertBiases+l ([slots, out]).
const (
	VarActive     = "active"         // [slots] 1 for an expert in use, 0 for a free slot
	VarLoad       = "load"           // [slots] share of the last batch's routing assignments
	VarDropped    = "dropped"        // scalar: assignments dropped by the capacity limit in the last batch
	VarAssigned   = "assigned"       // scalar: routing assignments in the last batch
	VarGateW      = "gate_w"         // [gate inputs, slots]
	VarGateB      = "gate_b"         // [slots]
	VarGateShare  = "gate_log_share" // [slots] non-trainable log-share added to the logits after a split
	VarGateHidW   = "gate_hidden_w"
	VarGateHidB   = "gate_hidden_b"
	ExpertWeights = "expert_w"
	ExpertBiases  = "expert_b"
)

// Config describes the model.
type Config struct {
	// Inputs is the number of input features; Classes the number of classes.
	Inputs, Classes int
	// Experts is the number of experts at the start.
	Experts int
	// MaxExperts is the number of expert slots (>= Experts); growing
	// activates free slots. 0 means Experts.
	MaxExperts int
	// Hidden are the hidden layer sizes of each expert MLP (ReLU), e.g.
	// [256] for Inputs-256-Classes.
	Hidden []int
	// GateHidden is the hidden size of an MLP gate; 0 makes the gate linear.
	GateHidden int
	// TopK is the number of experts each example is routed to (1 or 2).
	TopK int
	// CapacityFactor limits each expert to ceil(CapacityFactor·TopK·batch /
	// active experts) assignments per batch; later ones in the batch are
	// dropped (and counted). 0: no limit; negative is an error.
	CapacityFactor float64
	// Dense runs every expert on every example and masks the outputs
	// (like the PyTorch "dense" baseline) instead of gathering each
	// expert's examples into a buffer of its capacity (sparse dispatch).
	// Without a capacity limit the dispatch is always dense. Both give the
	// same predictions.
	Dense bool
	// BalanceAlpha weighs the load-balancing loss α·E·Σ f_i·P_i (0: off).
	BalanceAlpha float64
	// Devices is the number of devices the expert slots are placed on, in
	// contiguous blocks (see Placement). 0 means 1.
	Devices int
	// ExpertParallel shards the expert variables across the devices
	// (VariableSharding) instead of replicating them.
	ExpertParallel bool
}

// DefaultConfig is the MNIST model of the issue: 8 experts 784-256-10,
// linear gate, top-2, capacity factor 1.25, α = 0.01.
func DefaultConfig() Config {
	return Config{Inputs: 784, Classes: 10, Experts: 8, Hidden: []int{256}, TopK: 2, CapacityFactor: 1.25, BalanceAlpha: 0.01}
}

// ParseHidden parses hidden layer sizes written as text, "256" or
// "512, 256": positive integers separated by commas (empty parts are
// skipped).
func ParseHidden(s string) ([]int, error) {
	var out []int
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("Hidden %q: want positive sizes separated by commas", s)
		}
		out = append(out, n)
	}
	return out, nil
}

func (c Config) slots() int {
	if c.MaxExperts == 0 {
		return c.Experts
	}
	return c.MaxExperts
}

func (c Config) devices() int { return max(c.Devices, 1) }

// Limits of a Config, checked by Validate before anything is sized by it.
const (
	// MaxSlots bounds Experts and MaxExperts.
	MaxSlots = 4096
	// MaxWidth bounds each size in Inputs, Classes, Hidden and GateHidden.
	MaxWidth = 1 << 20
	// MaxParams bounds the model's parameters (the expert slots' weights
	// and the gate's): 2^31, 8 GiB as float32.
	MaxParams = 1 << 31
)

// Params returns the number of parameters of the model c describes: the
// weights and biases of every expert slot and of the gate. It is a float64
// so that sizes far beyond MaxParams do not overflow.
func (c Config) Params() float64 {
	layer := func(in, out int) float64 { return float64(in)*float64(out) + float64(out) }
	var expert float64
	in := c.Inputs
	for _, h := range c.Hidden {
		expert += layer(in, h)
		in = h
	}
	expert += layer(in, c.Classes)
	gate := layer(c.Inputs, c.slots())
	if c.GateHidden > 0 {
		gate = layer(c.Inputs, c.GateHidden) + layer(c.GateHidden, c.slots())
	}
	return float64(c.slots())*expert + gate
}

// Validate reports every invalid field at once, each error naming the
// field and its allowed range.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.Inputs < 1 || c.Classes < 2 || c.Inputs > MaxWidth || c.Classes > MaxWidth {
		bad("moe: %d inputs, %d classes: want 1 to %d inputs and 2 to %d classes", c.Inputs, c.Classes, MaxWidth, MaxWidth)
	}
	if c.Experts < 1 || c.Experts > MaxSlots {
		bad("moe: Experts %d: want 1 to %d", c.Experts, MaxSlots)
	}
	if c.MaxExperts != 0 && (c.MaxExperts < c.Experts || c.MaxExperts > MaxSlots) {
		bad("moe: MaxExperts %d: want Experts (%d) to %d, or 0 (Experts)", c.MaxExperts, c.Experts, MaxSlots)
	}
	if c.TopK < 1 || c.TopK > 2 {
		bad("moe: TopK %d: want 1 or 2", c.TopK)
	} else if c.TopK > c.Experts {
		bad("moe: TopK %d with %d experts: want TopK <= Experts", c.TopK, c.Experts)
	}
	if len(c.Hidden) > 64 {
		bad("moe: Hidden has %d layers: want at most 64", len(c.Hidden))
	}
	for _, h := range c.Hidden {
		if h < 1 || h > MaxWidth {
			bad("moe: Hidden size %d: want 1 to %d", h, MaxWidth)
		}
	}
	if c.GateHidden < 0 || c.GateHidden > MaxWidth {
		bad("moe: GateHidden %d: want 0 (a linear gate) to %d", c.GateHidden, MaxWidth)
	}
	if !(c.CapacityFactor >= 0) || math.IsInf(c.CapacityFactor, 0) {
		bad("moe: CapacityFactor %g: want a finite number >= 0 (0: no limit)", c.CapacityFactor)
	}
	if !(c.BalanceAlpha >= 0) || math.IsInf(c.BalanceAlpha, 0) {
		bad("moe: BalanceAlpha %g: want a finite number >= 0 (0: off)", c.BalanceAlpha)
	}
	if c.Devices < 0 {
		bad("moe: Devices %d: want >= 1 (0: one)", c.Devices)
	}
	if errs == nil && c.Params() > MaxParams {
		bad("moe: %d expert slots of %d-%v-%d and the gate make %.4g parameters: want at most %d (MaxParams)",
			c.slots(), c.Inputs, c.Hidden, c.Classes, c.Params(), int64(MaxParams))
	}
	if c.ExpertParallel && c.slots()%c.devices() != 0 {
		bad("moe: expert parallel: %d expert slots do not divide over %d devices", c.slots(), c.devices())
	}
	return errors.Join(errs...)
}

// Model is a mixture-of-experts classifier. Its graph functions run inside
// the harness; its Go methods read and change the variables of a context
// between steps.
type Model struct {
	cfg  Config
	seed int64
	// ranks > 1: the model trains as one of that many ranks, each on an
	// equal share of the global batch, and its training graph takes the
	// routing of the whole batch as a second input (see acrossRanks).
	ranks int
}

// New returns a Model with cfg, whose weights are initialised from seed.
func New(cfg Config, seed int64) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.Hidden = append([]int(nil), cfg.Hidden...)
	cfg.MaxExperts = cfg.slots()
	cfg.Devices = cfg.devices()
	return &Model{cfg: cfg, seed: seed}, nil
}

// Config returns the model's configuration.
func (m *Model) Config() Config { return m.cfg }

// layerSizes are the sizes of the expert MLP, input to output.
func (m *Model) layerSizes() []int {
	s := append([]int{m.cfg.Inputs}, m.cfg.Hidden...)
	return append(s, m.cfg.Classes)
}

// ModelFn is the training graph for train.New: it returns the logits
// [batch, classes] of inputs[0] [batch, Inputs], adds the load-balancing
// loss with GoMLX's train.AddLoss and records the routing statistics (VarLoad,
// VarDropped, VarAssigned) in the context.
func (m *Model) ModelFn() train.ModelFn {
	return func(ctx *context.Context, _ any, inputs []*graph.Node) []*graph.Node {
		var across []*graph.Node
		if len(inputs) > 1 {
			across = inputs[1:]
		}
		return []*graph.Node{m.forwardAcross(ctx, inputs[0], true, across)}
	}
}

// Loss is the classification loss for train.New: softmax cross-entropy of
// the logits against labels [batch, 1] holding class indices (as floats).
func Loss(labels, predictions []*graph.Node) *graph.Node {
	y := graph.ConvertDType(labels[0], dtypes.Int32)
	return graph.ReduceAllMean(lossesSparseCE(y, predictions[0]))
}

// Accuracy is the share of a batch whose largest logit (predictions[0]
// [batch, classes]) is at its label (labels[0] [batch, 1], class indices
// as floats): the step metric "accuracy" Train logs with the loss.
func Accuracy(labels, predictions []*graph.Node) *graph.Node {
	logits := predictions[0]
	pred := graph.ArgMax(logits, -1, dtypes.Int32)
	y := graph.ConvertDType(graph.Reshape(labels[0], logits.Shape().Dimensions[0]), dtypes.Int32)
	return graph.ReduceAllMean(graph.ConvertDType(graph.Equal(pred, y), dtypes.Float32))
}

// lossesSparseCE is the per-example cross-entropy of logits against class
// indices y [batch, 1].
func lossesSparseCE(y, logits *graph.Node) *graph.Node {
	logp := graph.LogSoftmax(logits, -1)
	oh := graph.OneHot(graph.Reshape(y, y.Shape().Dimensions[0]), logits.Shape().Dimensions[1], logp.DType())
	return graph.Neg(graph.ReduceSum(graph.Mul(oh, logp), -1))
}

// rngFor is a deterministic generator per variable name.
func (m *Model) rngFor(name string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	return rand.New(rand.NewPCG(uint64(m.seed), h.Sum64()))
}

// uniform returns n values uniform in [-limit, limit].
func uniform(r *rand.Rand, n int, limit float64) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32((2*r.Float64() - 1) * limit)
	}
	return out
}

// variable returns ctx's variable name, creating it with init's value when
// it does not exist yet.
func variable(ctx *context.Context, name string, trainable bool, init func() *tensors.Tensor) *context.Variable {
	if v := ctx.GetVariable(name); v != nil {
		return v
	}
	return ctx.VariableWithValue(name, init()).SetTrainable(trainable)
}

// weight returns a trainable [dims...] variable, uniform in ±limit.
func (m *Model) weight(ctx *context.Context, name string, limit float64, dims ...int) *context.Variable {
	return variable(ctx, name, true, func() *tensors.Tensor {
		n := 1
		for _, d := range dims {
			n *= d
		}
		return tensors.FromFlatDataAndDimensions(uniform(m.rngFor(name), n, limit), dims...)
	})
}

// zeros returns a [dims...] variable initialised to zero.
func zeros(ctx *context.Context, name string, trainable bool, dims ...int) *context.Variable {
	return variable(ctx, name, trainable, func() *tensors.Tensor {
		n := 1
		for _, d := range dims {
			n *= d
		}
		if len(dims) == 0 {
			return tensors.FromScalar(float32(0))
		}
		return tensors.FromFlatDataAndDimensions(make([]float32, n), dims...)
	})
}

// activeVar is the slot mask, the first Config.Experts slots active.
func (m *Model) activeVar(ctx *context.Context) *context.Variable {
	return variable(ctx, VarActive, false, func() *tensors.Tensor {
		a := make([]float32, m.cfg.MaxExperts)
		for i := range m.cfg.Experts {
			a[i] = 1
		}
		return tensors.FromFlatDataAndDimensions(a, m.cfg.MaxExperts)
	})
}

// gateLogits is the gate's output [batch, slots] for x (in float32).
func (m *Model) gateLogits(ctx *context.Context, x *graph.Node) *graph.Node {
	dt := x.DType()
	h, in := x, m.cfg.Inputs
	if m.cfg.GateHidden > 0 {
		w := m.weight(ctx, VarGateHidW, math.Sqrt(6/float64(in)), in, m.cfg.GateHidden).ValueGraph(x.Graph())
		b := zeros(ctx, VarGateHidB, true, m.cfg.GateHidden).ValueGraph(x.Graph())
		h = addBias(graph.Dot(h, graph.ConvertDType(w, dt)), graph.ConvertDType(b, dt))
		h = graph.Max(h, graph.ScalarZero(h.Graph(), dt))
		in = m.cfg.GateHidden
	}
	w := m.weight(ctx, VarGateW, 1/math.Sqrt(float64(in)), in, m.cfg.MaxExperts).ValueGraph(x.Graph())
	b := zeros(ctx, VarGateB, true, m.cfg.MaxExperts).ValueGraph(x.Graph())
	z := graph.Dot(h, graph.ConvertDType(w, dt))
	z = graph.ConvertDType(z, dtypes.Float32)
	return addBias(z, b)
}

// addBias adds b [n] to every row of x [rows, n].
func addBias(x, b *graph.Node) *graph.Node {
	return graph.Add(x, graph.BroadcastToShape(graph.ExpandAxes(b, 0), x.Shape()))
}

// experts runs every expert slot on x and returns their logits [slots,
// rows, Classes]: on all of x [rows, Inputs] (dense dispatch) or on each
// slot's own rows of x [slots, rows, Inputs] (sparse dispatch).
func (m *Model) experts(ctx *context.Context, x *graph.Node) *graph.Node {
	g, dt := x.Graph(), x.DType()
	sizes := m.layerSizes()
	S, B := m.cfg.MaxExperts, x.Shape().Dimensions[x.Rank()-2]
	var h *graph.Node
	for l := 0; l+1 < len(sizes); l++ {
		in, out := sizes[l], sizes[l+1]
		limit := math.Sqrt(6 / float64(in)) // He uniform for ReLU layers
		if l+2 == len(sizes) {
			limit = 1 / math.Sqrt(float64(in))
		}
		w := graph.ConvertDType(m.weight(ctx, fmt.Sprintf("%s%d", ExpertWeights, l), limit, S, in, out).ValueGraph(g), dt)
		b := graph.ConvertDType(zeros(ctx, fmt.Sprintf("%s%d", ExpertBiases, l), true, S, out).ValueGraph(g), dt)
		if l == 0 && x.Rank() == 3 {
			h = x
		}
		if l == 0 && x.Rank() == 2 {
			// [B, in] x [S, in, out] -> [B, S, out] -> [S, B, out]
			h = graph.TransposeAllAxes(graph.DotGeneral(x, []int{1}, nil, w, []int{1}, nil), 1, 0, 2)
		} else {
			// [S, B, in] x [S, in, out] -> [S, B, out]
			h = graph.DotGeneral(h, []int{2}, []int{0}, w, []int{1}, []int{0})
		}
		h = graph.Add(h, graph.BroadcastToShape(graph.Reshape(b, S, 1, out), shapes.Make(dt, S, B, out)))
		if l+2 < len(sizes) {
			h = graph.Max(h, graph.ScalarZero(g, dt))
		}
	}
	return h
}

// forward builds the model's logits [batch, Classes] for x. When training
// it adds the balancing loss and records the routing statistics.
//
// The capacity limit applies in training only: evaluation routes every
// example to its top-k experts (dense dispatch), so that a test
// prediction does not depend on the other examples of its batch.
func (m *Model) forward(ctx *context.Context, x *graph.Node, training bool) *graph.Node {
	return m.forwardAcross(ctx, x, training, nil)
}

// forwardAcross is forward for one rank's share of a global batch when
// across, the whole batch's routing (acrossRanks), is given.
func (m *Model) forwardAcross(ctx *context.Context, x *graph.Node, training bool, across []*graph.Node) *graph.Node {
	cf := m.cfg.CapacityFactor
	if !training {
		cf, across = 0, nil
	}
	return m.logitsAcross(ctx, x, cf, training, across)
}

// logits builds the logits with capacity factor cf (0: no limit, dense
// dispatch); with training it also adds the balancing loss and records the
// routing statistics.
func (m *Model) logits(ctx *context.Context, x *graph.Node, cf float64, training bool) *graph.Node {
	return m.logitsAcross(ctx, x, cf, training, nil)
}

// logitsAcross is logits with the whole batch's routing across ranks
// (acrossRanks; nil in one process).
func (m *Model) logitsAcross(ctx *context.Context, x *graph.Node, cf float64, training bool, across []*graph.Node) *graph.Node {
	ctx = ctx.In(Scope)
	g, dt := x.Graph(), x.DType()
	active := m.activeVar(ctx).ValueGraph(g)
	share := zeros(ctx, VarGateShare, false, m.cfg.MaxExperts).ValueGraph(g)
	var ar *rankRouting
	if across != nil {
		ar = m.splitAcross(across, x.Shape().Dimensions[0])
	}
	r := routeAcross(m.gateLogits(ctx, x), share, active, m.cfg.TopK, cf, ar)
	var out *graph.Node
	if m.cfg.Dense || cf <= 0 {
		y := m.experts(ctx, x)
		// out[b, o] = Σ_s w[b, s] · y[s, b, o]
		out = graph.DotGeneral(graph.ConvertDType(r.weights, dt), []int{1}, []int{0}, y, []int{0}, []int{1})
	} else {
		out = m.sparse(ctx, x, r)
	}
	if training {
		if m.cfg.BalanceAlpha > 0 {
			gtrain.AddLoss(ctx, balanceLossAcross(r.probs, r.sel, active, m.cfg.BalanceAlpha, ar))
		}
		assigned := graph.ReduceAllSum(r.sel)
		zeros(ctx, VarLoad, false, m.cfg.MaxExperts).SetValueGraph(graph.Div(graph.ReduceSum(r.sel, 0), assigned))
		zeros(ctx, VarAssigned, false).SetValueGraph(assigned)
		zeros(ctx, VarDropped, false).SetValueGraph(graph.Sub(assigned, graph.ReduceAllSum(r.keep)))
	}
	return out
}

// bufferSize is the number of rows each expert's buffer holds in sparse
// dispatch: the capacity with the initial experts, which bounds the
// capacity later on (experts are only added).
func (m *Model) bufferSize(batch int) int {
	// Across ranks the capacity is that of the global batch, which one
	// rank's share may fill alone.
	c := int(math.Ceil(m.cfg.CapacityFactor * float64(m.cfg.TopK*batch*max(m.ranks, 1)) / float64(m.cfg.Experts)))
	return max(min(c, batch), 1)
}

// sparse runs each expert only on its kept examples: a one-hot dispatch
// tensor D[b, s, c] (example b is row c of slot s's buffer) gathers the
// rows of x into [slots, C, Inputs] buffers and combines the experts'
// weighted outputs back with a matrix product.
func (m *Model) sparse(ctx *context.Context, x *graph.Node, r routing) *graph.Node {
	g, dt := x.Graph(), x.DType()
	B, S := x.Shape().Dimensions[0], m.cfg.MaxExperts
	C := m.bufferSize(B)
	bsc := shapes.Make(dtypes.Float32, B, S, C)
	pos := graph.BroadcastToShape(graph.ExpandAxes(r.pos, -1), bsc)
	keep := graph.BroadcastToShape(graph.ExpandAxes(r.keep, -1), bsc)
	D := graph.Mul(graph.ConvertDType(graph.Equal(pos, graph.Iota(g, bsc, 2)), dtypes.Float32), keep)
	D = graph.StopGradient(D)
	// tok[s, c] = Σ_b b·D[b, s, c]: the example in row c of slot s (0 for an empty row, whose weight is 0).
	tok := graph.DotGeneral(D, []int{0}, nil, graph.Iota(g, shapes.Make(dtypes.Float32, B), 0), []int{0}, nil)
	xs := graph.Gather(x, graph.ExpandAxes(graph.ConvertDType(tok, dtypes.Int32), -1)) // [S, C, Inputs]
	ys := m.experts(ctx, xs)                                                           // [S, C, Classes]
	// wsc[s, c] = Σ_b D[b, s, c]·w[b, s]
	wsc := graph.DotGeneral(D, []int{0}, []int{1}, r.weights, []int{0}, []int{1}) // [S, C]
	ys = graph.Mul(ys, graph.BroadcastToShape(graph.ExpandAxes(graph.ConvertDType(wsc, dt), -1), ys.Shape()))
	// out[b, o] = Σ_{s,c} D[b, s, c]·ys[s, c, o]
	return graph.DotGeneral(graph.ConvertDType(D, dt), []int{1, 2}, nil, ys, []int{0, 1}, nil)
}

// routing is the gate's decision for a batch, all [batch, slots] float32.
type routing struct {
	probs   *graph.Node // softmax of the gate logits over the active slots
	sel     *graph.Node // 1 where the example is routed to the slot (top-k)
	keep    *graph.Node // sel, less the assignments over capacity
	pos     *graph.Node // position of each assignment in its slot's buffer (batch order)
	weights *graph.Node // combine weights: renormalised top-k probabilities, 0 where dropped
}

// maskedLogitOffset is added to the logits of free slots.
const maskedLogitOffset = 1e9

// route computes the routing of gate logits z [batch, slots] over the
// active slots. The experts are selected by z, and weighted by the softmax
// of z + logShare [slots]: logShare is 0 except after splits, where the two
// halves of an expert get its logit and half its probability each.
func route(z, logShare, active *graph.Node, k int, capacityFactor float64) routing {
	return routeAcross(z, logShare, active, k, capacityFactor, nil)
}

// maskInactive is z with the free slots' logits pushed far below.
func maskInactive(z, active *graph.Node) *graph.Node {
	act := graph.BroadcastToShape(graph.ExpandAxes(active, 0), z.Shape())
	return graph.Add(z, graph.MulScalar(graph.AddScalar(act, -1), maskedLogitOffset))
}

// routeAcross is route for one rank's share of a global batch when ar is
// given: positions continue after the assignments of the lower ranks, and
// the capacity is the global batch's, so that exactly the assignments one
// process would keep are kept.
func routeAcross(z, logShare, active *graph.Node, k int, capacityFactor float64, ar *rankRouting) routing {
	zm := maskInactive(z, active)
	var r routing
	r.probs = graph.Softmax(addBias(zm, logShare), -1)
	if ar != nil {
		r.sel = ar.sel // the selection the counts were taken from
	} else {
		r.sel = topKMask(graph.StopGradient(zm), k)
	}
	r.keep = r.sel
	r.pos = positions(r.sel)
	// pos numbers the rows of this rank's buffers; the capacity counts
	// the assignments of the whole batch before each one.
	B, global := z.Shape().Dimensions[0], r.pos
	if ar != nil {
		global = graph.Add(r.pos, graph.BroadcastToShape(graph.ExpandAxes(ar.before, 0), r.pos.Shape()))
		B = ar.batch
	}
	if capacityFactor > 0 {
		total := graph.Scalar(z.Graph(), dtypes.Float32, capacityFactor*float64(k*B))
		capacity := graph.Ceil(graph.Div(total, graph.ReduceAllSum(active)))
		r.keep = capacityMask(r.sel, global, capacity)
	}
	r.weights = graph.Mul(routeWeights(r.probs, r.sel, k), r.keep)
	return r
}

// topKMask selects, in each row of z [batch, slots], the k largest values
// by repeated max + masking (GoMLX has no TopK). Values exactly equal to a
// round's maximum are selected together and count as one of the k: two
// slots with identical gate rows (the halves of a split expert) then share
// their parent's place, which keeps predictions unchanged at a split.
func topKMask(z *graph.Node, k int) *graph.Node {
	g := z.Graph()
	sel := graph.ZerosLike(z)
	avail := graph.OnesLike(z)
	lowest := graph.Scalar(g, z.DType(), -math.MaxFloat32)
	for range k {
		zr := graph.Where(graph.GreaterThan(avail, graph.ZerosLike(avail)), z, lowest)
		mx := graph.BroadcastToShape(graph.ReduceAndKeep(zr, graph.ReduceMax, -1), z.Shape())
		hit := graph.Mul(graph.ConvertDType(graph.Equal(zr, mx), z.DType()), avail)
		sel = graph.Add(sel, hit)
		avail = graph.Sub(avail, hit)
	}
	return sel
}

// routeWeights are the combine weights of the selected slots: their
// probabilities renormalised to sum to 1 for k >= 2. For k = 1 the
// probability itself is used (as in the Switch Transformer): renormalising
// one value gives 1, and the gate would then learn only from the balancing
// loss.
func routeWeights(probs, sel *graph.Node, k int) *graph.Node {
	w := graph.Mul(probs, sel)
	if k == 1 {
		return w
	}
	sum := graph.BroadcastToShape(graph.ReduceAndKeep(w, graph.ReduceSum, -1), w.Shape())
	return graph.Div(w, sum)
}

// positions numbers the assignments of sel [batch, slots] per slot in
// batch order: pos[b, s] = Σ_{b' < b} sel[b', s].
func positions(sel *graph.Node) *graph.Node {
	g := sel.Graph()
	B := sel.Shape().Dimensions[0]
	sq := shapes.Make(sel.DType(), B, B)
	before := graph.ConvertDType(graph.GreaterThan(graph.Iota(g, sq, 0), graph.Iota(g, sq, 1)), sel.DType())
	return graph.Dot(before, sel)
}

// capacityMask keeps, per slot, the first capacity assignments of sel
// [batch, slots] in batch order (pos: see positions) and drops the rest.
func capacityMask(sel, pos, capacity *graph.Node) *graph.Node {
	within := graph.ConvertDType(graph.LessThan(pos, graph.BroadcastToShape(capacity, pos.Shape())), sel.DType())
	return graph.Mul(sel, within)
}

// balanceLoss is the Switch Transformer's load-balancing loss α·E·Σ_i
// f_i·P_i, where E is the number of active experts, f_i the share of the
// batch's routing assignments that go to expert i and P_i the mean gate
// probability of expert i. It is α when routing is uniform.
func balanceLoss(probs, sel, active *graph.Node, alpha float64) *graph.Node {
	return balanceLossAcross(probs, sel, active, alpha, nil)
}

// balanceLossAcross is balanceLoss on one rank's share of a global batch
// when ar is given: f_i is the whole batch's share, P_i this rank's mean,
// so that the ranks' mean loss and its gradients are one process's.
func balanceLossAcross(probs, sel, active *graph.Node, alpha float64, ar *rankRouting) *graph.Node {
	counts := graph.ReduceSum(sel, 0)
	if ar != nil {
		counts = ar.total
	}
	f := graph.StopGradient(graph.Div(counts, graph.ReduceAllSum(counts)))
	p := graph.ReduceMean(probs, 0)
	e := graph.ReduceAllSum(active)
	return graph.MulScalar(graph.Mul(e, graph.ReduceAllSum(graph.Mul(f, p))), alpha)
}

// rankRouting is the routing of a whole global batch, as one rank's
// training graph sees it: before[s], the assignments to slot s on the
// lower ranks; total[s], those on every rank (float32 [slots]); batch, the
// global batch's size.
type rankRouting struct {
	before, total, sel *graph.Node
	batch              int
}

// splitAcross reads the extra inputs of the training graph across ranks
// (acrossRanks computes them): int32 [2·slots], the assignments to each
// slot on the lower ranks, then on all ranks; and int32 [batch, slots],
// this rank's selection they were counted from, which the graph uses as
// it is rather than selecting again (two graphs could break a near-tie
// differently). local is this rank's batch.
func (m *Model) splitAcross(across []*graph.Node, local int) *rankRouting {
	S := m.cfg.MaxExperts
	a := graph.ConvertDType(across[0], dtypes.Float32)
	return &rankRouting{before: graph.Slice(a, graph.AxisRange(0, S)), total: graph.Slice(a, graph.AxisRange(S, 2*S)),
		sel: graph.ConvertDType(across[1], dtypes.Float32), batch: local * max(m.ranks, 1)}
}

// slotSelection is the gate's top-k selection of the batch x, int32
// [batch, slots], and the number of assignments to each slot, int32
// [slots], for acrossRanks.
func (m *Model) slotSelection(ctx *context.Context, x *graph.Node) (sel, counts *graph.Node) {
	ctx = ctx.In(Scope)
	active := m.activeVar(ctx).ValueGraph(x.Graph())
	s := topKMask(maskInactive(m.gateLogits(ctx, x), active), m.cfg.TopK)
	return graph.ConvertDType(s, dtypes.Int32), graph.ConvertDType(graph.ReduceSum(s, 0), dtypes.Int32)
}
