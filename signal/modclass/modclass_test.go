package modclass

import (
	"bytes"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/forest"
	"github.com/gotrain/gotrain/signal"
)

// small returns fast data set options: short records, few per class.
func small(seed uint64) DatasetOptions {
	return DatasetOptions{Mods: []signal.Modulation{signal.BPSK, signal.QPSK, signal.FM, signal.AM}, PerClass: 3,
		SNRMinDB: 0, SNRMaxDB: 10, SNRStepDB: 5, SampleRate: 200e3, Samples: 4096, Seed: seed, SPS: []int{4, 8}, MaxOffsetHz: 100}
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestGenerateSameForAnyWorkerCount(t *testing.T) {
	var csvs [][]byte
	var infos []*Info
	var iq [][]byte
	for _, w := range []int{1, 3, 8} {
		dir := filepath.Join(t.TempDir(), "ds")
		o := small(7)
		o.Workers, o.IQ = w, true
		info, err := Generate(dir, o, false)
		if err != nil {
			t.Fatalf("workers %d: %v", w, err)
		}
		csvs = append(csvs, read(t, filepath.Join(dir, FeaturesFile)))
		infos = append(infos, info)
		iq = append(iq, read(t, filepath.Join(dir, IQDir, "qpsk_2.sigmf-data")))
		ents, err := os.ReadDir(filepath.Join(dir, IQDir))
		if err != nil || len(ents) != 2*4*3 {
			t.Fatalf("workers %d: iq folder holds %d files (%v), want 24", w, len(ents), err)
		}
	}
	for i := 1; i < len(csvs); i++ {
		if !bytes.Equal(csvs[0], csvs[i]) {
			t.Errorf("features.csv differs between worker counts (run %d)", i)
		}
		if !bytes.Equal(iq[0], iq[i]) {
			t.Errorf("iq record differs between worker counts (run %d)", i)
		}
		a, b := *infos[0], *infos[i]
		a.Seconds, b.Seconds, a.Workers, b.Workers = 0, 0, 0, 0
		if !reflect.DeepEqual(a.Counts, b.Counts) || !reflect.DeepEqual(a.Classes, b.Classes) || a.Rows != b.Rows {
			t.Errorf("dataset info differs: %+v vs %+v", a, b)
		}
	}
	// A different seed gives different records.
	dir := filepath.Join(t.TempDir(), "other")
	if _, err := Generate(dir, small(8), false); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(read(t, filepath.Join(dir, FeaturesFile)), csvs[0]) {
		t.Error("seeds 7 and 8 gave the same features")
	}
}

func TestRecordIndependentOfModList(t *testing.T) {
	a, err := small(3).withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	b := a
	b.Mods = []signal.Modulation{signal.AM, signal.QPSK}
	ra, rb := a.Record(signal.QPSK, 2, a.SNRGrid()), b.Record(signal.QPSK, 2, b.SNRGrid())
	if !reflect.DeepEqual(ra, rb) {
		t.Errorf("record depends on the modulation list: %+v vs %+v", ra, rb)
	}
	if r := a.Record(signal.BPSK, 2, a.SNRGrid()); r.Seed == ra.Seed {
		t.Error("two modulations share a record seed")
	}
	// Stepped SNRs cycle through the grid; uniform ones stay in range.
	for i := range 6 {
		if got, want := a.Record(signal.FM, i, a.SNRGrid()).SNRdB, []float64{0, 5, 10}[i%3]; got != want {
			t.Errorf("record %d: SNR %v, want %v", i, got, want)
		}
		c := a
		c.SNRStepDB = 0
		r := c.Record(signal.QPSK, i, nil)
		if r.SNRdB < 0 || r.SNRdB > 10 || math.Abs(r.CarrierOffset) > 100 || r.Phase < 0 || r.Phase >= 2*math.Pi {
			t.Errorf("record %d out of range: %+v", i, r)
		}
		if r.SymbolRate != 50e3 && r.SymbolRate != 25e3 {
			t.Errorf("record %d: symbol rate %v, want 50k or 25k", i, r.SymbolRate)
		}
	}
}

func TestCSVHeaderAndRows(t *testing.T) {
	dir := t.TempDir()
	o := small(1)
	var calls, last int
	o.Progress = func(done, total int) {
		calls++
		last = max(last, done)
		if total != 12 {
			t.Errorf("progress total %d, want 12", total)
		}
	}
	if _, err := Generate(dir, o, false); err != nil {
		t.Fatal(err)
	}
	if calls != 12 || last != 12 {
		t.Errorf("progress called %d times, last done %d; want 12, 12", calls, last)
	}
	text := string(read(t, filepath.Join(dir, FeaturesFile)))
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if want := "label,snr_db_true," + strings.Join(signal.FeatureNames(13), ","); lines[0] != want {
		t.Errorf("header\n%s\nwant\n%s", lines[0], want)
	}
	if len(lines) != 1+4*3 {
		t.Fatalf("%d lines, want 13", len(lines))
	}
	d, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d.Info == nil || d.Info.Rows != 12 || !slices.Equal(d.Info.Classes, []string{"bpsk", "qpsk", "fm", "am"}) || d.Info.GotrainVersion == "" {
		t.Fatalf("dataset.json: %+v", d.Info)
	}
	if !slices.Equal(d.Columns, signal.FeatureNames(13)) || d.Rows != 12 {
		t.Fatalf("columns %v rows %d", d.Columns, d.Rows)
	}
	for i := range d.Rows {
		if want := string(o.Mods[i/3]); d.Labels[i] != want {
			t.Errorf("row %d label %q, want %q", i, d.Labels[i], want)
		}
		if want := []float64{0, 5, 10}[i%3]; d.SNR[i] != want {
			t.Errorf("row %d snr %v, want %v", i, d.SNR[i], want)
		}
	}
	// A row matches the features of its record extracted directly.
	oo, _ := o.withDefaults()
	x, err := signal.Synthesize(oo.Record(signal.FM, 1, oo.SNRGrid()))
	if err != nil {
		t.Fatal(err)
	}
	e, _ := signal.NewExtractor(signal.Config{SampleRate: 200e3})
	var f signal.Features
	if err := e.Extract(x, &f); err != nil {
		t.Fatal(err)
	}
	if got := d.X[(2*3+1)*len(d.Columns) : (2*3+2)*len(d.Columns)]; !slices.Equal(got, f.Vector(nil)) {
		t.Errorf("row fm 1 differs from a direct extraction:\n%v\n%v", got, f.Vector(nil))
	}
}

func TestRefuseOverwrite(t *testing.T) {
	dir := t.TempDir()
	o := small(1)
	o.IQ = true
	if _, err := Generate(dir, o, false); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(dir, small(2), false); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("second run into a full folder: %v, want a refusal", err)
	}
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("keep"), 0o644)
	if _, err := Generate(dir, small(2), true); err != nil {
		t.Fatalf("--force: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, IQDir)); !os.IsNotExist(err) {
		t.Errorf("--force without --iq left the old iq folder: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err != nil {
		t.Errorf("--force removed a file that is not part of the data set: %v", err)
	}
	d, err := Load(dir)
	if err != nil || d.Info.Options.Seed != 2 {
		t.Fatalf("after --force: %v %+v", err, d)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
	// A folder holding an unrelated file is refused too.
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "notes.txt"), []byte("x"), 0o644)
	if _, err := Generate(other, small(1), false); err == nil {
		t.Error("non-empty folder accepted")
	}
}

