package train

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/train/losses"
)

// stTensor is a tensor of a safetensors file as the test reads it.
type stTensor struct {
	DType   string  `json:"dtype"`
	Shape   []int   `json:"shape"`
	Offsets []int64 `json:"data_offsets"`
	data    []byte
}

// readSafetensors parses a safetensors file by hand, as the format says:
// 8 bytes of header length N (uint64, little-endian), N bytes of JSON
// beginning with '{' and padded with spaces, then the buffer the
// data_offsets index, entirely and without holes. It also checks that the
// buffer starts at a multiple of 8 and every tensor at a multiple of its
// element size.
func readSafetensors(t *testing.T, path string) (map[string]string, map[string]stTensor) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 8 {
		t.Fatalf("%s: %d bytes", path, len(b))
	}
	n := binary.LittleEndian.Uint64(b)
	if n > uint64(len(b)-8) {
		t.Fatalf("%s: header length %d beyond the file's %d bytes", path, n, len(b))
	}
	header := b[8 : 8+n]
	if header[0] != '{' {
		t.Fatalf("%s: header starts with %q", path, header[0])
	}
	if (8+n)%8 != 0 {
		t.Errorf("%s: the buffer starts at byte %d, not a multiple of 8", path, 8+n)
	}
	if trimmed := bytes.TrimRight(header, " "); !json.Valid(trimmed) || len(bytes.TrimSpace(header)) != len(trimmed) {
		t.Fatalf("%s: header is not JSON padded with spaces: %q", path, header)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(header, &raw); err != nil {
		t.Fatal(err)
	}
	buf := b[8+n:]
	meta := map[string]string{}
	tensors := map[string]stTensor{}
	type span struct{ lo, hi int64 }
	var spans []span
	size := map[string]int64{"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1, "BOOL": 1}
	for name, v := range raw {
		if name == "__metadata__" {
			if err := json.Unmarshal(v, &meta); err != nil {
				t.Fatalf("__metadata__ is not an object of strings: %v", err)
			}
			continue
		}
		var ts stTensor
		dec := json.NewDecoder(bytes.NewReader(v))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&ts); err != nil {
			t.Fatalf("tensor %s: %v", name, err)
		}
		es, ok := size[ts.DType]
		if !ok || len(ts.Offsets) != 2 {
			t.Fatalf("tensor %s: %+v", name, ts)
		}
		count := int64(1)
		for _, d := range ts.Shape {
			count *= int64(d)
		}
		lo, hi := ts.Offsets[0], ts.Offsets[1]
		if lo < 0 || hi < lo || hi > int64(len(buf)) || hi-lo != count*es {
			t.Fatalf("tensor %s: offsets %v for %d elements of %d bytes in a buffer of %d", name, ts.Offsets, count, es, len(buf))
		}
		if lo%es != 0 {
			t.Errorf("tensor %s starts at %d, not a multiple of its element size %d", name, lo, es)
		}
		ts.data = buf[lo:hi]
		tensors[name] = ts
		spans = append(spans, span{lo, hi})
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].lo < spans[j].lo })
	var end int64
	for _, s := range spans {
		if s.lo != end {
			t.Fatalf("%s: the buffer has a hole or an overlap at %d (next tensor at %d)", path, end, s.lo)
		}
		end = s.hi
	}
	if end != int64(len(buf)) {
		t.Fatalf("%s: tensors end at %d, the buffer at %d", path, end, len(buf))
	}
	return meta, tensors
}

