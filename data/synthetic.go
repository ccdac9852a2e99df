package data

import (
	"math/rand/v2"
	"strconv"
)

// MakeRegression returns a data set like scikit-learn's make_regression(n,
// p, n_informative=10, noise=10): Gaussian features rounded to float32, a
// linear target on the first min(10, p) of them with weights in [0, 100), and
// Gaussian noise of standard deviation 10. The same seed gives the same data,
// bit for bit on every architecture.
// (It is not scikit-learn's stream: compare models on files exported from
// scikit-learn when the exact rows matter.)
func MakeRegression(n, p int, seed uint64) *Dataset {
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
			// The conversion rounds the product, so that no
			// architecture fuses it with the sum into an FMA: the same
			// seed gives the same bits on amd64 and arm64.
			y[i] += float64(x[i*p+j] * w[j])
		}
		// Rounded to float32 as the features are: math/rand/v2's
		// NormFloat64 can differ in its last bits between architectures.
		y[i] += float64(float32(10 * rng.NormFloat64()))
	}
	names := make([]string, p)
	for j := range names {
		names[j] = "x" + strconv.Itoa(j)
	}
	return &Dataset{Name: "make_regression", FeatureNames: names, TargetName: "y", X: x, Y: y, Rows: n, Cols: p}
}
