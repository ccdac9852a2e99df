package forest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gotrain/gotrain/data"
)

// modelCase is a fitted forest and rows to predict.
type modelCase struct {
	name string
	f    *Forest
	x    []float64
	rows int
}

// synthDataset returns a small data set with a missing-value column, a
// constant column (no bin edges) and an all-missing column (nil edges).
func synthDataset(rows int, task Task) *data.Dataset {
	const cols = 4
	ds := &data.Dataset{X: make([]float64, rows*cols), Y: make([]float64, rows), Rows: rows, Cols: cols}
	for i := 0; i < rows; i++ {
		x := ds.X[i*cols : (i+1)*cols]
		x[0] = float64((i*7)%11) + 0.5*float64(i%3)
		x[1] = float64((i * 5) % 13)
		if i%9 == 0 {
			x[1] = math.NaN()
		}
		x[2] = 3
		x[3] = math.NaN()
		if task == Classification {
			ds.Y[i] = float64((i * 7) % 11 % 3)
		} else {
			ds.Y[i] = 2*x[0] + float64(i%5)
		}
	}
	if task == Classification {
		ds.Classes = []string{"α", "β", "\"γ\"\n<&>"}
	}
	return ds
}

// tinyForest fits a forest small enough to corrupt byte by byte.
func tinyForest(tb testing.TB, task Task) *Forest {
	tb.Helper()
	f, err := Fit(synthDataset(40, task), Options{Task: task, Trees: 2, MaxDepth: 3, Bins: 8, Seed: 3, Threads: 1})
	if err != nil {
		tb.Fatal(err)
	}
	return f
}

// withMissing returns a copy of the rows x with some values made missing.
func withMissing(x []float64) []float64 {
	y := slices.Clone(x)
	for i := range y {
		if i%7 == 3 {
			y[i] = math.NaN()
		}
	}
	return y
}

var modelCases = sync.OnceValues(func() ([]modelCase, error) {
	diabetes, err := data.Diabetes()
	if err != nil {
		return nil, err
	}
	digits, err := data.Digits()
	if err != nil {
		return nil, err
	}
	var cases []modelCase
	add := func(name string, d *data.Dataset, opt Options) error {
		tr, te := data.TrainTestSplit(d.Rows, 0.2, 7)
		train, test := toDS(d, tr), toDS(d, te)
		f, err := Fit(train, opt)
		if err != nil {
			return err
		}
		x := append(slices.Clone(test.X), withMissing(test.X)...)
		cases = append(cases, modelCase{name, f, x, 2 * test.Rows})
		return nil
	}
	if err := add("diabetes-oob", diabetes, Options{Trees: 10, MaxDepth: 6, OOB: true, Seed: 1}); err != nil {
		return nil, err
	}
	if err := add("digits-gini", digits, Options{Task: Classification, Trees: 10, MaxDepth: 6}); err != nil {
		return nil, err
	}
	if err := add("digits-entropy-oob", digits, Options{Task: Classification, Criterion: Entropy, Trees: 10, MaxDepth: 6,
		OOB: true, MaxFeatures: "0.3", MaxSamples: 0.5, Seed: 1<<63 + 5, Bins: 17}); err != nil {
		return nil, err
	}
	for _, task := range []Task{Regression, Classification} {
		ds := synthDataset(200, task)
		f, err := Fit(ds, Options{Task: task, Trees: 5, MaxDepth: 5, NoBootstrap: true, MaxFeatures: "2", Bins: 8})
		if err != nil {
			return nil, err
		}
		cases = append(cases, modelCase{"synthetic-" + string(task), f, append(slices.Clone(ds.X), withMissing(ds.X)...), 2 * ds.Rows})
	}
	// An infinite OOB score and empty names.
	f := *cases[0].f
	f.OOBScore = math.Inf(-1)
	f.Features = []string{}
	cases = append(cases, modelCase{"diabetes-inf-oob", &f, cases[0].x, cases[0].rows})
	return cases, nil
})

func getModelCases(tb testing.TB) []modelCase {
	tb.Helper()
	cases, err := modelCases()
	if err != nil {
		tb.Fatal(err)
	}
	return cases
}

// forestsEqual reports how a and b differ, or "" when they are equal (NaN
// OOB scores being equal).
func forestsEqual(a, b *Forest) string {
	if math.Float64bits(a.OOBScore) != math.Float64bits(b.OOBScore) && !(math.IsNaN(a.OOBScore) && math.IsNaN(b.OOBScore)) {
		return "OOBScore differs"
	}
	// The predictor is compiled on first use (Fit leaves it to the
	// first prediction, Load builds it): compare compiled ones.
	if _, err := a.compiledTrees(); err != nil {
		return err.Error()
	}
	if _, err := b.compiledTrees(); err != nil {
		return err.Error()
	}
	ac, bc := *a, *b
	ac.OOBScore, bc.OOBScore = 0, 0
	if reflect.DeepEqual(ac, bc) {
		return ""
	}
	va, vb := reflect.ValueOf(ac), reflect.ValueOf(bc)
	for i := 0; i < va.NumField(); i++ {
		if va.Type().Field(i).IsExported() && !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			return "field " + va.Type().Field(i).Name + " differs"
		}
	}
	return "unexported fields (the compiled predictor) differ"
}

func sameBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// checkSamePredictions checks that a and b predict x identically.
func checkSamePredictions(t *testing.T, a, b *Forest, x []float64, rows int) {
	t.Helper()
	for _, fn := range []struct {
		name string
		f    func(*Forest) ([]float64, error)
	}{
		{"Predict", func(f *Forest) ([]float64, error) { return f.Predict(x, rows) }},
		{"PredictValues", func(f *Forest) ([]float64, error) { return f.PredictValues(x, rows) }},
	} {
		pa, err := fn.f(a)
		if err != nil {
			t.Fatal(err)
		}
		pb, err := fn.f(b)
		if err != nil {
			t.Fatal(err)
		}
		if !sameBits(pa, pb) {
			t.Errorf("%s differs after loading", fn.name)
		}
	}
}

