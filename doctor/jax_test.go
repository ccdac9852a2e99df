package doctor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/internal/pjrttest"
)

// TestExplicitJAXPluginRealProbes runs the doctor with the real probes on
// fake JAX plugins built with the C compiler and given as the explicit
// plugin file: one speaking an older PJRT C API version, refused with both
// versions and a fix, and one speaking the loader's, which goes on into
// GoMLX's loader (and fails there, as a fake has no devices).
func TestExplicitJAXPluginRealProbes(t *testing.T) {
	if err := pjrttest.PluginTools(); err != nil {
		t.Skip(err)
	}
	if !device.Discover(device.DiscoverOptions{SkipNVIDIA: true, SkipPython: true}).XLACompiled {
		t.Skip("pure-Go build: plugins cannot be loaded")
	}
	for _, v := range []string{"PJRT_PLUGIN_LIBRARY_PATH", "XLA_FLAGS", "GOPJRT_CUDA_CHECKS"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
	build := func(minor int) string {
		p := filepath.Join(t.TempDir(), "site-packages", "jax_plugins", "xla_cuda12", device.JAXPluginFile)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := pjrttest.BuildPlugin(pjrttest.Plugin{Path: p, Major: 0, Minor: minor}); err != nil {
			t.Fatal(err)
		}
		return p
	}

	old := build(54)
	rep, err := Run(context.Background(), Options{Device: "gpu", PluginFile: old}, DefaultProbes())
	if err != nil {
		t.Fatal(err)
	}
	check(t, rep, "pjrt_api", want{status: Fail, title: "plugin cuda12 speaks PJRT C API 0.54, older than the 0.83 gotrain's loader (go-xla v0.1.4) speaks",
		evidence: "cuda12 (" + old + "): PJRT C API 0.54 (loader 0.83: older minor version, not loaded)", fix: "jax-cuda12-pjrt release built for PJRT C API 0.83|gotrain setup xla --cuda"})
	check(t, rep, "plugins", want{status: Fail, evidence: "explicit plugin file (--plugin): " + old, fix: "see pjrt_api"})
	check(t, rep, "jax", want{status: Fail, title: "explicit plugin file used: NVIDIA libraries missing next to plugin cuda12: libcudart.so.12", fix: "jax[cuda12]"})
	check(t, rep, "live", want{status: Fail, evidence: "candidate gpu: rejected: plugin " + old + " present but failed to load: plugin cuda12 speaks PJRT C API 0.54"})
	if err := rep.Err(); err == nil || !strings.Contains(err.Error(), "--device gpu cannot be used") {
		t.Errorf("Err() = %v", err)
	}

	match := build(83)
	rep, err = Run(context.Background(), Options{PluginFile: match}, DefaultProbes())
	if err != nil {
		t.Fatal(err)
	}
	check(t, rep, "pjrt_api", want{status: OK, title: "1 plugin(s) speak PJRT C API 0.83", evidence: "cuda12 (" + match + "): PJRT C API 0.83 (as the loader)", fix: "-"})
	check(t, rep, "plugins", want{status: Fail, evidence: "FAILED to load: while creating plugin " + match + ` for backend "xla": PJRT error (code=12): ` + pjrttest.ClientError})
	check(t, rep, "live", want{status: Warn, title: "--device auto chose cpu"})
}
