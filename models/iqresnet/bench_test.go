package iqresnet

import (
	"os"
	"testing"

	"github.com/gotrain/gotrain/cpubackend"
	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/train"
)

// BenchmarkTrainStep times one training step of DefaultArch (24 classes,
// batch 32, Adam) on gotrain's cpu backend, the step `signal classify train
// --model resnet` repeats:
//
//	go test -run XXX -bench TrainStep ./models/iqresnet/
//
// With GOTRAIN_OPSTATS=FILE it also writes the backend's per-operation
// times of five steps to FILE, the most expensive first.
func BenchmarkTrainStep(b *testing.B) {
	const n, batch = 256, 32
	a := DefaultArch(24)
	x := randomWindows(a, n, 5)
	y := make([]float32, n)
	for i := range y {
		y[i] = float32(i % a.Classes)
	}
	_, be, err := device.Open("cpu")
	if err != nil {
		b.Fatal(err)
	}
	defer be.Finalize()
	ds, err := train.NewDataset(x, 2*a.Window, y, 1, 1, true)
	if err != nil {
		b.Fatal(err)
	}
	cfg := DefaultOptions().Train
	cfg.NoCheckpoint, cfg.Steps, cfg.BatchSize, cfg.Progress = true, 1<<30, batch, train.ProgressOff
	h, err := train.New(be, cfg, a.ModelFn(), Loss, ds)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := h.TrainStep(); err != nil { // compile
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := h.TrainStep(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "windows/s")
	b.StopTimer()
	if err := cpubackend.WriteOpStats(os.Getenv("GOTRAIN_OPSTATS"), 5, func() error { _, err := h.TrainStep(); return err }); err != nil {
		b.Fatal(err)
	}
}
