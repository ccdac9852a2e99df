package train

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/train/losses"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/device"
)

// mnistDir finds the MNIST IDX files: $GOTRAIN_MNIST, else the shared data
// folder beside the repository; "" when neither holds them.
func mnistDir() string {
	for _, d := range []string{os.Getenv("GOTRAIN_MNIST"), filepath.Join("..", "..", "shared", "data", "mnist")} {
		if d == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(d, "t10k-labels-idx1-ubyte.gz")); err == nil {
			return d
		}
	}
	return ""
}

// TestMLPBF16MixedAccuracyOnMNIST trains the benchmark's MLP (784-512-512-10,
// Adam, batch 256) for one epoch of MNIST in float32 and in bf16-mixed on
// gotrain's cpu backend, and checks that bf16-mixed reaches the float32
// test accuracy within 0.3 points (issue #22: "equal accuracy after
// training"). Skipped without the MNIST files or with -short.
func TestMLPBF16MixedAccuracyOnMNIST(t *testing.T) {
	dir := mnistDir()
	if dir == "" || testing.Short() {
		t.Skip("no MNIST files ($GOTRAIN_MNIST or ../shared/data/mnist), or -short")
	}
	trainSet, testSet, err := data.LoadMNIST(dir)
	if err != nil {
		t.Fatal(err)
	}
	toF32 := func(d *data.Dataset) (x, y []float32) {
		x = make([]float32, len(d.X))
		for i, v := range d.X {
			x[i] = float32(v)
		}
		y = make([]float32, d.Rows*10)
		for i, c := range d.Y {
			y[i*10+int(c)] = 1
		}
		return x, y
	}
	xs, ys := toF32(trainSet)
	xt, _ := toF32(testSet)
	acc := map[Precision]float64{}
	for _, p := range []Precision{Precision32, PrecisionBF16Mixed} {
		_, be, err := device.Open("cpu")
		if err != nil {
			t.Fatal(err)
		}
		ds, err := NewDataset(xs, 784, ys, 10, 1, true)
		if err != nil {
			t.Fatal(err)
		}
		cfg := DefaultConfig()
		cfg.NoCheckpoint, cfg.Progress = true, "off"
		cfg.BatchSize, cfg.Epochs, cfg.Seed = 256, 1, 1
		cfg.Optimizer, cfg.LearningRate = OptimizerAdam, 1e-3
		cfg.Precision = p
		h, err := New(be, cfg, mlp784, losses.CategoricalCrossEntropyLogits, ds)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.Run(); err != nil {
			t.Fatal(err)
		}
		// Test accuracy with the trained float32 weights, the products in
		// the training precision.
		exec := context.MustNewExec(be, h.Context().Reuse(), func(ctx *context.Context, x *graph.Node) *graph.Node {
			x = graph.ConvertDType(x, p.ComputeDType())
			return graph.ConvertDType(mlp784(ctx, nil, []*graph.Node{x})[0], dtypes.Float32)
		})
		logits := tensors.MustCopyFlatData[float32](exec.MustExec(tensors.FromFlatDataAndDimensions(xt, testSet.Rows, 784))[0])
		right := 0
		for i := range testSet.Rows {
			best := 0
			for c := range 10 {
				if logits[i*10+c] > logits[i*10+best] {
					best = c
				}
			}
			if best == int(testSet.Y[i]) {
				right++
			}
		}
		acc[p] = float64(right) / float64(testSet.Rows)
		be.Finalize()
	}
	t.Logf("test accuracy after one epoch: float32 %.2f %%, bf16-mixed %.2f %%", 100*acc[Precision32], 100*acc[PrecisionBF16Mixed])
	if acc[Precision32] < 0.95 {
		t.Fatalf("float32 reached %.2f %%, want at least 95 %%", 100*acc[Precision32])
	}
	if d := acc[PrecisionBF16Mixed] - acc[Precision32]; d < -0.003 {
		t.Fatalf("bf16-mixed %.2f %% is %.2f points below float32's %.2f %%", 100*acc[PrecisionBF16Mixed], -100*d, 100*acc[Precision32])
	}
}
