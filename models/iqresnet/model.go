package iqresnet

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
// architecture and the class names, saved with the weights in checkpoints.
const (
	Scope     = "/iqresnet"
	MetaScope = "/iqresnet_meta"
)

// SELU's constants (Klambauer et al. 2017).
const (
	SeluAlpha = 1.6732632423543772
	SeluScale = 1.0507009873554805
)

// Arch is the architecture of a network.
type Arch struct {
	// Window is the number of complex samples the network reads (its
	// input is Window × 2: I and Q as two channels).
	Window int `json:"window"`
	// Classes is the number of classes (the width of the logits).
	Classes int `json:"classes"`
	// Stacks is the number of residual stacks, each halving the length.
	Stacks int `json:"stacks"`
	// Filters is the number of filters of every convolution.
	Filters int `json:"filters"`
	// Kernel is the length of the residual units' convolutions (odd).
	Kernel int `json:"kernel"`
	// Dense is the width of the two SELU dense layers.
	Dense int `json:"dense"`
	// Dropout is the alpha-dropout rate after the first dense layer
	// (0: none).
	Dropout float64 `json:"dropout"`
}

// DefaultArch returns O'Shea, Roy and Clancy's ResNet (2018) for windows
// of 1024 samples and classes classes: six residual stacks of 32 filters,
// kernels of 3, two dense layers of 128 and alpha dropout 0.3.
func DefaultArch(classes int) Arch {
	return Arch{Window: 1024, Classes: classes, Stacks: 6, Filters: 32, Kernel: 3, Dense: 128, Dropout: 0.3}
}

// MaxParams bounds an architecture's parameters (Arch.Validate).
const MaxParams = 1 << 28

// Params returns the number of trainable parameters.
func (a Arch) Params() float64 {
	f, k := float64(a.Filters), float64(a.Kernel)
	n := 0.0
	in := 2.0
	for range a.Stacks {
		n += in*f + f        // 1x1 convolution
		n += 4 * (k*f*f + f) // two residual units of two convolutions
		in = f
	}
	flat := float64(a.flatLength()) * f
	d := float64(a.Dense)
	return n + flat*d + d + d*d + d + d*float64(a.Classes) + float64(a.Classes)
}

// flatLength is the length left after the stacks' poolings.
func (a Arch) flatLength() int {
	if a.Stacks < 0 || a.Stacks > 30 {
		return 0
	}
	return a.Window >> a.Stacks
}

// Validate reports an invalid architecture, naming the field.
func (a Arch) Validate() error {
	switch {
	case a.Window < 2 || a.Window > 1<<20:
		return fmt.Errorf("iqresnet: Window %d: want 2 to %d samples", a.Window, 1<<20)
	case a.Classes < 2:
		return fmt.Errorf("iqresnet: Classes %d: want at least 2", a.Classes)
	case a.Stacks < 1 || a.Stacks > 20:
		return fmt.Errorf("iqresnet: Stacks %d: want 1 to 20", a.Stacks)
	case a.Window%(1<<a.Stacks) != 0:
		return fmt.Errorf("iqresnet: Window %d: the %d stacks halve it %d times, so it must be a multiple of %d", a.Window, a.Stacks, a.Stacks, 1<<a.Stacks)
	case a.Filters < 1 || a.Dense < 1:
		return fmt.Errorf("iqresnet: Filters %d, Dense %d: want both >= 1", a.Filters, a.Dense)
	case a.Kernel < 1 || a.Kernel%2 == 0 || a.Kernel > 31:
		return fmt.Errorf("iqresnet: Kernel %d: want an odd length from 1 to 31", a.Kernel)
	case !(a.Dropout >= 0 && a.Dropout < 1):
		return fmt.Errorf("iqresnet: Dropout %v: want 0 <= Dropout < 1", a.Dropout)
	}
	if p := a.Params(); p > MaxParams {
		return fmt.Errorf("iqresnet: the architecture has %.4g parameters: want at most %d (MaxParams)", p, MaxParams)
	}
	return nil
}

// residualStd is the initial standard deviation of the second convolution
// of every residual unit: LeCun's sqrt(1/fan-in) divided by the square
// root of the number of residual units (Fixup's scaling for branches of
// two layers), so that the sum of 2·Stacks branches starts at the scale
// of its input and the first loss near ln(Classes).
func (a Arch) residualStd() float64 {
	return math.Sqrt(1/float64(a.Kernel*a.Filters)) / math.Sqrt(float64(2*a.Stacks))
}