// saveBytes saves f to memory.
func saveBytes(tb testing.TB, f *Forest) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := f.Save(&buf); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// unsized hides the size of a reader from Load.
type unsized struct{ r io.Reader }

func (u unsized) Read(p []byte) (int, error) { return u.r.Read(p) }

func TestModelRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, c := range getModelCases(t) {
		t.Run(c.name, func(t *testing.T) {
			b := saveBytes(t, c.f)
			readers := map[string]func() io.Reader{
				"bytes.Reader":  func() io.Reader { return bytes.NewReader(b) },
				"bytes.Buffer":  func() io.Reader { return bytes.NewBuffer(slices.Clone(b)) },
				"strings":       func() io.Reader { return strings.NewReader(string(b)) },
				"unsized":       func() io.Reader { return unsized{bytes.NewReader(b)} },
				"one-byte-read": func() io.Reader { return unsized{&oneByteReader{b}} },
			}
			for name, r := range readers {
				g, err := Load(r())
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if d := forestsEqual(c.f, g); d != "" {
					t.Fatalf("%s: %s", name, d)
				}
			}
			g, err := Load(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			checkSamePredictions(t, c.f, g, c.x, c.rows)
			if b2 := saveBytes(t, g); !bytes.Equal(b, b2) {
				t.Error("saving the loaded forest gives different bytes")
			}

			path := filepath.Join(dir, c.name+".model")
			if err := c.f.SaveFile(path); err != nil {
				t.Fatal(err)
			}
			onDisk, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(onDisk, b) {
				t.Error("SaveFile and Save write different bytes")
			}
			g, err = LoadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if d := forestsEqual(c.f, g); d != "" {
				t.Fatal(d)
			}
			checkSamePredictions(t, c.f, g, c.x, c.rows)
		})
	}
}

// oneByteReader returns one byte per Read.
type oneByteReader struct{ b []byte }

func (r *oneByteReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	p[0] = r.b[0]
	r.b = r.b[1:]
	return 1, nil
}

// splitModel returns the header JSON and the tree bytes of a model file.
func splitModel(tb testing.TB, b []byte) (hdr, trees []byte) {
	tb.Helper()
	p := len(modelMagic) + 12
	if len(b) < p+4 || string(b[:len(modelMagic)]) != modelMagic {
		tb.Fatal("not a model file")
	}
	h := int(binary.LittleEndian.Uint64(b[p-8:]))
	return b[p : p+h], b[p+h : len(b)-4]
}

// buildModel assembles a model file with a correct checksum.
func buildModel(version uint32, hlen uint64, hdr, trees []byte) []byte {
	var b []byte
	b = append(b, modelMagic...)
	b = binary.LittleEndian.AppendUint32(b, version)
	b = binary.LittleEndian.AppendUint64(b, hlen)
	b = append(b, hdr...)
	b = append(b, trees...)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// fixChecksum rewrites the checksum of model file b in place.
func fixChecksum(b []byte) []byte {
	binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[:len(b)-4], castagnoli))
	return b
}

func TestModelHeader(t *testing.T) {
	for _, c := range getModelCases(t) {
		t.Run(c.name, func(t *testing.T) {
			b := saveBytes(t, c.f)
			hdr, trees := splitModel(t, b)
			var h map[string]any
			dec := json.NewDecoder(bytes.NewReader(hdr))
			dec.UseNumber()
			if err := dec.Decode(&h); err != nil {
				t.Fatal(err)
			}
			keys := []string{"format", "version", "created_by", "task", "criterion", "options", "features", "target",
				"classes", "num_features", "num_trees", "outputs", "node_counts", "tree_layout", "bin_edges", "oob_score", "oob_rows"}
			for _, k := range keys {
				if _, ok := h[k]; !ok {
					t.Errorf("header lacks %q", k)
				}
			}
			if len(h) != len(keys) {
				t.Errorf("header has %d keys, want %d", len(h), len(keys))
			}
			opts := h["options"].(map[string]any)
			for _, k := range []string{"trees", "max_depth", "min_samples_split", "min_samples_leaf", "max_features",
				"bootstrap", "max_samples", "seed", "bins", "threads", "oob"} {
				if _, ok := opts[k]; !ok {
					t.Errorf("header options lack %q", k)
				}
			}
			if h["format"] != modelFormat || h["created_by"] != "gotrain" || h["version"] != json.Number("1") ||
				h["task"] != string(c.f.Options.Task) || h["criterion"] != string(c.f.Options.Criterion) {
				t.Errorf("header: format %v created_by %v version %v task %v criterion %v", h["format"], h["created_by"], h["version"], h["task"], h["criterion"])
			}
			if got, want := opts["seed"], json.Number(fmtUint(c.f.Options.Seed)); got != want {
				t.Errorf("seed %v, want %v", got, want)
			}
			switch s := c.f.OOBScore; {
			case math.IsNaN(s):
				if h["oob_score"] != nil {
					t.Errorf("oob_score %v, want null", h["oob_score"])
				}
			case math.IsInf(s, -1):
				if h["oob_score"] != "-Infinity" {
					t.Errorf("oob_score %v, want \"-Infinity\"", h["oob_score"])
				}
			default:
				if _, ok := h["oob_score"].(json.Number); !ok {
					t.Errorf("oob_score %v, want a number", h["oob_score"])
				}
			}
			size := 0
			for _, tr := range c.f.Trees {
				size += tr.NumNodes() * (38 + 8*c.f.Outputs())
			}
			if len(trees) != size {
				t.Errorf("trees take %d bytes, want %d", len(trees), size)
			}
		})
	}
}

