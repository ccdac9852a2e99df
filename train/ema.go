package train

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// Exponential moving average of the weights (Config.EMADecay): after
// every optimizer step that changes the weights, each trainable variable
// w has its average
//
//	a ← d·a + (1 − d)·w
//
// updated in the training graph, where the average starts from the
// weights before the first averaged step (a = w₀, so a₁ = d·w₀ + (1−d)·w₁).
// The averages are context variables in EMAScope (variable S/N averaged
// in EMAScope+S, name N) with the count of averaged steps in
// HarnessScope/EMAUpdatesVar, so checkpoints hold them and a resumed run
// continues them exactly. A step the loss scaler skips changes neither.

// EMAScope is the context scope of the weights' moving averages.
const EMAScope = "/ema"

// EMAUpdatesVar, in HarnessScope, counts the steps averaged so far.
const EMAUpdatesVar = "ema_updates"

// emaScope is the scope of the average of a variable in scope.
func emaScope(scope string) string {
	if scope == "" || scope == context.ScopeSeparator {
		return EMAScope
	}
	return EMAScope + scope
}

// inEMAScope tells whether scope holds averages.
func inEMAScope(scope string) bool {
	return scope == EMAScope || strings.HasPrefix(scope, EMAScope+context.ScopeSeparator)
}

// emaTargets are the trainable variables of g the average follows, in a
// stable order.
func emaTargets(ctx *context.Context, g *graph.Graph) []*context.Variable {
	var vs []*context.Variable
	for v := range ctx.IterVariables() {
		if v.Trainable && v.InUseByGraph(g) && !inEMAScope(v.Scope()) {
			vs = append(vs, v)
		}
	}
	sort.Slice(vs, func(i, j int) bool { return vs[i].ScopeAndName() < vs[j].ScopeAndName() })
	return vs
}

// updateEMAGraph adds to g the update of the averages of vars, whose
// values before the step are before, with decay d.
func updateEMAGraph(ctx *context.Context, g *graph.Graph, vars []*context.Variable, before map[*context.Variable]*graph.Node, d float64) {
	count := ctx.InAbsPath(HarnessScope).Checked(false).VariableWithValue(EMAUpdatesVar, int64(0)).SetTrainable(false)
	n := count.ValueGraph(g)
	first := graph.Equal(n, graph.ScalarZero(g, dtypes.Int64))
	for _, v := range vars {
		w := v.ValueGraph(g)
		avg := ctx.InAbsPath(emaScope(v.Scope())).Checked(false).
			VariableWithValue(v.Name(), tensors.FromShape(v.Shape())).SetTrainable(false)
		prev := graph.Where(first, before[v], avg.ValueGraph(g))
		dt := w.DType()
		avg.SetValueGraph(graph.Add(graph.Mul(prev, graph.Scalar(g, dt, d)), graph.Mul(w, graph.Scalar(g, dt, 1-d))))
	}
	count.SetValueGraph(graph.Add(n, graph.ScalarOne(g, dtypes.Int64)))
}

// emaPairs returns each trainable variable of h's context that has an
// average, with it.
func (h *Harness) emaPairs() [][2]*context.Variable {
	return emaPairsOf(h.ctx)
}

func emaPairsOf(ctx *context.Context) [][2]*context.Variable {
	avgs := map[string]*context.Variable{}
	for v := range ctx.IterVariables() {
		if inEMAScope(v.Scope()) && v.HasValue() {
			avgs[v.ScopeAndName()] = v
		}
	}
	var pairs [][2]*context.Variable
	for v := range ctx.IterVariables() {
		if !v.HasValue() || inEMAScope(v.Scope()) {
			continue
		}
		scope := emaScope(v.Scope())
		if a, ok := avgs[context.JoinScope(scope, v.Name())]; ok {
			pairs = append(pairs, [2]*context.Variable{v, a})
		}
	}
	sort.Slice(pairs, func(i, j int) bool { return pairs[i][0].ScopeAndName() < pairs[j][0].ScopeAndName() })
	return pairs
}

// swapEMA exchanges the values of the weights and their averages (no
// copy: the variables trade tensors).
func swapEMA(pairs [][2]*context.Variable) error {
	for _, p := range pairs {
		w, a := p[0], p[1]
		wt, err := w.Value()
		if err != nil {
			return fmt.Errorf("train: moving average of %s: %w", w.ScopeAndName(), err)
		}
		at, err := a.Value()
		if err != nil {
			return fmt.Errorf("train: moving average of %s: %w", w.ScopeAndName(), err)
		}
		if !wt.Shape().Equal(at.Shape()) {
			return fmt.Errorf("train: moving average of %s has shape %s, the variable %s", w.ScopeAndName(), at.Shape(), wt.Shape())
		}
		if err := w.SetValuePreservingOld(at); err != nil {
			return err
		}
		if err := a.SetValuePreservingOld(wt); err != nil {
			return err
		}
	}
	return nil
}

// WithAveragedWeights runs fn with the moving averages of the weights in
// their variables (Config.EMADecay), then puts the trained weights back:
// the harness evaluates (SetEvaluator) this way, and models use it for
// their own evaluations during training. Without averages (EMADecay 0,
// before the first step, or after Run, which leaves the averages in
// place) it just runs fn.
func (h *Harness) WithAveragedWeights(fn func() error) error {
	pairs := h.emaPairs()
	if len(pairs) == 0 || h.emaApplied {
		return fn()
	}
	if err := swapEMA(pairs); err != nil {
		return err
	}
	ferr := fn()
	if err := swapEMA(pairs); err != nil {
		return err
	}
	return ferr
}

// applyEMA puts the averages in the weights' variables for good (at the
// end of Run: what follows — a model's final evaluation, sampling,
// exporting from the context — uses them). The last checkpoint, written
// before, holds both.
func (h *Harness) applyEMA() error {
	if h.emaApplied {
		return nil
	}
	pairs := h.emaPairs()
	if len(pairs) == 0 {
		return nil
	}
	h.emaApplied = true
	return swapEMA(pairs)
}

// AveragedWeights tells whether the context's weights are the moving
// averages (after Run with Config.EMADecay, or a checkpoint with averages
// loaded by LoadForInference).
func (h *Harness) AveragedWeights() bool { return h.emaApplied }
