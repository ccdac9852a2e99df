package forestgraph

import (
	"fmt"
	"testing"

	"github.com/gotrain/gotrain/forest"
)

// BenchmarkPredict times 10,000 rows through a 20-tree forest of depth ≤ 8
// on the CPU predictor and on the graph predictor (simplego, both
// strategies, compiled before timing).
func BenchmarkPredict(b *testing.B) {
	be := openSimpleGo(b)
	for _, set := range []struct {
		name string
		task forest.Task
	}{{"diabetes", forest.Regression}, {"digits", forest.Classification}} {
		ds := embedded(b, set.name)
		f, err := forest.Fit(ds, forest.Options{Task: set.task, Trees: 20, MaxDepth: 8, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		const rows = 10000
		x := queryRows(f, ds, rows, 1)
		b.Run(set.name+"/native", func(b *testing.B) {
			for b.Loop() {
				if _, err := f.PredictValues(x, rows); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, st := range []Strategy{Gather, Perfect} {
			for _, batch := range []int{1000, rows} {
				b.Run(fmt.Sprintf("%s/simplego-%s-batch%d", set.name, st, batch), func(b *testing.B) {
					p, err := NewPredictorWithOptions(be, f, batch, Options{Strategy: st})
					if err != nil {
						b.Fatal(err)
					}
					defer p.Close()
					if err := p.Compile(); err != nil {
						b.Fatal(err)
					}
					for b.Loop() {
						if _, err := p.PredictValues(x, rows); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}