func fmtUint(u uint64) string {
	b, _ := json.Marshal(u)
	return string(b)
}

// The scores JSON cannot hold round-trip through the header.
func TestModelScoreJSON(t *testing.T) {
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 0.1, -1e300, 5e-324} {
		b, err := json.Marshal(struct{ S jsonScore }{jsonScore{v: v}})
		if err != nil {
			t.Fatal(err)
		}
		var got struct{ S jsonScore }
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if !got.S.set || (math.Float64bits(got.S.v) != math.Float64bits(v) && !(math.IsNaN(v) && math.IsNaN(got.S.v))) {
			t.Errorf("%v: got %v (set %v) from %s", v, got.S.v, got.S.set, b)
		}
	}
	var got struct{ S jsonScore }
	for _, bad := range []string{`{"S":"NaN"}`, `{"S":"inf"}`, `{"S":true}`, `{"S":1e999}`} {
		if err := json.Unmarshal([]byte(bad), &got); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// Every proper prefix of a model is an error, never a panic.
func TestLoadTruncated(t *testing.T) {
	check := func(t *testing.T, b []byte, k int) {
		for _, r := range []io.Reader{bytes.NewReader(b[:k]), unsized{bytes.NewReader(b[:k])}} {
			_, err := Load(r)
			if err == nil {
				t.Fatalf("prefix of %d of %d bytes: no error", k, len(b))
			}
			if !errors.Is(err, ErrInvalidModel) || !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("prefix of %d of %d bytes: error %v does not wrap ErrInvalidModel and io.ErrUnexpectedEOF", k, len(b), err)
			}
		}
	}
	for _, task := range []Task{Regression, Classification} {
		b := saveBytes(t, tinyForest(t, task))
		for k := 0; k < len(b); k++ {
			check(t, b, k)
		}
	}
	for _, c := range getModelCases(t) {
		b := saveBytes(t, c.f)
		hdr, _ := splitModel(t, b)
		h := len(modelMagic) + 12 + len(hdr)
		for k := 0; k < len(b); k += len(b)/200 + 1 {
			check(t, b, k)
		}
		for _, k := range []int{h - 1, h, h + 1, len(b) - 5, len(b) - 4, len(b) - 1} {
			check(t, b, k)
		}
	}
}

// Every flipped bit is an error; in the trees and the checksum, a checksum error.
func TestLoadCorrupt(t *testing.T) {
	for _, task := range []Task{Regression, Classification} {
		b := saveBytes(t, tinyForest(t, task))
		hdr, _ := splitModel(t, b)
		treesAt := len(modelMagic) + 12 + len(hdr)
		for i := range b {
			for _, mask := range []byte{0x01, 0x80} {
				c := slices.Clone(b)
				c[i] ^= mask
				_, err := Load(bytes.NewReader(c))
				if err == nil {
					t.Fatalf("%s: byte %d ^ %#x: no error", task, i, mask)
				}
				if !errors.Is(err, ErrInvalidModel) {
					t.Fatalf("%s: byte %d ^ %#x: error %v does not wrap ErrInvalidModel", task, i, mask, err)
				}
				if i >= treesAt && !strings.Contains(err.Error(), "checksum mismatch") {
					t.Fatalf("%s: byte %d ^ %#x: got %v, want a checksum error", task, i, mask, err)
				}
			}
		}
	}
}

