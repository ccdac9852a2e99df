package modclass

import (
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/forest"
	"github.com/gotrain/gotrain/signal"
)

// TestReadIQ reads every record of a data set generated with IQ: row i is
// record <label>_<idx> of its class, the samples those of the SigMF pair,
// and a Subset's rows keep their records.
func TestReadIQ(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ds")
	o := small(3)
	o.IQ = true
	if _, err := Generate(dir, o, false); err != nil {
		t.Fatal(err)
	}
	d, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := range d.Rows {
		p, err := d.IQPath(i)
		if err != nil {
			t.Fatal(err)
		}
		if want := filepath.Join(dir, IQDir, fmt.Sprintf("%s_%d", o.Mods[i/o.PerClass], i%o.PerClass)); p != want {
			t.Errorf("row %d: %s, want %s", i, p, want)
		}
		x, err := d.ReadIQ(i)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := signal.ReadSigMF(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(x) != o.Samples || !reflect.DeepEqual(x, rec.Samples) {
			t.Fatalf("row %d: %d samples, not the file's", i, len(x))
		}
	}
	s := d.Subset([]int{7, 2})
	for j, i := range []int{7, 2} {
		ps, _ := s.IQPath(j)
		pd, _ := d.IQPath(i)
		if ps != pd {
			t.Errorf("subset row %d: %s, the data set's row %d is %s", j, ps, i, pd)
		}
	}
	if _, err := d.IQPath(d.Rows); err == nil {
		t.Error("IQPath beyond the rows: no error")
	}
	// A row whose SNR or label is not the file's is refused.
	d.SNR[1] += 2
	if _, err := d.ReadIQ(1); err == nil || !strings.Contains(err.Error(), "SNR") {
		t.Errorf("SNR mismatch: %v", err)
	}
	// Row 4 is qpsk_1: without its file, the error says where such files
	// come from.
	if err := os.Remove(filepath.Join(dir, IQDir, "qpsk_1.sigmf-meta")); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ReadIQ(4); err == nil || !strings.Contains(err.Error(), "--iq") {
		t.Errorf("missing record: %v", err)
	}
	meta := read(t, filepath.Join(dir, IQDir, "bpsk_0.sigmf-meta"))
	if err := os.WriteFile(filepath.Join(dir, IQDir, "bpsk_0.sigmf-meta"), []byte(strings.Replace(string(meta), `"bpsk"`, `"fm"`, -1)), 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ReadIQ(0); err == nil || !strings.Contains(err.Error(), "label") {
		t.Errorf("label mismatch: %v", err)
	}
}

// TestEvaluatePredictions scores a forest's predictions as Evaluate does,
// and refuses predictions that do not fit the data.
func TestEvaluatePredictions(t *testing.T) {
	tr, te := genPair(t, 4, 10, 14)
	f, err := Train(tr, TrainOptions{Forest: forest.Options{Trees: 10, Seed: 2}})
	if err != nil {
		t.Fatal(err)
	}
	want, err := Evaluate(f, te)
	if err != nil {
		t.Fatal(err)
	}
	got, err := EvaluatePredictions(f.Classes, te, want.Pred)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("EvaluatePredictions %+v, Evaluate %+v", got, want)
	}
	pred := make([]int, te.Rows)
	pred[0] = 1
	e, err := EvaluatePredictions(f.Classes, te, pred)
	if err != nil {
		t.Fatal(err)
	}
	if e.Pred[0] != 1 || e.Confusion[0][1] != 1 || e.Correct != te.Rows/len(f.Classes)-1 {
		t.Errorf("all class 0 but one: %d right, confusion row 0 %v", e.Correct, e.Confusion[0])
	}
	for name, c := range map[string]func() error{
		"short": func() error { _, err := EvaluatePredictions(f.Classes, te, pred[1:]); return err },
		"range": func() error {
			p := append([]int(nil), pred...)
			p[3] = 8
			_, err := EvaluatePredictions(f.Classes, te, p)
			return err
		},
		"classes": func() error { _, err := EvaluatePredictions(f.Classes[1:], te, pred); return err },
	} {
		if err := c(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestComparison writes the table of two evaluations (text and Markdown)
// and the PNG, and reads evaluations back from JSON reports.
func TestComparison(t *testing.T) {
	a := score([]string{"x", "y"}, []int{0, 1, 0, 1, 0, 1}, []int{0, 1, 1, 1, 0, 0}, []float64{0, 0, 10, 10, 20, 20}, 10, 0)
	b := score([]string{"x", "y"}, []int{0, 1, 0, 1, 0, 1}, []int{0, 1, 0, 1, 0, 0}, []float64{0, 0, 10, 10, 20, 20}, 10, 0)
	c := &Comparison{Names: []string{"forest", "resnet"}, Evals: []*Eval{a, b}, BandDB: [2]float64{10, 20}}
	var md strings.Builder
	if err := c.WriteTable(&md, true); err != nil {
		t.Fatal(err)
	}
	want := `| SNR (dB) | records | forest | resnet |
|---:|---:|---:|---:|
| 0 | 2 | 100.0 % | 100.0 % |
| 10 | 2 | 50.0 % | 100.0 % |
| 20 | 2 | 50.0 % | 50.0 % |
| 10 to 20 | 4 | 50.0 % | 75.0 % |
| all | 6 | 66.7 % | 83.3 % |
`
	if md.String() != want {
		t.Errorf("markdown:\n%s\nwant\n%s", md.String(), want)
	}
	var text strings.Builder
	if err := c.WriteTable(&text, false); err != nil || !strings.Contains(text.String(), "10 to 20") || strings.Contains(text.String(), "|") {
		t.Errorf("text table: %v\n%s", err, text.String())
	}
	p := filepath.Join(t.TempDir(), "cmp.png")
	if err := c.WritePNG(p, "test"); err != nil {
		t.Fatal(err)
	}
	fh, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if _, err := png.Decode(fh); err != nil {
		t.Error(err)
	}
	for _, bad := range []*Comparison{{}, {Names: []string{"a"}, Evals: []*Eval{a, b}}, {Names: []string{"a"}, Evals: []*Eval{{}}}} {
		if err := bad.WriteTable(&md, false); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
	// Reports as JSON: a forest's (it has trees), another classifier's.
	dir := t.TempDir()
	for i, r := range []any{
		&Report{Eval: a, Trees: 5, Band: [2]float64{10, 20}},
		map[string]any{"classifier": "resnet", "eval": b, "band_db": []float64{0, 20}},
		map[string]any{"eval": map[string]any{"per_snr": []map[string]any{{"snr_db": 0, "rows": 2, "correct": 3}}}},
		map[string]any{"accuracy": 1},
	} {
		path := filepath.Join(dir, "r.json")
		bs, _ := json.Marshal(r)
		if err := os.WriteFile(path, bs, 0o666); err != nil {
			t.Fatal(err)
		}
		re, err := ReadReportEval(path)
		switch i {
		case 0:
			if err != nil || re.Classifier != "forest" || re.Band != [2]float64{10, 20} || len(re.Eval.PerSNR) != 3 || re.Eval.PerSNR[1].Correct != 1 {
				t.Errorf("forest report: %+v %v", re, err)
			}
		case 1:
			if err != nil || re.Classifier != "resnet" || re.Band != [2]float64{0, 20} || re.Eval.PerSNR[1].Correct != 2 {
				t.Errorf("resnet report: %+v %v", re, err)
			}
		default:
			if err == nil {
				t.Errorf("report %d: no error", i)
			}
		}
	}
}

// TestForestReportKeys: the forest's JSON report keeps the keys it has
// always had (features and trees among them).
func TestForestReportKeys(t *testing.T) {
	tr, te := genPair(t, 3, 10, 12)
	rep, err := Run(RunOptions{Train: tr, Test: te, Fit: TrainOptions{Forest: forest.Options{Trees: 5, Seed: 1}}, BandDB: [2]float64{10, 12}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(rep)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	for _, k := range []string{"train", "train_rows", "test", "test_rows", "features", "derived", "trees", "seed", "fit_seconds", "accuracy", "band_db", "band_accuracy", "band_confusion", "eval"} {
		if _, ok := m[k]; !ok {
			t.Errorf("forest report lacks %q", k)
		}
	}
	if len(m) != 14 {
		t.Errorf("forest report has %d keys: %v", len(m), m)
	}
}