// ModelFn is the training graph for train.New: the logits [batch, Classes]
// of inputs[0], windows [batch, 2·Window] (I and Q interleaved).
func (a Arch) ModelFn() train.ModelFn {
	return func(ctx *context.Context, _ any, inputs []*graph.Node) []*graph.Node {
		return []*graph.Node{a.Logits(ctx, inputs[0])}
	}
}

// Loss is the classification loss for train.New: the mean softmax
// cross-entropy of the logits against labels [batch, 1] holding class
// indices (as floats).
func Loss(labels, predictions []*graph.Node) *graph.Node {
	logits := predictions[0]
	y := graph.ConvertDType(labels[0], dtypes.Int32)
	logp := graph.LogSoftmax(graph.ConvertDType(logits, dtypes.Float32), -1)
	oh := graph.OneHot(graph.Reshape(y, y.Shape().Dimensions[0]), logits.Shape().Dimensions[1], logp.DType())
	return graph.ReduceAllMean(graph.Neg(graph.ReduceSum(graph.Mul(oh, logp), -1)))
}

// Logits returns the network's logits [batch, Classes] for x [batch,
// 2·Window] (I and Q interleaved), in float32. Alpha dropout is applied
// when ctx is training on x's graph.
func (a Arch) Logits(ctx *context.Context, x *graph.Node) *graph.Node {
	g := x.Graph()
	dt := train.ComputeDType(ctx)
	root := ctx.InAbsPath(Scope)
	batch := x.Shape().Dimensions[0]
	h := graph.Reshape(graph.ConvertDType(x, dt), batch, a.Window, 2)
	for s := range a.Stacks {
		c := root.In(fmt.Sprintf("stack_%d", s))
		h = a.pointwise(c.In("conv1x1"), h, a.Filters)
		for u := range 2 {
			uc := c.In(fmt.Sprintf("unit_%d", u))
			r := graph.Max(a.conv(uc.In("conv_0"), h, math.Sqrt(2/float64(a.Kernel*a.Filters))), graph.ScalarZero(g, dt))
			r = a.conv(uc.In("conv_1"), r, a.residualStd())
			h = graph.Add(h, r)
		}
		h = maxPool2(h)
	}
	h = graph.Reshape(h, batch, h.Shape().Dimensions[1]*a.Filters)
	h = selu(a.dense(root.In("dense_0"), h, a.Dense))
	if a.Dropout > 0 && ctx.IsTraining(g) {
		h = alphaDropout(ctx, h, a.Dropout)
	}
	h = selu(a.dense(root.In("dense_1"), h, a.Dense))
	out := a.dense(root.In("output"), h, a.Classes)
	return graph.ConvertDType(out, dtypes.Float32)
}

// weight returns the float32 variable name of c, created with a normal
// initialiser of standard deviation std, converted to dt.
func weight(c *context.Context, g *graph.Graph, name string, std float64, dt dtypes.DType, dims ...int) *graph.Node {
	w := c.WithInitializer(initializers.RandomNormalFn(c, std)).
		VariableWithShape(name, shapes.Make(dtypes.Float32, dims...)).ValueGraph(g)
	return graph.ConvertDType(w, dt)
}

// bias returns the zero-initialised float32 bias name of c, converted to dt.
func bias(c *context.Context, g *graph.Graph, dt dtypes.DType, n int) *graph.Node {
	b := c.WithInitializer(initializers.Zero).VariableWithShape("bias", shapes.Make(dtypes.Float32, n)).ValueGraph(g)
	return graph.ConvertDType(b, dt)
}

// pointwise is a 1x1 convolution (linear) of h [batch, length, in] to out
// channels.
func (a Arch) pointwise(c *context.Context, h *graph.Node, out int) *graph.Node {
	in := h.Shape().Dimensions[2]
	w := weight(c, h.Graph(), "weights", math.Sqrt(1/float64(in)), h.DType(), in, out)
	return addBias(matmulLast(h, w), bias(c, h.Graph(), h.DType(), out))
}

// conv is a "same" convolution of kernel a.Kernel (linear) of h [batch,
// length, channels] to a.Filters channels, written as one SGEMM: the
// product of h's columns (im2col) with the weights [Kernel·channels,
// Filters]. The columns of sample t are h[t−Kernel/2 … t+Kernel/2] (zero
// outside the window), concatenated on the channel axis: one GatherSlices
// of Kernel consecutive rows of h padded with Kernel/2 zero rows at each
// end of every window, whose gradient (a ScatterSum of the columns'
// gradient) needs neither Pad nor Reverse, which the pure-Go backends lack.
func (a Arch) conv(c *context.Context, h *graph.Node, std float64) *graph.Node {
	in := h.Shape().Dimensions[2]
	cols := im2col(h, a.Kernel)
	w := weight(c, h.Graph(), "weights", std, h.DType(), a.Kernel*in, a.Filters)
	return addBias(matmulLast(cols, w), bias(c, h.Graph(), h.DType(), a.Filters))
}

