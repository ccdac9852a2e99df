package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/forest"
)

// run executes gotrain with args and returns stdout, stderr and the error.
// It hides the machine's PJRT plugins (an empty PJRT_PLUGIN_LIBRARY_PATH
// switches the search off), so a test sees a machine without accelerators
// wherever it runs; runGPU does not.
func run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	t.Setenv("PJRT_PLUGIN_LIBRARY_PATH", t.TempDir()) // no plugins, whatever the machine has
	return execArgs(args)
}

// execArgs runs the command tree on args in this process.
func execArgs(args []string) (string, string, error) {
	var out, errb bytes.Buffer
	cmd := newRootCmd()
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	err := execute(cmd)
	return out.String(), errb.String(), err
}

func TestDevicesVerify(t *testing.T) {
	out, _, err := run(t, "devices", "--verify", "--repeats", "2")
	if err != nil {
		t.Fatalf("devices --verify: %v\n%s", err, out)
	}
	for _, want := range []string{"cpu", "go", "verified", "unavailable"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestDevicesVerifyJSON(t *testing.T) {
	out, _, err := run(t, "--json", "devices", "--verify", "--repeats", "1")
	if err != nil {
		t.Fatal(err)
	}
	var rep device.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	verified := map[string]bool{}
	for _, v := range rep.Verify {
		verified[v.Device] = v.OK
	}
	if !verified["cpu"] || !verified["go"] {
		t.Errorf("cpu and go not verified: %+v", rep.Verify)
	}
	for _, e := range rep.Devices {
		if e.Name == "xla:cpu" && (e.Available || e.Reason == "") {
			t.Errorf("xla:cpu should be unavailable with a reason: %+v", e)
		}
	}
}

func TestDeviceGPUWithoutGPUFails(t *testing.T) {
	if gpu := gpuHere(t); gpu != "" { // a GPU host: --device gpu verifies it
		// A VERIFY row of the GPU (named gpu... or xla:cuda:N) reads verified.
		out, _, err := runGPU(t, "--device", "gpu", "devices", "--verify", "--repeats", "1")
		gpuVerified := false
		for _, m := range regexp.MustCompile(`(?m)^(\S+)\s+verified\b`).FindAllStringSubmatch(out, -1) {
			gpuVerified = gpuVerified || (m[1] != "cpu" && m[1] != "go")
		}
		if err != nil || !gpuVerified {
			t.Errorf("--device gpu on a GPU host (%s): %v\n%s", gpu, err, out)
		}
	}
	_, _, err := run(t, "--device", "gpu", "devices", "--verify")
	if err == nil {
		t.Fatal("--device gpu succeeded on a machine without plugins")
	}
	if !errors.Is(err, device.ErrUnavailable) || !strings.Contains(err.Error(), "--fallback") {
		t.Errorf("error lacks reason or hint: %v", err)
	}
}

func TestDeviceGPUFallback(t *testing.T) {
	if gpu := gpuHere(t); gpu != "" { // a GPU host: nothing to fall back from
		if _, stderr, err := runGPU(t, "--device", "gpu", "--fallback", "devices", "--verify", "--repeats", "1"); err != nil || strings.Contains(stderr, "warning:") {
			t.Errorf("--device gpu --fallback on a GPU host (%s): %v, stderr %q", gpu, err, stderr)
		}
	}
	out, stderr, err := run(t, "--device", "gpu", "--fallback", "devices", "--verify", "--repeats", "1")
	if err != nil {
		t.Fatalf("--fallback: %v", err)
	}
	if n := strings.Count(stderr, "warning:"); n != 1 || !strings.Contains(stderr, "falling back to cpu") {
		t.Errorf("want one warning line naming the fallback, got %q", stderr)
	}
	if !strings.Contains(out, "cpu     verified") && !strings.Contains(out, "verified") {
		t.Errorf("cpu not verified:\n%s", out)
	}
}

func TestInvalidDevice(t *testing.T) {
	_, _, err := run(t, "--device", "gpu:x", "devices")
	if err == nil || !strings.Contains(err.Error(), device.ValidForms) {
		t.Errorf("err = %v, want the valid forms listed", err)
	}
}

func TestForestTrainSavePredict(t *testing.T) {
	dir := t.TempDir()
	model := dir + "/m.gtf"
	out, _, err := run(t, "--json", "forest", "train", "--dataset", "diabetes", "--trees", "15", "--save", model, "--permutation-importance", "2")
	if err != nil {
		t.Fatal(err)
	}
	var rep forest.TrainResult
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	if len(rep.PermImport) != 10 || rep.PermImport["bmi"] <= 0 {
		t.Errorf("permutation importances: %v", rep.PermImport)
	}
	if rep.Device != "cpu" || rep.Trees != 15 || rep.TestMSE == nil || rep.TestR2 == nil || rep.OOBScore == nil || rep.FitSeconds <= 0 || rep.TrainRows != 353 || rep.TestRows != 89 {
		t.Errorf("report lacks fields: %s", out)
	}
	in := dir + "/in.csv"
	if err := os.WriteFile(in, []byte("bmi,age,sex,bp,s1,s2,s3,s4,s5,s6,extra\n32.1,59,2,101,157,93.2,38,4,4.8598,87,1\n21.6,48,1,87,183,103.2,70,3,3.8918,69,2\n,,,,,,,,,,\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err = run(t, "forest", "predict", "--model", model, "--data", in)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || lines[0] != "prediction" {
		t.Fatalf("predict output:\n%s", out)
	}
	for _, l := range lines[1:] {
		v, err := strconv.ParseFloat(l, 64)
		if err != nil || v < 25 || v > 346 {
			t.Errorf("prediction %q outside the target range", l)
		}
	}
	// Missing column, named in the error.
	bad := dir + "/bad.csv"
	os.WriteFile(bad, []byte("age,sex\n1,2\n"), 0o644)
	if _, _, err := run(t, "forest", "predict", "--model", model, "--data", bad); err == nil || !strings.Contains(err.Error(), `"bmi"`) {
		t.Errorf("missing column: err = %v", err)
	}
	// A file that is not a model.
	if _, _, err := run(t, "forest", "predict", "--model", in, "--data", in); err == nil || !strings.Contains(err.Error(), in) {
		t.Errorf("not a model: err = %v", err)
	}
	if _, _, err := run(t, "forest", "predict", "--model", model, "--data", in, "--proba"); err == nil || !strings.Contains(err.Error(), "classification") {
		t.Errorf("--proba on regression: err = %v", err)
	}
}

func TestForestClassificationProba(t *testing.T) {
	dir := t.TempDir()
	model := dir + "/d.gtf"
	out, _, err := run(t, "--json", "forest", "train", "--dataset", "digits", "--trees", "10", "--save", model)
	if err != nil {
		t.Fatal(err)
	}
	var rep forest.TrainResult
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.TestAccuracy == nil || *rep.TestAccuracy < 0.85 {
		t.Fatalf("digits report: %v %s", err, out)
	}
	var header []string
	for r := 0; r < 8; r++ {
		for c := 0; c < 8; c++ {
			header = append(header, fmt.Sprintf("pixel_%d_%d", r, c))
		}
	}
	in := dir + "/in.csv"
	os.WriteFile(in, []byte(strings.Join(header, ",")+"\n"+strings.Repeat("0,", 63)+"0\n"), 0o644)
	out, _, err = run(t, "forest", "predict", "--model", model, "--data", in, "--proba")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "proba_0,proba_1") || strings.Count(lines[1], ",") != 9 {
		t.Errorf("proba output:\n%s", out)
	}
}

func TestForestTrainErrors(t *testing.T) {
	dir := t.TempDir()
	csv := dir + "/t.csv"
	os.WriteFile(csv, []byte("a,b,y\n1,2,3\n4,-inf,6\n"), 0o644)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"forest", "train"}, "exactly one of --dataset and --train"},
		{[]string{"forest", "train", "--dataset", "iris"}, "diabetes"},
		{[]string{"forest", "train", "--train", csv}, `line 3, column "b" (2)`},
		{[]string{"forest", "train", "--train", dir + "/none.csv"}, "none.csv"},
		{[]string{"forest", "train", "--dataset", "diabetes", "--max-depth", "-1"}, "--max-depth -1: want >= 0"},
		{[]string{"forest", "train", "--dataset", "diabetes", "--trees", "0"}, "--trees 0"},
		{[]string{"forest", "train", "--dataset", "diabetes", "--max-features", "many"}, "max features"},
		{[]string{"--device", "gpu", "forest", "train", "--dataset", "diabetes"}, "--fallback"},
	}
	for _, tt := range tests {
		if _, _, err := run(t, tt.args...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: err = %v, want %q", tt.args, err, tt.want)
		}
	}
	if gpu := gpuHere(t); gpu != "" { // a GPU host: the forest trains there, and bad options still fail
		out, _, err := runGPU(t, "--json", "--device", "gpu", "forest", "train", "--dataset", "diabetes", "--trees", "2")
		var rep struct{ Device, Engine string }
		// The device is the GPU's engine name (gpu..., or xla:cuda:N), never the host's.
		if err != nil || json.Unmarshal([]byte(out), &rep) != nil || rep.Device == "" || rep.Device == "cpu" || rep.Device == "go" || rep.Engine != "graph" {
			t.Errorf("forest train --device gpu on a GPU host (%s): %v, device %q engine %q", gpu, err, rep.Device, rep.Engine)
		}
		if _, _, err := runGPU(t, "--device", "gpu", "forest", "train", "--dataset", "diabetes", "--trees", "0"); err == nil || !strings.Contains(err.Error(), "--trees 0") {
			t.Errorf("--device gpu --trees 0 on a GPU host: err = %v", err)
		}
	}
}