func TestLoadPrefixErrors(t *testing.T) {
	b := saveBytes(t, tinyForest(t, Regression))
	hdr, trees := splitModel(t, b)
	for _, c := range []struct {
		name, want string
		b          []byte
	}{
		{"empty", "truncated at byte 0", nil},
		{"bad magic", "bad magic", append([]byte("GOTRAINFORESX\n"), b[len(modelMagic):]...)},
		{"text", "bad magic", []byte("this is not a model file at all, it is text\n")},
		{"version 0", "unsupported format version 0", buildModel(0, uint64(len(hdr)), hdr, trees)},
		{"version 3", "unsupported format version 3", buildModel(modelVersion+1, uint64(len(hdr)), hdr, trees)},
		{"header 1<<40", "header length 1099511627776 exceeds the limit", buildModel(1, 1<<40, hdr, trees)},
		{"header 1<<64-1", "exceeds the limit", buildModel(1, math.MaxUint64, hdr, trees)},
		{"header past end", "exceeds the", buildModel(1, maxHeaderLen, hdr, trees)},
		{"header too short", "header:", buildModel(1, uint64(len(hdr)-1), hdr, trees)},
		{"header too long", "header:", buildModel(1, uint64(len(hdr)+1), hdr, trees)},
		{"trailing JSON", "header:", buildModel(1, uint64(len(hdr)+2), append(slices.Clone(hdr), "{}"...), trees)},
		{"JSON array", "header:", buildModel(1, 2, []byte("[]"), trees)},
		{"empty header", "header:", buildModel(1, 0, nil, trees)},
		{"missing tree bytes", "declares", buildModel(1, uint64(len(hdr)), hdr, trees[:len(trees)-1])},
		{"bad checksum", "checksum mismatch", append(slices.Clone(b[:len(b)-4]), 1, 2, 3, 4)},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, r := range []io.Reader{bytes.NewReader(c.b), unsized{bytes.NewReader(c.b)}} {
				_, err := Load(r)
				if err == nil {
					t.Fatal("no error")
				}
				if !errors.Is(err, ErrInvalidModel) || !strings.HasPrefix(err.Error(), "forest: model: ") {
					t.Errorf("error %q does not wrap ErrInvalidModel or lacks the prefix", err)
				}
				_, sized := r.(*bytes.Reader)
				if want := c.want; (sized || want != "exceeds the" && want != "declares") && !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
}

// headerEdit rewrites the header of model b with edit and returns the model.
func headerEdit(tb testing.TB, b []byte, edit func(h map[string]any)) []byte {
	tb.Helper()
	hdr, trees := splitModel(tb, b)
	var h map[string]any
	dec := json.NewDecoder(bytes.NewReader(hdr))
	dec.UseNumber()
	if err := dec.Decode(&h); err != nil {
		tb.Fatal(err)
	}
	edit(h)
	nh, err := json.Marshal(h)
	if err != nil {
		tb.Fatal(err)
	}
	return buildModel(1, uint64(len(nh)), nh, trees) // the version of tinyForest's files
}

func TestLoadHeaderErrors(t *testing.T) {
	reg := saveBytes(t, tinyForest(t, Regression))
	cls := saveBytes(t, tinyForest(t, Classification))
	opt := func(k string, v any) func(map[string]any) {
		return func(h map[string]any) { h["options"].(map[string]any)[k] = v }
	}
	set := func(k string, v any) func(map[string]any) { return func(h map[string]any) { h[k] = v } }
	for _, c := range []struct {
		name string
		b    []byte
		edit func(map[string]any)
		want string
	}{
		{"format", reg, set("format", "other"), `format is "other"`},
		{"no format", reg, func(h map[string]any) { delete(h, "format") }, `format is ""`},
		{"json version", reg, set("version", 2), "version is 2"},
		{"layout", reg, set("tree_layout", []string{"feature:int32"}), "unknown tree layout"},
		{"no layout", reg, func(h map[string]any) { delete(h, "tree_layout") }, "unknown tree layout"},
		{"no oob score", reg, func(h map[string]any) { delete(h, "oob_score") }, "oob_score is missing"},
		{"oob score string", reg, set("oob_score", "high"), "header:"},
		{"task", reg, set("task", "clustering"), `unknown task "clustering"`},
		{"criterion", reg, set("criterion", "gini"), `criterion "gini" is not valid for regression`},
		{"class criterion", cls, set("criterion", "squared_error"), "not valid for classification"},
		{"bins", reg, opt("bins", 1), "options: Bins 1: want 2 to 256"},
		{"splitter in version 1", reg, opt("splitter", "random"), `splitter "random" needs format version 2`},
		{"min leaf", reg, opt("min_samples_leaf", -1), "options: MinSamplesLeaf -1: want >= 1"},
		{"max features", reg, opt("max_features", "many"), "options: max features"},
		{"max samples", reg, opt("max_samples", -2), "options: MaxSamples -2"},
		{"trees option", reg, opt("trees", 1<<21), "options: Trees 2097152"},
		{"seed", reg, opt("seed", -1), "header:"},
		{"num features 0", reg, set("num_features", 0), "0 features"},
		{"num features big", reg, set("num_features", 1<<21), "features, want 1.."},
		{"feature names", reg, set("features", []string{"a", "b"}), "2 feature names for 4 features"},
		{"regression classes", reg, set("classes", []string{"a"}), "regression model has 1 classes"},
		{"no classes", cls, set("classes", nil), "classification model has 0 classes"},
		{"outputs regression", reg, set("outputs", 2), "outputs is 2, want 1"},
		{"outputs classification", cls, set("outputs", 2), "outputs is 2, want 3"},
		{"num trees", reg, set("num_trees", 3), "num_trees is 3 but node_counts has 2"},
		{"no trees", reg, func(h map[string]any) { h["num_trees"], h["node_counts"] = 0, []int{} }, "0 trees"},
		{"node count 0", reg, set("node_counts", []int{0, 1}), "tree 0: 0 nodes"},
		{"node count negative", reg, set("node_counts", []int{1, -5}), "tree 1: -5 nodes"},
		{"node count 1<<40", reg, set("node_counts", []int64{1, 1 << 40}), "tree 1: 1099511627776 nodes"},
		{"node count 1e30", reg, set("node_counts", []float64{1e30, 1}), "header:"},
		{"node count fraction", reg, set("node_counts", []float64{1.5, 1}), "header:"},
		{"edges count", reg, set("bin_edges", [][]float64{{1}}), "bin edges for 1 features, want 4"},
		{"no edges", reg, set("bin_edges", nil), "bin edges for 0 features"},
		{"descending edges", reg, func(h map[string]any) { h["bin_edges"].([]any)[0] = []float64{1, 3, 2} }, "not ascending"},
		{"too many edges", reg, func(h map[string]any) { h["bin_edges"].([]any)[1] = make([]float64, 255) }, "255 bin edges"},
		{"NaN edge", reg, func(h map[string]any) { h["bin_edges"].([]any)[1] = []any{"NaN"} }, "header:"},
		{"edge overflow", reg, func(h map[string]any) { h["bin_edges"].([]any)[1] = []any{json.Number("1e999")} }, "header:"},
		{"oob rows", reg, set("oob_rows", -1), "oob rows is -1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := headerEdit(t, c.b, c.edit)
			for _, r := range []io.Reader{bytes.NewReader(b), unsized{bytes.NewReader(b)}} {
				_, err := Load(r)
				if err == nil {
					t.Fatal("no error")
				}
				if !errors.Is(err, ErrInvalidModel) || !strings.Contains(err.Error(), c.want) {
					t.Errorf("got %q, want an invalid-model error containing %q", err, c.want)
				}
			}
		})
	}
	// Unknown header fields are ignored.
	b := headerEdit(t, reg, set("comment", "added by a later version"))
	if _, err := Load(bytes.NewReader(b)); err != nil {
		t.Errorf("unknown field: %v", err)
	}
}

// allocated returns the bytes allocated while fn runs.
func allocated(fn func()) uint64 {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	fn()
	runtime.ReadMemStats(&m1)
	return m1.TotalAlloc - m0.TotalAlloc
}

// Headers declaring huge trees fail without allocating for them.
func TestLoadHostileSizes(t *testing.T) {
	reg := saveBytes(t, tinyForest(t, Regression))
	many := make([]int64, 1000)
	for i := range many {
		many[i] = 1 << 28
	}
	classes := make([]string, 1<<16)
	for i := range classes {
		classes[i] = "c"
	}
	for _, c := range []struct {
		name string
		b    []byte
	}{
		{"1<<40 nodes", headerEdit(t, reg, func(h map[string]any) { h["node_counts"] = []int64{1 << 40, 1} })},
		{"1<<28 nodes", headerEdit(t, reg, func(h map[string]any) { h["node_counts"] = []int64{1 << 28, 1 << 28} })},
		{"1000 trees of 1<<28 nodes", headerEdit(t, reg, func(h map[string]any) {
			h["node_counts"], h["num_trees"] = many, len(many)
		})},
		{"1<<16 classes of 1<<28 nodes", headerEdit(t, reg, func(h map[string]any) {
			h["task"], h["criterion"], h["classes"], h["outputs"] = "classification", "gini", classes, len(classes)
			h["node_counts"] = []int64{1 << 28, 1}
		})},
		{"1<<16 classes of 1<<14 nodes", headerEdit(t, reg, func(h map[string]any) {
			h["task"], h["criterion"], h["classes"], h["outputs"] = "classification", "gini", classes, len(classes)
			h["node_counts"] = []int64{1 << 14, 1}
		})},
		{"1<<16 classes of 1<<16 nodes", headerEdit(t, reg, func(h map[string]any) {
			h["task"], h["criterion"], h["classes"], h["outputs"] = "classification", "gini", classes, len(classes)
			h["node_counts"] = []int64{1 << 16, 1}
		})},
		{"64 MiB header", buildModel(1, maxHeaderLen, []byte(`{"format":`), nil)},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, r := range []io.Reader{bytes.NewReader(c.b), unsized{bytes.NewReader(c.b)}} {
				var err error
				n := allocated(func() { _, err = Load(r) })
				if err == nil {
					t.Fatal("no error")
				}
				if !errors.Is(err, ErrInvalidModel) {
					t.Errorf("error %v does not wrap ErrInvalidModel", err)
				}
				// The header's JSON may cost a few dozen times its size; the
				// declared trees (gigabytes) must cost nothing.
				if limit := uint64(len(c.b))*32 + 4<<20; n > limit {
					t.Errorf("%T: allocated %d bytes for a %d-byte input (%v)", r, n, len(c.b), err)
				}
			}
		})
	}
}

