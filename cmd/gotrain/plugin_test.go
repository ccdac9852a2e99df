package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/internal/pjrttest"
)

// xlaBuild tells whether this test binary can load PJRT plugins.
func xlaBuild() bool {
	return device.Discover(device.DiscoverOptions{SkipNVIDIA: true, SkipPython: true}).XLACompiled
}

// TestPluginFlagReachesEveryCommand passes --plugin naming a file that does
// not exist to devices, doctor, bench and a training command: each
// considers that file only, and says so.
func TestPluginFlagReachesEveryCommand(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "xla_cuda_plugin.so")

	out, _, err := run(t, "--json", "--plugin", missing, "devices")
	if err != nil {
		t.Fatal(err)
	}
	var rep device.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	inv := rep.Inventory
	if inv.PluginFile != missing || !strings.Contains(inv.PluginFileErr, "no such file") || len(inv.Plugins) != 0 || len(inv.SearchPaths) != 0 {
		t.Errorf("inventory: file %q, error %q, plugins %v, search paths %v", inv.PluginFile, inv.PluginFileErr, inv.Plugins, inv.SearchPaths)
	}
	out, _, err = run(t, "--plugin", missing, "devices")
	if err != nil || !strings.Contains(out, "plugin file: "+missing+" (only this plugin is considered)") || !strings.Contains(out, "plugin file cannot be used: plugin file "+missing) {
		t.Errorf("devices: %v\n%s", err, out)
	}

	out, _, err = run(t, "--plugin", missing, "doctor", "--burst", "0")
	if err == nil || !strings.Contains(out, "[fail] plugins: the explicit plugin file cannot be used: plugin file "+missing) ||
		!strings.Contains(out, "fix: give --plugin the path of an existing PJRT plugin file") {
		t.Errorf("doctor: %v\n%s", err, out)
	}

	if !xlaBuild() {
		return // every XLA device is refused for the build before the plugin is looked at
	}
	reason := "only the plugin file " + missing + " was considered"
	for _, args := range [][]string{
		{"--plugin", missing, "--device", "gpu", "bench", "--repeats", "1"},
		{"--plugin", missing, "--device", "gpu", "forest", "train", "--dataset", "diabetes"},
		{"--plugin", missing, "--device", "gpu", "devices"},
	} {
		_, _, err := run(t, args...)
		if err == nil || !strings.Contains(err.Error(), reason) {
			t.Errorf("%v: err = %v, want %q", args, err, reason)
		}
	}
}

// TestPluginFlagVersionMismatch gives --plugin a fake JAX plugin, built
// with the C compiler, that speaks an older PJRT C API than the loader:
// devices shows both versions and the fix, in text and JSON, and doctor
// fails pjrt_api with them.
func TestPluginFlagVersionMismatch(t *testing.T) {
	if err := pjrttest.PluginTools(); err != nil {
		t.Skip(err)
	}
	if !xlaBuild() {
		t.Skip("pure-Go build: plugins cannot be loaded")
	}
	t.Setenv("GOPJRT_CUDA_CHECKS", "")
	plugin := filepath.Join(t.TempDir(), "site-packages", "jax_plugins", "xla_cuda12", device.JAXPluginFile)
	if err := os.MkdirAll(filepath.Dir(plugin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := pjrttest.BuildPlugin(pjrttest.Plugin{Path: plugin, Major: 0, Minor: 54}); err != nil {
		t.Fatal(err)
	}

	out, _, err := run(t, "--plugin", plugin, "devices")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		"xla:cuda12",
		"present but failed to load: plugin cuda12 spe", // the table cuts reasons; the full text follows
		"cuda12  explicit  0.54 (loader 0.83: older minor version, not loaded)  " + plugin,
		"gotrain's PJRT loader: C API 0.83 (go-xla v0.1.4)",
		"plugin cuda12 speaks PJRT C API 0.54, older than the 0.83 gotrain's loader (go-xla v0.1.4) speaks",
		"  fix: in " + filepath.Dir(filepath.Dir(filepath.Dir(plugin))) + ", install the jax-cuda12-pjrt release built for PJRT C API 0.83",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("devices lacks %q:\n%s", w, out)
		}
	}

	out, _, err = run(t, "--json", "--plugin", plugin, "devices")
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Inventory struct {
			PJRTLoader string `json:"pjrt_loader"`
			Plugins    []struct {
				Source  string          `json:"source"`
				PJRTAPI *device.PJRTAPI `json:"pjrt_api"`
			} `json:"plugins"`
		} `json:"inventory"`
	}
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatal(err)
	}
	if inv := raw.Inventory; inv.PJRTLoader != "0.83 (go-xla v0.1.4)" || len(inv.Plugins) != 1 || inv.Plugins[0].Source != "explicit" || inv.Plugins[0].PJRTAPI == nil {
		t.Errorf("devices --json: %+v", inv)
	} else if a := *inv.Plugins[0].PJRTAPI; a.Version != "0.54" || a.Major != 0 || a.Minor != 54 || a.Loader != "0.83" || a.Compat != device.PJRTOlderMinor {
		t.Errorf("devices --json: pjrt_api %+v", a)
	}

	out, _, err = run(t, "--plugin", plugin, "doctor", "--burst", "0")
	if err == nil || !strings.Contains(out, "[fail] pjrt_api: plugin cuda12 speaks PJRT C API 0.54, older than the 0.83") || !strings.Contains(out, "jax-cuda12-pjrt") {
		t.Errorf("doctor: %v\n%s", err, out)
	}
}
