package train

import (
	"fmt"
	"math"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/ml/context"
	gtrain "github.com/gomlx/gomlx/pkg/ml/train"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"
)

// HarnessScope is the context scope of the harness's own variables.
const HarnessScope = "/train_harness"

// Names of the harness variables in HarnessScope.
const (
	// GradNormVar holds the global gradient norm of the last optimizer step, before clipping.
	GradNormVar = "grad_norm"
	// ClippedGradNormVar holds the global gradient norm after clipping.
	ClippedGradNormVar = "grad_norm_clipped"
	// LossScaleVar holds the dynamic loss scale (with loss scaling on).
	LossScaleVar = "loss_scale"
	// GradsFiniteVar is 1 if every gradient of the last optimizer step was
	// finite and 0 if the step was skipped (with loss scaling on).
	GradsFiniteVar = "grads_finite"
)

// optimizer wraps a GoMLX optimizer with the learning-rate schedule and
// global-norm clipping. It works with and without AccumulateGradients,
// since both paths go through UpdateGraphWithGradients.
type optimizer struct {
	inner      optimizers.Interface
	cfg        Config
	totalSteps int
	// scaling turns on dynamic loss scaling: the loss was multiplied by the
	// LossScaleVar (see Harness.lossFn); the gradients are divided by it, and
	// a step with non-finite gradients changes no variable.
	scaling bool
	// ranks, when training across ranks, makes the training graph store
	// its gradients (ranks.stash) and the apply graph update the weights.
	ranks *ranks
	// fixedLR leaves the learning-rate variable as the host sets it (the
	// range test's ramp) instead of the schedule's.
	fixedLR bool
}

func newOptimizer(cfg Config, totalSteps int) (*optimizer, error) {
	var inner optimizers.Interface
	switch cfg.Optimizer {
	case OptimizerSGD:
		inner = optimizers.StochasticGradientDescent().WithLearningRate(cfg.LearningRate).Done()
	case OptimizerAdam:
		inner = optimizers.Adam().LearningRate(cfg.LearningRate).Done()
	case OptimizerAdamW:
		inner = optimizers.Adam().LearningRate(cfg.LearningRate).WeightDecay(cfg.WeightDecay).Done()
	default:
		return nil, fmt.Errorf("train: unknown optimizer %q", cfg.Optimizer)
	}
	if _, ok := inner.(gtrain.OptimizeWithGradients); !ok {
		return nil, fmt.Errorf("train: optimizer %q does not accept gradients", cfg.Optimizer)
	}
	return &optimizer{inner: inner, cfg: cfg, totalSteps: totalSteps}, nil
}

// UpdateGraph implements optimizers.Interface.
func (o *optimizer) UpdateGraph(ctx *context.Context, g *graph.Graph, loss *graph.Node) {
	_ = g
	grads := ctx.BuildTrainableVariablesGradientsGraph(loss)
	o.UpdateGraphWithGradients(ctx, grads, loss.DType())
}

// Clear implements optimizers.Interface.
func (o *optimizer) Clear(ctx *context.Context) error { return o.inner.Clear(ctx) }

