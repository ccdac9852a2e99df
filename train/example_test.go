package train_test

import (
	"errors"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"
	"sync"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/train/losses"

	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/dist"
	"github.com/gotrain/gotrain/train"
)

// linear is y = x·w + b with x [batch, 2].
func linear(ctx *context.Context, _ any, inputs []*graph.Node) []*graph.Node {
	g := inputs[0].Graph()
	w := ctx.In("linear").VariableWithShape("w", shapes.Make(dtypes.Float32, 2, 1)).ValueGraph(g)
	b := ctx.In("linear").VariableWithValue("b", []float32{0}).ValueGraph(g)
	return []*graph.Node{graph.Add(graph.Dot(inputs[0], w), graph.InsertAxes(b, 0))}
}

// lineData is y = 3·x₀ − 2·x₁ + 1 on 64 points.
func lineData() *train.Dataset {
	x, y := make([]float32, 128), make([]float32, 64)
	for i := range 64 {
		x[2*i], x[2*i+1] = float32(math.Sin(float64(i))), float32(math.Cos(float64(3*i)))
		y[i] = 3*x[2*i] - 2*x[2*i+1] + 1
	}
	d, err := train.NewDataset(x, 2, y, 1, 1, true)
	if err != nil {
		log.Fatal(err)
	}
	return d
}

// Train with a moving average of the weights (EMADecay), a CSV log beside
// the metrics log and TensorBoard events, then export the checkpoint's
// weights as safetensors: the averages, named by scope and variable.
func ExampleExportSafetensors() {
	eng, backend, err := device.Open("cpu")
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	cfg := train.DefaultConfig()
	cfg.Optimizer, cfg.LearningRate, cfg.BatchSize, cfg.Steps = train.OptimizerAdam, 0.05, 16, 20
	cfg.EMADecay = 0.9
	cfg.CheckpointDir = filepath.Join(dir, "runs")
	cfg.MetricsLog = filepath.Join(dir, "metrics.jsonl") // and metrics.csv beside it
	cfg.TensorBoardDir = filepath.Join(dir, "tb")
	cfg.Progress = train.ProgressOff
	h, err := train.New(backend, cfg, linear, losses.MeanSquaredError, lineData())
	if err != nil {
		log.Fatal(err)
	}
	res, err := h.Run()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("weights after Run are the averages:", res.EMA)
	fmt.Println("CSV log:", filepath.Base(res.CSVLog))

	rep, err := train.ExportSafetensors(cfg.CheckpointDir, filepath.Join(dir, "model.safetensors"), train.ExportOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("exported:", rep.Weights, "weights of step", rep.Step)
	for _, t := range rep.Tensors {
		fmt.Println(t.Name, t.DType, t.Shape)
	}
	// Output:
	// weights after Run are the averages: true
	// CSV log: metrics.csv
	// exported: ema weights of step 20
	// linear/b F32 [1]
	// linear/w F32 [2 1]
}

// Run the learning-rate range test instead of training (Config.FindLR):
// Run returns an *LRFound error holding the test, and writes no
// checkpoint.
func ExampleLRFound() {
	eng, backend, err := device.Open("cpu")
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()

	cfg := train.DefaultConfig()
	cfg.Optimizer, cfg.BatchSize, cfg.NoCheckpoint, cfg.Progress = train.OptimizerSGD, 16, true, train.ProgressOff
	cfg.FindLR, cfg.FindLRSteps, cfg.FindLRMin, cfg.FindLRMax = true, 60, 1e-4, 100
	h, err := train.New(backend, cfg, linear, losses.MeanSquaredError, lineData())
	if err != nil {
		log.Fatal(err)
	}
	res, err := h.Run()
	var found *train.LRFound
	if !errors.As(err, &found) {
		log.Fatal(err)
	}
	r := found.Test
	fmt.Println("diverged before the last step:", len(r.Points) < r.Steps)
	fmt.Println("suggestion below the lowest loss's learning rate:", r.SuggestedLR < r.MinLossLR)
	fmt.Println("training steps:", res.Steps)
	// Output:
	// diverged before the last step: true
	// suggestion below the lowest loss's learning rate: true
	// training steps: 0
}

// Train data parallel across two ranks: here two goroutines of one
// process (dist.Local); under an MPI launcher each process passes
// dist.World() instead. Each rank takes half of every batch of 16, the
// gradients are summed before each step, and the ranks end with the same
// weights as each other (and, but for the order of float sums, as one
// process with batch 16).
func ExampleConfig_comm() {
	comms := dist.Local(2)
	weights := make([]string, 2)
	var wg sync.WaitGroup
	for r, c := range comms {
		eng, backend, err := device.Open("cpu")
		if err != nil {
			log.Fatal(err)
		}
		defer eng.Close()
		wg.Go(func() {
			defer c.Close()
			cfg := train.DefaultConfig()
			cfg.Optimizer, cfg.LearningRate, cfg.BatchSize, cfg.Steps = train.OptimizerAdam, 0.05, 16, 20
			cfg.NoCheckpoint, cfg.Progress, cfg.Comm = true, train.ProgressOff, c
			h, err := train.New(backend, cfg, linear, losses.MeanSquaredError, lineData())
			if err != nil {
				log.Fatal(err)
			}
			if _, err := h.Run(); err != nil {
				log.Fatal(err)
			}
			for v := range h.Context().IterVariables() {
				if v.Trainable {
					t, _ := v.Value()
					weights[r] += fmt.Sprint(v.ScopeAndName(), t.Value())
				}
			}
			if r == 0 {
				fmt.Println("ranks:", h.Perf().Ranks, "- examples of each batch per rank:", cfg.BatchSize/cfg.Ranks())
			}
		})
	}
	wg.Wait()
	fmt.Println("same weights on both ranks:", weights[0] == weights[1])
	// Output:
	// ranks: 2 - examples of each batch per rank: 8
	// same weights on both ranks: true
}
