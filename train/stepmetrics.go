package train

import (
	"fmt"
	"sort"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
)

// StepMetricsScope holds the values of the step metrics (SetStepMetric)
// of the last optimizer step; checkpoints leave them out.
const StepMetricsScope = HarnessScope + "/step_metrics"

// StepMetricFn computes a metric of one training batch in the training
// graph, from the labels and the model's predictions (as the loss sees
// them), such as the batch's accuracy. A non-scalar result is averaged.
type StepMetricFn func(labels, predictions []*graph.Node) *graph.Node

// SetStepMetric adds a metric computed on every training batch in the
// training graph (no extra pass over the data) and logged, under name,
// in every metrics line with the loss (the last micro-batch's value with
// Accumulate > 1): the metrics log, its CSV twin, TensorBoard and the
// plots (accuracy.png for "accuracy"). Call it before the first step.
func (h *Harness) SetStepMetric(name string, fn StepMetricFn) {
	if h.stepMetrics == nil {
		h.stepMetrics = map[string]StepMetricFn{}
	}
	h.stepMetrics[name] = fn
}

// metricsLoss wraps loss so that the training graph also computes the
// step metrics, each stored in its variable of StepMetricsScope (no
// gradient flows through them).
func (h *Harness) metricsLoss(loss LossFn) LossFn {
	return func(labels, predictions []*graph.Node) *graph.Node {
		l := loss(labels, predictions)
		if len(h.stepMetrics) == 0 {
			return l
		}
		names := make([]string, 0, len(h.stepMetrics))
		for name := range h.stepMetrics {
			names = append(names, name)
		}
		sort.Strings(names)
		mctx := h.ctx.InAbsPath(StepMetricsScope).Checked(false)
		for _, name := range names {
			m := graph.StopGradient(h.stepMetrics[name](labels, predictions))
			if !m.Shape().IsScalar() {
				m = graph.ReduceAllMean(m)
			}
			m = graph.ConvertDType(m, dtypes.Float32)
			mctx.VariableWithValue(name, float32(0)).SetTrainable(false).SetValueGraph(m)
		}
		return l
	}
}

// stepMetricValues adds the step metrics' values of the last step to rec.
func (h *Harness) stepMetricValues(rec map[string]any) error {
	for name := range h.stepMetrics {
		v := h.ctx.GetVariableByScopeAndName(StepMetricsScope, name)
		if v == nil {
			continue // no step built it yet
		}
		t, err := v.Value()
		if err != nil {
			return fmt.Errorf("train: step metric %s: %w", name, err)
		}
		x, err := scalarValue(t)
		if err != nil {
			return fmt.Errorf("train: step metric %s: %w", name, err)
		}
		rec[name] = x
	}
	return nil
}
