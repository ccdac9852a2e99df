package forest

import (
	"bytes"
	"encoding/csv"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/data"
)

// predictTrainCSV is the training data of the models FuzzPredictCSV
// predicts with: two named features and a class or a value.
const predictTrainCSV = `a,b,kind,value
1,10,cat,1.5
2,NA,dog,2.5
3,30,cat,3.5
4,40,"bird, ""big""",4.5
5,50,dog,5.5
6,,cat,6.5
7,70,dog,7.5
8,80,"bird, ""big""",8.5
`

// predictModels returns the models of `forest predict` in the fuzz target,
// each saved and loaded back as --model reads it: a classifier and a
// regressor on named features (a, b), and a regressor without feature
// names (tinyForest, four columns taken in order).
func predictModels(tb testing.TB) []*Forest {
	tb.Helper()
	var out []*Forest
	for _, c := range []struct {
		target string
		task   Task
	}{{"kind", Classification}, {"value", Regression}} {
		// The other target column is dropped: train on a, b only.
		var sb strings.Builder
		r := csv.NewReader(strings.NewReader(predictTrainCSV))
		w := csv.NewWriter(&sb)
		for {
			rec, err := r.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				tb.Fatal(err)
			}
			keep := []string{rec[0], rec[1], rec[2]}
			if c.task == Regression {
				keep[2] = rec[3]
			}
			if err := w.Write(keep); err != nil {
				tb.Fatal(err)
			}
		}
		w.Flush()
		d, err := data.ReadCSV(strings.NewReader(sb.String()), "train.csv", data.CSVOptions{Target: c.target, Classification: c.task == Classification})
		if err != nil {
			tb.Fatal(err)
		}
		f, err := Fit(d, Options{Task: c.task, Trees: 3, MaxDepth: 3, Bins: 8, Seed: 1, Threads: 1})
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, f)
	}
	out = append(out, tinyForest(tb, Regression))
	for i, f := range out {
		g, err := Load(bytes.NewReader(saveBytes(tb, f)))
		if err != nil {
			tb.Fatal(err)
		}
		out[i] = g
	}
	return out
}

// FuzzPredictCSV writes a fuzzed CSV file and goes through `forest predict
// --data FILE` with each model (data.LoadCSV without a target, then
// PredictData, with and without --proba, then the predictions CSV):
// nothing may panic; a refused file is named in the error; accepted data
// gives one prediction per row (a class index of the model, or with proba
// probabilities that sum to 1, or a finite value) and a predictions CSV of
// one header and one record per row.
func FuzzPredictCSV(f *testing.F) {
	models := predictModels(f)
	f.Add([]byte(predictTrainCSV), uint8(0)) // refused: kind is not a number
	f.Add([]byte("a,b\n1,10\n2,NA\n3,30\n4,40\n5,50\n6,\n"), uint8(0))
	f.Add([]byte("b,a\n1,2\n,\nNaN,NA\n1e308,-1e308\n"), uint8(4))
	f.Add([]byte("a,b,a2\n1,2,3\n"), uint8(1))
	f.Add([]byte("x0,x1,x2,x3\n1,2,3,4\n5,6,7,8\n"), uint8(2))
	f.Add([]byte("a\n1\n"), uint8(0))
	f.Add([]byte("a,b\n1,2,3\n"), uint8(0))
	f.Add([]byte("\uFEFFa;b\r\n1;2\r\n"), uint8(4))
	f.Add([]byte("a,b\n1,inf\n"), uint8(1))
	f.Add([]byte("a,b\n"), uint8(0))
	f.Fuzz(func(t *testing.T, in []byte, which uint8) {
		path := filepath.Join(t.TempDir(), "in.csv")
		if err := os.WriteFile(path, in, 0o644); err != nil {
			t.Fatal(err)
		}
		d, err := data.LoadCSV(path, data.CSVOptions{NoTarget: true})
		if err != nil {
			if d != nil {
				t.Fatal("a data set with an error")
			}
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error does not name %s: %v", path, err)
			}
			return
		}
		if d.Rows < 1 || d.Cols < 1 || len(d.X) != d.Rows*d.Cols || d.Y != nil || d.TargetName != "" || len(d.FeatureNames) != d.Cols {
			t.Fatalf("inconsistent prediction input: %d×%d, len X %d, Y %v, target %q, %d names", d.Rows, d.Cols, len(d.X), d.Y, d.TargetName, len(d.FeatureNames))
		}
		m := models[int(which%4)%len(models)]
		proba := which&4 != 0 && m.Options.Task == Classification
		p, err := m.PredictData(d, PredictOptions{Proba: proba})
		if err != nil {
			if !strings.Contains(err.Error(), d.Name) {
				t.Fatalf("error does not name the data (%s): %v", d.Name, err)
			}
			return
		}
		k := 1
		if proba {
			k = m.Outputs()
		}
		if p.Rows != d.Rows || len(p.Values) != d.Rows*k || p.Proba != proba {
			t.Fatalf("%d predictions (%d rows) for %d rows of %d outputs", len(p.Values), p.Rows, d.Rows, k)
		}
		for i := 0; i < d.Rows; i++ {
			row := p.Values[i*k : (i+1)*k]
			switch {
			case proba:
				sum := 0.0
				for _, v := range row {
					if !(v >= 0 && v <= 1) {
						t.Fatalf("row %d: probability %v", i+1, v)
					}
					sum += v
				}
				if math.Abs(sum-1) > 1e-9 {
					t.Fatalf("row %d: probabilities sum to %v", i+1, sum)
				}
			case m.Options.Task == Classification:
				if c := row[0]; c < 0 || int(c) >= len(m.Classes) || c != math.Trunc(c) {
					t.Fatalf("row %d: class %v of %d", i+1, c, len(m.Classes))
				}
			default:
				if math.IsNaN(row[0]) || math.IsInf(row[0], 0) {
					t.Fatalf("row %d: prediction %v", i+1, row[0])
				}
			}
		}
		var out bytes.Buffer
		if err := p.WriteCSV(&out); err != nil {
			t.Fatalf("predictions do not write: %v", err)
		}
		recs, err := csv.NewReader(&out).ReadAll()
		if err != nil || len(recs) != d.Rows+1 {
			t.Fatalf("predictions CSV: %d records for %d rows (%v)", len(recs), d.Rows, err)
		}
	})
}
