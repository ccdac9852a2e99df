package modclass

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gotrain/gotrain/forest"
)

// realDataSet generates a small data set folder with Generate (the writer
// of `signal dataset`) once, and returns its features.csv and
// dataset.json.
var realDataSet = sync.OnceValues(func() ([2][]byte, error) {
	dir, err := os.MkdirTemp("", "modclass-fuzz-")
	if err != nil {
		return [2][]byte{}, err
	}
	defer os.RemoveAll(dir)
	ds := filepath.Join(dir, "ds")
	o := small(5)
	o.PerClass, o.Workers = 2, 1
	if _, err := Generate(ds, o, false); err != nil {
		return [2][]byte{}, err
	}
	csv, err := os.ReadFile(filepath.Join(ds, FeaturesFile))
	if err != nil {
		return [2][]byte{}, err
	}
	info, err := os.ReadFile(filepath.Join(ds, InfoFile))
	return [2][]byte{csv, info}, err
})

func realFiles(tb testing.TB) (csv, info []byte) {
	tb.Helper()
	f, err := realDataSet()
	if err != nil {
		tb.Fatal(err)
	}
	return f[0], f[1]
}

// checkData checks the invariants of a data set a reader accepted.
func checkData(t *testing.T, d *Data, name string) {
	t.Helper()
	p := len(d.Columns)
	switch {
	case d.Name != name:
		t.Fatalf("data set named %q, want %q", d.Name, name)
	case d.Rows < 1 || p < 1:
		t.Fatalf("accepted %d rows of %d columns", d.Rows, p)
	case len(d.X) != d.Rows*p || len(d.Labels) != d.Rows || len(d.SNR) != d.Rows:
		t.Fatalf("%d rows × %d columns: len X %d, %d labels, %d SNRs", d.Rows, p, len(d.X), len(d.Labels), len(d.SNR))
	}
	seen := map[string]bool{}
	for _, c := range d.Columns {
		if c == "" || seen[c] {
			t.Fatalf("column %q empty or repeated", c)
		}
		seen[c] = true
	}
	for i, l := range d.Labels {
		if l == "" || !finite(d.SNR[i]) {
			t.Fatalf("row %d: label %q, SNR %v", i+1, l, d.SNR[i])
		}
	}
	if len(d.Classes()) == 0 {
		t.Fatal("no classes")
	}
}