func TestBenchCommand(t *testing.T) {
	dir := t.TempDir()
	out, _, err := run(t, "--json", "bench", "--repeats", "1", "--md", dir+"/b.md", "--png", dir+"/b.png")
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Results []struct {
			Workload, Device, Parity string
			Available                bool
			Tolerance                float64
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	seen := map[string]bool{}
	for _, r := range rep.Results {
		seen[r.Workload+"/"+r.Device] = r.Available
		want := map[string]bool{"reference": r.Device == "cpu", "identical": r.Device != "cpu",
			fmt.Sprintf("within %.0e", r.Tolerance): r.Device != "cpu" && r.Tolerance > 0}
		if !r.Available || !want[r.Parity] {
			t.Errorf("%s on %s: parity %q (tolerance %g, available %v)", r.Workload, r.Device, r.Parity, r.Tolerance, r.Available)
		}
	}
	if !seen["matmul/cpu"] || !seen["matmul/go"] || !seen["forest-fit/cpu"] {
		t.Errorf("results: %+v", rep.Results)
	}
	for _, f := range []string{"b.md", "b.png"} {
		if st, err := os.Stat(dir + "/" + f); err != nil || st.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	if _, _, err := run(t, "bench", "--devices", "gpu"); err == nil || !strings.Contains(err.Error(), "not available") {
		t.Errorf("--devices gpu: err = %v", err)
	}
	if gpu := gpuHere(t); gpu != "" { // a GPU host: every workload runs on the GPU, with parity
		out, _, err := runGPU(t, "--json", "bench", "--repeats", "1", "--devices", "cpu,gpu")
		if err != nil {
			t.Fatalf("bench --devices cpu,gpu on a GPU host (%s): %v", gpu, err)
		}
		rep.Results = nil
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("bad JSON: %v\n%s", err, out)
		}
		n := 0
		for _, r := range rep.Results {
			if r.Device == "cpu" {
				continue
			}
			n++
			if !r.Available || !(r.Parity == "identical" || strings.HasPrefix(r.Parity, "within ")) {
				t.Errorf("%s on %s: available %v, parity %q", r.Workload, r.Device, r.Available, r.Parity)
			}
		}
		if n == 0 {
			t.Errorf("bench --devices cpu,gpu: no GPU result: %+v", rep.Results)
		}
	}
}
