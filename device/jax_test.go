package device

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// touch creates the files (and their folders) with some content.
func touch(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("not really a library"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// cuda12Libs are the files of a complete jax[cuda12] installation's
// NVIDIA wheels, by package folder.
var cuda12Libs = map[string][]string{
	"cuda_runtime": {"libcudart.so.12"},
	"cublas":       {"libcublas.so.12", "libcublasLt.so.12", "libnvblas.so.12"},
	"cufft":        {"libcufft.so.11", "libcufftw.so.11"},
	"cusolver":     {"libcusolver.so.11"},
	"cusparse":     {"libcusparse.so.12"},
	"cudnn":        {"libcudnn.so.9", "libcudnn_ops.so.9"},
	"nccl":         {"libnccl.so.2"},
	"cuda_cupti":   {"libcupti.so.12"},
}

// fakeSitePackages lays out a site-packages folder under root with JAX's
// CUDA plugin for CUDA major version cuda, the NVIDIA libraries of libs
// (package folder -> files) and, with nvcc, nvidia/cuda_nvcc. It returns
// the folder and the plugin's path.
func fakeSitePackages(t *testing.T, root, cuda string, libs map[string][]string, nvcc bool) (string, string) {
	t.Helper()
	sp := filepath.Join(root, "lib", "python3.12", "site-packages")
	plugin := filepath.Join(sp, "jax_plugins", "xla_cuda"+cuda, JAXPluginFile)
	touch(t, plugin, filepath.Join(sp, "jax_plugins", "xla_cuda"+cuda, "__init__.py"))
	for pkg, files := range libs {
		for _, f := range files {
			touch(t, filepath.Join(sp, "nvidia", pkg, "lib", f))
		}
	}
	if nvcc {
		touch(t, filepath.Join(sp, "nvidia", "cuda_nvcc", "bin", "ptxas"), filepath.Join(sp, "nvidia", "cuda_nvcc", "nvvm", "libdevice", "libdevice.10.bc"))
	}
	return sp, plugin
}

func TestJAXLayout(t *testing.T) {
	for path, want := range map[string]string{
		"/v/lib/python3.12/site-packages/jax_plugins/xla_cuda12/xla_cuda_plugin.so": "/v/lib/python3.12/site-packages cuda12",
		"/sp/jax_plugins/xla_cuda13/xla_cuda_plugin.so":                             "/sp cuda13",
		"/sp/jax_plugins/xla_cuda12/other.so":                                       "",
		"/sp/xla_cuda12/xla_cuda_plugin.so":                                         "",
		"/opt/jax/xla_cuda_plugin.so":                                               "",
		"/sp/jax_plugins/xla_rocm/xla_cuda_plugin.so":                               "",
	} {
		sp, cuda, ok := JAXLayout(path)
		got := ""
		if ok {
			got = sp + " cuda" + cuda
		}
		if got != want {
			t.Errorf("JAXLayout(%q) = %q, want %q", path, got, want)
		}
	}
}

func TestFindJAXPluginsCompleteEnvironment(t *testing.T) {
	t.Setenv("LD_LIBRARY_PATH", "")
	sp, plugin := fakeSitePackages(t, t.TempDir(), "12", cuda12Libs, true)
	envs := []PythonEnv{{From: "python3", Python: "/venv/bin/python3", SitePackages: []string{sp, sp}}}
	ps := FindJAXPlugins(envs)
	if len(ps) != 1 {
		t.Fatalf("found %d plugins, want 1 (a folder listed twice is searched once): %+v", len(ps), ps)
	}
	p := ps[0]
	if p.Name != "cuda12" || p.Class() != "gpu" || p.Source != SourceJAX || p.Path != plugin || p.Libs == nil {
		t.Fatalf("plugin %+v", p)
	}
	l := p.Libs
	if l.SitePackages != sp || l.CUDA != "12" || l.Python != "/venv/bin/python3" || l.NVIDIADir != filepath.Join(sp, "nvidia") {
		t.Errorf("libs %+v", l)
	}
	if len(l.Dirs) != len(cuda12Libs) || len(l.Missing) != 0 || len(l.OnLDPath) != 0 {
		t.Errorf("dirs %v, missing %v, on LD_LIBRARY_PATH %v; want %d folders, nothing missing", l.Dirs, l.Missing, l.OnLDPath, len(cuda12Libs))
	}
	if l.CUDADataDir != filepath.Join(sp, "nvidia", "cuda_nvcc") {
		t.Errorf("CUDA data dir %q, want nvidia/cuda_nvcc", l.CUDADataDir)
	}
	if !slices.Equal(envs[0].Plugins, []string{plugin}) {
		t.Errorf("environment's plugins %v", envs[0].Plugins)
	}
}

func TestFindJAXPluginsMissingLibraries(t *testing.T) {
	ld := t.TempDir()
	touch(t, filepath.Join(ld, "libcufft.so.11")) // a system CUDA on LD_LIBRARY_PATH
	t.Setenv("LD_LIBRARY_PATH", "relative/ignored:"+ld)
	libs := map[string][]string{"cuda_runtime": {"libcudart.so.12"}, "cublas": {"libcublas.so.12", "libcublasLt.so.12"}}
	sp, _ := fakeSitePackages(t, t.TempDir(), "12", libs, false)
	ps := FindJAXPlugins([]PythonEnv{{From: "python3", SitePackages: []string{sp}}})
	if len(ps) != 1 {
		t.Fatalf("found %+v", ps)
	}
	l := ps[0].Libs
	if want := []string{"libcusolver.so.11", "libcusparse.so.12", "libcudnn.so.9"}; !slices.Equal(l.Missing, want) {
		t.Errorf("missing %v, want %v", l.Missing, want)
	}
	if want := []string{"libcufft.so.11 (" + ld + ")"}; !slices.Equal(l.OnLDPath, want) {
		t.Errorf("on LD_LIBRARY_PATH %v, want %v", l.OnLDPath, want)
	}
	if l.CUDADataDir != "" {
		t.Errorf("CUDA data dir %q without nvidia/cuda_nvcc", l.CUDADataDir)
	}
	// No nvidia folder at all: every library is missing.
	sp2, _ := fakeSitePackages(t, t.TempDir(), "12", nil, false)
	l2 := FindJAXPlugins([]PythonEnv{{SitePackages: []string{sp2}}})[0].Libs
	if len(l2.Dirs) != 0 || len(l2.Missing) != len(requiredLibs["12"])-1 {
		t.Errorf("no nvidia folder: dirs %v, missing %v", l2.Dirs, l2.Missing)
	}
}

func TestFindJAXPluginsCUDA13(t *testing.T) {
	t.Setenv("LD_LIBRARY_PATH", "")
	libs := map[string][]string{
		"cu13":     {"libcudart.so.13", "libcublas.so.13", "libcublasLt.so.13", "libcufft.so.12", "libcusolver.so.12", "libcusparse.so.12"},
		"cusparse": {"libcusparse.so.12"}, // a CUDA 12 package with the same soname
		"cudnn":    {"libcudnn.so.9"},
	}
	sp, _ := fakeSitePackages(t, t.TempDir(), "13", libs, false)
	touch(t, filepath.Join(sp, "nvidia", "cu13", "nvvm", "libdevice", "libdevice.10.bc"))
	l := FindJAXPlugins([]PythonEnv{{SitePackages: []string{sp}}})[0].Libs
	if l.CUDA != "13" || len(l.Missing) != 0 {
		t.Errorf("cuda %q, missing %v", l.CUDA, l.Missing)
	}
	if len(l.Dirs) == 0 || filepath.Base(filepath.Dir(l.Dirs[0])) != "cu13" {
		t.Errorf("dirs %v: nvidia/cu13/lib must come first for CUDA 13", l.Dirs)
	}
	if got := libIndex(l.Dirs)["libcusparse.so.12"]; !strings.Contains(got, "/cu13/") {
		t.Errorf("libcusparse.so.12 resolves to %s, want CUDA 13's", got)
	}
	if l.CUDADataDir != filepath.Join(sp, "nvidia", "cu13") {
		t.Errorf("CUDA data dir %q, want nvidia/cu13", l.CUDADataDir)
	}
}

// fakePython puts on PATH a python3 that prints lines as its
// site-packages, and makes /usr/bin/python3 absent.
func fakePython(t *testing.T, script string) string {
	t.Helper()
	bin := t.TempDir()
	py := filepath.Join(bin, "python3")
	if err := os.WriteFile(py, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	old := systemPython
	systemPython = filepath.Join(bin, "absent-system-python3")
	t.Cleanup(func() { systemPython = old })
	return py
}

// noDiscoveryEnv clears the variables that steer discovery and hides the
// plugins of the machine (a GPU host has some), so that only what a test
// builds is found.
func noDiscoveryEnv(t *testing.T) {
	t.Helper()
	for _, v := range []string{"PJRT_PLUGIN_LIBRARY_PATH", "VIRTUAL_ENV", "CONDA_PREFIX", "LD_LIBRARY_PATH"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
	t.Setenv("HOME", t.TempDir()) // no ~/.local/lib/go-xla plugins
	old := systemPluginDirs
	systemPluginDirs = []string{filepath.Join(t.TempDir(), "go-xla")} // nor the machine's
	t.Cleanup(func() { systemPluginDirs = old })
}

func TestDiscoverFindsJAXPluginInPythonEnvs(t *testing.T) {
	noDiscoveryEnv(t)
	venv := t.TempDir()
	venvSP, venvPlugin := fakeSitePackages(t, venv, "12", cuda12Libs, true)
	touch(t, filepath.Join(venv, "bin", "python"))
	sysSP, sysPlugin := fakeSitePackages(t, t.TempDir(), "12", nil, false)
	sys13SP, sys13Plugin := fakeSitePackages(t, t.TempDir(), "13", nil, false)
	py := fakePython(t, "printf '%s\\n' "+sysSP+" /no/such/site-packages "+sys13SP+" relative/dir")
	t.Setenv("VIRTUAL_ENV", venv)

	inv := Discover(DiscoverOptions{SkipNVIDIA: true})
	if len(inv.PythonEnvs) != 2 {
		t.Fatalf("python envs %+v, want VIRTUAL_ENV and python3", inv.PythonEnvs)
	}
	ve, p3 := inv.PythonEnvs[0], inv.PythonEnvs[1]
	if ve.From != "VIRTUAL_ENV" || ve.Python != filepath.Join(venv, "bin", "python") || !slices.Equal(ve.SitePackages, []string{venvSP}) || ve.Err != "" {
		t.Errorf("VIRTUAL_ENV env %+v", ve)
	}
	if p3.From != "python3" || p3.Python != py || !slices.Equal(p3.SitePackages, []string{sysSP, sys13SP}) || p3.Err != "" {
		t.Errorf("python3 env %+v, want the existing absolute site-packages it printed", p3)
	}
	// The first plugin of a name wins: the virtualenv's cuda12; python3's
	// cuda12 is recorded but not used; its cuda13 is used.
	if len(inv.Plugins) != 2 || inv.Plugins[0].Path != venvPlugin || inv.Plugins[1].Path != sys13Plugin || inv.Plugins[1].Name != "cuda13" {
		t.Fatalf("plugins %+v", inv.Plugins)
	}
	if !slices.Equal(p3.Plugins, []string{sysPlugin, sys13Plugin}) {
		t.Errorf("python3's plugins %v", p3.Plugins)
	}
	if inv.PJRTLoader != "0.83 (go-xla v0.1.4)" {
		t.Errorf("PJRT loader %q", inv.PJRTLoader)
	}
	// In a pure-Go build the version cannot be read, and says so.
	if !xlaCompiled && (inv.Plugins[0].PJRTAPI == nil || inv.Plugins[0].PJRTAPI.Compat != PJRTUnknown) {
		t.Errorf("noxla build: PJRT API %+v, want unknown", inv.Plugins[0].PJRTAPI)
	}

	// PJRT_PLUGIN_LIBRARY_PATH replaces discovery: no Python environment
	// is asked, but a JAX plugin folder on it is recognised.
	t.Setenv("PJRT_PLUGIN_LIBRARY_PATH", filepath.Dir(sysPlugin))
	inv = Discover(DiscoverOptions{SkipNVIDIA: true})
	if len(inv.PythonEnvs) != 0 || len(inv.Plugins) != 1 || inv.Plugins[0].Path != sysPlugin || inv.Plugins[0].Source != SourceSearchPath || inv.Plugins[0].Libs == nil {
		t.Errorf("with PJRT_PLUGIN_LIBRARY_PATH: envs %+v, plugins %+v", inv.PythonEnvs, inv.Plugins)
	}
}

func TestDiscoverWithoutJAX(t *testing.T) {
	noDiscoveryEnv(t)
	fakePython(t, "echo 'Traceback: no module named site' >&2; exit 3")
	inv := Discover(DiscoverOptions{SkipNVIDIA: true})
	if len(inv.Plugins) != 0 || len(inv.PythonEnvs) != 1 || !strings.Contains(inv.PythonEnvs[0].Err, "exit status 3: Traceback") {
		t.Fatalf("failing python3: plugins %+v, envs %+v", inv.Plugins, inv.PythonEnvs)
	}
	inv.XLACompiled = true
	_, reason := check(Spec{Kind: GPU, Plugin: "cuda", Index: AnyIndex}, inv)
	if !strings.HasPrefix(reason, "no CUDA PJRT plugin found in ") || strings.Contains(reason, "Python environments") {
		t.Errorf("reason %q", reason)
	}

	// No python3 at all is no error either.
	t.Setenv("PATH", t.TempDir())
	inv = Discover(DiscoverOptions{SkipNVIDIA: true})
	if len(inv.PythonEnvs) != 1 || inv.PythonEnvs[0].Err != "not found on PATH" {
		t.Errorf("no python3: envs %+v", inv.PythonEnvs)
	}
	// cpu and go never ask Python; gpu does.
	marker := filepath.Join(t.TempDir(), "asked")
	fakePython(t, ": > "+marker+"; exit 1")
	for _, d := range []string{"cpu", "go"} {
		if _, err := Select(Request{Device: d}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("--device cpu/go asked python3")
	}
	if _, err := Select(Request{Device: "gpu"}); err == nil {
		t.Errorf("gpu available on a fake machine")
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("--device gpu did not ask python3: %v", err)
	}

	// A site-packages without JAX: the GPU reason names it.
	sp := t.TempDir()
	fakePython(t, "echo "+sp)
	inv = Discover(DiscoverOptions{SkipNVIDIA: true})
	inv.XLACompiled = true
	_, reason = check(Spec{Kind: GPU, Plugin: "cuda", Index: AnyIndex}, inv)
	if !strings.HasSuffix(reason, " nor in the Python environments' "+sp) {
		t.Errorf("reason %q, want the site-packages searched", reason)
	}
}

func TestExplicitPluginFile(t *testing.T) {
	noDiscoveryEnv(t)
	fakePython(t, "exit 1")
	_, plugin := fakeSitePackages(t, t.TempDir(), "12", cuda12Libs, true)
	other := filepath.Join(t.TempDir(), "libtpu.so")
	touch(t, other)
	t.Setenv("PJRT_PLUGIN_LIBRARY_PATH", filepath.Dir(other)) // not searched either

	inv := Discover(DiscoverOptions{SkipNVIDIA: true, PluginFile: plugin})
	if inv.PluginFile != plugin || inv.PluginFileErr != "" || len(inv.SearchPaths) != 0 || len(inv.PythonEnvs) != 0 {
		t.Errorf("inventory: file %q (%q), search paths %v, envs %v", inv.PluginFile, inv.PluginFileErr, inv.SearchPaths, inv.PythonEnvs)
	}
	if len(inv.Plugins) != 1 || inv.Plugins[0].Path != plugin || inv.Plugins[0].Source != SourceExplicit || inv.Plugins[0].Name != "cuda12" || inv.Plugins[0].Libs == nil {
		t.Fatalf("plugins %+v, want only the explicit JAX plugin", inv.Plugins)
	}

	// A relative path is made absolute; a file of another name is named
	// after its base name.
	wd, _ := os.Getwd()
	rel, err := filepath.Rel(wd, other)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ExplicitPlugin(rel)
	if err != nil || p.Path != other || p.Name != "libtpu" || p.Class() != "tpu" || p.Libs != nil {
		t.Errorf("ExplicitPlugin(%q) = %+v, %v", rel, p, err)
	}

	// A file that does not exist: no plugin, and the reason says why.
	missing := filepath.Join(t.TempDir(), "xla_cuda_plugin.so")
	inv = Discover(DiscoverOptions{SkipNVIDIA: true, PluginFile: missing})
	if len(inv.Plugins) != 0 || !strings.Contains(inv.PluginFileErr, "no such file") {
		t.Fatalf("missing file: plugins %+v, error %q", inv.Plugins, inv.PluginFileErr)
	}
	inv.XLACompiled = true
	_, reason := check(Spec{Kind: GPU, Plugin: "cuda", Index: AnyIndex}, inv)
	if !strings.Contains(reason, "only the plugin file "+missing+" was considered (plugin file "+missing+": stat") {
		t.Errorf("reason %q", reason)
	}
	for _, bad := range []string{filepath.Dir(other), filepath.Join(t.TempDir(), "a,b.so")} {
		if strings.Contains(bad, ",") {
			touch(t, bad)
		}
		if _, err := ExplicitPlugin(bad); err == nil {
			t.Errorf("ExplicitPlugin(%q) accepted", bad)
		}
	}
}

func TestComparePJRTAPI(t *testing.T) {
	for _, tt := range []struct {
		major, minor int
		want         PJRTCompat
		refused      bool
	}{
		{0, 83, PJRTMatch, false},
		{0, 90, PJRTNewerMinor, false},
		{0, 54, PJRTOlderMinor, true},
		{1, 0, PJRTMajorMismatch, true},
		{1, 83, PJRTMajorMismatch, true},
	} {
		a := NewPJRTAPI(tt.major, tt.minor)
		if a.Compat != tt.want || a.Refused() != tt.refused || a.Loader != "0.83" {
			t.Errorf("%d.%d: %+v, want %s (refused %v)", tt.major, tt.minor, a, tt.want, tt.refused)
		}
	}
	p := Plugin{Name: "cuda12", Path: "/sp/jax_plugins/xla_cuda12/xla_cuda_plugin.so", Libs: &PluginLibs{SitePackages: "/sp", Python: "/venv/bin/python"}}
	a := NewPJRTAPI(0, 54)
	p.PJRTAPI = &a
	msg := refusal(p).Error()
	for _, w := range []string{"plugin cuda12 speaks PJRT C API 0.54", "0.83", "go-xla v0.1.4", "not loaded", "fix: in /sp, install the jax-cuda12-pjrt release built for PJRT C API 0.83 (`/venv/bin/python -m pip install 'jax-cuda12-pjrt==VERSION'`", "gotrain setup xla --cuda", "--plugin FILE"} {
		if !strings.Contains(msg, w) {
			t.Errorf("refusal lacks %q:\n%s", w, msg)
		}
	}
	if got := a.String(); got != "0.54 (loader 0.83: older minor version, not loaded)" {
		t.Errorf("String() = %q", got)
	}
	b := NewPJRTAPI(0, 90)
	p.PJRTAPI = &b
	if !strings.Contains(PJRTAPIProblem(p), "newer than the 0.83") || !strings.HasPrefix(PJRTAPIFix(p), "if loading or running it fails or crashes: ") {
		t.Errorf("newer minor: %q / %q", PJRTAPIProblem(p), PJRTAPIFix(p))
	}
	m := NewPJRTAPI(0, 83)
	p.PJRTAPI = &m
	if PJRTAPIProblem(p) != "" {
		t.Errorf("matching version has a problem: %q", PJRTAPIProblem(p))
	}
}