// UpdateGraphWithGradients implements train.OptimizeWithGradients.
func (o *optimizer) UpdateGraphWithGradients(ctx *context.Context, grads []*graph.Node, lossDType dtypes.DType) {
	if o.ranks != nil && !o.ranks.applying {
		o.ranks.stash(ctx, grads, lossDType)
		return
	}
	if len(grads) == 0 {
		o.inner.(gtrain.OptimizeWithGradients).UpdateGraphWithGradients(ctx, grads, lossDType)
		return
	}
	g := grads[0].Graph()
	if (o.cfg.WarmupSteps > 0 || o.cfg.Cosine) && !o.fixedLR {
		// The global step before the optimizer increments it: 0 on the first step.
		step := graph.ConvertDType(optimizers.GetGlobalStepVar(ctx).ValueGraph(g), lossDType)
		lr := scheduleGraph(step, o.cfg, o.totalSteps)
		optimizers.LearningRateVar(ctx, lossDType, o.cfg.LearningRate).SetValueGraph(lr)
	}
	hctx := ctx.InAbsPath(HarnessScope).Checked(false)
	var finite *graph.Node
	if o.scaling {
		scale := lossScaleVar(ctx).ValueGraph(g)
		for i, gr := range grads {
			grads[i] = graph.Div(gr, graph.ConvertDType(scale, gr.DType()))
		}
		for _, gr := range grads {
			f := graph.LogicalAll(graph.IsFinite(gr))
			if finite == nil {
				finite = f
			} else {
				finite = graph.LogicalAnd(finite, f)
			}
		}
		for i, gr := range grads {
			grads[i] = graph.Where(finite, gr, graph.ZerosLike(gr))
		}
		hctx.VariableWithShape(GradsFiniteVar, shapes.Make(dtypes.Float32)).SetTrainable(false).
			SetValueGraph(graph.ConvertDType(finite, dtypes.Float32))
	}
	norm := globalNorm(grads)
	hctx.VariableWithShape(GradNormVar, shapes.Make(norm.DType())).SetTrainable(false).SetValueGraph(norm)
	if o.cfg.ClipNorm > 0 {
		// factor = min(1, clip/norm); a zero norm leaves the gradients as they are.
		clip := graph.Scalar(g, norm.DType(), o.cfg.ClipNorm)
		factor := graph.Min(graph.ScalarOne(g, norm.DType()), graph.Div(clip, graph.Max(norm, graph.Scalar(g, norm.DType(), 1e-30))))
		for i, gr := range grads {
			grads[i] = graph.Mul(gr, graph.ConvertDType(factor, gr.DType()))
		}
		norm = globalNorm(grads)
	}
	hctx.VariableWithShape(ClippedGradNormVar, shapes.Make(norm.DType())).SetTrainable(false).SetValueGraph(norm)
	var averaged []*context.Variable
	preStep := map[*context.Variable]*graph.Node{}
	if o.cfg.EMADecay > 0 {
		averaged = emaTargets(ctx, g)
		for _, v := range averaged {
			preStep[v] = v.ValueGraph(g)
		}
	}
	if !o.scaling {
		o.inner.(gtrain.OptimizeWithGradients).UpdateGraphWithGradients(ctx, grads, lossDType)
		if averaged != nil {
			updateEMAGraph(ctx, g, averaged, preStep, o.cfg.EMADecay)
		}
		return
	}
	// Skip the step when a gradient is not finite: every variable the
	// optimizer changes keeps the value it had when the step started.
	before := map[*context.Variable]*graph.Node{}
	for v := range ctx.IterVariables() {
		if v.InUseByGraph(g) {
			before[v] = v.ValueGraph(g)
		}
	}
	o.inner.(gtrain.OptimizeWithGradients).UpdateGraphWithGradients(ctx, grads, lossDType)
	if averaged != nil {
		// Before the revert below, so that a skipped step leaves the
		// averages and their count as they were too.
		updateEMAGraph(ctx, g, averaged, preStep, o.cfg.EMADecay)
	}
	for v := range ctx.IterVariables() {
		if !v.InUseByGraph(g) || !v.ChangedInGraph(g) {
			continue
		}
		updated := v.ValueGraph(g)
		if old, ok := before[v]; ok && old == updated {
			continue
		}
		start := g.GetParameterByName(v.ParameterName())
		if start == nil {
			continue
		}
		v.SetValueGraph(graph.Where(finite, updated, start))
	}
}

// lossScaleVar is the loss-scale variable (float32 scalar, initially
// DefaultInitialScale).
func lossScaleVar(ctx *context.Context) *context.Variable {
	return ctx.InAbsPath(HarnessScope).Checked(false).
		VariableWithValue(LossScaleVar, float32(DefaultInitialScale)).SetTrainable(false)
}

// globalNorm is the L2 norm of all gradients together, in float32 at least.
func globalNorm(grads []*graph.Node) *graph.Node {
	var sum *graph.Node
	for _, gr := range grads {
		if gr.DType() != dtypes.Float64 {
			gr = graph.ConvertDType(gr, dtypes.Float32)
		}
		s := graph.ReduceAllSum(graph.Square(gr))
		if sum == nil {
			sum = s
		} else {
			sum = graph.Add(sum, graph.ConvertDType(s, sum.DType()))
		}
	}
	return graph.Sqrt(sum)
}

// scheduleGraph is the learning rate at (0-based) optimizer step: a linear
// warm-up from lr/warmup to lr over cfg.WarmupSteps, then, with cfg.Cosine, a
// half cosine from lr to cfg.MinLearningRate ending at totalSteps.
func scheduleGraph(step *graph.Node, cfg Config, totalSteps int) *graph.Node {
	lr := graph.Scalar(step.Graph(), step.DType(), cfg.LearningRate)
	if cfg.Cosine {
		span := float64(max(totalSteps-cfg.WarmupSteps, 1))
		frac := graph.DivScalar(graph.SubScalar(step, float64(cfg.WarmupSteps)), span)
		frac = graph.Min(graph.Max(frac, graph.ScalarZero(step.Graph(), step.DType())), graph.ScalarOne(step.Graph(), step.DType()))
		cos := graph.DivScalar(graph.OnePlus(graph.Cos(graph.MulScalar(frac, math.Pi))), 2)
		lr = graph.AddScalar(graph.MulScalar(cos, cfg.LearningRate-cfg.MinLearningRate), cfg.MinLearningRate)
	}
	if cfg.WarmupSteps > 0 {
		ramp := graph.DivScalar(graph.OnePlus(step), float64(cfg.WarmupSteps))
		ramp = graph.Min(ramp, graph.ScalarOne(step.Graph(), step.DType()))
		lr = graph.Mul(lr, ramp)
	}
	return lr
}

// ScheduleValue is the learning rate scheduleGraph computes at step, on the host.
func ScheduleValue(step int, cfg Config, totalSteps int) float64 {
	lr := cfg.LearningRate
	if cfg.Cosine {
		span := float64(max(totalSteps-cfg.WarmupSteps, 1))
		frac := math.Min(math.Max(float64(step-cfg.WarmupSteps)/span, 0), 1)
		lr = (1+math.Cos(frac*math.Pi))/2*(cfg.LearningRate-cfg.MinLearningRate) + cfg.MinLearningRate
	}
	if cfg.WarmupSteps > 0 {
		lr *= math.Min(float64(step+1)/float64(cfg.WarmupSteps), 1)
	}
	return lr
}
