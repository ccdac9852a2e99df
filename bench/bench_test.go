package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/device"
)

// fake is a workload whose output and support are set per device.
type fake struct {
	out   map[string][]float64
	unsup map[string]bool
	calls map[string]int
	tol   Tolerance // zero: DefaultTolerance
}

func (f *fake) Name() string     { return "fake" }
func (f *fake) Describe() string { return "a fake workload" }
func (f *fake) Unit() string     { return "items/s" }
func (f *fake) Tolerance() Tolerance {
	if f.tol.Rel == 0 && f.tol.Floors == nil {
		return Tolerance{Rel: DefaultTolerance}
	}
	return f.tol
}
func (f *fake) Runner(e *device.Engine) (func() (Output, error), func(), error) {
	if f.unsup[e.Name()] {
		return nil, nil, fmt.Errorf("%w: fake says no", ErrUnsupported)
	}
	return func() (Output, error) {
		f.calls[e.Name()]++
		return Output{Values: f.out[e.Name()], Items: 10}, nil
	}, func() {}, nil
}

// devs selects cpu, go and the two GPUs of a machine that discovery
// describes as having a CUDA plugin with two devices (nothing is opened).
func devs(t *testing.T) []*device.Engine {
	t.Helper()
	inv := device.Inventory{XLACompiled: true, Plugins: []device.Plugin{{
		Name: "cuda", Path: "/usr/local/lib/go-xla/nvidia/pjrt_c_api_cuda_plugin.so", Probed: true,
		Devices: []device.XLADevice{{Index: 0, Description: "gpu 0"}, {Index: 1, Description: "gpu 1"}},
	}}}
	es, err := device.SelectEach([]string{"cpu", "go", "gpu:0", "gpu:1"}, device.Request{Inventory: &inv})
	if err != nil {
		t.Fatal(err)
	}
	return es
}