func TestBadOptions(t *testing.T) {
	cases := []struct {
		name string
		edit func(*DatasetOptions)
		want string
	}{
		{"per-class 0", func(o *DatasetOptions) { o.PerClass = 0 }, "at least 1"},
		{"snr reversed", func(o *DatasetOptions) { o.SNRMinDB, o.SNRMaxDB = 20, 10 }, "above the maximum"},
		{"negative step", func(o *DatasetOptions) { o.SNRStepDB = -1 }, "step"},
		{"unknown mod", func(o *DatasetOptions) { o.Mods = []signal.Modulation{"qpsk", "zz"} }, "want one of bpsk, qpsk"},
		{"repeated mod", func(o *DatasetOptions) { o.Mods = []signal.Modulation{"qpsk", "qpsk"} }, "twice"},
		{"short record", func(o *DatasetOptions) { o.Samples = 1000 }, "need 2048"},
		{"offset", func(o *DatasetOptions) { o.MaxOffsetHz = -1 }, "offset"},
		{"sps", func(o *DatasetOptions) { o.SPS = []int{1} }, "samples per symbol"},
		{"sps divides", func(o *DatasetOptions) { o.SPS = []int{4, 3} }, "samples per symbol 3 does not divide"},
		{"rate", func(o *DatasetOptions) { o.SampleRate = 0 }, "sample rate"},
		{"huge rate", func(o *DatasetOptions) { o.SampleRate = 1e300 }, "sample rate 1e+300 must be 0.001 to 1e+12 Hz"},
		{"snr beyond the synthesizer", func(o *DatasetOptions) { o.SNRMinDB = -1e308 }, "within -100 to 200 dB"},
		{"snr above the synthesizer", func(o *DatasetOptions) { o.SNRMaxDB = 1e6 }, "within -100 to 200 dB"},
		{"records overflow", func(o *DatasetOptions) { o.PerClass = math.MaxInt/2 + 1 }, "at most 16777216 records"},
		{"workers", func(o *DatasetOptions) { o.Workers = 1 << 30 }, "Workers 1073741824: want 0 (GOMAXPROCS) to 1024"},
		{"negative workers", func(o *DatasetOptions) { o.Workers = -1 }, "Workers -1"},
	}
	for _, c := range cases {
		o := small(1)
		c.edit(&o)
		_, err := Generate(filepath.Join(t.TempDir(), "x"), o, false)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
	if _, err := ParseMods("bpsk, foo"); err == nil || !strings.Contains(err.Error(), "\"foo\"") || !strings.Contains(err.Error(), "64qam") {
		t.Errorf("ParseMods: %v", err)
	}
	if m, err := ParseMods(""); err != nil || len(m) != 8 {
		t.Errorf("ParseMods(\"\") = %v, %v", m, err)
	}
}

func TestReadCSVErrors(t *testing.T) {
	cases := map[string]string{
		"":                               "empty",
		"a,b,c\n":                        "header",
		"label,snr_db_true\n":            "header",
		"label,snr_db_true,x,x\n":        "repeated",
		"label,snr_db_true,x\n":          "no data rows",
		"label,snr_db_true,x\nq,1,zz\n":  "not a number",
		"label,snr_db_true,x\nq,nan,1\n": "snr_db_true",
		"label,snr_db_true,x\n,1,2\n":    "empty label",
		"label,snr_db_true,x\nq,1\n":     "",
	}
	for in, want := range cases {
		_, err := ReadCSV(strings.NewReader(in), "f.csv")
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "f.csv") {
			t.Errorf("%q: error %v, want one naming f.csv and containing %q", in, err, want)
		}
	}
}

