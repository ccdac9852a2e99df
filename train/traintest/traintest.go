// Package traintest holds test helpers that the model packages share: the
// comparison of a model's training on gotrain's cpu backend with its
// training on GoMLX's simplego.
package traintest

import (
	"math"
	"testing"

	"github.com/gomlx/gomlx/backends"

	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/train"
)

// BackendCurves trains a model for steps optimizer steps on gotrain's cpu
// backend and on simplego — newHarness builds the same harness (model,
// data, configuration) on the backend it is given — and returns the two
// loss curves.
func BackendCurves(tb testing.TB, steps int, newHarness func(be backends.Backend) (*train.Harness, error)) (cpu, simplego []float64) {
	tb.Helper()
	curves := map[string][]float64{}
	for _, d := range []device.Device{
		{Name: "cpu", Kind: device.Native, Class: "cpu"},
		{Name: "go", Kind: device.SimpleGo, Class: "cpu"},
	} {
		_, be, err := device.Open(d.Name)
		if err != nil {
			tb.Fatal(err)
		}
		h, err := newHarness(be)
		if err != nil {
			be.Finalize()
			tb.Fatalf("%s: %v", d.Name, err)
		}
		for range steps {
			l, err := h.TrainStep()
			if err != nil {
				be.Finalize()
				tb.Fatalf("%s: %v", d.Name, err)
			}
			curves[d.Name] = append(curves[d.Name], l)
		}
		be.Finalize()
	}
	return curves["cpu"], curves["go"]
}

// CheckCurvesAgree fails tb when the cpu backend's loss differs from
// simplego's by more than 1e-4·(1 + |loss|) at any step (the backends differ
// only by float32 rounding), is NaN, or does not fall below fall times its
// first value.
func CheckCurvesAgree(tb testing.TB, name string, cpu, simplego []float64, fall float64) {
	tb.Helper()
	if len(cpu) != len(simplego) || len(cpu) == 0 {
		tb.Fatalf("%s: %d losses on cpu, %d on simplego", name, len(cpu), len(simplego))
	}
	for i := range cpu {
		if d := math.Abs(cpu[i] - simplego[i]); d > 1e-4*(1+math.Abs(simplego[i])) || math.IsNaN(cpu[i]) {
			tb.Fatalf("%s step %d: loss %g on cpu, %g on simplego", name, i, cpu[i], simplego[i])
		}
	}
	if last := cpu[len(cpu)-1]; !(last < fall*cpu[0]) {
		tb.Errorf("%s: loss did not fall on cpu: %g → %g", name, cpu[0], last)
	}
	tb.Logf("%s: loss %.4f → %.4f on cpu, %.4f → %.4f on simplego", name, cpu[0], cpu[len(cpu)-1], simplego[0], simplego[len(simplego)-1])
}