// cloneForest deep-copies f.
func cloneForest(f *Forest) *Forest {
	g := *f
	g.pred = nil
	g.Features = slices.Clone(f.Features)
	g.Classes = slices.Clone(f.Classes)
	g.Binner = &Binner{Edges: make([][]float64, len(f.Binner.Edges))}
	for j, e := range f.Binner.Edges {
		g.Binner.Edges[j] = slices.Clone(e)
	}
	g.Trees = make([]Tree, len(f.Trees))
	for t := range f.Trees {
		w := wideClone(f.Trees[t])
		g.Trees[t] = w.narrow(g.Binner.Edges)
	}
	return &g
}

// wideClone returns tr as the model file keeps it, sharing nothing with tr.
func wideClone(tr Tree) *wideTree {
	w, err := tr.widen()
	if err != nil {
		panic(err)
	}
	return &wideTree{
		Feature: slices.Clone(w.Feature), Bin: slices.Clone(w.Bin), Threshold: slices.Clone(w.Threshold),
		MissingLeft: slices.Clone(w.MissingLeft), Left: slices.Clone(w.Left), Value: slices.Clone(w.Value),
		Samples: slices.Clone(w.Samples), Weight: slices.Clone(w.Weight), Gain: slices.Clone(w.Gain),
		Category: slices.Clone(w.Category), Sets: slices.Clone(w.Sets),
	}
}

// firstNode returns the first node of tr that is a leaf (leaf true) or a split.
func firstNode(tb testing.TB, tr *wideTree, leaf bool, after int) int {
	for i := after; i < len(tr.Feature); i++ {
		if (tr.Feature[i] < 0) == leaf {
			return i
		}
	}
	tb.Fatalf("no node with leaf = %v after %d", leaf, after)
	return -1
}

