package forestdist

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/dist"
	"github.com/gotrain/gotrain/forest"
)

// TestTrainShardsAFile: data-parallel Train on 3 ranks, each reading its
// byte range of a CSV file, and tree-parallel Train, give the model one
// process trains on the file; rank 0 alone scores the test file; the
// report counts every shard's rows.
func TestTrainShardsAFile(t *testing.T) {
	d := data.MakeRegression(900, 5, 4)
	dir := t.TempDir()
	write := func(name string, rows []int) string {
		var b strings.Builder
		header := append(append([]string{}, d.FeatureNames...), "y")
		b.WriteString(strings.Join(header, ",") + "\n")
		for _, i := range rows {
			for j := range d.Cols {
				b.WriteString(strconvG(d.X[i*d.Cols+j]) + ",")
			}
			b.WriteString(strconvG(d.Y[i]) + "\n")
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var tr, te []int
	for i := range d.Rows {
		if i%5 == 0 {
			te = append(te, i)
		} else {
			tr = append(tr, i)
		}
	}
	spec := forest.DataSpec{Train: write("train.csv", tr), Test: write("test.csv", te)}
	opt := forest.DefaultOptions()
	opt.Trees, opt.Seed, opt.Threads, opt.OOB = 5, 2, 1, true
	cfg := forest.TrainConfig{}
	split, err := forest.LoadData(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	o, err := split.TrainOptions(opt, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := forest.Train(split.Train, split.Test, o, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := ref.Forest.Save(&want); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{ModeData, ModeTrees} {
		comms := dist.Local(3)
		res := make([]*forest.TrainResult, 3)
		errs := make([]error, 3)
		var wg sync.WaitGroup
		for r := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res[r], errs[r] = Train(context.Background(), comms[r], mode, spec, opt, cfg)
			}()
		}
		wg.Wait()
		for r := range 3 {
			if errs[r] != nil {
				t.Fatalf("%s: rank %d: %v", mode, r, errs[r])
			}
			var got bytes.Buffer
			if err := res[r].Forest.Save(&got); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Fatalf("%s: rank %d's model differs from one process's", mode, r)
			}
			if res[r].TrainRows != len(tr) {
				t.Fatalf("%s: rank %d reports %d train rows, want %d", mode, r, res[r].TrainRows, len(tr))
			}
			if (res[r].TestMSE != nil) != (r == 0) {
				t.Fatalf("%s: rank %d: test MSE %v (rank 0 alone scores the test set)", mode, r, res[r].TestMSE)
			}
		}
		if *res[0].TestMSE != *ref.TestMSE {
			t.Fatalf("%s: test MSE %v, one process %v", mode, *res[0].TestMSE, *ref.TestMSE)
		}
	}
	// A hold-out split needs every row: refused on every rank.
	held := spec
	held.Test, held.Holdout = "", 0.2
	comms := dist.Local(2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[r] = Train(context.Background(), comms[r], ModeData, held, opt, cfg)
		}()
	}
	wg.Wait()
	for r, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "hold-out split needs every row") {
			t.Fatalf("hold-out: rank %d: %v", r, err)
		}
	}
}

func strconvG(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