func TestRunParityAndAvailability(t *testing.T) {
	f := &fake{
		out: map[string][]float64{
			"cpu":        {1, 2, 3},
			"go":         {1, 2, 3},
			"xla:cuda:0": {1, 2, 3.00001},
		},
		unsup: map[string]bool{"xla:cuda:1": true},
		calls: map[string]int{},
	}
	f.out["xla:cuda:1"] = nil
	res, err := Run([]Workload{f}, Options{Repeats: 3, Engines: devs(t)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 4 {
		t.Fatalf("%d results, want 4", len(res))
	}
	want := []string{"reference", "identical", "within 1e-04", ""}
	for i, r := range res {
		if r.Parity != want[i] {
			t.Errorf("%s parity %q, want %q", r.Device, r.Parity, want[i])
		}
	}
	if res[3].Available || !strings.Contains(res[3].Reason, "fake says no") {
		t.Errorf("unsupported device: %+v", res[3])
	}
	if f.calls["cpu"] != 4 || f.calls["go"] != 4 {
		t.Errorf("calls %v: want one first call and 3 repeats", f.calls)
	}
	for _, r := range res[:3] {
		if r.MedianMS < r.MinMS || r.MedianMS > r.MaxMS || r.SpeedUp <= 0 || r.Repeats != 3 {
			t.Errorf("bad timing fields: %+v", r)
		}
	}
	if res[0].SpeedUp != 1 {
		t.Errorf("cpu speed-up %v", res[0].SpeedUp)
	}
}

func TestRunDetectsMismatch(t *testing.T) {
	f := &fake{out: map[string][]float64{"cpu": {1, 2}, "go": {1, 2.5}}, calls: map[string]int{}}
	res, err := Run([]Workload{f}, Options{Repeats: 1, Engines: devs(t)[:2]})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res[1].Parity, "MISMATCH") || math.Abs(res[1].MaxRelError-0.25) > 1e-12 {
		t.Errorf("mismatch not reported: %+v", res[1])
	}
	f.out["go"] = []float64{1}
	res, _ = Run([]Workload{f}, Options{Repeats: 1, Engines: devs(t)[:2]})
	if !strings.Contains(res[1].Parity, "1 values") {
		t.Errorf("length mismatch not reported: %+v", res[1])
	}
}

func TestRunErrors(t *testing.T) {
	f := &fake{calls: map[string]int{}, unsup: map[string]bool{"cpu": true}}
	if _, err := Run([]Workload{f}, Options{Repeats: 0, Engines: devs(t)}); err == nil {
		t.Error("repeats 0 accepted")
	}
	if _, err := Run([]Workload{f}, Options{Repeats: 1, Engines: devs(t)[1:]}); err == nil {
		t.Error("a non-CPU reference accepted")
	}
	if _, err := Run([]Workload{f}, Options{Repeats: 1, Engines: devs(t)}); err == nil || !strings.Contains(err.Error(), "failed on the CPU") {
		t.Errorf("CPU failure: err = %v", err)
	}
	if _, err := ParseSize("huge"); err == nil {
		t.Error("size huge accepted")
	}
}

// TestSmallPresetOnCPUAndSimpleGo runs the real small workloads on the native
// CPU and simplego and holds every workload's output on simplego to the
// CPU's: "identical", or "within" the workload's own tolerance (the
// forests identical: the graph learner grows the CPU learner's trees).
func TestSmallPresetOnCPUAndSimpleGo(t *testing.T) {
	ws, err := Workloads(Small)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(ws, Options{Repeats: 1, Engines: devs(t)[:2]})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Result{}
	for _, r := range res {
		got[r.Workload+"/"+r.Device] = r
	}
	if len(res) != 2*len(ws) {
		t.Errorf("%d results for %d workloads on 2 devices", len(res), len(ws))
	}
	mustBeIdentical := map[string]bool{"forest-fit": true, "forest-predict": true}
	for _, w := range ws {
		tol := w.Tolerance().Rel
		if !(tol > 0 && tol <= DefaultTolerance) {
			t.Errorf("%s states tolerance %g, want in (0, %g]", w.Name(), tol, DefaultTolerance)
		}
		cpu, goRes := got[w.Name()+"/cpu"], got[w.Name()+"/go"]
		if !cpu.Available || cpu.Parity != "reference" || cpu.Throughput <= 0 {
			t.Errorf("%s on the CPU: %+v", w.Name(), cpu)
		}
		ok := goRes.Parity == "identical" || !mustBeIdentical[w.Name()] && goRes.Parity == fmt.Sprintf("within %.0e", tol)
		if !goRes.Available || !ok || goRes.Mismatch() || goRes.Tolerance != tol || goRes.MaxRelError > tol {
			t.Errorf("%s on simplego: parity %q (max rel error %g, tolerance %g, available %v: %s); want identical%s",
				w.Name(), goRes.Parity, goRes.MaxRelError, goRes.Tolerance, goRes.Available, goRes.Reason,
				map[bool]string{false: fmt.Sprintf(" or within %.0e", tol), true: ""}[mustBeIdentical[w.Name()]])
		}
	}
	if err := (&Report{Results: res}).Err(); err != nil {
		t.Errorf("Report.Err: %v", err)
	}
	dir := t.TempDir()
	var buf bytes.Buffer
	if err := WriteTable(&buf, res); err != nil || !strings.Contains(buf.String(), "forest-predict") {
		t.Errorf("table: %v\n%s", err, buf.String())
	}
	md := filepath.Join(dir, "b.md")
	if err := WriteMarkdownFile(md, res, "header"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(md); !strings.Contains(string(b), "| matmul |") {
		t.Errorf("markdown:\n%s", b)
	}
	png := filepath.Join(dir, "b.png")
	if err := WritePNG(png, res); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(png); len(b) < 1000 || string(b[1:4]) != "PNG" {
		t.Errorf("PNG file of %d bytes", len(b))
	}
}

// TestReport checks the report of `gotrain bench`: its text is the table,
// its JSON keys those of --json.
func TestReport(t *testing.T) {
	r := &Report{Host: "h", Size: "small", Results: []Result{
		{Workload: "matmul", Device: "cpu", Available: true, FirstMS: 1.5, MedianMS: 0.25, MinMS: 0.125, MaxMS: 0.5,
			Throughput: 12.5, Unit: "GFLOP/s", SpeedUp: 1, Parity: "reference", RSSMiB: 30},
		{Workload: "matmul", Device: "gpu", Reason: "no plugin"},
	}}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := `WORKLOAD  DEVICE  FIRST ms  MEDIAN ms  MIN ms  MAX ms  THROUGHPUT    SPEED-UP  PARITY                  RSS MiB
matmul    cpu     1.50      0.250      0.125   0.500   12.5 GFLOP/s  1.00x     reference               30
matmul    gpu     -         -          -       -       -             -         unavailable: no plugin  -
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
	js, err := json.Marshal(&Report{Host: "h", Size: "seed"})
	if err != nil || string(js) != `{"host":"h","results":null,"size":"seed"}` {
		t.Errorf("JSON %s, %v", js, err)
	}
}

// TestMeasure checks that Measure runs the workloads of a size on the
// engines and reports them with the host and the size, and that it refuses
// an unknown size and what Run refuses.
func TestMeasure(t *testing.T) {
	cpu := devs(t)[:1]
	tests := []struct {
		name    string
		size    Size
		opts    Options
		want    string // the error, or ""
		results []string
	}{
		{name: "small on the CPU", size: Small, opts: Options{Repeats: 1, Engines: cpu},
			results: []string{"matmul/cpu", "forest-fit/cpu", "forest-predict/cpu", "signal-features/cpu"}},
		{name: "unknown size", size: "huge", opts: Options{Repeats: 1, Engines: cpu}, want: `bench: size "huge": want small or seed`},
		{name: "no repeats", size: Small, opts: Options{Engines: cpu}, want: "bench: repeats = 0"},
		{name: "no CPU reference", size: Seed, opts: Options{Repeats: 1, Engines: devs(t)[1:2]}, want: "bench: the first device must be the native CPU"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Measure(tt.size, tt.opts)
			if tt.want != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
					t.Fatalf("err = %v, want %q...", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range rep.Results {
				if !r.Available {
					t.Errorf("%s on %s unavailable: %s", r.Workload, r.Device, r.Reason)
				}
				got = append(got, r.Workload+"/"+r.Device)
			}
			if rep.Host != device.HostInfo() || rep.Size != string(tt.size) || strings.Join(got, " ") != strings.Join(tt.results, " ") {
				t.Errorf("report host %q, size %q, results %v; want %q, %q, %v", rep.Host, rep.Size, got, device.HostInfo(), tt.size, tt.results)
			}
		})
	}
}

// TestReportWriteFiles checks that WriteFiles writes each file it is
// given a path for, and only those.
func TestReportWriteFiles(t *testing.T) {
	rep := &Report{Host: "h", Size: "small", Results: []Result{
		{Workload: "matmul", Device: "cpu", Available: true, MedianMS: 1, SpeedUp: 1, Parity: "reference"},
		{Workload: "matmul", Device: "go", Available: true, MedianMS: 2, SpeedUp: 0.5, Parity: "identical"},
	}}
	tests := []struct {
		name     string
		md, png  bool
		badDir   bool // the Markdown file's folder does not exist
		wantErr  string
		wantFile []string
	}{
		{name: "both", md: true, png: true, wantFile: []string{"b.md", "b.png"}},
		{name: "markdown only", md: true, wantFile: []string{"b.md"}},
		{name: "png only", png: true, wantFile: []string{"b.png"}},
		{name: "neither"},
		{name: "markdown fails", md: true, png: true, badDir: true, wantErr: "bench: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			var md, png string
			if tt.md {
				md = filepath.Join(dir, "b.md")
				if tt.badDir {
					md = filepath.Join(dir, "none", "b.md")
				}
			}
			if tt.png {
				png = filepath.Join(dir, "b.png")
			}
			err := rep.WriteFiles(md, png, "the header")
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q...", err, tt.wantErr)
				}
				if _, err := os.Stat(filepath.Join(dir, "b.png")); err == nil {
					t.Error("the PNG was written after the Markdown file failed")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			entries, _ := os.ReadDir(dir)
			var got []string
			for _, e := range entries {
				got = append(got, e.Name())
			}
			if strings.Join(got, " ") != strings.Join(tt.wantFile, " ") {
				t.Errorf("files %v, want %v", got, tt.wantFile)
			}
			if tt.md {
				if b, _ := os.ReadFile(md); !strings.HasPrefix(string(b), "the header\n\n| workload |") {
					t.Errorf("markdown:\n%s", b)
				}
			}
			if tt.png {
				if b, _ := os.ReadFile(png); len(b) < 100 || string(b[1:4]) != "PNG" {
					t.Errorf("PNG file of %d bytes", len(b))
				}
			}
		})
	}
}

// TestCompare checks the parity verdicts: relative to the largest value
// without floors, per value with them (a small feature's error is then
// caught), lengths, NaNs and zeros.
func TestCompare(t *testing.T) {
	plain := Tolerance{Rel: 1e-4}
	floors := Tolerance{Rel: 1e-4, Floors: []float64{1, 1e-6, 0}}
	nan := math.NaN()
	for _, tt := range []struct {
		name      string
		got, want []float64
		tol       Tolerance
		verdict   string
		rel       float64
	}{
		{"identical", []float64{1, 2, nan}, []float64{1, 2, nan}, plain, "identical", 0},
		{"within, of the largest", []float64{1e4, 0.5}, []float64{1e4, 0.50001}, plain, "within 1e-04", 1e-9},
		// The same small error is 2e-5 of its own value: a per-value check sees it.
		{"small value, per value", []float64{1e4, 0.5, 3}, []float64{1e4, 0.50001, 3}, floors, "within 1e-04", 1e-5 / 0.50001},
		{"small value off by 1%, of the largest", []float64{1e4, 0.505}, []float64{1e4, 0.5}, plain, "within 1e-04", 5e-7},
		{"small value off by 1%, per value", []float64{1e4, 0.505, 3}, []float64{1e4, 0.5, 3}, floors,
			"MISMATCH: rel error 1.00e-02 > 1e-04 (value 1)", 1e-2},
		{"near zero, floor", []float64{1e-5, 0, 3}, []float64{0, 0, 3}, floors, "within 1e-04", 1e-5},
		{"exact zero, no floor", []float64{1, 1e-6, 1e-300}, []float64{1, 1e-6, 0}, floors, "MISMATCH: rel error +Inf > 1e-04 (value 2)", math.Inf(1)},
		{"all zero, no floors: absolute", []float64{0, 1e-5}, []float64{0, 0}, plain, "within 1e-04", 1e-5},
		{"NaN against a number", []float64{1, nan}, []float64{1, 2}, plain, "MISMATCH: rel error NaN > 1e-04 (value 1)", nan},
		{"lengths", []float64{1}, []float64{1, 2}, plain, "MISMATCH: 1 values, CPU has 2", math.Inf(1)},
	} {
		rel, verdict := compare(tt.got, tt.want, tt.tol)
		relOK := math.Abs(rel-tt.rel) <= 1e-6*math.Abs(tt.rel) || math.IsNaN(rel) && math.IsNaN(tt.rel) || rel == tt.rel
		if verdict != tt.verdict || !relOK {
			t.Errorf("%s: %q, rel %g; want %q, %g", tt.name, verdict, rel, tt.verdict, tt.rel)
		}
	}
}

// TestReportErr checks the verdict of a report: nil when every device
// matched or could not run a workload, else an error wrapping ErrMismatch
// that names each workload and device that did not match, and by how much.
func TestReportErr(t *testing.T) {
	ok := []Result{
		{Workload: "matmul", Device: "cpu", Available: true, Parity: "reference"},
		{Workload: "matmul", Device: "go", Available: true, Parity: "within 1e-04"},
		{Workload: "matmul", Device: "gpu", Reason: "no plugin"},
		{Workload: "forest-fit", Device: "go", Available: true, Parity: "identical"},
	}
	if err := (&Report{Results: ok}).Err(); err != nil {
		t.Errorf("all matching: %v", err)
	}
	bad := append(ok[:len(ok):len(ok)],
		Result{Workload: "matmul", Device: "xla:cuda:0", Available: true, Parity: "MISMATCH: rel error 2.50e-01 > 1e-04 (value 3)"},
		Result{Workload: "signal-features", Device: "go", Available: true, Parity: "MISMATCH: 34 values, CPU has 35"})
	err := (&Report{Results: bad}).Err()
	want := "bench: output differs from the CPU's: matmul on xla:cuda:0 (rel error 2.50e-01 > 1e-04 (value 3)); signal-features on go (34 values, CPU has 35)"
	if err == nil || err.Error() != want || !errors.Is(err, ErrMismatch) {
		t.Errorf("err = %v\nwant %s (wrapping ErrMismatch)", err, want)
	}
}

// TestRunPerturbedOutputFails injects a fault with Options.Perturb: a
// device's output scaled by 1.01 must be a mismatch that Report.Err
// names, while the report keeps every result.
func TestRunPerturbedOutputFails(t *testing.T) {
	f := &fake{out: map[string][]float64{"cpu": {1, 2, 3}, "go": {1, 2, 3}}, calls: map[string]int{}}
	var seen []string
	perturb := func(w, d string, v []float64) []float64 {
		seen = append(seen, w+"/"+d)
		if d != "go" {
			return v
		}
		out := make([]float64, len(v))
		for i := range v {
			out[i] = v[i] * 1.01
		}
		return out
	}
	res, err := Run([]Workload{f}, Options{Repeats: 1, Engines: devs(t)[:2], Perturb: perturb})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(seen, " ") != "fake/cpu fake/go" {
		t.Errorf("Perturb saw %v, want every device's output", seen)
	}
	if len(res) != 2 || !res[1].Mismatch() || res[0].Mismatch() {
		t.Fatalf("results %+v: want the CPU's reference and a mismatch on go", res)
	}
	err = (&Report{Results: res}).Err()
	if err == nil || !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "fake on go (rel error 1.00e-02 > 1e-04 (value 2))") {
		t.Errorf("Report.Err = %v", err)
	}
	f.tol = Tolerance{Rel: 1e-4, Floors: []float64{1, 1}}
	if _, err := Run([]Workload{f}, Options{Repeats: 1, Engines: devs(t)[:2]}); err == nil || !strings.Contains(err.Error(), "2 floors for 3 values") {
		t.Errorf("floors of the wrong length: err = %v", err)
	}
}