func TestLoadInvalidTree(t *testing.T) {
	base := tinyForest(t, Classification)
	// Tree 1 must have a few splits.
	if base.Trees[1].NumNodes() < 7 {
		t.Fatalf("tree 1 has %d nodes, want at least 7", base.Trees[1].NumNodes())
	}
	appendNode := func(tr *wideTree, d int) {
		tr.Feature = append(tr.Feature, -1)
		tr.Bin = append(tr.Bin, 0)
		tr.Threshold = append(tr.Threshold, 0)
		tr.MissingLeft = append(tr.MissingLeft, false)
		tr.Left = append(tr.Left, -1)
		tr.Value = append(tr.Value, make([]float64, d)...)
		tr.Samples = append(tr.Samples, 0)
		tr.Weight = append(tr.Weight, 0)
		tr.Gain = append(tr.Gain, 0)
	}
	for _, c := range []struct {
		name string
		edit func(f *Forest, tr *wideTree)
		want string
	}{
		{"child out of range", func(f *Forest, tr *wideTree) { tr.Left[0] = int32(len(tr.Feature) - 1) }, "tree 1 node 0: children"},
		{"child far out of range", func(f *Forest, tr *wideTree) { tr.Left[0] = math.MaxInt32 }, "tree 1 node 0: children"},
		{"self loop", func(f *Forest, tr *wideTree) {
			i := firstNode(t, tr, false, 1)
			tr.Left[i] = int32(i)
		}, "does not come after its parent"},
		{"cycle to root", func(f *Forest, tr *wideTree) {
			i := firstNode(t, tr, false, 1)
			tr.Left[i] = 0
		}, "does not come after its parent"},
		{"negative child", func(f *Forest, tr *wideTree) { tr.Left[0] = -1 }, "tree 1 node 0: left child -1 does not come after"},
		{"out of order", func(f *Forest, tr *wideTree) { tr.Left[0] = 3 }, "tree 1 node 0: left child is 3, want 1"},
		{"shared child", func(f *Forest, tr *wideTree) {
			i := firstNode(t, tr, false, 1)
			tr.Left[i] = tr.Left[0]
		}, "tree 1 node"},
		{"leaf with child", func(f *Forest, tr *wideTree) {
			i := firstNode(t, tr, true, 0)
			tr.Left[i] = int32(len(tr.Feature) - 2)
		}, "leaf with left child"},
		{"orphan node", func(f *Forest, tr *wideTree) { appendNode(tr, f.Outputs()) }, "tree 1: "},
		{"missing children", func(f *Forest, tr *wideTree) {
			n := len(tr.Feature) - 1
			tr.Feature, tr.Bin, tr.Threshold, tr.MissingLeft = tr.Feature[:n], tr.Bin[:n], tr.Threshold[:n], tr.MissingLeft[:n]
			tr.Left, tr.Samples, tr.Weight, tr.Gain = tr.Left[:n], tr.Samples[:n], tr.Weight[:n], tr.Gain[:n]
			tr.Value = tr.Value[:n*f.Outputs()]
		}, "out of range"},
		{"feature too big", func(f *Forest, tr *wideTree) { tr.Feature[0] = int32(f.NumFeatures) }, "tree 1 node 0: feature 4 out of range"},
		{"feature -2", func(f *Forest, tr *wideTree) { tr.Feature[0] = -2 }, "tree 1 node 0: feature -2 out of range"},
		{"split becomes leaf", func(f *Forest, tr *wideTree) { tr.Feature[0] = -1 }, "tree 1 node 0: leaf with left child 1"},
		{"bin out of range", func(f *Forest, tr *wideTree) {
			tr.Bin[0] = uint8(len(f.Binner.Edges[tr.Feature[0]]))
		}, "tree 1 node 0: split bin"},
		{"bin 255", func(f *Forest, tr *wideTree) { tr.Bin[0] = 255 }, "tree 1 node 0: split bin 255"},
		{"split on edgeless feature", func(f *Forest, tr *wideTree) { tr.Feature[0], tr.Bin[0] = 2, 0 }, "feature 2 has 0 bin edges"},
		{"split on all-missing feature", func(f *Forest, tr *wideTree) { tr.Feature[0], tr.Bin[0] = 3, 0 }, "feature 3 has 0 bin edges"},
		{"threshold", func(f *Forest, tr *wideTree) { tr.Threshold[0] = math.Nextafter(tr.Threshold[0], 1e9) }, "tree 1 node 0: threshold"},
		{"NaN threshold", func(f *Forest, tr *wideTree) { tr.Threshold[0] = math.NaN() }, "tree 1 node 0: threshold NaN"},
		{"leaf NaN threshold", func(f *Forest, tr *wideTree) { tr.Threshold[len(tr.Feature)-1] = math.NaN() }, "leaf with threshold NaN, want 0"},
		{"leaf bin", func(f *Forest, tr *wideTree) { tr.Bin[firstNode(t, tr, true, 0)] = 1 }, "leaf with bin 1 and missing_left false, want 0 and false"},
		{"leaf missing side", func(f *Forest, tr *wideTree) { tr.MissingLeft[firstNode(t, tr, true, 0)] = true }, "leaf with bin 0 and missing_left true"},
		{"leaf gain", func(f *Forest, tr *wideTree) { tr.Gain[firstNode(t, tr, true, 0)] = 0.5 }, "leaf with gain 0.5, want 0"},
		{"NaN value", func(f *Forest, tr *wideTree) { tr.Value[len(tr.Value)-1] = math.NaN() }, "value 2 is NaN"},
		{"Inf value", func(f *Forest, tr *wideTree) { tr.Value[0] = math.Inf(1) }, "tree 1 node 0: value 0 is +Inf"},
		{"NaN gain", func(f *Forest, tr *wideTree) { tr.Gain[0] = math.NaN() }, "tree 1 node 0: gain NaN"},
		{"negative samples", func(f *Forest, tr *wideTree) { tr.Samples[2] = -1 }, "tree 1 node 2: samples -1"},
		{"negative weight", func(f *Forest, tr *wideTree) { tr.Weight[2] = -1 }, "tree 1 node 2: weight -1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := cloneForest(base)
			wides := make([]*wideTree, len(f.Trees))
			for k := range wides {
				wides[k] = wideClone(f.Trees[k])
			}
			c.edit(f, wides[1])
			f.Trees[1].Feature = wides[1].Feature // the header's node count
			var buf bytes.Buffer
			if err := f.encodeTrees(&buf, func(t int) (*wideTree, error) { return wides[t], nil }); err != nil {
				t.Fatal(err)
			}
			for _, r := range []io.Reader{bytes.NewReader(buf.Bytes()), unsized{bytes.NewReader(buf.Bytes())}} {
				_, err := Load(r)
				if err == nil {
					t.Fatal("Load: no error")
				}
				if !errors.Is(err, ErrInvalidModel) || !strings.HasPrefix(err.Error(), "forest: model: tree 1") || !strings.Contains(err.Error(), c.want) {
					t.Errorf("Load: got %q, want an invalid-model error about tree 1 containing %q", err, c.want)
				}
			}
			// Save checks a tree by the same rules (a Tree's own fields can
			// hold only some of these faults; checkWide is what it runs).
			if err := f.checkWide(1, wides[1], maxTreeDepth); err == nil || !errors.Is(err, ErrInvalidModel) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("checkWide: got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// A missing_left byte other than 0 or 1 is an error.
func TestLoadMissingLeftByte(t *testing.T) {
	f := tinyForest(t, Regression)
	b := saveBytes(t, f)
	hdr, _ := splitModel(t, b)
	n := f.Trees[0].NumNodes()
	at := len(modelMagic) + 12 + len(hdr) + 9*n // feature, left, bin
	b[at+1] = 2
	_, err := Load(bytes.NewReader(fixChecksum(b)))
	if err == nil || !strings.Contains(err.Error(), "tree 0 node 1: missing_left byte is 2") {
		t.Errorf("got %v, want a missing_left error", err)
	}
}

func TestSaveInvalidForest(t *testing.T) {
	base := tinyForest(t, Regression)
	for _, c := range []struct {
		name string
		edit func(f *Forest)
		want string
	}{
		{"no trees", func(f *Forest) { f.Trees = nil }, "0 trees"},
		{"no binner", func(f *Forest) { f.Binner = nil }, "no bin edges"},
		{"short array", func(f *Forest) { f.Trees[0].Left = f.Trees[0].Left[1:] }, "tree 0: "},
		{"even left child", func(f *Forest) { f.Trees[0].Left[0] = 2 }, "tree 0: node 0: left child 2"},
		{"split out of range", func(f *Forest) { f.Trees[0].Left[0] = int32(f.Trees[0].NumNodes()) }, "tree 0: node 0: left child"},
		{"feature out of range", func(f *Forest) { f.Trees[0].Feature[0] = int32(f.NumFeatures) }, "tree 0 node 0: feature 4 out of range"},
		{"tree literal", func(f *Forest) { f.Trees[1] = Tree{Feature: []int32{-1}, Left: []int32{-1}, Value: []float64{1}} }, "tree 1: 1 nodes but"},
		{"short values", func(f *Forest) { f.Trees[1].Value = nil }, "tree 1: 0 values"},
		{"empty tree", func(f *Forest) { f.Trees[1] = Tree{} }, "tree 1: no nodes"},
		{"bad feature name", func(f *Forest) { f.Features = []string{"a", "b", "\xff", "d"} }, "feature name 2"},
		{"bad target", func(f *Forest) { f.Target = "\xc3" }, "target name"},
		{"NaN max samples", func(f *Forest) { f.Options.MaxSamples = math.NaN() }, "MaxSamples NaN"},
		{"Inf max samples", func(f *Forest) { f.Options.MaxSamples = math.Inf(1) }, "MaxSamples +Inf"},
		{"Inf edge", func(f *Forest) { f.Binner.Edges[0][0] = math.Inf(-1) }, "feature 0 bin edge 0 is -Inf"},
		{"unknown task", func(f *Forest) { f.Options.Task = "" }, `unknown task ""`},
		{"huge header", func(f *Forest) { f.Target = strings.Repeat("x", maxHeaderLen) }, "header takes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "huge header" && testing.Short() {
				t.Skip("allocates a few hundred MiB")
			}
			f := cloneForest(base)
			c.edit(f)
			var out bytes.Buffer
			err := f.Save(&out)
			if err == nil || !errors.Is(err, ErrInvalidModel) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an invalid-model error containing %q", err, c.want)
			}
			if out.Len() != 0 {
				t.Errorf("Save wrote %d bytes", out.Len())
			}
		})
	}
}

// failWriter fails once more than n bytes were written.
type failWriter struct{ n int }

var errDiskFull = errors.New("disk full")

func (w *failWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		k := w.n
		w.n = 0
		return k, errDiskFull
	}
	w.n -= len(p)
	return len(p), nil
}

