package charlstm

import (
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/backends"

	"github.com/gotrain/gotrain/train"
	"github.com/gotrain/gotrain/train/traintest"
)

// TestCPUBackendTrainsLikeSimpleGo trains the same 2-layer LSTM with Adam
// and clipping on gotrain's cpu backend — whose Compile-time rewrites turn
// the gate selections into block copies and the per-step weight gradients
// into one product — and on simplego, which runs the graph as written: the
// loss curves agree within float32 tolerance, and both fall.
func TestCPUBackendTrainsLikeSimpleGo(t *testing.T) {
	const vocab, seq, batch, steps = 13, 12, 8, 60
	r := rand.New(rand.NewPCG(4, 2))
	n := 4 * batch
	x := make([]float32, n*seq)
	y := make([]float32, n*seq)
	for i := range x {
		// A learnable stream: the next id is the current one plus one, mostly.
		x[i] = float32(r.IntN(vocab))
		y[i] = float32((int(x[i]) + 1) % vocab)
		if r.IntN(8) == 0 {
			y[i] = float32(r.IntN(vocab))
		}
	}
	cpu, simplego := traintest.BackendCurves(t, steps, func(be backends.Backend) (*train.Harness, error) {
		ds, err := train.NewDataset(x, seq, y, seq, 1, true)
		if err != nil {
			return nil, err
		}
		cfg := train.DefaultConfig()
		cfg.Optimizer, cfg.LearningRate, cfg.ClipNorm = train.OptimizerAdam, 0.02, 5
		cfg.Steps, cfg.BatchSize, cfg.NoCheckpoint, cfg.Seed = steps, batch, true, 3
		return train.New(be, cfg, Arch{Vocab: vocab, Hidden: 24, Layers: 2}.ModelFn(), Loss, ds)
	})
	traintest.CheckCurvesAgree(t, "lstm 2x24", cpu, simplego, 0.8)
}
