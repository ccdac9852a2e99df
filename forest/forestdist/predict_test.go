package forestdist

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/dist"
	"github.com/gotrain/gotrain/forest"
)

// TestPredictFileShards: predicting a file's shards on 1 to 5 ranks (more
// ranks than some shards have lines: empty shards) gives rank 0 the
// values of one process predicting the whole file, in the file's order:
// values and class probabilities; a bad model fails every rank.
func TestPredictFileShards(t *testing.T) {
	dig, err := data.Digits()
	if err != nil {
		t.Fatal(err)
	}
	dig = shard(dig, 0, 300)
	f, err := forest.Fit(dig, forest.Options{Task: forest.Classification, Trees: 5, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	model := filepath.Join(dir, "m.gtf")
	if err := f.SaveFile(model); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString(strings.Join(f.Features, ",") + "\n")
	rows := 7
	for i := range rows {
		for j := range dig.Cols {
			if j > 0 {
				b.WriteString(",")
			}
			v := dig.X[i*dig.Cols+j]
			if i == 3 && j == 9 {
				b.WriteString("NaN")
				continue
			}
			b.WriteString(strconvG(v))
		}
		b.WriteString("\n")
	}
	csv := filepath.Join(dir, "x.csv")
	if err := os.WriteFile(csv, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	whole, err := data.LoadFile(csv, data.CSVOptions{NoTarget: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, proba := range []bool{false, true} {
		want, err := f.PredictData(whole, forest.PredictOptions{Proba: proba})
		if err != nil {
			t.Fatal(err)
		}
		for ranks := 1; ranks <= 5; ranks++ {
			comms := dist.Local(ranks)
			got := make([]*forest.Predictions, ranks)
			errs := make([]error, ranks)
			var wg sync.WaitGroup
			for r := range ranks {
				wg.Add(1)
				go func() {
					defer wg.Done()
					got[r], errs[r] = PredictFile(comms[r], model, csv, 0, forest.PredictOptions{Proba: proba})
				}()
			}
			wg.Wait()
			for r := range ranks {
				if errs[r] != nil {
					t.Fatalf("%d ranks: rank %d: %v", ranks, r, errs[r])
				}
				if (got[r] != nil) != (r == 0) {
					t.Fatalf("%d ranks: rank %d got predictions %v (rank 0 alone gathers)", ranks, r, got[r] != nil)
				}
			}
			g := got[0]
			if g.Rows != rows || !slices.EqualFunc(g.Values, want.Values, func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }) {
				t.Fatalf("proba %v, %d ranks: %d rows %v, want %d rows %v", proba, ranks, g.Rows, g.Values, rows, want.Values)
			}
		}
	}
	// A model file that does not load: every rank fails.
	comms := dist.Local(2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[r] = PredictFile(comms[r], csv, csv, 0, forest.PredictOptions{})
		}()
	}
	wg.Wait()
	for r, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "rank 0") {
			t.Fatalf("bad model: rank %d: %v", r, err)
		}
	}
}