// im2col returns the columns of h [batch, length, channels] for a "same"
// convolution of odd length kernel: out[b, t, k·channels + j] =
// h[b, t+k−kernel/2, j], zero where t+k−kernel/2 is outside [0, length).
func im2col(h *graph.Node, kernel int) *graph.Node {
	if kernel == 1 {
		return h
	}
	g := h.Graph()
	d := h.Shape().Dimensions
	batch, n, ch := d[0], d[1], d[2]
	half := kernel / 2
	zeros := graph.Zeros(g, shapes.Make(h.DType(), batch, half, ch))
	padded := n + 2*half
	p := graph.Reshape(graph.Concatenate([]*graph.Node{zeros, h, zeros}, 1), batch*padded, ch)
	starts := make([]int32, batch*n)
	for b := range batch {
		for t := range n {
			starts[b*n+t] = int32(b*padded + t)
		}
	}
	idx := graph.Reshape(graph.Const(g, starts), batch*n, 1)
	cols := graph.GatherSlices(p, []int{0}, idx, []int{kernel}, true)
	return graph.Reshape(cols, batch, n, kernel*ch)
}

// dense is x [batch, in] times weights [in, out] plus a bias, initialised
// for SELU (LeCun normal).
func (a Arch) dense(c *context.Context, x *graph.Node, out int) *graph.Node {
	in := x.Shape().Dimensions[1]
	w := weight(c, x.Graph(), "weights", math.Sqrt(1/float64(in)), x.DType(), in, out)
	y := graph.DotGeneral(x, []int{1}, nil, w, []int{0}, nil)
	return addBias(y, bias(c, x.Graph(), x.DType(), out))
}

// matmulLast multiplies the last axis of h [batch, length, in] by w [in,
// out].
func matmulLast(h, w *graph.Node) *graph.Node {
	d := h.Shape().Dimensions
	flat := graph.Reshape(h, d[0]*d[1], d[2])
	y := graph.DotGeneral(flat, []int{1}, nil, w, []int{0}, nil)
	return graph.Reshape(y, d[0], d[1], w.Shape().Dimensions[1])
}

// addBias adds b [n] along the last axis of x.
func addBias(x, b *graph.Node) *graph.Node {
	dims := make([]int, x.Rank())
	for i := range dims {
		dims[i] = 1
	}
	dims[len(dims)-1] = b.Shape().Dimensions[0]
	return graph.Add(x, graph.BroadcastToShape(graph.Reshape(b, dims...), x.Shape()))
}

// maxPool2 halves the length of h [batch, length, channels], keeping the
// larger of each pair of samples.
func maxPool2(h *graph.Node) *graph.Node {
	d := h.Shape().Dimensions
	return graph.ReduceMax(graph.Reshape(h, d[0], d[1]/2, 2, d[2]), 2)
}

// selu is the scaled exponential linear unit.
func selu(x *graph.Node) *graph.Node {
	g, dt := x.Graph(), x.DType()
	neg := graph.MulScalar(graph.Sub(graph.Exp(graph.Min(x, graph.ScalarZero(g, dt))), graph.ScalarOne(g, dt)), SeluAlpha)
	return graph.MulScalar(graph.Where(graph.GreaterThan(x, graph.ScalarZero(g, dt)), x, neg), SeluScale)
}

// alphaDropout is Klambauer et al.'s dropout for SELU networks: each value
// is set, with probability rate, to SELU's negative saturation −λα, and
// the result is scaled and shifted back to the mean and variance of its
// input.
func alphaDropout(ctx *context.Context, x *graph.Node, rate float64) *graph.Node {
	g, dt := x.Graph(), x.DType()
	sat := -SeluScale * SeluAlpha
	q := 1 - rate
	scale := 1 / math.Sqrt(q*(1+rate*sat*sat))
	offset := -scale * sat * rate
	keep := graph.LessThan(ctx.RandomUniform(g, shapes.Make(dtypes.Float32, x.Shape().Dimensions...)), graph.Scalar(g, dtypes.Float32, q))
	y := graph.Where(keep, x, graph.BroadcastToShape(graph.Scalar(g, dt, sat), x.Shape()))
	return graph.AddScalar(graph.MulScalar(y, scale), offset)
}
