package moe

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/train"
)

// TestCPUBackendTrainsLikeSimpleGo trains the same small mixture of experts
// (dense and sparse dispatch) on gotrain's cpu backend — the stacked expert
// products run there as SGEMMs after transposing copies — and on simplego:
// the loss curves agree within float32 tolerance, and both fall.
func TestCPUBackendTrainsLikeSimpleGo(t *testing.T) {
	const steps, batch, inputs, classes = 25, 32, 12, 3
	r := rand.New(rand.NewPCG(8, 3))
	n := 4 * batch
	x, y := make([]float32, n*inputs), make([]float32, n)
	for i := range y {
		c := r.IntN(classes)
		y[i] = float32(c)
		for j := range inputs {
			x[i*inputs+j] = float32(r.NormFloat64())
			if j%classes == c {
				x[i*inputs+j] += 1.5
			}
		}
	}
	for _, dense := range []bool{true, false} {
		curves := map[string][]float64{}
		for _, d := range []device.Device{
			{Name: "cpu", Kind: device.Native, Class: "cpu"},
			{Name: "go", Kind: device.SimpleGo, Class: "cpu"},
		} {
			be, err := train.OpenBackend(d)
			if err != nil {
				t.Fatal(err)
			}
			m, err := New(Config{Inputs: inputs, Classes: classes, Experts: 4, Hidden: []int{16}, TopK: 2, CapacityFactor: 1.5, Dense: dense, BalanceAlpha: 0.01}, 5)
			if err != nil {
				t.Fatal(err)
			}
			ds, err := train.NewDataset(x, inputs, y, 1, 1, true)
			if err != nil {
				t.Fatal(err)
			}
			cfg := train.DefaultConfig()
			cfg.BatchSize, cfg.Steps, cfg.NoCheckpoint, cfg.Progress = batch, steps, true, "off"
			cfg.Optimizer, cfg.LearningRate = train.OptimizerAdam, 0.01
			h, err := train.New(be, cfg, m.ModelFn(), Loss, ds)
			if err != nil {
				t.Fatal(err)
			}
			for range steps {
				l, err := h.TrainStep()
				if err != nil {
					t.Fatalf("%s: %v", d.Name, err)
				}
				curves[d.Name] = append(curves[d.Name], l)
			}
			be.Finalize()
		}
		c, g := curves["cpu"], curves["go"]
		for i := range c {
			if d := math.Abs(c[i] - g[i]); d > 1e-4*(1+math.Abs(g[i])) || math.IsNaN(c[i]) {
				t.Fatalf("dense=%v step %d: loss %g on cpu, %g on simplego", dense, i, c[i], g[i])
			}
		}
		if !(c[len(c)-1] < 0.8*c[0]) {
			t.Errorf("dense=%v: loss did not fall on cpu: %g → %g", dense, c[0], c[len(c)-1])
		}
		t.Logf("dense=%v: loss %.4f → %.4f on cpu, %.4f → %.4f on simplego", dense, c[0], c[len(c)-1], g[0], g[len(g)-1])
	}
}
