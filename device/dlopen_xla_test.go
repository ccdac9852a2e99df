//go:build ((linux && amd64) || darwin) && !noxla

package device

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gotrain/gotrain/internal/pjrttest"
)

// needCC skips a test that builds shared libraries when there is no C
// compiler or the platform's libraries are not ELF.
func needCC(t *testing.T) {
	t.Helper()
	if _, err := pjrttest.CC(); err != nil {
		t.Skip(err)
	}
	if _, err := os.Stat("/proc/self/exe"); err != nil {
		t.Skip("not linux: the fake libraries are ELF")
	}
}

var uniq atomic.Int64

// unique returns a name part no other library of this test process has:
// a library stays loaded once opened, and the dynamic loader would match
// a later one of the same soname to it.
func unique() string {
	return fmt.Sprintf("%d%d", time.Now().UnixNano()%1e9, uniq.Add(1))
}

// fakeJAXEnv builds, under a site-packages folder, NVIDIA-like libraries
// without RUNPATHs — rt; blasLt; blas needing blasLt; dnn needing rt — and
// a JAX CUDA 12 plugin of the given PJRT C API version needing rt, blas
// and dnn. It returns the plugin's path and the libraries' paths.
func fakeJAXEnv(t *testing.T, major, minor int) (plugin string, rt, blasLt, blas, dnn string) {
	t.Helper()
	return fakeJAXEnvNamed(t, major, minor, unique())
}