func TestDerivedFeatures(t *testing.T) {
	d := &Data{Name: "t", Columns: []string{"c40", "c42", "snr_db", "inst_amp_mean", "inst_amp_std", "c20", "c41"},
		X: []float64{1, -1, 10, 2, 0.5, 0.3, 0.1}, Rows: 1, Labels: []string{"q"}, SNR: []float64{10}}
	x, err := d.Matrix([]string{"c42_clean", "amp_cv", "c40_over_c42", "snr_db", "c20_clean"})
	if err != nil {
		t.Fatal(err)
	}
	s := 10.0 / 11
	want := []float64{-1 / (s * s), 0.25, 1, 10, 0.3 / s}
	for i := range want {
		if math.Abs(x[i]-want[i]) > 1e-12 {
			t.Errorf("feature %d = %v, want %v", i, x[i], want[i])
		}
	}
	// At very low SNR the signal fraction is bounded, so the values stay finite.
	d.X[2] = -80
	x, _ = d.Matrix([]string{"c42_clean"})
	if want := -1 / (minSignalFraction * minSignalFraction); math.Abs(x[0]-want) > 1e-9 {
		t.Errorf("low-SNR c42_clean = %v", x[0])
	}
	if _, err := d.Matrix([]string{"nope"}); err == nil {
		t.Error("unknown feature accepted")
	}
	if _, err := FeatureSet("c42,bogus", d.Columns); err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Errorf("FeatureSet: %v", err)
	}
	set, err := FeatureSet("default", signal.FeatureNames(13))
	if err != nil || slices.Contains(set, "rssi_dbfs") || !slices.Contains(set, "c42_clean") || !slices.Contains(set, "mfcc12") {
		t.Errorf("default set %v, %v", set, err)
	}
}

