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
