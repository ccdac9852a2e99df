// Package traintest holds test helpers that the model packages share: the
// comparison of a model's training on gotrain's cpu backend with its
// training on GoMLX's simplego, and of its training across in-process
// ranks with one process's.
package traintest

import (
	"math"
	"sync"
	"testing"

	"github.com/gomlx/gomlx/backends"

	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/dist"
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

// LogLosses returns the loss of every step that logged one in the metrics
// log at path, in the log's order.
func LogLosses(path string) ([]float64, error) {
	recs, err := train.ReadMetricsLog(path)
	if err != nil {
		return nil, err
	}
	var losses []float64
	for _, r := range recs {
		if l, ok := r["loss"].(float64); ok {
			losses = append(losses, l)
		}
	}
	return losses, nil
}

// CheckCurveMatches fails tb unless got, a run across ranks, logged as
// many losses as want, one process's, each within rel relative of its
// step's; it logs the largest difference.
func CheckCurveMatches(tb testing.TB, got, want []float64, rel float64) {
	tb.Helper()
	if len(got) != len(want) || len(want) == 0 {
		tb.Fatalf("%d losses across ranks, %d in one process", len(got), len(want))
	}
	worst := 0.0
	for i := range want {
		d := math.Abs(got[i]-want[i]) / math.Abs(want[i])
		worst = max(worst, d)
		if d > rel {
			tb.Errorf("step %d: loss %.6f across ranks, %.6f in one process (relative %.2g)", i+1, got[i], want[i], d)
		}
	}
	tb.Logf("largest relative loss difference over %d steps: %.3g", len(want), worst)
}

// OnRanks runs fn on n in-process ranks (dist.Local), each on a goroutine
// with a simplego backend of its own, and returns their errors.
func OnRanks(tb testing.TB, n int, fn func(rank int, c dist.Comm, be backends.Backend) error) []error {
	tb.Helper()
	bs := make([]backends.Backend, n)
	for r := range n {
		e, b, err := device.Open("go")
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(e.Close)
		bs[r] = b
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r, c := range dist.Local(n) {
		wg.Go(func() {
			defer c.Close()
			errs[r] = fn(r, c, bs[r])
		})
	}
	wg.Wait()
	return errs
}
