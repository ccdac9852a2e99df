package forestgraph_test

import (
	"context"
	"fmt"
	"log"
	"reflect"

	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/forest"
	"github.com/gotrain/gotrain/forest/forestgraph"
)

// Grow a forest as GoMLX graphs on the pure-Go backend (simplego): the
// trees are forest.Fit's, node for node, and so are the predictions.
func ExampleFit() {
	// Package device opens backends; a program gets one from device.Select
	// or device.Open and hands it to forestgraph.
	_, backend, err := device.Open("go")
	if err != nil {
		log.Fatal(err)
	}
	defer backend.Finalize()

	split, err := forest.LoadData(context.Background(), forest.DataSpec{Dataset: "diabetes"})
	if err != nil {
		log.Fatal(err)
	}
	opt := forest.Options{Trees: 4, MaxDepth: 5, Seed: 1, OOB: true}
	f, rep, err := forestgraph.Fit(backend, split.Train, opt, forestgraph.GrowOptions{})
	if err != nil {
		log.Fatal(err)
	}
	native, err := forest.Fit(split.Train, opt)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("trees:", len(f.Trees), "grown in batches of", rep.TreesPerBatch)
	fmt.Println("same trees as forest.Fit:", reflect.DeepEqual(f.Trees, native.Trees))
	fmt.Println("same OOB score:", f.OOBScore == native.OOBScore)

	// The inference graph predicts the same bits as the native predictor.
	p, err := forestgraph.NewPredictor(backend, f, 64)
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	got, err := p.Predict(split.Test.X, split.Test.Rows)
	if err != nil {
		log.Fatal(err)
	}
	want, err := native.Predict(split.Test.X, split.Test.Rows)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("same predictions:", reflect.DeepEqual(got, want))
	fmt.Printf("first predictions: %.1f\n", got[:3])
	// Output:
	// trees: 4 grown in batches of 4
	// same trees as forest.Fit: true
	// same OOB score: true
	// same predictions: true
	// first predictions: [205.7 169.8 271.4]
}
