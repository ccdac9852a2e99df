package forest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/data"
)

func TestFeatureMatrix(t *testing.T) {
	named := &Forest{Features: []string{"b", "a"}, NumFeatures: 2}
	unnamed := &Forest{NumFeatures: 2}
	in := &data.Dataset{Name: "in.csv", FeatureNames: []string{"a", "x", "b"}, X: []float64{1, 2, 3, 4, 5, 6}, Rows: 2, Cols: 3}
	two := &data.Dataset{Name: "two.csv", FeatureNames: []string{"p", "q"}, X: []float64{1, 2, 3, 4}, Rows: 2, Cols: 2}
	tests := []struct {
		name string
		f    *Forest
		d    *data.Dataset
		want []float64
		err  string
	}{
		{"by name, reordered, extra column ignored", named, in, []float64{3, 1, 6, 4}, ""},
		{"missing column", named, two, nil, `two.csv: column "b", which the model needs, is missing`},
		{"missing column, unnamed data", named, &data.Dataset{FeatureNames: []string{"a"}, Cols: 1}, nil, `the data: column "b"`},
		{"no names: in order", unnamed, two, []float64{1, 2, 3, 4}, ""},
		{"no names: wrong width", unnamed, in, nil, "in.csv has 3 columns, the model wants 2"},
		{"no rows", named, &data.Dataset{FeatureNames: []string{"a", "b"}, Cols: 2}, []float64{}, ""},
		{"nil", named, nil, nil, "nil data set"},
	}
	for _, tt := range tests {
		x, err := tt.f.FeatureMatrix(tt.d)
		if (tt.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.err)
			continue
		}
		if !slices.Equal(x, tt.want) {
			t.Errorf("%s: x = %v, want %v", tt.name, x, tt.want)
		}
	}
}

// fixedPredictor returns fixed values and records its calls.
type fixedPredictor struct {
	v     []float64
	calls []string
}

func (p *fixedPredictor) Predict(x []float64, rows int) ([]float64, error) {
	p.calls = append(p.calls, "Predict")
	return p.v, nil
}

func (p *fixedPredictor) PredictValues(x []float64, rows int) ([]float64, error) {
	p.calls = append(p.calls, "PredictValues")
	return p.v, nil
}

func TestPredictData(t *testing.T) {
	diab, err := LoadData(context.Background(), DataSpec{Dataset: "diabetes"})
	if err != nil {
		t.Fatal(err)
	}
	reg := fitOrFail(t, diab.Train, Options{Trees: 3, Seed: 1})
	dig, err := LoadData(context.Background(), DataSpec{Dataset: "digits"})
	if err != nil {
		t.Fatal(err)
	}
	cls := fitOrFail(t, dig.Train, Options{Task: Classification, Trees: 3, Seed: 1})
	// The test rows with their columns reversed and a target: found by name.
	rev := func(d *data.Dataset) *data.Dataset {
		r := d.Clone()
		slices.Reverse(r.FeatureNames)
		for i := range r.Rows {
			slices.Reverse(r.Row(i))
		}
		return r
	}
	tests := []struct {
		name      string
		f         *Forest
		d         *data.Dataset
		opt       PredictOptions
		want      func(x []float64, rows int) ([]float64, error)
		calls     []string
		err       string
		predictor *fixedPredictor
	}{
		{name: "regression", f: reg, d: rev(diab.Test), want: reg.Predict},
		{name: "classes", f: cls, d: rev(dig.Test), want: cls.Predict},
		{name: "probabilities", f: cls, d: rev(dig.Test), opt: PredictOptions{Proba: true}, want: cls.PredictValues},
		{name: "probabilities of a regression", f: reg, d: diab.Test, opt: PredictOptions{Proba: true}, err: "class probabilities need a classification model, not regression"},
		{name: "missing column", f: reg, d: dig.Test, err: `column "age"`},
		{name: "other predictor", f: reg, d: diab.Test, predictor: &fixedPredictor{v: []float64{7}}, calls: []string{"Predict"}},
		{name: "other predictor, probabilities", f: cls, d: dig.Test, opt: PredictOptions{Proba: true}, predictor: &fixedPredictor{v: []float64{7}}, calls: []string{"PredictValues"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.predictor != nil {
				tt.opt.Predictor = tt.predictor
			}
			p, err := tt.f.PredictData(tt.d, tt.opt)
			if (tt.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("err = %v, want %q", err, tt.err)
			}
			if err != nil {
				return
			}
			if p.Rows != tt.d.Rows || p.Trees != 3 || p.Forest != tt.f || p.Proba != tt.opt.Proba || p.Seconds < 0 {
				t.Errorf("predictions %+v", p)
			}
			if tt.predictor != nil {
				if !slices.Equal(tt.predictor.calls, tt.calls) || !slices.Equal(p.Values, tt.predictor.v) {
					t.Errorf("predictor calls %v values %v, want %v", tt.predictor.calls, p.Values, tt.calls)
				}
				return
			}
			orig := diab.Test
			if tt.f == cls {
				orig = dig.Test
			}
			want, _ := tt.want(orig.X, orig.Rows)
			if !slices.Equal(p.Values, want) {
				t.Error("the predictions differ from the forest's on the columns in training order")
			}
		})
	}
}