func f32s(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// mlpMeta is mlp with two variables of the model that are not trained,
// of other element sizes (int8 and float64), as a model's metadata.
func mlpMeta(ctx *context.Context, spec any, inputs []*graph.Node) []*graph.Node {
	m := ctx.InAbsPath("/meta").Checked(false)
	m.VariableWithValue("flag", []int8{1, -2, 3}).SetTrainable(false)
	m.VariableWithValue("scale", []float64{0.5, 0.25, 1e300}).SetTrainable(false)
	return mlp(ctx, spec, inputs)
}

// TestExportSafetensors exports a run with moving averages (the averages
// by default, the trained weights with WeightsRaw) and reads the files
// back with the reader above and, when numpy is installed, with numpy on
// the raw header and buffer: names, shapes and values are the model's,
// and no training state is in them.
func TestExportSafetensors(t *testing.T) {
	dir := t.TempDir()
	h, err := New(testBackend(t), testConfig(func(c *Config) {
		c.Steps, c.BatchSize, c.EMADecay, c.NoCheckpoint, c.CheckpointDir, c.Progress = 4, 16, 0.8, false, dir, ProgressOff
	}), mlpMeta, losses.MeanSquaredError, synthData(t, 64, false))
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.Run()
	if err != nil {
		t.Fatal(err)
	}
	shapes := map[string][]int{"l1/w": {4, 16}, "l1/b": {16}, "l2/w": {16, 1}}
	for _, c := range []struct {
		weights, want string
		value         func(name string) []float32
	}{
		{WeightsAuto, WeightsEMA, func(name string) []float32 { return floats(t, h, "/"+name) }}, // after Run: the averages
		{WeightsRaw, WeightsRaw, func(name string) []float32 { return floats(t, h, EMAScope+"/"+name) }},
	} {
		out := filepath.Join(t.TempDir(), "model.safetensors")
		// A folder of runs: its newest run's newest checkpoint.
		rep, err := ExportSafetensors(dir, out, ExportOptions{Weights: c.weights})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Checkpoint != res.Checkpoint || rep.Weights != c.want || rep.Step != 4 {
			t.Errorf("report %+v", rep)
		}
		meta, ts := readSafetensors(t, out)
		if meta["gotrain_weights"] != c.want || meta["gotrain_step"] != "4" {
			t.Errorf("metadata %v", meta)
		}
		if flag, scale := ts["meta/flag"], ts["meta/scale"]; flag.DType != "I8" || !bytes.Equal(flag.data, []byte{1, 0xfe, 3}) ||
			scale.DType != "F64" || math.Float64frombits(binary.LittleEndian.Uint64(scale.data[16:])) != 1e300 {
			t.Errorf("metadata tensors %+v %+v", flag, scale)
		}
		if len(ts) != len(shapes)+2 {
			var names []string
			for n := range ts {
				names = append(names, n)
			}
			t.Fatalf("tensors %v, want %v only (no optimizer, RNG or harness state)", names, shapes)
		}
		for name, shape := range shapes {
			tt := ts[name]
			if tt.DType != "F32" || !slices.Equal(tt.Shape, shape) {
				t.Errorf("%s: %s %v, want F32 %v", name, tt.DType, tt.Shape, shape)
			}
			if got, want := f32s(tt.data), c.value(name); !slices.Equal(got, want) {
				t.Errorf("%s (%s weights): %v, want %v", name, c.want, got, want)
			}
		}
		checkWithNumpy(t, c.want, out, ts)
	}
	if _, err := ExportSafetensors(res.Checkpoint, filepath.Join(dir, "x.safetensors"), ExportOptions{Weights: "best"}); err == nil {
		t.Error("Weights best accepted")
	}
	// A run without averages: ema is an error, auto gives the weights.
	plain := t.TempDir()
	h2 := newHarness(t, testConfig(func(c *Config) { c.NoCheckpoint, c.CheckpointDir, c.Progress = false, plain, ProgressOff }), synthData(t, 64, false))
	res2, err := h2.Run()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ExportSafetensors(res2.Checkpoint, filepath.Join(plain, "m.safetensors"), ExportOptions{Weights: WeightsEMA}); err == nil ||
		!strings.Contains(err.Error(), "no moving averages") {
		t.Errorf("ema export of a run without averages: %v", err)
	}
	rep, err := ExportSafetensors(res2.Checkpoint, filepath.Join(plain, "m.safetensors"), ExportOptions{})
	if err != nil || rep.Weights != WeightsRaw {
		t.Errorf("auto export without averages: %+v, %v", rep, err)
	}
	if _, err := ExportSafetensors(t.TempDir(), filepath.Join(plain, "n.safetensors"), ExportOptions{}); !errors.Is(err, ErrNoCheckpoint) {
		t.Errorf("export of an empty folder: %v", err)
	}
}

// numpyReader reads a safetensors file with numpy alone: the header
// length and JSON from the first bytes, each tensor with np.frombuffer at
// its data_offsets past the header; it prints each tensor's dtype, shape
// and values as JSON.
const numpyReader = `
import json, struct, sys
import numpy as np
b = open(sys.argv[1], "rb").read()
(n,) = struct.unpack("<Q", b[:8])
header = json.loads(b[8:8 + n].decode("utf-8"))
buf = memoryview(b)[8 + n:]
kinds = {"F32": "<f4", "F64": "<f8", "I32": "<i4", "I64": "<i8", "F16": "<f2", "U8": "u1", "I8": "i1", "BOOL": "?"}
out = {}
for name, t in header.items():
    if name == "__metadata__":
        continue
    lo, hi = t["data_offsets"]
    a = np.frombuffer(buf[lo:hi], dtype=kinds[t["dtype"]]).reshape(t["shape"])
    out[name] = {"dtype": str(a.dtype), "shape": list(a.shape), "values": [float(x) for x in a.ravel()]}
print(json.dumps(out))
`

// checkWithNumpy reads path with numpyReader and compares with ts, in a
// subtest that skips, saying why, when /usr/bin/python3 has no numpy.
func checkWithNumpy(t *testing.T, label, path string, ts map[string]stTensor) {
	t.Helper()
	t.Run("numpy "+label, func(t *testing.T) { numpyCheck(t, path, ts) })
}

func numpyCheck(t *testing.T, path string, ts map[string]stTensor) {
	const py = "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import numpy").Run(); err != nil {
		t.Skipf("%s -c 'import numpy' failed (%v): install python3-numpy (Debian) to read the file with numpy too", py, err)
	}
	out, err := exec.Command(py, "-c", numpyReader, path).Output()
	if err != nil {
		t.Fatalf("numpy reader: %v", err)
	}
	var got map[string]struct {
		DType  string    `json:"dtype"`
		Shape  []int     `json:"shape"`
		Values []float64 `json:"values"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("numpy reader's output %q: %v", out, err)
	}
	if len(got) != len(ts) {
		t.Fatalf("numpy read %d tensors, want %d", len(got), len(ts))
	}
	for name, tt := range ts {
		g := got[name]
		var want []float64
		dtype := map[string]string{"F32": "float32", "F64": "float64", "I8": "int8"}[tt.DType]
		switch tt.DType {
		case "F32":
			for _, v := range f32s(tt.data) {
				want = append(want, float64(v))
			}
		case "F64":
			for i := 0; i < len(tt.data); i += 8 {
				want = append(want, math.Float64frombits(binary.LittleEndian.Uint64(tt.data[i:])))
			}
		case "I8":
			for _, v := range tt.data {
				want = append(want, float64(int8(v)))
			}
		}
		if g.DType != dtype || !slices.Equal(g.Shape, tt.Shape) || !slices.Equal(g.Values, want) {
			t.Fatalf("numpy: %s is %s %v %v, want %s %v %v", name, g.DType, g.Shape, g.Values, dtype, tt.Shape, want)
		}
	}
}

// TestSafetensorsLayout writes headers of eight successive lengths
// (a name one character longer each time) with tensors of three element
// sizes, and reads each back: the buffer starts at a multiple of 8 and
// each tensor at a multiple of its element size, whatever the header's
// length.
func TestSafetensorsLayout(t *testing.T) {
	blob := make([]byte, 0, 64)
	vars := []ckptVar{
		{Scope: "/m", Name: "byte", DType: "Int8", Dims: []int{3}, Size: 3},
		{Scope: "/m", Name: "half", DType: "Float16", Dims: []int{1}, Size: 2},
		{Scope: "/m", Name: "double", DType: "Float64", Dims: []int{2}, Size: 16},
	}
	for i := range vars {
		vars[i].Offset = len(blob)
		for j := range vars[i].Size {
			blob = append(blob, byte(10*i+j))
		}
	}
	for k := 1; k <= 8; k++ {
		v := append([]ckptVar{}, vars...)
		v[0].Name = strings.Repeat("b", k)
		out := filepath.Join(t.TempDir(), "m.safetensors")
		if _, err := writeSafetensors("ckpt", ckptHeader{Step: 1, Variables: v}, blob, out, WeightsAuto); err != nil {
			t.Fatal(err)
		}
		_, ts := readSafetensors(t, out)
		for _, cv := range v {
			name := "m/" + cv.Name
			if !bytes.Equal(ts[name].data, blob[cv.Offset:cv.Offset+cv.Size]) {
				t.Errorf("name length %d: %s holds %v, want %v", k, name, ts[name].data, blob[cv.Offset:cv.Offset+cv.Size])
			}
		}
	}
}
