package forest_test

import (
	"context"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/forest"
)

// Fit a regression forest on the embedded diabetes data (80% of the rows),
// score it on the other 20% and save it.
func Example() {
	split, err := forest.LoadData(context.Background(), forest.DataSpec{Dataset: "diabetes"})
	if err != nil {
		log.Fatal(err)
	}
	f, err := forest.Fit(split.Train, forest.Options{Trees: 50, Seed: 1})
	if err != nil {
		log.Fatal(err)
	}
	pred, err := f.Predict(split.Test.X, split.Test.Rows)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d trees, test R² %.2f\n", len(f.Trees), forest.R2(pred, split.Test.Y))

	dir, err := os.MkdirTemp("", "forest-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := f.SaveFile(filepath.Join(dir, "diabetes.gtf")); err != nil {
		log.Fatal(err)
	}
	fmt.Println("saved")
	// Output:
	// 50 trees, test R² 0.51
	// saved
}

// Train does what `gotrain forest train --dataset digits` does: fit, then
// score the held-out rows.
func ExampleTrain() {
	split, err := forest.LoadData(context.Background(), forest.DataSpec{Dataset: "digits"})
	if err != nil {
		log.Fatal(err)
	}
	opt := forest.Options{Task: split.Task, Trees: 20, Seed: 1}
	r, err := forest.Train(split.Train, split.Test, opt, forest.TrainConfig{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %d trees, %d test rows, accuracy %.2f\n", r.Task, r.Trees, r.TestRows, *r.TestAccuracy)
	// Output:
	// classification: 20 trees, 360 test rows, accuracy 0.97
}

// Load a saved model and predict the rows of a data set, whose columns are
// found by name (here in another order than in training, with an extra one).
func ExampleLoadFile() {
	dir, err := os.MkdirTemp("", "forest-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.gtf")
	train := &data.Dataset{
		FeatureNames: []string{"width", "height"},
		X:            []float64{1, 1, 1, 2, 3, 3, 3, 4},
		Y:            []float64{0, 0, 1, 1},
		Rows:         4, Cols: 2,
		Classes: []string{"small", "large"},
	}
	f, err := forest.Fit(train, forest.Options{Task: forest.Classification, Trees: 5, NoBootstrap: true, MaxFeatures: "all"})
	if err != nil {
		log.Fatal(err)
	}
	if err := f.SaveFile(path); err != nil {
		log.Fatal(err)
	}

	model, err := forest.LoadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	in := &data.Dataset{
		Name:         "input",
		FeatureNames: []string{"height", "id", "width"},
		X:            []float64{4, 7, 3, 1, 8, 1},
		Rows:         2, Cols: 3,
	}
	p, err := model.PredictData(in, forest.PredictOptions{})
	if err != nil {
		log.Fatal(err)
	}
	if err := p.WriteCSV(os.Stdout); err != nil {
		log.Fatal(err)
	}
	// Output:
	// prediction
	// large
	// small
}

// SHAP explains a prediction: each feature's contribution, which with the
// forest's expected value adds up to the prediction (what `gotrain forest
// explain` writes).
func ExampleForest_SHAP() {
	d, err := data.Diabetes()
	if err != nil {
		log.Fatal(err)
	}
	f, err := forest.Fit(d, forest.Options{Trees: 20, Seed: 1})
	if err != nil {
		log.Fatal(err)
	}
	row := d.Row(0)
	ex, err := f.SHAP(row, 1)
	if err != nil {
		log.Fatal(err)
	}
	pred, err := f.Predict(row, 1)
	if err != nil {
		log.Fatal(err)
	}
	sum, top := ex.Expected[0], 0
	for j, v := range ex.Values {
		sum += v
		if math.Abs(v) > math.Abs(ex.Values[top]) {
			top = j
		}
	}
	fmt.Printf("prediction %.1f = expected value %.1f + contributions %.1f\n", pred[0], ex.Expected[0], sum-ex.Expected[0])
	fmt.Printf("largest contribution: %s %+.1f\n", f.Features[top], ex.Values[top])
	// Output:
	// prediction 181.9 = expected value 150.9 + contributions 31.0
	// largest contribution: bmi +23.3
}

// Extremely randomized trees: Options.Splitter Random (scikit-learn's
// ExtraTreesRegressor, which also grows on every row: NoBootstrap).
func ExampleOptions_splitter() {
	split, err := forest.LoadData(context.Background(), forest.DataSpec{Dataset: "diabetes"})
	if err != nil {
		log.Fatal(err)
	}
	f, err := forest.Fit(split.Train, forest.Options{Trees: 50, Seed: 1, Splitter: forest.Random, NoBootstrap: true})
	if err != nil {
		log.Fatal(err)
	}
	pred, err := f.Predict(split.Test.X, split.Test.Rows)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("extremely randomized trees: test R² %.2f\n", forest.R2(pred, split.Test.Y))
	// Output:
	// extremely randomized trees: test R² 0.48
}

// PredictQuantiles gives prediction intervals (quantile regression
// forests) of a forest fitted with KeepLeafSamples.
func ExampleForest_PredictQuantiles() {
	split, err := forest.LoadData(context.Background(), forest.DataSpec{Dataset: "diabetes"})
	if err != nil {
		log.Fatal(err)
	}
	f, err := forest.Fit(split.Train, forest.Options{Trees: 100, Seed: 1, MinSamplesLeaf: 5, KeepLeafSamples: true})
	if err != nil {
		log.Fatal(err)
	}
	q, err := f.PredictQuantiles(split.Test.X, split.Test.Rows, []float64{0.05, 0.95})
	if err != nil {
		log.Fatal(err)
	}
	in := 0
	for i, y := range split.Test.Y {
		if y >= q[2*i] && y <= q[2*i+1] {
			in++
		}
	}
	fmt.Printf("the 5-95%% interval holds %d of %d test targets\n", in, split.Test.Rows)
	// Output:
	// the 5-95% interval holds 82 of 89 test targets
}

// Sample weights come with the data (data.Dataset.Weights, or a CSV
// column: data.CSVOptions.Weight); class weights are an option. Without
// bootstrap, a weight of 2 fits as the row twice.
func ExampleOptions_classWeight() {
	d, err := data.Digits()
	if err != nil {
		log.Fatal(err)
	}
	f, err := forest.Fit(d, forest.Options{Task: forest.Classification, Trees: 20, Seed: 1, ClassWeight: "balanced", OOB: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d classes weighted %q, out-of-bag accuracy %.2f\n", len(f.Classes), f.Options.ClassWeight, f.OOBScore)
	// Output:
	// 10 classes weighted "balanced", out-of-bag accuracy 0.94
}

// Fit a forest on a CSV column of text categories (categorical without
// being declared), then predict rows whose categories come in another
// order, one of them never seen in training: it follows the heavier side
// of each split, here the cheap fruits.
func Example_categorical() {
	var train strings.Builder
	train.WriteString("fruit,price\n")
	for i := range 60 {
		fruit := []string{"apple", "cherry", "banana", "apple", "kiwi"}[i%5]
		price := map[string]float64{"apple": 1, "banana": 1, "cherry": 5, "kiwi": 5}[fruit]
		fmt.Fprintf(&train, "%s,%v\n", fruit, price)
	}
	d, err := data.ReadCSV(strings.NewReader(train.String()), "fruit.csv", data.CSVOptions{})
	if err != nil {
		log.Fatal(err)
	}
	f, err := forest.Fit(d, forest.Options{Trees: 5, MaxDepth: 1, Seed: 1})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("categories:", f.Binner.Categories[0])
	fmt.Println("root sends left:", f.Trees[0].Sets[0].Has(0), f.Trees[0].Sets[0].Has(1), f.Trees[0].Sets[0].Has(2), f.Trees[0].Sets[0].Has(3))
	rows, err := data.ReadCSV(strings.NewReader("fruit\nkiwi\nbanana\nmango\n"), "new.csv", data.CSVOptions{NoTarget: true})
	if err != nil {
		log.Fatal(err)
	}
	p, err := f.PredictData(rows, forest.PredictOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("predictions: %.2f\n", p.Values)
	// Output:
	// categories: [apple banana cherry kiwi]
	// root sends left: true true false false
	// predictions: [5.00 1.00 1.00]
}

// A fitted tree's nodes in breadth-first order: each split's feature,
// threshold and children, each leaf's value and rows (the tree of a
// depth-2 forest on the diabetes data, grown on every row).
func ExampleTree() {
	d, err := data.Diabetes()
	if err != nil {
		log.Fatal(err)
	}
	f, err := forest.Fit(d, forest.Options{Trees: 1, MaxDepth: 2, NoBootstrap: true, MaxFeatures: "all"})
	if err != nil {
		log.Fatal(err)
	}
	tr := &f.Trees[0]
	for i := range tr.NumNodes() {
		if tr.Feature[i] < 0 {
			fmt.Printf("node %d: leaf, value %.1f from %d rows\n", i, tr.Value[i], tr.Samples(i))
			continue
		}
		fmt.Printf("node %d: %s <= %.4f to node %d, else node %d\n", i, f.Features[tr.Feature[i]], tr.Threshold(i), tr.Left[i], tr.Left[i]+1)
	}
	// Output:
	// node 0: s5 <= 4.6002 to node 1, else node 2
	// node 1: bmi <= 26.9500 to node 3, else node 4
	// node 2: bmi <= 27.7500 to node 5, else node 6
	// node 3: leaf, value 96.3 from 171 rows
	// node 4: leaf, value 159.7 from 47 rows
	// node 5: leaf, value 162.7 from 116 rows
	// node 6: leaf, value 225.9 from 108 rows
}
