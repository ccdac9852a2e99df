package train

import (
	"math/rand/v2"
	"os"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/context/initializers"
	"github.com/gomlx/gomlx/pkg/ml/layers/activations"
	"github.com/gomlx/gomlx/pkg/ml/train/losses"

	"github.com/gotrain/gotrain/cpubackend"
	"github.com/gotrain/gotrain/device"
)

// mlp784 is the peer benchmark's MLP (shared/peers/bench_torch.py (a)):
// 784-512-512-10 with ReLU and biases.
func mlp784(ctx *context.Context, _ any, inputs []*graph.Node) []*graph.Node {
	x := inputs[0]
	g := x.Graph()
	dense := func(scope string, in, out int, h *graph.Node) *graph.Node {
		c := ctx.In(scope)
		w := c.VariableWithShape("w", shapes.Make(dtypes.Float32, in, out)).ValueGraph(g)
		b := c.WithInitializer(initializers.Zero).VariableWithShape("b", shapes.Make(dtypes.Float32, out)).ValueGraph(g)
		// Weights in the input's dtype: bfloat16 under bf16-mixed precision.
		w, b = graph.ConvertDType(w, h.DType()), graph.ConvertDType(b, h.DType())
		return graph.Add(graph.Dot(h, w), graph.InsertAxes(b, 0))
	}
	h := activations.Relu(dense("l1", 784, 512, x))
	h = activations.Relu(dense("l2", 512, 512, h))
	return []*graph.Node{dense("l3", 512, 10, h)}
}

// BenchmarkMLPTrainStep times the peer's MLP train step (batch 256, Adam,
// softmax cross-entropy) on gotrain's cpu backend and on simplego:
//
//	go test -run XXX -bench MLPTrainStep ./train/
func BenchmarkMLPTrainStep(b *testing.B) {
	const n, batch = 1024, 256
	r := rand.New(rand.NewPCG(3, 3))
	x := make([]float32, n*784)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	y := make([]float32, n*10)
	for i := range n {
		y[i*10+r.IntN(10)] = 1
	}
	for _, c := range []struct {
		name      string
		d         device.Device
		precision Precision
	}{
		{"cpu", device.Device{Name: "cpu", Kind: device.Native, Class: "cpu"}, Precision32},
		{"go", device.Device{Name: "go", Kind: device.SimpleGo, Class: "cpu"}, Precision32},
		{"cpu-bf16-mixed", device.Device{Name: "cpu", Kind: device.Native, Class: "cpu"}, PrecisionBF16Mixed},
	} {
		d := c.d
		b.Run(c.name, func(b *testing.B) {
			_, be, err := device.Open(d.Name)
			if err != nil {
				b.Fatal(err)
			}
			defer be.Finalize()
			data, err := NewDataset(x, 784, y, 10, 1, true)
			if err != nil {
				b.Fatal(err)
			}
			cfg := DefaultConfig()
			cfg.NoCheckpoint = true
			cfg.Steps = 1 << 30
			cfg.BatchSize = batch
			cfg.Optimizer = OptimizerAdam
			cfg.LearningRate = 1e-3
			cfg.Precision = c.precision
			h, err := New(be, cfg, mlp784, losses.CategoricalCrossEntropyLogits, data)
			if err != nil {
				b.Fatal(err)
			}
			// Compile, then the ten warm-up steps the peer's bench_mlp takes.
			for range 11 {
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
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/step")
			if d.Kind == device.Native {
				b.StopTimer()
				if err := cpubackend.WriteOpStats(os.Getenv("GOTRAIN_OPSTATS"), 5, func() error { _, err := h.TrainStep(); return err }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
