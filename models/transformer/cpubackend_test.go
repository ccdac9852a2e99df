package transformer

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/train"
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
		curves := map[string][]float64{}
		for _, d := range []device.Device{
			{Name: "cpu", Kind: device.Native, Class: "cpu"},
			{Name: "go", Kind: device.SimpleGo, Class: "cpu"},
		} {
			be, err := train.OpenBackend(d)
			if err != nil {
				t.Fatal(err)
			}
			ds, err := train.NewDataset(x, arch.Context, y, arch.Context, 1, true)
			if err != nil {
				t.Fatal(err)
			}
			cfg := train.DefaultConfig()
			cfg.BatchSize, cfg.Steps, cfg.NoCheckpoint, cfg.Progress = batch, steps, true, "off"
			cfg.Optimizer, cfg.ClipNorm, cfg.LearningRate = train.OptimizerAdamW, 1, 0.01
			h, err := train.New(be, cfg, arch.ModelFn(), Loss, ds)
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
				t.Fatalf("%s/%s step %d: loss %g on cpu, %g on simplego", arch.Attention, arch.FFN, i, c[i], g[i])
			}
		}
		if !(c[len(c)-1] < 0.8*c[0]) {
			t.Errorf("%s/%s: loss did not fall on cpu: %g → %g", arch.Attention, arch.FFN, c[0], c[len(c)-1])
		}
		t.Logf("%s/%s: loss %.4f → %.4f on cpu, %.4f → %.4f on simplego", arch.Attention, arch.FFN, c[0], c[len(c)-1], g[0], g[len(g)-1])
	}
}
