package moe

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/backends"

	"github.com/gotrain/gotrain/train"
	"github.com/gotrain/gotrain/train/traintest"
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
		cpu, simplego := traintest.BackendCurves(t, steps, func(be backends.Backend) (*train.Harness, error) {
			m, err := New(Config{Inputs: inputs, Classes: classes, Experts: 4, Hidden: []int{16}, TopK: 2,
				CapacityFactor: 1.5, Dense: dense, BalanceAlpha: 0.01}, 5)
			if err != nil {
				return nil, err
			}
			ds, err := train.NewDataset(x, inputs, y, 1, 1, true)
			if err != nil {
				return nil, err
			}
			cfg := train.DefaultConfig()
			cfg.BatchSize, cfg.Steps, cfg.NoCheckpoint, cfg.Progress = batch, steps, true, "off"
			cfg.Optimizer, cfg.LearningRate = train.OptimizerAdam, 0.01
			return train.New(be, cfg, m.ModelFn(), Loss, ds)
		})
		traintest.CheckCurvesAgree(t, fmt.Sprintf("moe dense=%v", dense), cpu, simplego, 0.8)
	}
}
