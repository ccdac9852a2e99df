package transformer

import (
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/backends"

	"github.com/gotrain/gotrain/train"
	"github.com/gotrain/gotrain/train/traintest"
)

// TestCPUBackendTrainsLikeSimpleGo trains the same small transformer (both
// attention and feed-forward kinds) on gotrain's cpu backend — attention
// products run there as SGEMMs after transposing copies — and on simplego:
// the loss curves agree within float32 tolerance, and both fall.
func TestCPUBackendTrainsLikeSimpleGo(t *testing.T) {
	const steps, batch = 20, 4
	for _, arch := range []Arch{
		{Vocab: 11, Layers: 2, Heads: 2, Width: 16, Context: 12, Attention: AttentionSoftmax, FFN: FFNSwiGLU},
		{Vocab: 11, Layers: 2, Heads: 2, Width: 16, Context: 12, Attention: AttentionPoly, FFN: FFNRichards},
	} {
		r := rand.New(rand.NewPCG(3, 1))
		n := 4 * batch
		x, y := make([]float32, n*arch.Context), make([]float32, n*arch.Context)
		for i := range x {
			x[i] = float32(r.IntN(arch.Vocab))
			y[i] = float32((int(x[i]) + 3) % arch.Vocab)
		}
		cpu, simplego := traintest.BackendCurves(t, steps, func(be backends.Backend) (*train.Harness, error) {
			ds, err := train.NewDataset(x, arch.Context, y, arch.Context, 1, true)
			if err != nil {
				return nil, err
			}
			cfg := train.DefaultConfig()
			cfg.BatchSize, cfg.Steps, cfg.NoCheckpoint, cfg.Progress = batch, steps, true, "off"
			cfg.Optimizer, cfg.ClipNorm, cfg.LearningRate = train.OptimizerAdamW, 1, 0.01
			return train.New(be, cfg, arch.ModelFn(), Loss, ds)
		})
		traintest.CheckCurvesAgree(t, arch.Attention+"/"+arch.FFN, cpu, simplego, 0.8)
	}
}
