package forest

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/gotrain/gotrain/data"
)

func BenchmarkFitDiabetes(b *testing.B) {
	d, err := data.Diabetes()
	if err != nil {
		b.Fatal(err)
	}
	tr, _ := data.TrainTestSplit(d.Rows, 0.2, 42)
	train := toDS(d, tr)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Fit(train, Options{Trees: 200, MaxDepth: 16}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFitDigits(b *testing.B) {
	d, err := data.Digits()
	if err != nil {
		b.Fatal(err)
	}
	train := toDS(d, all(d.Rows))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Fit(train, Options{Task: Classification, Trees: 100}); err != nil {
			b.Fatal(err)
		}
	}
}

func benchLarge(b *testing.B, n int) (*data.Dataset, *Forest) {
	ds := data.MakeRegression(n, 20, 0)
	f, err := Fit(ds, Options{Trees: 100, MaxDepth: 16})
	if err != nil {
		b.Fatal(err)
	}
	return ds, f
}

func BenchmarkFitRegression100k(b *testing.B) {
	ds := data.MakeRegression(100000, 20, 0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Fit(ds, Options{Trees: 100, MaxDepth: 16}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPredictRegression100k(b *testing.B) {
	ds, f := benchLarge(b, 100000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := f.Predict(ds.X, ds.Rows); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFitMNIST fits issue #19's classification workload: MNIST's
// 60,000 training rows, default classification options (sqrt features).
// -mnist-trees sets the tree count (default 10; the figure is 100).
func BenchmarkFitMNIST(b *testing.B) {
	train := mnistTrain(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Fit(train, Options{Task: Classification, Trees: *mnistTrees}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFitMNISTColumns is BenchmarkFitMNIST on MNIST read as
// `gotrain forest train --dataset mnist` reads it: bytes, a column at a
// time (data.OpenMNIST), binned column by column.
func BenchmarkFitMNISTColumns(b *testing.B) {
	dir := filepath.Join("..", "..", "shared", "data", "mnist")
	train, _, err := data.OpenMNIST(dir, 0)
	if err != nil {
		b.Skipf("MNIST not at %s (../shared/data): %v", dir, err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Fit(train, Options{Task: Classification, Trees: *mnistTrees}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFitWeighted compares fits with and without weights of the same
// shape (issue #20: a weighted fit costs at most 1.2x an unweighted one):
// digits (all 1,797 rows, 100 trees) unweighted, with balanced class
// weights and with fractional sample weights; 20,000 x 20 regression (100
// trees, depth 16) unweighted and with fractional sample weights.
func BenchmarkFitWeighted(b *testing.B) {
	dig, err := data.Digits()
	if err != nil {
		b.Fatal(err)
	}
	dig = toDS(dig, all(dig.Rows))
	reg := data.MakeRegression(20000, 20, 1)
	frac := func(n int) []float64 {
		w := make([]float64, n)
		for i := range w {
			w[i] = 0.5 + float64(i%7)/4
		}
		return w
	}
	weighted := func(d *data.Dataset) *data.Dataset {
		w := *d
		w.Weights = frac(d.Rows)
		return &w
	}
	for _, c := range []struct {
		name string
		d    *data.Dataset
		opt  Options
	}{
		{"digits/none", dig, Options{Task: Classification, Trees: 100}},
		{"digits/class-balanced", dig, Options{Task: Classification, Trees: 100, ClassWeight: "balanced"}},
		{"digits/sample", weighted(dig), Options{Task: Classification, Trees: 100}},
		{"regression20k/none", reg, Options{Trees: 100, MaxDepth: 16}},
		{"regression20k/sample", weighted(reg), Options{Trees: 100, MaxDepth: 16}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := Fit(c.d, c.opt); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFitCategorical compares fits of the same shape with features
// read as numbers and as categories (issue #20: a categorical fit costs at
// most 1.2x a numeric one): 20,000 x 20 make_regression (100 trees, depth
// 16) with 5 features cut into 32 levels each; digits (all 1,797 rows, 100
// trees), whose 64 pixels take 17 levels, with 16 of them categorical (10
// classes: one-vs-rest orderings) and with 2 classes (digit < 5).
func BenchmarkFitCategorical(b *testing.B) {
	reg := data.MakeRegression(20000, 20, 1)
	levels(reg, 5, 32)
	dig, err := data.Digits()
	if err != nil {
		b.Fatal(err)
	}
	dig = toDS(dig, all(dig.Rows))
	bin := dig.Clone()
	for i, y := range bin.Y {
		bin.Y[i] = float64(b2i(y < 5))
	}
	asCategories := func(d *data.Dataset, cols, k int) *data.Dataset {
		c := d.Clone()
		c.Categories = make([][]string, c.Cols)
		for j := range cols {
			c.Categories[j] = make([]string, k)
			for q := range k {
				c.Categories[j][q] = fmt.Sprintf("%03d", q)
			}
		}
		return c
	}
	for _, c := range []struct {
		name string
		d    *data.Dataset
		opt  Options
	}{
		{"regression20k/numeric", reg, Options{Trees: 100, MaxDepth: 16}},
		{"regression20k/categorical", asCategories(reg, 5, 32), Options{Trees: 100, MaxDepth: 16}},
		{"digits/numeric", dig, Options{Task: Classification, Trees: 100}},
		{"digits/categorical", asCategories(dig, 16, 17), Options{Task: Classification, Trees: 100}},
		{"digits2/numeric", bin, Options{Task: Classification, Trees: 100}},
		{"digits2/categorical", asCategories(bin, 16, 17), Options{Task: Classification, Trees: 100}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := Fit(c.d, c.opt); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// levels cuts the first cols features of d into k levels 0..k-1 of equal
// width over each feature's range.
func levels(d *data.Dataset, cols, k int) {
	for j := range cols {
		lo, hi := math.Inf(1), math.Inf(-1)
		for i := range d.Rows {
			lo, hi = min(lo, d.X[i*d.Cols+j]), max(hi, d.X[i*d.Cols+j])
		}
		for i := range d.Rows {
			v := &d.X[i*d.Cols+j]
			*v = math.Min(float64(k-1), math.Floor((*v-lo)/(hi-lo)*float64(k)))
		}
	}
}
