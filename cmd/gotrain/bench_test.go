package main

import (
	"errors"
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
