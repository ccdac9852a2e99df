package forestgraph

import (
	"fmt"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/forest"
)

// BenchmarkPredict times 10,000 rows through a 20-tree forest of depth ≤ 8
// on the CPU predictor and on the graph predictor (simplego, both
// strategies, compiled before timing).
func BenchmarkPredict(b *testing.B) {
	be := openTestBackend(b)
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

// BenchmarkFit times growing a forest with the native learner and with the
// graph learner on simplego, on the full embedded data sets: diabetes (442
// rows, 10 features) and digits (1797 rows, 64 features), and a deeper
// synthetic regression forest (4000 rows, 8 features). The graph fits
// include compiling their graphs (a new grower per fit); compile-ms/op and
// run-ms/op separate the two. Variants: "subtract" (scatter histograms with
// the parent-minus-sibling trick), "compact" (only the rows of frontier
// nodes scattered, no subtraction), "full" (every (tree, row) scattered
// per chunk) and "onehot" (compared on smaller forests; it is
// several times slower).
func BenchmarkFit(b *testing.B) {
	be := openTestBackend(b)
	deep := synthetic(4000, 8, false, 21)
	for _, set := range []struct {
		name     string
		ds       *data.Dataset
		task     forest.Task
		trees    int
		variants []string
	}{
		{"diabetes", embedded(b, "diabetes"), forest.Regression, 100, []string{"native", "subtract", "compact", "full"}},
		{"digits", embedded(b, "digits"), forest.Classification, 10, []string{"native", "subtract", "compact", "full"}},
		{"deep-synthetic", deep, forest.Regression, 10, []string{"native", "subtract", "compact", "full"}},
		{"diabetes", embedded(b, "diabetes"), forest.Regression, 20, []string{"subtract", "compact", "full", "onehot"}},
		{"digits", embedded(b, "digits"), forest.Classification, 3, []string{"subtract", "compact", "full", "onehot"}},
	} {
		opt := forest.Options{Task: set.task, Trees: set.trees, Seed: 1}
		for _, v := range set.variants {
			name := fmt.Sprintf("%s-%dtrees/%s", set.name, set.trees, v)
			if v == "native" {
				b.Run(name, func(b *testing.B) {
					for b.Loop() {
						if _, err := forest.Fit(set.ds, opt); err != nil {
							b.Fatal(err)
						}
					}
				})
				continue
			}
			gopt := GrowOptions{Subtract: SubtractOn}
			switch v {
			case "compact":
				gopt.Subtract = SubtractCompact
			case "full":
				gopt.Subtract = SubtractOff
			case "onehot":
				gopt = GrowOptions{Histogram: OneHotHistogram}
			}
			b.Run(name+"-simplego", func(b *testing.B) {
				var comp, run float64
				var rows int64
				var compiles int
				for b.Loop() {
					_, rep, err := Fit(be, set.ds, opt, gopt)
					if err != nil {
						b.Fatal(err)
					}
					comp += rep.CompileSeconds
					run += rep.RunSeconds
					rows += rep.ScatterRows
					compiles += rep.Compiles
				}
				b.ReportMetric(comp/float64(b.N)*1e3, "compile-ms/op")
				b.ReportMetric(run/float64(b.N)*1e3, "run-ms/op")
				b.ReportMetric(float64(rows)/float64(b.N), "scatter-rows/op")
				b.ReportMetric(float64(compiles)/float64(b.N), "compiles/op")
			})
		}
	}
}
