package transformer

import (
	"math/rand/v2"
	"os"
	"testing"

	"github.com/gotrain/gotrain/cpubackend"
	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/train"
)

// BenchmarkTrainStep times one optimizer step (AdamW, clipping 1.0) of the
// issue's model (4 layers, 4 heads, width 128, context 64, vocabulary 91)
// on gotrain's cpu backend and on simplego, as scripts/bench_transformer_torch.py
// does in PyTorch (scripts/bench_cpu_backend.py compares them):
// go test -run XXX -bench TrainStep -benchtime 3x ./models/transformer
// (with GOTRAIN_OPSTATS=FILE, the cpu backend's per-operation timings of
// five more steps go to FILE).
func BenchmarkTrainStep(b *testing.B) {
	arch := Arch{Vocab: 91, Layers: 4, Heads: 4, Width: 128, Context: 64}
	pr := arch
	pr.Attention, pr.FFN = AttentionPoly, FFNRichards
	for _, d := range []device.Device{{Kind: device.Native, Name: "cpu"}, {Kind: device.SimpleGo, Name: "go"}} {
		b.Run("softmax-swiglu-batch=16/"+d.Name, func(b *testing.B) { benchStep(b, d, arch, 16, train.Precision32) })
		b.Run("softmax-swiglu-batch=32/"+d.Name, func(b *testing.B) { benchStep(b, d, arch, 32, train.Precision32) })
		b.Run("poly-richards-batch=16/"+d.Name, func(b *testing.B) { benchStep(b, d, pr, 16, train.Precision32) })
	}
	// bfloat16 products and activations, float32 weights (--precision
	// bf16-mixed), on the cpu backend.
	cpu := device.Device{Kind: device.Native, Name: "cpu"}
	b.Run("softmax-swiglu-batch=16/cpu-bf16-mixed", func(b *testing.B) { benchStep(b, cpu, arch, 16, train.PrecisionBF16Mixed) })
}

func benchStep(b *testing.B, d device.Device, arch Arch, batch int, precision train.Precision) {
	_, be, err := device.Open(d.Name)
	if err != nil {
		b.Fatal(err)
	}
	defer be.Finalize()
	n := batch * 4
	r := rand.New(rand.NewPCG(1, 2))
	x, y := make([]float32, n*arch.Context), make([]float32, n*arch.Context)
	for i := range x {
		x[i], y[i] = float32(r.IntN(arch.Vocab)), float32(r.IntN(arch.Vocab))
	}
	ds, err := train.NewDataset(x, arch.Context, y, arch.Context, 1, true)
	if err != nil {
		b.Fatal(err)
	}
	cfg := train.DefaultConfig()
	cfg.BatchSize, cfg.Steps, cfg.NoCheckpoint, cfg.Progress = batch, 1<<30, true, "off"
	cfg.Optimizer, cfg.ClipNorm = train.OptimizerAdamW, 1
	cfg.Precision = precision
	h, err := train.New(be, cfg, arch.ModelFn(), Loss, ds)
	if err != nil {
		b.Fatal(err)
	}
	// Compile, then the two warm-up steps the PyTorch script takes.
	for range 3 {
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
	if d.Kind == device.Native {
		b.StopTimer()
		if err := cpubackend.WriteOpStats(os.Getenv("GOTRAIN_OPSTATS"), 5, func() error { _, err := h.TrainStep(); return err }); err != nil {
			b.Fatal(err)
		}
	}
}