func TestWriteCSV(t *testing.T) {
	reg := &Forest{Options: Options{Task: Regression}}
	cls := &Forest{Options: Options{Task: Classification}, Classes: []string{"cat", "dog", "a,b"}}
	tests := []struct {
		name string
		p    Predictions
		want string
		err  string
	}{
		{"regression", Predictions{Forest: reg, Rows: 3, Values: []float64{1.5, 0.1, 1e21}}, "prediction\n1.5\n0.1\n1e+21\n", ""},
		{"no rows", Predictions{Forest: reg}, "prediction\n", ""},
		{"class labels", Predictions{Forest: cls, Rows: 3, Values: []float64{1, 0, 2}}, "prediction\ndog\ncat\n\"a,b\"\n", ""},
		{"probabilities", Predictions{Forest: cls, Rows: 2, Proba: true, Values: []float64{0.5, 0.25, 0.25, 0, 1, 0}},
			"proba_cat,proba_dog,\"proba_a,b\"\n0.5,0.25,0.25\n0,1,0\n", ""},
		{"probabilities, short", Predictions{Forest: cls, Rows: 2, Proba: true, Values: []float64{1, 0, 0}}, "", "3 probabilities for 2 rows of 3 classes"},
		{"not a class", Predictions{Forest: cls, Rows: 1, Values: []float64{3}}, "prediction\n", "prediction 3 is not a class index"},
	}
	for _, tt := range tests {
		var sb strings.Builder
		err := tt.p.WriteCSV(&sb)
		if (tt.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.err)
		}
		if tt.err == "" && sb.String() != tt.want {
			t.Errorf("%s: wrote %q, want %q", tt.name, sb.String(), tt.want)
		}
	}
}

func TestPredictionsWriteFile(t *testing.T) {
	dir := t.TempDir()
	f := &Forest{Options: Options{Task: Classification}, Classes: []string{"no", "yes"}}
	good := &Predictions{Forest: f, Rows: 2, Values: []float64{1, 0}}
	bad := &Predictions{Forest: f, Rows: 2, Values: []float64{1, 5}} // fails after the first row
	path := filepath.Join(dir, "p.csv")
	tests := []struct {
		name, path string
		p          *Predictions
		err        string
		want       string // the file's content afterwards
	}{
		{"new file", path, good, "", "prediction\nyes\nno\n"},
		{"failed write keeps the old file", path, bad, "writing predictions to " + path + ": prediction 5 is not a class index", "prediction\nyes\nno\n"},
		{"missing folder", filepath.Join(dir, "none", "p.csv"), good, filepath.Join(dir, "none", "p.csv"), ""},
		{"a folder", dir, good, "not a regular file", ""},
	}
	for _, tt := range tests {
		err := tt.p.WriteFile(tt.path)
		if (tt.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.err)
		}
		if tt.want != "" {
			if b, err := os.ReadFile(tt.path); err != nil || string(b) != tt.want {
				t.Errorf("%s: file holds %q (%v), want %q", tt.name, b, err, tt.want)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a folder was created: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !reflect.DeepEqual(names, []string{"p.csv"}) {
		t.Errorf("folder holds %v, want only p.csv (no temporary file left)", names)
	}
}