// fakeJAXEnvNamed is fakeJAXEnv with the libraries' names built on u: two
// environments of the same u hold libraries of the same sonames.
func fakeJAXEnvNamed(t *testing.T, major, minor int, u string) (plugin string, rt, blasLt, blas, dnn string) {
	t.Helper()
	if err := pjrttest.PluginTools(); err != nil {
		t.Skip(err)
	}
	sp := filepath.Join(t.TempDir(), "site-packages")
	lib := func(pkg, name string) string {
		dir := filepath.Join(sp, "nvidia", pkg, "lib")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return filepath.Join(dir, name)
	}
	rt, blasLt, blas, dnn = lib("cuda_runtime", "libgtrt"+u+".so.12"), lib("cublas", "libgtblasLt"+u+".so.12"), lib("cublas", "libgtblas"+u+".so.12"), lib("cudnn", "libgtdnn"+u+".so.9")
	for _, l := range []pjrttest.Library{
		{Path: rt, Soname: filepath.Base(rt)},
		{Path: blasLt, Soname: filepath.Base(blasLt)},
		{Path: blas, Soname: filepath.Base(blas), Needs: []string{blasLt}},
		{Path: dnn, Soname: filepath.Base(dnn), Needs: []string{rt}},
	} {
		if err := pjrttest.BuildLibrary(l); err != nil {
			t.Fatal(err)
		}
	}
	plugin = filepath.Join(sp, "jax_plugins", "xla_cuda12", JAXPluginFile)
	if err := os.MkdirAll(filepath.Dir(plugin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := pjrttest.BuildPlugin(pjrttest.Plugin{Path: plugin, Major: major, Minor: minor, Needs: []string{rt, blas, dnn}}); err != nil {
		t.Fatal(err)
	}
	return plugin, rt, blasLt, blas, dnn
}

// TestPreloadMakesJAXLibrariesVisible builds a JAX-layout plugin whose
// NVIDIA libraries are named by soname with no RUNPATH, as the real
// plugin's are, and shows that it loads only after preloadLibraries: not
// before, and not by setting LD_LIBRARY_PATH in the running process.
func TestPreloadMakesJAXLibrariesVisible(t *testing.T) {
	needCC(t)
	plugin, rt, blasLt, blas, dnn := fakeJAXEnv(t, PJRTAPIMajor, PJRTAPIMinor)

	_, err := readPJRTAPI(plugin)
	if err == nil || !strings.Contains(err.Error(), "cannot open shared object file") {
		t.Fatalf("before preloading: err = %v, want a missing library", err)
	}
	// glibc read LD_LIBRARY_PATH when the process started: setting it now
	// does not make the libraries visible.
	t.Setenv("LD_LIBRARY_PATH", strings.Join([]string{filepath.Dir(rt), filepath.Dir(blas), filepath.Dir(dnn)}, ":"))
	if _, err := readPJRTAPI(plugin); err == nil {
		t.Fatal("LD_LIBRARY_PATH set at run time made the libraries visible: the preload would not be needed")
	}

	p := describePlugin(plugin, SourceJAX, "")
	if p.Libs == nil {
		t.Fatal("no libraries for a JAX-layout plugin")
	}
	if err := preparePlugin(&p); err != nil {
		t.Fatalf("after preloading: %v", err)
	}
	if want := []string{rt, blasLt, blas, dnn}; !slices.Equal(p.Libs.Preloaded, want) {
		t.Errorf("preloaded %v,\nwant %v (each library after those it needs)", p.Libs.Preloaded, want)
	}
	if len(p.Libs.PreloadErrors) != 0 {
		t.Errorf("preload errors %v", p.Libs.PreloadErrors)
	}
	if p.PJRTAPI == nil || p.PJRTAPI.Version != "0.83" || p.PJRTAPI.Compat != PJRTMatch {
		t.Errorf("PJRT API %+v, want 0.83, match", p.PJRTAPI)
	}
}

// TestPreloadRefusesAnotherEnvironmentsLibraries prepares the plugins of
// two environments whose NVIDIA libraries have the same sonames: the
// first loads; the second is refused, naming the clash, since the dynamic
// loader would give it the first environment's libraries.
func TestPreloadRefusesAnotherEnvironmentsLibraries(t *testing.T) {
	needCC(t)
	u := unique()
	pa, rtA, _, _, _ := fakeJAXEnvNamed(t, PJRTAPIMajor, PJRTAPIMinor, u)
	pb, _, _, _, _ := fakeJAXEnvNamed(t, PJRTAPIMajor, PJRTAPIMinor, u)
	a := describePlugin(pa, SourceJAX, "")
	if err := preparePlugin(&a); err != nil || len(a.Libs.Conflicts) != 0 {
		t.Fatalf("first environment: %v, conflicts %v", err, a.Libs.Conflicts)
	}
	b := describePlugin(pb, SourceJAX, "")
	err := preparePlugin(&b)
	if err == nil || !strings.Contains(err.Error(), "clash with another environment's") || !strings.Contains(err.Error(), filepath.Dir(rtA)) {
		t.Fatalf("second environment: err = %v, want a clash naming %s", err, filepath.Dir(rtA))
	}
	if len(b.Libs.Conflicts) != 4 || len(b.Libs.Preloaded) != 0 {
		t.Errorf("second environment: conflicts %v, preloaded %v; want all 4 libraries in conflict", b.Libs.Conflicts, b.Libs.Preloaded)
	}
	// Preparing the first plugin again is no clash: the same files.
	if err := preparePlugin(&a); err != nil {
		t.Errorf("first environment again: %v", err)
	}
}

// TestProbeChecksPJRTVersion probes fake plugins of several PJRT C API
// versions with the real loader: the versions it cannot use are refused
// before GoMLX sees them, with both versions and a fix; the others go on
// into GoMLX's loader, which calls the plugin (its PJRT_Client_Create
// error comes back).
func TestProbeChecksPJRTVersion(t *testing.T) {
	needCC(t)
	t.Setenv("XLA_FLAGS", "")
	t.Setenv("GOPJRT_CUDA_CHECKS", "")
	for _, tt := range []struct {
		major, minor int
		compat       PJRTCompat
		err          []string
	}{
		{0, 54, PJRTOlderMinor, []string{"plugin cuda12 speaks PJRT C API 0.54, older than the 0.83 gotrain's loader (go-xla v0.1.4) speaks", "not loaded", "fix: in ", "jax-cuda12-pjrt", "gotrain setup xla --cuda"}},
		{1, 2, PJRTMajorMismatch, []string{"plugin cuda12 speaks PJRT C API 1.2, gotrain's loader (go-xla v0.1.4) speaks 0.83", "ABI-incompatible", "fix: "}},
		{0, 90, PJRTNewerMinor, []string{pjrttest.ClientError}},
		{0, 83, PJRTMatch, []string{pjrttest.ClientError}},
	} {
		t.Run(fmt.Sprintf("%d.%d", tt.major, tt.minor), func(t *testing.T) {
			plugin, _, _, _, _ := fakeJAXEnv(t, tt.major, tt.minor)
			p := describePlugin(plugin, SourceJAX, "")
			probePlugin(&p)
			t.Logf("probe error: %s", p.Err)
			if p.PJRTAPI == nil || p.PJRTAPI.Compat != tt.compat || p.PJRTAPI.Version != fmt.Sprintf("%d.%d", tt.major, tt.minor) {
				t.Fatalf("PJRT API %+v, want %s", p.PJRTAPI, tt.compat)
			}
			for _, w := range tt.err {
				if !strings.Contains(p.Err, w) {
					t.Errorf("error lacks %q:\n%s", w, p.Err)
				}
			}
			if reached := strings.Contains(p.Err, pjrttest.ClientError); reached == p.PJRTAPI.Refused() {
				t.Errorf("GoMLX's loader reached: %v, refused: %v (error %q)", reached, p.PJRTAPI.Refused(), p.Err)
			}
			if len(p.Libs.Preloaded) != 4 {
				t.Errorf("preloaded %v", p.Libs.Preloaded)
			}
			// The device table says why the GPU cannot be used.
			inv := Inventory{XLACompiled: true, Plugins: []Plugin{p}}
			_, reason := check(Spec{Kind: GPU, Plugin: "cuda", Index: AnyIndex}, inv)
			if !strings.Contains(reason, "present but failed to load: ") || !strings.Contains(reason, p.Err) {
				t.Errorf("reason %q", reason)
			}
		})
	}
}

// TestReadPJRTAPINotAPlugin reads a library that exports no GetPjrtApi.
func TestReadPJRTAPINotAPlugin(t *testing.T) {
	needCC(t)
	lib := filepath.Join(t.TempDir(), "libplain"+unique()+".so")
	if err := pjrttest.BuildLibrary(pjrttest.Library{Path: lib}); err != nil {
		t.Fatal(err)
	}
	a, err := readPJRTAPI(lib)
	if err == nil || !strings.Contains(err.Error(), "does not export GetPjrtApi") || a.Compat != PJRTUnknown {
		t.Errorf("readPJRTAPI = %+v, %v", a, err)
	}
	if _, err := readPJRTAPI(filepath.Join(t.TempDir(), "absent.so")); err == nil {
		t.Error("an absent file was read")
	}
}

// TestPrepareCUDAEnvJAX checks the environment a JAX plugin is loaded
// with: XLA_FLAGS' CUDA data dir is its environment's nvidia/cuda_nvcc
// (unless XLA_FLAGS sets it already), nothing when the environment has no
// nvcc package, and go-xla's check for ../nvidia beside the plugin is off.
func TestPrepareCUDAEnvJAX(t *testing.T) {
	t.Setenv("LD_LIBRARY_PATH", "")
	sp, plugin := fakeSitePackages(t, t.TempDir(), "12", cuda12Libs, true)
	p := describePlugin(plugin, SourceJAX, "")
	nvcc := filepath.Join(sp, "nvidia", "cuda_nvcc")

	t.Setenv("GOPJRT_CUDA_CHECKS", "")
	t.Setenv("XLA_FLAGS", "--xla_dump_to=/tmp/x")
	prepareCUDAEnv(p)
	if got := os.Getenv("XLA_FLAGS"); got != "--xla_dump_to=/tmp/x --xla_gpu_cuda_data_dir="+nvcc {
		t.Errorf("XLA_FLAGS = %q, want the dump flag and --xla_gpu_cuda_data_dir=%s", got, nvcc)
	}
	if got := os.Getenv("GOPJRT_CUDA_CHECKS"); got != "0" {
		t.Errorf("GOPJRT_CUDA_CHECKS = %q, want 0", got)
	}
	t.Setenv("XLA_FLAGS", "--xla_gpu_cuda_data_dir=/mine")
	prepareCUDAEnv(p)
	if got := os.Getenv("XLA_FLAGS"); got != "--xla_gpu_cuda_data_dir=/mine" {
		t.Errorf("XLA_FLAGS = %q: the user's data dir was replaced", got)
	}
	_, bare := fakeSitePackages(t, t.TempDir(), "12", cuda12Libs, false)
	t.Setenv("XLA_FLAGS", "")
	prepareCUDAEnv(describePlugin(bare, SourceJAX, ""))
	if got := os.Getenv("XLA_FLAGS"); got != "" {
		t.Errorf("XLA_FLAGS = %q without nvidia/cuda_nvcc, want it untouched", got)
	}
	// go-xla's layout keeps its ../nvidia folder.
	goxla := filepath.Join(t.TempDir(), "go-xla")
	touch(t, filepath.Join(goxla, "nvidia", "pjrt_c_api_cuda_plugin.so"))
	prepareCUDAEnv(Plugin{Name: "cuda", Path: filepath.Join(goxla, "nvidia", "pjrt_c_api_cuda_plugin.so")})
	if got := os.Getenv("XLA_FLAGS"); got != "--xla_gpu_cuda_data_dir="+filepath.Join(goxla, "nvidia") {
		t.Errorf("go-xla layout: XLA_FLAGS = %q", got)
	}
}
