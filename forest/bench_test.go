package forest

import (
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