// FuzzReadCSV fuzzes the feature file reader: nothing may panic, an error
// names the file, and an accepted file is a consistent data set.
func FuzzReadCSV(f *testing.F) {
	good, _ := realFiles(f)
	f.Add(good)
	f.Add(good[:len(good)/3])
	f.Add([]byte("label,snr_db_true,x\nqpsk,10,1.5\nfm,-3,NaN\n"))
	f.Add([]byte("label,snr_db_true,x,y\r\n\"a,b\",1e308,Inf,-0\r\n"))
	f.Add([]byte("label,snr_db_true,x\n\"q\n\",1,2\n"))
	f.Add([]byte("label , snr_db_true,x\n q ,1,0x1p-2\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := ReadCSV(bytes.NewReader(b), "fuzz.csv")
		if err != nil {
			if d != nil {
				t.Fatal("a data set with an error")
			}
			if !strings.Contains(err.Error(), "fuzz.csv") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		checkData(t, d, "fuzz.csv")
		// Every value takes at least one byte, so memory stays
		// proportional to the input.
		if len(d.X)+2*d.Rows > len(b) {
			t.Fatalf("%d values from %d bytes", len(d.X)+2*d.Rows, len(b))
		}
	})
}

// evalDeadline bounds training, evaluating and plotting one fuzzed data
// set (milliseconds for the small sets the fuzz target trains on).
const evalDeadline = 20 * time.Second

// FuzzLoad writes a fuzzed features.csv and dataset.json into a data set
// folder and goes through what `signal classify train` and `eval` do with
// it: Load, then on small sets train a two-tree forest on every column,
// evaluate it on the set and draw the confusion and SNR plots. Nothing may
// panic or hang; an error of Load names the file at fault; an accepted set
// is consistent, its dataset.json (when present) of the right format.
func FuzzLoad(f *testing.F) {
	csv, info := realFiles(f)
	f.Add(csv, info)
	f.Add(csv, []byte{})
	f.Add(csv, info[:len(info)/2])
	f.Add(csv, bytes.Replace(info, []byte(`"snr_step_db": 5`), []byte(`"snr_step_db": 1e-300`), 1))
	f.Add(csv, []byte(`{"format":"gotrain-modclass-dataset","classes":["qpsk","qpsk"],"options":{"snr_step_db":1e308,"snr_min_db":-1e308}}`))
	f.Add([]byte("label,snr_db_true,x\nqpsk,10,1.5\nfm,-3,NaN\nqpsk,1e300,2\n"), []byte(`{"format":"gotrain-modclass-dataset","classes":["fm","qpsk"]}`))
	f.Add([]byte("label,snr_db_true,x\na,1,1\n"), []byte(`{"format":"gotrain-modclass-dataset","classes":["b"]}`))
	f.Add([]byte("label,snr_db_true,x\na,1,1\n"), []byte(`{"format":"other"}`))
	f.Add([]byte("label,snr_db_true,x\na,-1e300,1\n"), []byte(`null`))
	f.Fuzz(func(t *testing.T, csvBytes, infoBytes []byte) {
		dir := filepath.Join(t.TempDir(), "ds")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		csvPath, infoPath := filepath.Join(dir, FeaturesFile), filepath.Join(dir, InfoFile)
		if err := os.WriteFile(csvPath, csvBytes, 0o644); err != nil {
			t.Fatal(err)
		}
		if len(infoBytes) > 0 {
			if err := os.WriteFile(infoPath, infoBytes, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		d, err := Load(dir)
		if err != nil {
			if d != nil {
				t.Fatal("a data set with an error")
			}
			if !strings.Contains(err.Error(), csvPath) && !strings.Contains(err.Error(), infoPath) {
				t.Fatalf("error names neither %s nor %s: %v", csvPath, infoPath, err)
			}
			return
		}
		checkData(t, d, csvPath)
		if (d.Info != nil) != (len(infoBytes) > 0) {
			t.Fatalf("Info %v from a dataset.json of %d bytes", d.Info, len(infoBytes))
		}
		if d.Info != nil && d.Info.Format != infoFormat {
			t.Fatalf("accepted dataset.json format %q", d.Info.Format)
		}
		if d.Rows > 400 || len(d.Columns) > 64 || len(d.Classes()) > 32 {
			return // keep each input fast
		}
		done := make(chan struct{})
		var msg string
		go func() {
			defer close(done)
			msg = trainEvalPlot(d, t.TempDir())
		}()
		select {
		case <-done:
		case <-time.After(evalDeadline):
			t.Fatalf("training, evaluating and plotting %d rows did not end in %v", d.Rows, evalDeadline)
		}
		if msg != "" {
			t.Fatal(msg)
		}
	})
}

// trainEvalPlot trains a small forest on d, evaluates it on d and draws
// its plots into dir, and says what is inconsistent ("" if nothing).
// Errors (such as labels outside dataset.json's classes) are fine.
func trainEvalPlot(d *Data, dir string) string {
	fo, err := Train(d, TrainOptions{Features: "base", Forest: forest.Options{Trees: 2, MaxDepth: 4, Seed: 1, Threads: 1}})
	if err != nil {
		return ""
	}
	e, err := Evaluate(fo, d)
	if err != nil {
		return ""
	}
	if e.Rows != d.Rows || len(e.True) != d.Rows || len(e.Pred) != d.Rows || e.Correct > e.Rows {
		return "inconsistent evaluation"
	}
	rows := 0
	for _, b := range e.PerSNR {
		rows += b.Rows
	}
	if rows != d.Rows {
		return "SNR bins do not hold every row"
	}
	_ = WriteConfusionPNG(filepath.Join(dir, "confusion.png"), e, "fuzz")
	_ = WriteSNRPNG(filepath.Join(dir, "snr.png"), e, "fuzz")
	return ""
}
