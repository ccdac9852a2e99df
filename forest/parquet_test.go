package forest

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/gotrain/gotrain/data"
)

// writeTableFiles writes a table of float64 columns (names, row-major
// values) plus, when text is not nil, text columns (name → one value per
// row) after them, as CSV and as Parquet into dir, and returns both paths.
// Numbers are written in their shortest form, so both files hold the same
// values.
func writeTableFiles(t *testing.T, dir, base string, names []string, x []float64, text map[string][]string) (csvPath, pqPath string) {
	t.Helper()
	cols := len(names)
	rows := len(x) / cols
	textNames := make([]string, 0, len(text))
	for n := range text {
		textNames = append(textNames, n)
	}
	slices.Sort(textNames)

	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write(append(slices.Clone(names), textNames...))
	rec := make([]string, cols+len(textNames))
	for i := range rows {
		for j := range cols {
			rec[j] = strconv.FormatFloat(x[i*cols+j], 'g', -1, 64)
		}
		for k, n := range textNames {
			rec[cols+k] = text[n][i]
		}
		w.Write(rec)
	}
	w.Flush()
	csvPath = filepath.Join(dir, base+".csv")
	if err := os.WriteFile(csvPath, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	mem := memory.NewGoAllocator()
	var fields []arrow.Field
	var arrays []arrow.Array
	for j, n := range names {
		b := array.NewFloat64Builder(mem)
		for i := range rows {
			b.Append(x[i*cols+j])
		}
		fields = append(fields, arrow.Field{Name: n, Type: arrow.PrimitiveTypes.Float64})
		arrays = append(arrays, b.NewArray())
	}
	for _, n := range textNames {
		b := array.NewStringBuilder(mem)
		b.AppendValues(text[n], nil)
		fields = append(fields, arrow.Field{Name: n, Type: arrow.BinaryTypes.String})
		arrays = append(arrays, b.NewArray())
	}
	batch := array.NewRecordBatch(arrow.NewSchema(fields, nil), arrays, int64(rows))
	defer batch.Release()
	buf.Reset()
	pw, err := pqarrow.NewFileWriter(batch.Schema(), &buf, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(100)), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := pw.Write(batch); err != nil {
		t.Fatal(err)
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	pqPath = filepath.Join(dir, base+".parquet")
	if err := os.WriteFile(pqPath, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return csvPath, pqPath
}

// TestParquetFitMatchesCSV fits forests on the same data read from CSV and
// from Parquet (data.LoadFile) and requires byte-identical model files: a
// regression on the diabetes data, and a classification with text labels
// and a text (categorical) feature on the digits.
func TestParquetFitMatchesCSV(t *testing.T) {
	dir := t.TempDir()
	diab, err := data.Diabetes()
	if err != nil {
		t.Fatal(err)
	}
	dig, err := data.Digits()
	if err != nil {
		t.Fatal(err)
	}
	// Digits with text labels and a categorical text feature.
	labels := make([]string, dig.Rows)
	ink := make([]string, dig.Rows)
	for i := range dig.Rows {
		labels[i] = "digit " + strconv.Itoa(int(dig.Y[i]))
		ink[i] = []string{"light", "medium", "heavy", "NA"}[int(dig.X[i*dig.Cols+20])%4]
	}
	tests := []struct {
		name  string
		names []string
		x     []float64
		text  map[string][]string
		opts  data.CSVOptions
		fit   Options
	}{
		{"diabetes regression", append(slices.Clone(diab.FeatureNames), "target"), withTarget(diab), nil,
			data.CSVOptions{Target: "target"}, Options{Trees: 5, Seed: 7}},
		{"digits, text labels and feature", dig.FeatureNames, dig.X, map[string][]string{"ink": ink, "label": labels},
			data.CSVOptions{Target: "label", Classification: true}, Options{Task: Classification, Trees: 5, Seed: 3}},
	}
	for k, tt := range tests {
		csvPath, pqPath := writeTableFiles(t, dir, fmt.Sprint("t", k), tt.names, tt.x, tt.text)
		var models [3][]byte
		for m, p := range []string{csvPath, pqPath, pqPath} {
			load := data.LoadFile
			if m == 2 { // the features read one column at a time by Fit
				load = data.OpenFile
			}
			d, err := load(p, tt.opts)
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			if m == 2 && (d.X != nil || d.Source == nil) {
				t.Fatalf("%s: OpenFile read the features", tt.name)
			}
			if tt.text != nil && m < 2 && !d.HasCategories() {
				t.Fatalf("%s: %s: no categorical feature", tt.name, p)
			}
			f, err := Fit(d, tt.fit)
			if err != nil {
				t.Fatalf("%s: fit on %s: %v", tt.name, p, err)
			}
			var buf bytes.Buffer
			if err := f.Save(&buf); err != nil {
				t.Fatal(err)
			}
			models[m] = buf.Bytes()
		}
		if !bytes.Equal(models[0], models[1]) {
			t.Errorf("%s: the models fitted on CSV and on Parquet differ (%d and %d bytes)", tt.name, len(models[0]), len(models[1]))
		}
		if !bytes.Equal(models[0], models[2]) {
			t.Errorf("%s: the model fitted from Parquet columns read one at a time differs from CSV's", tt.name)
		}
		// The command's path: LoadData opens a Parquet file without a
		// hold-out lazily, and with one reads it whole.
		for _, holdout := range []float64{NoHoldout, 0.25} {
			var fits [2][]byte
			for m, p := range []string{csvPath, pqPath} {
				sp, err := LoadData(context.Background(), DataSpec{Train: p, Target: tt.opts.Target, Task: tt.fit.Task, Holdout: holdout})
				if err != nil {
					t.Fatal(err)
				}
				if lazy := sp.Train.Source != nil; lazy != (m == 1 && holdout < 0) {
					t.Errorf("%s: %s holdout %v: lazily opened %v", tt.name, p, holdout, lazy)
				}
				r, err := Train(sp.Train, sp.Test, tt.fit, TrainConfig{})
				if err != nil {
					t.Fatal(err)
				}
				var buf bytes.Buffer
				if err := r.Forest.Save(&buf); err != nil {
					t.Fatal(err)
				}
				fits[m] = buf.Bytes()
			}
			if !bytes.Equal(fits[0], fits[1]) {
				t.Errorf("%s holdout %v: LoadData+Train gives other models from CSV and Parquet", tt.name, holdout)
			}
		}
	}
}

// withTarget returns d's features with its target as a last column.
func withTarget(d *data.Dataset) []float64 {
	x := make([]float64, 0, d.Rows*(d.Cols+1))
	for i := range d.Rows {
		x = append(x, d.Row(i)...)
		x = append(x, d.Y[i])
	}
	return x
}

// TestPredictionsParquet writes predictions as Parquet and as CSV and
// requires the two to read back as the same data set.
func TestPredictionsParquet(t *testing.T) {
	reg := &Forest{Options: Options{Task: Regression}}
	cls := &Forest{Options: Options{Task: Classification}, Classes: []string{"cat", "dog", "a,b"}}
	many := make([]float64, parquetRowGroup+3) // two row groups
	for i := range many {
		many[i] = float64(i%1000) / 8
	}
	tests := []struct {
		name string
		p    Predictions
		err  string
	}{
		{"regression", Predictions{Forest: reg, Rows: 3, Values: []float64{1.5, 0.1, 1e21}}, ""},
		{"two row groups", Predictions{Forest: reg, Rows: len(many), Values: many}, ""},
		{"class labels", Predictions{Forest: cls, Rows: 4, Values: []float64{1, 0, 2, 1}}, ""},
		{"probabilities", Predictions{Forest: cls, Rows: 2, Proba: true, Values: []float64{0.5, 0.25, 0.25, 0, 1, 0}}, ""},
		{"quantiles", Predictions{Forest: reg, Rows: 2, Quantiles: []float64{0.1, 0.5, 0.9}, Values: []float64{1, 2, 3, 4, 5, 6}}, ""},
		{"probabilities, short", Predictions{Forest: cls, Rows: 2, Proba: true, Values: []float64{1, 0, 0}}, "3 values for 2 rows of 3 columns"},
		{"not a class", Predictions{Forest: cls, Rows: 1, Values: []float64{3}}, "prediction 3 is not a class index"},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		var pq, cs bytes.Buffer
		err := tt.p.WriteParquet(&pq)
		if (tt.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.err)
			continue
		}
		if err != nil {
			continue
		}
		if err := tt.p.WriteCSV(&cs); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "p.parquet")
		if err := os.WriteFile(path, pq.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := data.LoadParquet(path, data.CSVOptions{NoTarget: true})
		if err != nil {
			t.Errorf("%s: reading back: %v", tt.name, err)
			continue
		}
		want, err := data.ReadCSV(&cs, "p.csv", data.CSVOptions{NoTarget: true})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.FeatureNames, want.FeatureNames) || !sameBits(got.X, want.X) ||
			fmt.Sprint(got.Categories) != fmt.Sprint(want.Categories) {
			t.Errorf("%s: read back %q %v %q, want %q %v %q", tt.name, got.FeatureNames, head(got.X), got.Categories, want.FeatureNames, head(want.X), want.Categories)
		}
	}

	// WriteFile picks Parquet by the name.
	p := Predictions{Forest: cls, Rows: 2, Values: []float64{2, 0}}
	for name, magic := range map[string]string{"p.parquet": "PAR1", "P.PARQUET": "PAR1", "p.csv": "predi", "parquet": "predi"} {
		path := filepath.Join(dir, name)
		if err := p.WriteFile(path); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil || !bytes.HasPrefix(b, []byte(magic)) {
			t.Errorf("WriteFile(%s) wrote %.8q (%v), want it to start with %q", name, b, err, magic)
		}
	}
}

// head returns the first values of x, for messages.
func head(x []float64) []float64 { return x[:min(len(x), 8)] }
