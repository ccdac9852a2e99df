package forest

import (
	"math/rand/v2"
	"testing"

	"github.com/gotrain/gotrain/data"
)

// makeRegression is like scikit-learn's make_regression(n, p, n_informative=10,
// noise=10): Gaussian features, a linear target on 10 of them, Gaussian noise.
func makeRegression(n, p int, seed uint64) Dataset {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := make([]float64, n*p)
	for i := range x {
		x[i] = float64(float32(rng.NormFloat64()))
	}
	w := make([]float64, p)
	for j := 0; j < min(10, p); j++ {
		w[j] = 100 * rng.Float64()
	}
	y := make([]float64, n)
	for i := range y {
		for j := 0; j < p; j++ {
			y[i] += x[i*p+j] * w[j]
		}
		y[i] += 10 * rng.NormFloat64()
	}
	return Dataset{X: x, Y: y, Rows: n, Cols: p}
}

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

func benchLarge(b *testing.B, n int) (Dataset, *Forest) {
	ds := makeRegression(n, 20, 0)
	f, err := Fit(ds, Options{Trees: 100, MaxDepth: 16})
	if err != nil {
		b.Fatal(err)
	}
	return ds, f
}

func BenchmarkFitRegression100k(b *testing.B) {
	ds := makeRegression(100000, 20, 0)
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
