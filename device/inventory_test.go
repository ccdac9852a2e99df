package device

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPluginNameFromFile(t *testing.T) {
	tests := map[string]string{
		"/a/pjrt_c_api_cuda_plugin.so":          "cuda",
		"pjrt_c_api_cpu_v0.83.3_plugin.so":      "cpu_v0.83.3",
		"/b/pjrt-plugin-tpu.so":                 "tpu",
		"pjrt_plugin_rocm.so":                   "rocm",
		"xla_cuda_plugin.so":                    "",
		"libcuda.so":                            "",
		"pjrt_c_api_cuda_plugin.so.bak":         "",
		"/lib/pjrt_c_api_cpu_plugin.dylib":      "cpu",
		"/lib/nvidia/pjrt_c_api_cuda_plugin.so": "cuda",
	}
	for in, want := range tests {
		if got := PluginNameFromFile(in); got != want {
			t.Errorf("PluginNameFromFile(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFindPluginsFirstWins(t *testing.T) {
	d1, d2 := t.TempDir(), t.TempDir()
	for _, f := range []string{filepath.Join(d1, "pjrt_c_api_cpu_plugin.so"), filepath.Join(d2, "pjrt_c_api_cpu_plugin.so"), filepath.Join(d2, "pjrt_c_api_cuda_plugin.so"), filepath.Join(d2, "notes.txt")} {
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := FindPlugins([]string{d1, "/nonexistent/dir", d2})
	if len(got) != 2 {
		t.Fatalf("found %d plugins, want 2: %+v", len(got), got)
	}
	if got[0].Name != "cpu" || filepath.Dir(got[0].Path) != d1 || got[0].Class() != "cpu" {
		t.Errorf("first plugin %+v, want cpu from %s", got[0], d1)
	}
	if got[1].Name != "cuda" || got[1].Class() != "gpu" {
		t.Errorf("second plugin %+v, want cuda", got[1])
	}
}

func TestSearchPathsFromEnv(t *testing.T) {
	t.Setenv("PJRT_PLUGIN_LIBRARY_PATH", "/a::/b")
	got := PluginSearchPaths()
	if strings.Join(got, ",") != "/a,/b" {
		t.Errorf("PluginSearchPaths = %v", got)
	}
}

func TestParseNVIDIASMI(t *testing.T) {
	out := "0, NVIDIA H100 80GB HBM3, 550.54.15, 81559, 1024, 37\n1, NVIDIA H100 80GB HBM3, 550.54.15, 81559, [N/A], 0\n"
	gpus, driver, err := ParseNVIDIASMI(out)
	if err != nil {
		t.Fatal(err)
	}
	if driver != "550.54.15" || len(gpus) != 2 || gpus[0].MemoryTotalMB != 81559 || gpus[0].UtilPercent != 37 || gpus[1].MemoryUsedMB != 0 || gpus[1].Name != "NVIDIA H100 80GB HBM3" {
		t.Errorf("got %+v driver %q", gpus, driver)
	}
	if _, _, err := ParseNVIDIASMI("0, only, three\n"); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("malformed output: err = %v", err)
	}
}

func TestInstallXLAOfflineFailsFast(t *testing.T) {
	if !xlaCompiled {
		_, err := InstallXLA(context.Background(), InstallOptions{LibDir: t.TempDir()})
		if err == nil || !strings.Contains(err.Error(), "noxla") {
			t.Fatalf("noxla build: err = %v", err)
		}
		return
	}
	dir := t.TempDir()
	dialed := []string{}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		dialed = append(dialed, addr)
		return nil, errors.New("dial tcp: lookup failed")
	}
	_, err := InstallXLA(context.Background(), InstallOptions{LibDir: dir, CUDA: true, Dial: dial})
	if !errors.Is(err, ErrOffline) {
		t.Fatalf("err = %v, want ErrOffline", err)
	}
	if !strings.Contains(err.Error(), "PJRT_PLUGIN_LIBRARY_PATH") || len(dialed) != 1 {
		t.Errorf("err = %v, dialed %v", err, dialed)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("offline install left files behind: %v", entries)
	}
	// An existing nvidia folder is never deleted without --force.
	if err := os.MkdirAll(filepath.Join(dir, "go-xla", "nvidia"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = InstallXLA(context.Background(), InstallOptions{LibDir: dir, CUDA: true, Dial: dial})
	if err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("existing nvidia folder: err = %v", err)
	}
}
