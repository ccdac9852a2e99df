package charlstm

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/internal/stats"
	"github.com/gotrain/gotrain/train"
)

// BenchmarkLSTMTrainStep times one training step of the peer's char-LSTM
// shape (shared/peers/bench_torch.py (b): 2 layers of 512, vocabulary 91,
// sequence 100, batch 64, Adam, clipping 5) on gotrain's cpu backend and
// on GoMLX's simplego (go), and reports the median ms/step of the timed
// steps; the first step (graph building, compilation) is not timed. A
// step on simplego takes tens of seconds:
//
//	go test -run '^$' -bench 'LSTMTrainStep/cpu$' -benchtime 5x ./models/charlstm/
//	go test -run '^$' -bench 'LSTMTrainStep/go$' -benchtime 3x -timeout 30m ./models/charlstm/
func BenchmarkLSTMTrainStep(b *testing.B) {
	for _, name := range []string{"cpu", "go"} {
		b.Run(name, func(b *testing.B) { benchLSTMStep(b, name) })
	}
}

func benchLSTMStep(b *testing.B, dev string) {
	const vocab, seq, batch = 91, 100, 64
	_, be, err := device.Open(dev)
	if err != nil {
		b.Fatal(err)
	}
	defer be.Finalize()
	r := rand.New(rand.NewPCG(1, 1))
	n := 4 * batch
	x := make([]float32, n*seq)
	y := make([]float32, n*seq)
	for i := range x {
		x[i], y[i] = float32(r.IntN(vocab)), float32(r.IntN(vocab))
	}
	ds, err := train.NewDataset(x, seq, y, seq, 1, true)
	if err != nil {
		b.Fatal(err)
	}
	cfg := train.DefaultConfig()
	cfg.Optimizer = train.OptimizerAdam
	cfg.LearningRate = 0.002
	cfg.ClipNorm = 5
	cfg.Steps = 1 << 30
	cfg.BatchSize = batch
	cfg.NoCheckpoint = true
	arch := Arch{Vocab: vocab, Hidden: 512, Layers: 2}
	h, err := train.New(be, cfg, arch.ModelFn(), Loss, ds)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := h.TrainStep(); err != nil { // compile
		b.Fatal(err)
	}
	var ms []float64
	for b.Loop() {
		t0 := time.Now()
		if _, err := h.TrainStep(); err != nil {
			b.Fatal(err)
		}
		ms = append(ms, float64(time.Since(t0).Microseconds())/1e3)
	}
	b.ReportMetric(stats.Median(ms), "ms/step")
}
