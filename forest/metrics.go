package forest

import "math"

// score is Score's metric: accuracy for classification, else R².
func score(task Task, pred, y []float64) float64 {
	if task == Classification {
		return Accuracy(pred, y)
	}
	return R2(pred, y)
}

// Accuracy returns the fraction of the rows whose prediction pred[i] is
// exactly the target y[i] (class indices); NaN when y is empty.
func Accuracy(pred, y []float64) float64 {
	ok := 0
	for i := range y {
		if pred[i] == y[i] {
			ok++
		}
	}
	return float64(ok) / float64(len(y))
}

// R2 returns the coefficient of determination of pred against y:
// 1 − Σ(pred−y)²/Σ(y−ȳ)²; NaN when y is constant.
func R2(pred, y []float64) float64 {
	var mean float64
	for _, v := range y {
		mean += v
	}
	mean /= float64(len(y))
	// The conversions round each square before it is added: without them
	// the compiler may fuse the multiply and the add into an FMA (it does
	// on arm64), and the score would depend on the architecture.
	var sse, sst float64
	for i := range y {
		sse += float64((pred[i] - y[i]) * (pred[i] - y[i]))
		sst += float64((y[i] - mean) * (y[i] - mean))
	}
	if sst == 0 {
		return math.NaN()
	}
	return 1 - sse/sst
}

// MeanSquaredError returns the mean squared error of pred against y; NaN
// when y is empty.
func MeanSquaredError(pred, y []float64) float64 {
	var s float64
	for i := range y {
		s += float64((pred[i] - y[i]) * (pred[i] - y[i])) // no FMA: see R2
	}
	return s / float64(len(y))
}