func TestSaveWriteError(t *testing.T) {
	f := getModelCases(t)[1].f
	size := len(saveBytes(t, f))
	for _, n := range []int{0, 10, 100, ioChunk - 1, ioChunk, ioChunk + 1, size / 2, size - 4, size - 1} {
		if err := f.Save(&failWriter{n}); !errors.Is(err, errDiskFull) {
			t.Errorf("failing after %d of %d bytes: got %v", n, size, err)
		}
	}
	if err := f.Save(&failWriter{size}); err != nil {
		t.Errorf("writer with room: %v", err)
	}
}

// dirNames lists dir.
func dirNames(tb testing.TB, dir string) []string {
	tb.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestSaveFile(t *testing.T) {
	a, b := tinyForest(t, Regression), tinyForest(t, Classification)
	ab, bb := saveBytes(t, a), saveBytes(t, b)
	dir := t.TempDir()
	path := filepath.Join(dir, "m.model")

	if err := a.SaveFile(path); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("new file: %v, %v; want mode 0644", st.Mode(), err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	// Replacing keeps the permissions.
	if err := b.SaveFile(path); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("replaced file: %v, %v; want mode 0600", st.Mode(), err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, bb) {
		t.Error("replaced file holds the wrong model")
	}
	if names := dirNames(t, dir); !slices.Equal(names, []string{"m.model"}) {
		t.Errorf("folder holds %q, want only m.model", names)
	}

	intact := func(what string) {
		t.Helper()
		if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, bb) {
			t.Errorf("%s: the previous file changed (%v)", what, err)
		}
		if names := dirNames(t, dir); !slices.Equal(names, []string{"m.model"}) && !slices.Equal(names, []string{"m.model", "sub"}) {
			t.Errorf("%s: folder holds %q", what, names)
		}
	}

	// An invalid forest leaves the file alone.
	bad := cloneForest(a)
	bad.Trees[0].Left[0] = 5
	if err := bad.SaveFile(path); err == nil || !errors.Is(err, ErrInvalidModel) {
		t.Errorf("invalid forest: got %v", err)
	}
	intact("invalid forest")

	// A failure while writing (here: a header over the limit) removes the temporary file.
	if !testing.Short() {
		huge := cloneForest(a)
		huge.Target = strings.Repeat("x", maxHeaderLen)
		if err := huge.SaveFile(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("huge header: got %v", err)
		}
		intact("huge header")
	}

	// A missing folder.
	missing := filepath.Join(dir, "no", "such", "m.model")
	if err := a.SaveFile(missing); err == nil || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing folder: got %v", err)
	}
	intact("missing folder")

	// A folder in the way.
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := a.SaveFile(sub); err == nil || !strings.Contains(err.Error(), sub) {
		t.Errorf("folder as path: got %v", err)
	}
	if names := dirNames(t, sub); len(names) != 0 {
		t.Errorf("folder as path: %q left inside", names)
	}
	intact("folder as path")

	// A read-only folder (not testable as root, who may write anyway).
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o755)
	if probe, err := os.CreateTemp(dir, "probe"); err == nil {
		probe.Close()
		os.Remove(probe.Name())
		t.Log("skipping the read-only folder case: the folder is writable anyway")
	} else {
		if err := a.SaveFile(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("read-only folder: got %v", err)
		}
		intact("read-only folder")
	}
	os.Chmod(dir, 0o755)

	// A relative path.
	t.Chdir(dir)
	if err := a.SaveFile("rel.model"); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile("rel.model"); !bytes.Equal(got, ab) {
		t.Error("relative path: wrong content")
	}
}

