package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/device"
)

// benchEnginesFor runs benchEngines as `gotrain [--device dev] bench args...` would.
func benchEnginesFor(t *testing.T, dev string, args ...string) ([]string, error) {
	t.Helper()
	t.Setenv("PJRT_PLUGIN_LIBRARY_PATH", t.TempDir()) // no plugins, whatever the machine has
	g := &globals{device: "auto"}
	cmd := newBenchCmd(g)
	cmd.Flags().StringVar(&g.device, "device", "auto", "")
	if dev != "" {
		args = append([]string{"--device", dev}, args...)
	}
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	list, _ := cmd.Flags().GetString("devices")
	es, err := benchEngines(cmd, g, list)
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
		e.Close()
	}
	return names, err
}

func TestBenchHonoursDevice(t *testing.T) {
	for _, tt := range []struct {
		dev  string
		args []string
		want string // engine names, or the error's text
	}{
		{"go", nil, "cpu,go"},
		{"cpu", nil, "cpu"},
		{"", []string{"--devices", "go"}, "cpu,go"},
		{"", nil, "cpu,go"}, // all: what this machine has without plugins
		{"auto", nil, "cpu,go"},
		{"gpu", nil, "error: bench: device: requested device is not available: gpu:"},
		{"go", []string{"--devices", "go"}, "error: bench: give --device or --devices, not both"},
		{"", []string{"--devices", "tpu"}, "error: bench: device: requested device is not available: tpu:"},
		{"bogus", nil, "error: bench: device: invalid device"},
	} {
		names, err := benchEnginesFor(t, tt.dev, tt.args...)
		got := strings.Join(names, ",")
		if err != nil {
			got = "error: " + err.Error()
		}
		if !strings.HasPrefix(got, tt.want) {
			t.Errorf("--device %q bench %v: got %q, want %q...", tt.dev, tt.args, got, tt.want)
		}
	}
}

// TestBenchGPUWithoutGPUFails is the end-to-end check: the global
// --device is not silently ignored by bench.
func TestBenchGPUWithoutGPUFails(t *testing.T) {
	out, _, err := run(t, "--device", "gpu", "bench", "--repeats", "1")
	if err == nil || !errors.Is(err, device.ErrUnavailable) || !strings.Contains(err.Error(), "hint:") {
		t.Fatalf("--device gpu bench without a GPU: err = %v, output:\n%s", err, out)
	}
	if out != "" {
		t.Errorf("nothing should be timed, got:\n%s", out)
	}
}

// benchFaultEnv names, in a gotrain process a test starts from the test
// binary (TestMain), the "workload/device" whose output `gotrain bench`
// scales by 1.01 before the parity check: a fault injected through
// bench.Options.Perturb (benchPerturb), not through any flag.
const benchFaultEnv = "GOTRAIN_TEST_BENCH_FAULT"

// injectBenchFault sets benchPerturb from benchFaultEnv, if it is set.
func injectBenchFault() {
	target := os.Getenv(benchFaultEnv)
	if target == "" {
		return
	}
	benchPerturb = func(workload, device string, values []float64) []float64 {
		if workload+"/"+device != target {
			return values
		}
		out := make([]float64, len(values))
		for i, v := range values {
			out[i] = v * 1.01
		}
		return out
	}
}

// TestBenchMismatchFails runs `gotrain bench` as CI does, in a gotrain
// process whose matmul output on simplego is 1% off: the exit status is
// non-zero, the error names the workload, the device and the error, and
// the whole report was printed (and --md written) before it.
func TestBenchMismatchFails(t *testing.T) {
	md := filepath.Join(t.TempDir(), "b.md")
	cmd := exec.Command(os.Args[0], "bench", "--repeats", "1", "--devices", "go", "--md", md)
	cmd.Env = append(os.Environ(), childEnv+"=1", "PJRT_PLUGIN_LIBRARY_PATH="+t.TempDir(), benchFaultEnv+"=matmul/go")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("bench with a mismatch: %v, want exit status 1\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	const want = "gotrain: bench: output differs from the CPU's: matmul on go (rel error 1.00e-02 > 1e-04 (value "
	if !strings.Contains(stderr.String(), want) || strings.Count(stderr.String(), " on go (") != 1 {
		t.Errorf("stderr lacks the one mismatch %q...:\n%s", want, stderr.String())
	}
	rows := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n")[1:] {
		if f := strings.Fields(l); len(f) > 2 {
			rows[f[0]+"/"+f[1]] = l
		}
	}
	for _, w := range []string{"matmul", "forest-fit", "forest-predict", "signal-features"} {
		cpu, gor := rows[w+"/cpu"], rows[w+"/go"]
		if !strings.Contains(cpu, "reference") || gor == "" || strings.Contains(gor, "MISMATCH") != (w == "matmul") {
			t.Errorf("report row of %s: cpu %q, go %q; want every row, only matmul on go a MISMATCH\n%s", w, cpu, gor, stdout.String())
		}
	}
	if b, err := os.ReadFile(md); err != nil || !strings.Contains(string(b), "| matmul | C = A·B, 256x256 float32 | go |") {
		t.Errorf("--md not written before the failure: %v\n%s", err, b)
	}
}
