package moe

import (
	"math/rand/v2"
	"os"
	"testing"

	"github.com/gotrain/gotrain/cpubackend"
	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/train"
)

// BenchmarkTrainStep times one Adam step of the MNIST model (8
// experts 784-256-10, linear gate, top-2, capacity factor 1.25, balance
// loss) at batch 256 on gotrain's cpu backend, with sparse dispatch and
// dense (every expert on every row): the shapes of the peer's bench_moe
// (../shared/peers/bench_torch.py), compared by scripts/bench_cpu_backend.py,
// and both again in bf16-mixed precision.
// With GOTRAIN_OPSTATS=FILE it also writes the backend's per-operation
// timings of five more steps to FILE.
func BenchmarkTrainStep(b *testing.B) {
	for _, c := range []struct {
		dense     bool
		precision train.Precision
	}{{false, train.Precision32}, {true, train.Precision32}, {false, train.PrecisionBF16Mixed}, {true, train.PrecisionBF16Mixed}} {
		dense := c.dense
		name := "sparse/cpu"
		if dense {
			name = "dense/cpu"
		}
		if c.precision != train.Precision32 {
			name += "-" + string(c.precision)
		}
		b.Run(name, func(b *testing.B) {
			_, be, err := device.Open("cpu")
			if err != nil {
				b.Fatal(err)
			}
			defer be.Finalize()
			cfg := DefaultConfig()
			cfg.Dense = dense
			m, err := New(cfg, 1)
			if err != nil {
				b.Fatal(err)
			}
			const batch = 256
			r := rand.New(rand.NewPCG(1, 1))
			x, y := make([]float32, 4*batch*cfg.Inputs), make([]float32, 4*batch)
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			for i := range y {
				y[i] = float32(r.IntN(cfg.Classes))
			}
			ds, err := train.NewDataset(x, cfg.Inputs, y, 1, 1, true)
			if err != nil {
				b.Fatal(err)
			}
			tc := train.DefaultConfig()
			tc.Optimizer, tc.LearningRate = train.OptimizerAdam, 1e-3
			tc.BatchSize, tc.Steps, tc.NoCheckpoint, tc.Progress = batch, 1<<30, true, "off"
			tc.Precision = c.precision
			h, err := train.New(be, tc, m.ModelFn(), Loss, ds)
			if err != nil {
				b.Fatal(err)
			}
			for range 2 { // compile and warm up
				if _, err := h.TrainStep(); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for range b.N {
				if _, err := h.TrainStep(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1e3/float64(b.N), "ms/step")
			b.StopTimer()
			if err := cpubackend.WriteOpStats(os.Getenv("GOTRAIN_OPSTATS"), 5, func() error { _, err := h.TrainStep(); return err }); err != nil {
				b.Fatal(err)
			}
		})
	}
}
