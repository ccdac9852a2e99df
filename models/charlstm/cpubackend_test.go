package charlstm

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/train"
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
	curves := map[string][]float64{}
	for _, d := range []device.Device{
		{Name: "cpu", Kind: device.Native, Class: "cpu"},
		{Name: "go", Kind: device.SimpleGo, Class: "cpu"},
	} {
		be, err := train.OpenBackend(d)
		if err != nil {
			t.Fatal(err)
		}
		ds, err := train.NewDataset(x, seq, y, seq, 1, true)
		if err != nil {
			t.Fatal(err)
		}
		cfg := train.DefaultConfig()
		cfg.Optimizer = train.OptimizerAdam
		cfg.LearningRate = 0.02
		cfg.ClipNorm = 5
		cfg.Steps = steps
		cfg.BatchSize = batch
		cfg.NoCheckpoint = true
		cfg.Seed = 3
		h, err := train.New(be, cfg, Arch{Vocab: vocab, Hidden: 24, Layers: 2}.ModelFn(), Loss, ds)
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
			t.Fatalf("step %d: loss %g on cpu, %g on simplego", i, c[i], g[i])
		}
	}
	if !(c[len(c)-1] < 0.8*c[0]) {
		t.Errorf("loss did not fall on cpu: %g → %g", c[0], c[len(c)-1])
	}
	t.Logf("loss %.4f → %.4f on cpu, %.4f → %.4f on simplego", c[0], c[len(c)-1], g[0], g[len(g)-1])
}