func TestLoadFile(t *testing.T) {
	f := tinyForest(t, Regression)
	b := saveBytes(t, f)
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}

	missing := filepath.Join(dir, "missing.model")
	if _, err := LoadFile(missing); err == nil || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing file: got %v", err)
	}
	if _, err := LoadFile(dir); err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("folder: got %v", err)
	}
	for name, data := range map[string][]byte{
		"truncated.model": b[:len(b)/2],
		"empty.model":     nil,
		"flipped.model":   append(slices.Clone(b[:len(b)-1]), b[len(b)-1]^1),
		"trailing.model":  append(slices.Clone(b), 0),
	} {
		p := write(name, data)
		_, err := LoadFile(p)
		if err == nil || !errors.Is(err, ErrInvalidModel) || !strings.HasPrefix(err.Error(), "forest: model "+p+": ") {
			t.Errorf("%s: got %v, want an invalid-model error naming the file", name, err)
		}
	}

	// Load reads exactly one model, so models can follow each other.
	g := tinyForest(t, Classification)
	p := write("two.model", append(slices.Clone(b), saveBytes(t, g)...))
	file, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	for i, want := range []*Forest{f, g} {
		got, err := Load(file)
		if err != nil {
			t.Fatalf("model %d: %v", i, err)
		}
		if d := forestsEqual(want, got); d != "" {
			t.Fatalf("model %d: %s", i, d)
		}
	}
	if _, err := Load(file); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("after the last model: got %v", err)
	}
	// Trailing bytes are fine for Load on a stream.
	if _, err := Load(bytes.NewReader(append(slices.Clone(b), "more"...))); err != nil {
		t.Errorf("trailing bytes: %v", err)
	}
}

// chainForest returns a forest with one tree of the given depth: each split
// sends codes <= 0 of feature 0 to a leaf and the rest on down the chain.
func chainForest(depth int) *Forest {
	n := 2*depth + 1
	edges := [][]float64{{0.5}}
	tr, err := NewTree(n, 1, edges)
	if err != nil {
		panic(err)
	}
	for i := 0; i < n; i++ {
		tr.Value[i] = float64(i)
		if i%2 == 1 || i == n-1 {
			continue
		}
		if err := tr.SetSplit(i, 0, 0, i%4 == 0, i+1, 0); err != nil {
			panic(err)
		}
	}
	return &Forest{
		Options:     Options{Task: Regression, Criterion: SquaredError, Trees: 1, MinSamplesSplit: 2, MinSamplesLeaf: 1, MaxFeatures: "all", Bins: 256, Threads: 1},
		NumFeatures: 1,
		Binner:      &Binner{Edges: edges},
		Trees:       []Tree{tr},
		OOBScore:    math.NaN(),
	}
}

// A deep (degenerate) tree round-trips, and the depth limit counts levels
// as Tree.Depth does.
func TestModelDeepTree(t *testing.T) {
	f := chainForest(20000)
	b := saveBytes(t, f)
	g, err := Load(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	x := []float64{0, 1, math.NaN()}
	checkSamePredictions(t, f, g, x, 3)
	if p, _ := g.Predict(x, 3); p[0] != 1 || p[1] != float64(2*20000) {
		t.Errorf("chain predictions %v", p)
	}
	for _, c := range getModelCases(t) {
		for tn := range c.f.Trees {
			d := c.f.Trees[tn].Depth()
			if err := c.f.checkTree(tn, d); err != nil {
				t.Fatalf("%s tree %d: depth %d: %v", c.name, tn, d, err)
			}
			if err := c.f.checkTree(tn, d-1); d > 0 && (err == nil || !strings.Contains(err.Error(), "exceeds the limit")) {
				t.Fatalf("%s tree %d: depth %d with limit %d: got %v", c.name, tn, d, d-1, err)
			}
		}
	}
	if err := g.checkTree(0, 19999); err == nil || !strings.Contains(err.Error(), "depth 20000 exceeds the limit of 19999") {
		t.Errorf("chain: got %v", err)
	}
}
