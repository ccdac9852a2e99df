package moe_test

import (
	"context"
	"fmt"
	"log"

	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/models/moe"
	"github.com/gotrain/gotrain/train"
)

// Train a small mixture of four experts on the embedded 8x8 digits, on
// gotrain's pure-Go CPU backend, and evaluate it on the held-out test
// images.
func ExampleTrain() {
	eng, backend, err := device.Open("cpu")
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()

	d, err := moe.Digits(0.1, 1) // 10% of the training images for validation
	if err != nil {
		log.Fatal(err)
	}
	cfg := train.DefaultConfig()
	cfg.Optimizer, cfg.LearningRate = train.OptimizerAdam, 0.005
	cfg.BatchSize, cfg.Epochs = 64, 4
	cfg.NoCheckpoint, cfg.Progress = true, train.ProgressOff

	res, err := moe.Train(context.Background(), backend, moe.Options{
		Model: moe.Config{Experts: 4, Hidden: []int{32}, TopK: 2, CapacityFactor: 2, BalanceAlpha: 0.01},
		Train: cfg,
		Data:  d,
	})
	if err != nil {
		log.Fatal(err)
	}
	train, val, test := d.Rows()
	fmt.Printf("data: %s, %d training, %d validation, %d test images\n", res.Data, train, val, test)
	fmt.Printf("experts: %d, epochs: %d, steps: %d, batch size: %d\n", res.Experts, res.Epochs, res.Steps, res.BatchSize)
	fmt.Println("test accuracy above 0.85:", res.TestAccuracy > 0.85)
	// Output:
	// data: digits (embedded 8x8), 1294 training, 143 validation, 360 test images
	// experts: 4, epochs: 4, steps: 80, batch size: 64
	// test accuracy above 0.85: true
}