func TestScoreAndRange(t *testing.T) {
	classes := []string{"a", "b"}
	truth := []int{0, 0, 1, 1, 0, 1}
	pred := []int{0, 1, 1, 1, 0, 0}
	snr := []float64{0, 0, 0, 10, 10, 10}
	e := score(classes, truth, pred, snr, 10, 0)
	if e.Correct != 4 || math.Abs(e.Accuracy-4.0/6) > 1e-15 {
		t.Errorf("accuracy %v (%d correct)", e.Accuracy, e.Correct)
	}
	if !reflect.DeepEqual(e.Confusion, [][]int{{2, 1}, {1, 2}}) {
		t.Errorf("confusion %v", e.Confusion)
	}
	if len(e.PerSNR) != 2 || e.PerSNR[0].SNRdB != 0 || e.PerSNR[0].Correct != 2 || e.PerSNR[1].Correct != 2 {
		t.Fatalf("per SNR %+v", e.PerSNR)
	}
	if got := e.PerSNR[0].PerClass; got[0] != 0.5 || got[1] != 1 {
		t.Errorf("per class at 0 dB: %v", got)
	}
	r := e.Range(5, 20)
	if r == nil || r.Rows != 3 || !reflect.DeepEqual(r.Confusion, [][]int{{1, 0}, {1, 1}}) {
		t.Errorf("range: %+v", r)
	}
	if e.Range(30, 40) != nil {
		t.Error("empty range not nil")
	}
}

// genPair generates a train and a test set (seeds 1 and 2) of the eight
// default modulations.
func genPair(t *testing.T, perClass int, snrMin, snrMax float64) (train, test *Data) {
	t.Helper()
	var sets [2]*Data
	for i := range sets {
		dir := filepath.Join(t.TempDir(), "ds")
		o := DatasetOptions{PerClass: perClass, SNRMinDB: snrMin, SNRMaxDB: snrMax, SNRStepDB: 2, SampleRate: 200e3, Samples: 8192, Seed: uint64(i + 1)}
		if _, err := Generate(dir, o, false); err != nil {
			t.Fatal(err)
		}
		d, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		sets[i] = d
	}
	return sets[0], sets[1]
}

func TestEndToEndAboveChance(t *testing.T) {
	train, test := genPair(t, 24, 10, 20)
	f, err := Train(train, TrainOptions{Forest: forest.Options{Trees: 60, Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	e, err := Evaluate(f, test)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("accuracy %.3f at 10-20 dB over %d records", e.Accuracy, e.Rows)
	// Chance is 1/8.
	if e.Accuracy < 0.75 {
		t.Errorf("accuracy %.3f at 10-20 dB, want at least 0.75 (chance 0.125)\n%v", e.Accuracy, e.Confusion)
	}
	if len(e.PerSNR) != 6 || e.Rows != 8*24 {
		t.Errorf("%d SNR bins over %d rows", len(e.PerSNR), e.Rows)
	}
	// PNGs are written and decode.
	dir := t.TempDir()
	for _, c := range []struct {
		name  string
		write func(string, *Eval, string) error
	}{{"confusion.png", WriteConfusionPNG}, {"snr.png", WriteSNRPNG}} {
		p := filepath.Join(dir, c.name)
		if err := c.write(p, e, "test"); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		fh, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(fh)
		fh.Close()
		if err != nil {
			t.Fatalf("%s does not decode as PNG: %v", c.name, err)
		}
		if b := img.Bounds(); b.Dx() < 200 || b.Dy() < 200 {
			t.Errorf("%s is %v", c.name, b)
		}
	}
}

func TestModelRoundTrip(t *testing.T) {
	train, test := genPair(t, 6, -4, 10)
	f, err := Train(train, TrainOptions{Features: "default", Forest: forest.Options{Trees: 20, Seed: 3}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "model.forest")
	if err := f.SaveFile(path); err != nil {
		t.Fatal(err)
	}
	g, err := forest.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(g.Features, f.Features) || !slices.Equal(g.Classes, f.Classes) {
		t.Fatalf("loaded model: features %v classes %v", g.Features, g.Classes)
	}
	e1, err := Evaluate(f, test)
	if err != nil {
		t.Fatal(err)
	}
	e2, err := Evaluate(g, test)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(e1.Pred, e2.Pred) || !reflect.DeepEqual(e1.PerSNR, e2.PerSNR) || !reflect.DeepEqual(e1.Confusion, e2.Confusion) {
		t.Error("the loaded model predicts differently")
	}
	// A test set with a class the model does not know is refused.
	test.Labels[0] = "ofdm"
	if _, err := Evaluate(g, test); err == nil || !strings.Contains(err.Error(), "ofdm") {
		t.Errorf("unknown class: %v", err)
	}
	// A model without the needed columns is refused by name.
	test.Columns = slices.Clone(test.Columns)
	test.Columns[slices.Index(test.Columns, "c42")] = "c42x"
	test.Labels[0] = "bpsk"
	if _, err := Evaluate(g, test); err == nil || !strings.Contains(err.Error(), "c42") {
		t.Errorf("missing column: %v", err)
	}
}
