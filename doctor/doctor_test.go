package doctor

import (
	"bytes"
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gotrain/gotrain/device"
)

const (
	goxla     = "/home/u/.local/lib/go-xla"
	nvidiaDir = goxla + "/nvidia"
	cpuPlugin = goxla + "/pjrt_c_api_cpu_plugin.so"
	cudaPath  = nvidiaDir + "/pjrt_c_api_cuda_plugin.so"
)

// fake is a machine for the doctor to look at.
type fake struct {
	inv      device.Inventory
	env      map[string]string
	dirs     map[string][]string // folder contents; every folder listed exists
	files    map[string]bool     // other paths that exist
	util     [][]int             // successive utilisation samples; the last one repeats
	utilErr  error
	verify   *device.VerifyResult
	rates    map[string]float64 // burst GFLOP/s by device name
	burstErr error
	bursts   []string                 // devices Burst ran on
	discover []device.DiscoverOptions // the options Discover was called with
}

func gpus(n, usedMiB int) []device.NVIDIAGPU {
	var gs []device.NVIDIAGPU
	for i := range n {
		gs = append(gs, device.NVIDIAGPU{Index: i, Name: "NVIDIA H100 80GB HBM3", MemoryTotalMB: 81559, MemoryUsedMB: usedMiB})
	}
	return gs
}

func xlaDevs(n int, desc string) []device.XLADevice {
	var ds []device.XLADevice
	for i := range n {
		ds = append(ds, device.XLADevice{Index: i, Description: desc})
	}
	return ds
}

// api returns the record of a PJRT C API version read from a plugin.
func api(major, minor int) *device.PJRTAPI {
	a := device.NewPJRTAPI(major, minor)
	return &a
}

// healthy is a GPU machine on which everything works.
func healthy() *fake {
	return &fake{
		inv: device.Inventory{
			XLACompiled: true,
			SearchPaths: []string{goxla, nvidiaDir, "/usr/local/lib/go-xla", "/usr/local/lib/go-xla/nvidia"},
			PJRTLoader:  "0.83 (go-xla v0.1.4)",
			Plugins: []device.Plugin{
				{Name: "cpu", Path: cpuPlugin, Probed: true, Devices: xlaDevs(1, "TFRT_CPU_0"), Version: "xla:cpu PJRT 0.83", Source: device.SourceSearchPath, PJRTAPI: api(0, 83)},
				{Name: "cuda", Path: cudaPath, Probed: true, Devices: xlaDevs(2, "NVIDIA H100 80GB HBM3"), Version: "xla:cuda PJRT 0.83", Source: device.SourceSearchPath, PJRTAPI: api(0, 83)},
			},
			NVIDIA: device.NVIDIAInfo{SMIPath: "/usr/bin/nvidia-smi", Driver: "550.54.15", GPUs: gpus(2, 500)},
		},
		env: map[string]string{device.NoAutoInstallEnv: "1"},
		dirs: map[string][]string{
			goxla:     {"pjrt_c_api_cpu_plugin.so", "nvidia"},
			nvidiaDir: {"pjrt_c_api_cuda_plugin.so", "cublas", "cudnn", "cuda_nvcc", "bin"},
		},
		util:  [][]int{{0, 0}, {0, 0}, {95, 0}},
		rates: map[string]float64{"xla:cuda:0": 40000, "xla:tpu:0": 90000, "go": 10},
	}
}

// A virtualenv with JAX's CUDA 12 plugin and the NVIDIA wheels.
const (
	venvSP    = "/home/u/venv/lib/python3.12/site-packages"
	venvPy    = "/home/u/venv/bin/python"
	jaxPlugin = venvSP + "/jax_plugins/xla_cuda12/xla_cuda_plugin.so"
)

// jaxLibs are the NVIDIA libraries of the virtualenv, as discovery and
// probing record them.
func jaxLibs() *device.PluginLibs {
	nv := venvSP + "/nvidia"
	return &device.PluginLibs{SitePackages: venvSP, Python: venvPy, CUDA: "12", NVIDIADir: nv,
		Dirs:        []string{nv + "/cublas/lib", nv + "/cuda_runtime/lib", nv + "/cudnn/lib"},
		CUDADataDir: nv + "/cuda_nvcc",
		Preloaded:   []string{nv + "/cuda_runtime/lib/libcudart.so.12", nv + "/cublas/lib/libcublasLt.so.12", nv + "/cublas/lib/libcublas.so.12", nv + "/cudnn/lib/libcudnn.so.9"},
	}
}

// jaxMachine is a GPU machine whose CUDA plugin is JAX's, found in the
// virtualenv; python3 on PATH has no JAX.
func jaxMachine() *fake {
	f := healthy()
	f.inv.Plugins[1] = device.Plugin{Name: "cuda12", Path: jaxPlugin, Probed: true, Devices: xlaDevs(2, "NVIDIA H100 80GB HBM3"),
		Version: "xla:" + jaxPlugin + " PJRT 0.83", Source: device.SourceJAX, PJRTAPI: api(0, 83), Libs: jaxLibs()}
	f.inv.PythonEnvs = []device.PythonEnv{
		{From: "VIRTUAL_ENV", Python: venvPy, SitePackages: []string{venvSP}, Plugins: []string{jaxPlugin}},
		{From: "python3", Python: "/usr/bin/python3", SitePackages: []string{"/usr/lib/python3/dist-packages"}},
	}
	f.env["VIRTUAL_ENV"] = "/home/u/venv"
	f.dirs[venvSP+"/nvidia"] = []string{"cublas", "cuda_nvcc", "cuda_runtime", "cudnn"}
	f.rates["xla:cuda12:0"] = 40000
	return f
}

// jaxVersion is jaxMachine with a plugin of another PJRT C API version,
// refused (or, for a newer minor version, loaded) as probing does.
func jaxVersion(major, minor int) *fake {
	f := jaxMachine()
	p := &f.inv.Plugins[1]
	p.PJRTAPI = api(major, minor)
	if p.PJRTAPI.Refused() {
		p.Devices, p.Version = nil, ""
		p.Err = device.PJRTAPIProblem(*p) + "; fix: " + device.PJRTAPIFix(*p)
	}
	return f
}

// jaxMissingLibs is jaxMachine without cuDNN and cuFFT in the virtualenv:
// the plugin does not load.
func jaxMissingLibs() *fake {
	f := jaxMachine()
	p := &f.inv.Plugins[1]
	p.Libs.Dirs = p.Libs.Dirs[:2]
	p.Libs.Missing = []string{"libcufft.so.11", "libcudnn.so.9"}
	p.Libs.Preloaded = p.Libs.Preloaded[:3]
	p.Devices, p.Version = nil, ""
	p.Err = "loading " + jaxPlugin + ": libcudnn.so.9: cannot open shared object file: No such file or directory"
	unknown := device.PJRTAPI{Version: "unknown", Loader: "0.83", Compat: device.PJRTUnknown, Err: "cannot be loaded"}
	p.PJRTAPI = &unknown
	f.dirs[venvSP+"/nvidia"] = []string{"cublas", "cuda_runtime"}
	return f
}

// noGPU is a machine without an NVIDIA driver or plugins, like the one the tests run on.
func noGPU() *fake {
	f := healthy()
	f.inv.Plugins = nil
	f.inv.NVIDIA = device.NVIDIAInfo{Err: "nvidia-smi not found on PATH (no NVIDIA driver installed?)"}
	f.dirs = map[string][]string{}
	f.util = nil
	f.utilErr = errors.New("sampling GPU utilisation: exec: \"nvidia-smi\": executable file not found in $PATH")
	return f
}

func (f *fake) probes() Probes {
	samples := 0
	return Probes{
		Discover: func(o device.DiscoverOptions) device.Inventory {
			f.discover = append(f.discover, o)
			return f.inv
		},
		Env: func(name string) (string, bool) {
			v, ok := f.env[name]
			return v, ok
		},
		Exists: func(path string) bool {
			_, ok := f.dirs[path]
			return ok || f.files[path]
		},
		ListDir: func(dir string) ([]string, error) {
			names, ok := f.dirs[dir]
			if !ok {
				return nil, &os.PathError{Op: "open", Path: dir, Err: os.ErrNotExist}
			}
			return names, nil
		},
		SampleUtilization: func(context.Context) ([]int, error) {
			if f.utilErr != nil {
				return nil, f.utilErr
			}
			s := f.util[min(samples, len(f.util)-1)]
			samples++
			return s, nil
		},
		Verify: func(d device.Device) device.VerifyResult {
			if f.verify != nil {
				v := *f.verify
				v.Device = d.Name
				return v
			}
			return device.VerifyResult{Device: d.Name, OK: true, RelError: 1e-7, Tolerance: 1e-4, FirstMS: 30, MedianMS: 0.1, Repeats: 5}
		},
		Burst: func(d device.Device, dur time.Duration) (float64, error) {
			f.bursts = append(f.bursts, d.Name)
			time.Sleep(min(dur, 50*time.Millisecond))
			if f.burstErr != nil {
				return 0, f.burstErr
			}
			return f.rates[d.Name], nil
		},
	}
}

// want is what a test expects of one finding.
type want struct {
	status   Status
	title    string // substrings of the title, "|"-separated
	evidence string // substrings of the joined evidence, "|"-separated
	fix      string // substrings of the fix, "|"-separated; "-" means no fix
	absent   string // substrings the evidence must not hold, "|"-separated
}

func containsAll(t *testing.T, what, got, wants string) {
	t.Helper()
	if wants == "" {
		return
	}
	for _, w := range strings.Split(wants, "|") {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, got)
		}
	}
}

func check(t *testing.T, rep Report, id string, w want) {
	t.Helper()
	f, ok := rep.Finding(id)
	if !ok {
		t.Fatalf("no finding %q", id)
	}
	if f.Status != w.status {
		t.Errorf("%s: status %s, want %s\n%+v", id, f.Status, w.status, f)
	}
	containsAll(t, id+" title", f.Title, w.title)
	containsAll(t, id+" evidence", strings.Join(f.Evidence, "\n"), w.evidence)
	if w.absent != "" {
		for _, a := range strings.Split(w.absent, "|") {
			if strings.Contains(strings.Join(f.Evidence, "\n"), a) {
				t.Errorf("%s evidence holds %q:\n%s", id, a, strings.Join(f.Evidence, "\n"))
			}
		}
	}
	if w.fix == "-" {
		if f.Fix != "" {
			t.Errorf("%s: unexpected fix %q", id, f.Fix)
		}
	} else {
		containsAll(t, id+" fix", f.Fix, w.fix)
		if w.fix != "" && f.Fix == "" {
			t.Errorf("%s: no fix", id)
		}
	}
	if (f.Status == Warn || f.Status == Fail) && f.Fix == "" {
		t.Errorf("%s: status %s without a fix", id, f.Status)
	}
}

func TestFindings(t *testing.T) {
	tests := []struct {
		name   string
		setup  func() *fake
		device string
		plugin string // Options.PluginFile
		burst  time.Duration
		ok     bool
		want   map[string]want
	}{
		{
			name: "healthy GPU machine", setup: healthy, burst: 100 * time.Millisecond, ok: true,
			want: map[string]want{
				"build":                    {status: OK, fix: "-"},
				"plugins":                  {status: OK, title: "2 PJRT plugin(s) load: cpu, cuda", evidence: "cuda (" + cudaPath + "): loaded, 2 device(s)", fix: "-"},
				"nvidia":                   {status: OK, title: "driver 550.54.15, 2 GPU(s)", evidence: "GPU 1: NVIDIA H100 80GB HBM3, memory 500 of 81559 MiB used, utilisation 0%", fix: "-"},
				"xla_devices":              {status: OK, title: "XLA sees 3 device(s)", fix: "-"},
				"gpu_memory":               {status: OK, evidence: "GPU 0: 81059 MiB free of 81559 MiB", fix: "-"},
				"env_cuda_visible_devices": {status: OK, fix: "-"},
				"env_xla_flags":            {status: OK, fix: "-"},
				"env_gomlx_backend":        {status: OK, fix: "-"},
				"env_auto_install":         {status: OK, evidence: `GOMLX_NO_AUTO_INSTALL="1"`, fix: "-"},
				"live": {status: OK, title: "xla:cuda:0 works|utilisation rose to 95%",
					evidence: "candidate gpu: chosen|verify on xla:cuda:0: ok|40000.0 GFLOP/s|peak during it: GPU 0 95%, GPU 1 0%", fix: "-"},
			},
		},
		{
			name: "JAX plugin found", setup: jaxMachine, burst: 100 * time.Millisecond, ok: true,
			want: map[string]want{
				"jax": {status: OK, title: "JAX CUDA plugin cuda12 in " + venvSP + ", with its NVIDIA libraries",
					evidence: "VIRTUAL_ENV (" + venvPy + "): site-packages " + venvSP + "; JAX CUDA plugin " + jaxPlugin +
						"|python3 (/usr/bin/python3): site-packages /usr/lib/python3/dist-packages; no JAX CUDA plugin" +
						"|JAX CUDA plugin cuda12: " + jaxPlugin + " (jax)" +
						"|NVIDIA libraries in " + venvSP + "/nvidia: cublas, cuda_runtime, cudnn" +
						"|loaded before the plugin, each after those it needs: libcudart.so.12, libcublasLt.so.12, libcublas.so.12, libcudnn.so.9" +
						"|ptxas and libdevice: " + venvSP + "/nvidia/cuda_nvcc", fix: "-"},
				"pjrt_api": {status: OK, title: "2 plugin(s) speak PJRT C API 0.83, as gotrain's loader does",
					evidence: "gotrain's loader speaks PJRT C API 0.83 (go-xla v0.1.4)|cuda12 (" + jaxPlugin + "): PJRT C API 0.83 (as the loader)", fix: "-"},
				"plugins": {status: OK, title: "load: cpu, cuda12", evidence: "cuda12 (" + jaxPlugin + "): loaded, 2 device(s), PJRT C API 0.83|cuda12: JAX's CUDA plugin, from the Python environment " + venvSP, fix: "-"},
				"live":    {status: OK, title: "xla:cuda12:0 works|utilisation rose to 95%", evidence: "candidate gpu: chosen"},
			},
		},
		{
			name: "JAX plugin of an older PJRT C API version", setup: func() *fake { return jaxVersion(0, 54) }, ok: false,
			want: map[string]want{
				"pjrt_api": {status: Fail, title: "plugin cuda12 speaks PJRT C API 0.54, older than the 0.83 gotrain's loader (go-xla v0.1.4) speaks",
					evidence: "cuda12 (" + jaxPlugin + "): PJRT C API 0.54 (loader 0.83: older minor version, not loaded)|cpu (" + cpuPlugin + "): PJRT C API 0.83 (as the loader)",
					fix:      "in " + venvSP + ", install the jax-cuda12-pjrt release built for PJRT C API 0.83 (`" + venvPy + " -m pip install 'jax-cuda12-pjrt==VERSION'`|`gotrain setup xla --cuda`|--plugin FILE"},
				"plugins": {status: Fail, title: "1 of 2 PJRT plugin(s) failed to load: cuda12", evidence: "FAILED to load: plugin cuda12 speaks PJRT C API 0.54", fix: "see pjrt_api for both versions"},
				"jax":     {status: OK},
				"live":    {status: Warn, title: "chose xla:cpu:0", evidence: "candidate gpu: rejected: plugin " + jaxPlugin + " present but failed to load: plugin cuda12 speaks PJRT C API 0.54", fix: "plugins, pjrt_api"},
			},
		},
		{
			name: "JAX plugin of another major PJRT C API version, gpu requested", device: "gpu", setup: func() *fake { return jaxVersion(1, 0) }, ok: false,
			want: map[string]want{
				"pjrt_api": {status: Fail, title: "plugin cuda12 speaks PJRT C API 1.0, gotrain's loader (go-xla v0.1.4) speaks 0.83: another major version is ABI-incompatible", fix: "jax-cuda12-pjrt"},
				"live":     {status: Fail, title: "--device gpu cannot be used; nothing was run", fix: "plugins, pjrt_api"},
			},
		},
		{
			name: "JAX plugin of a newer minor PJRT C API version", burst: 100 * time.Millisecond, setup: func() *fake { return jaxVersion(0, 90) }, ok: true,
			want: map[string]want{
				"pjrt_api": {status: Warn, title: "plugin cuda12 speaks PJRT C API 0.90, newer than the 0.83|loaded", fix: "if loading or running it fails or crashes: in " + venvSP},
				"live":     {status: OK, title: "xla:cuda12:0 works"},
			},
		},
		{
			name: "JAX plugin, NVIDIA libraries missing, gpu requested", device: "gpu", setup: jaxMissingLibs, ok: false,
			want: map[string]want{
				"jax": {status: Fail, title: "NVIDIA libraries missing next to plugin cuda12: libcufft.so.11, libcudnn.so.9",
					evidence: "NVIDIA libraries in " + venvSP + "/nvidia: cublas, cuda_runtime",
					fix:      "install them in that environment: `" + venvPy + ` -m pip install -U "jax[cuda12]"` + "` installs the nvidia-*-cu12 packages beside the plugin|put its library folders on LD_LIBRARY_PATH before starting gotrain"},
				"plugins":  {status: Fail, evidence: "FAILED to load: loading " + jaxPlugin + ": libcudnn.so.9: cannot open shared object file|NVIDIA libraries folder " + venvSP + "/nvidia: cublas, cuda_runtime", fix: "JAX's CUDA plugin cuda12 needs the NVIDIA libraries of its Python environment (see jax)"},
				"pjrt_api": {status: OK, evidence: "cuda12 (" + jaxPlugin + "): unknown: cannot be loaded (see plugins)"},
				"live":     {status: Fail, fix: "plugins, jax"},
			},
		},
		{
			name: "JAX plugin, NVIDIA libraries missing, auto", setup: jaxMissingLibs, ok: false,
			want: map[string]want{
				"jax": {status: Warn, title: "NVIDIA libraries missing next to plugin cuda12", fix: "jax[cuda12]"},
			},
		},
		{
			name: "JAX plugin without the CUDA compiler package", ok: true,
			setup: func() *fake { f := jaxMachine(); f.inv.Plugins[1].Libs.CUDADataDir = ""; return f },
			want: map[string]want{
				"jax": {status: Warn, title: "no CUDA compiler package beside plugin cuda12: XLA cannot find ptxas and libdevice", fix: venvPy + " -m pip install -U nvidia-cuda-nvcc-cu12"},
			},
		},
		{
			name: "explicit plugin path", plugin: jaxPlugin, ok: true,
			setup: func() *fake {
				f := jaxMachine()
				f.inv.PluginFile, f.inv.SearchPaths, f.inv.PythonEnvs = jaxPlugin, nil, nil
				p := f.inv.Plugins[1]
				p.Source = device.SourceExplicit
				f.inv.Plugins = []device.Plugin{p}
				return f
			},
			want: map[string]want{
				"plugins":  {status: OK, title: "1 PJRT plugin(s) load: cuda12", evidence: "explicit plugin file (--plugin): " + jaxPlugin + ": the only plugin considered|cuda12: the explicit plugin file", absent: "searched:", fix: "-"},
				"jax":      {status: OK, title: "explicit plugin file used: JAX CUDA plugin cuda12 in " + venvSP + ", with its NVIDIA libraries", evidence: "explicit plugin file " + jaxPlugin + " (--plugin): the Python environments were not searched", fix: "-"},
				"pjrt_api": {status: OK, title: "1 plugin(s) speak PJRT C API 0.83"},
				"live":     {status: OK, title: "xla:cuda12:0 works"},
			},
		},
		{
			name: "explicit plugin path of another kind of plugin", plugin: "/opt/tpu/libtpu.so", ok: true,
			setup: func() *fake {
				f := noGPU()
				f.inv.PluginFile = "/opt/tpu/libtpu.so"
				f.inv.Plugins = []device.Plugin{{Name: "libtpu", Path: "/opt/tpu/libtpu.so", Probed: true, Devices: xlaDevs(4, "TPU v5 lite"), Source: device.SourceExplicit, PJRTAPI: api(0, 83)}}
				return f
			},
			want: map[string]want{
				"jax":  {status: OK, title: "explicit plugin file used: /opt/tpu/libtpu.so (not in JAX's layout", fix: "-"},
				"live": {status: OK, title: "xla:libtpu:0 works"},
			},
		},
		{
			name: "explicit plugin path that does not exist", plugin: "/nope/xla_cuda_plugin.so", ok: false,
			setup: func() *fake {
				f := noGPU()
				f.inv.PluginFile = "/nope/xla_cuda_plugin.so"
				f.inv.PluginFileErr = "plugin file /nope/xla_cuda_plugin.so: stat /nope/xla_cuda_plugin.so: no such file or directory"
				return f
			},
			want: map[string]want{
				"plugins":  {status: Fail, title: "the explicit plugin file cannot be used: plugin file /nope/xla_cuda_plugin.so: stat", fix: "give --plugin the path of an existing PJRT plugin file|leave --plugin out"},
				"jax":      {status: Skip, title: "cannot be used (see plugins)"},
				"pjrt_api": {status: Skip},
				"live":     {status: Warn, evidence: "candidate gpu: rejected: no CUDA PJRT plugin: only the plugin file /nope/xla_cuda_plugin.so was considered (plugin file /nope/xla_cuda_plugin.so: stat"},
			},
		},
		{
			name: "no JAX plugin found, auto", ok: true,
			setup: func() *fake {
				f := noGPU()
				f.inv.PythonEnvs = []device.PythonEnv{{From: "python3", Python: "/usr/bin/python3", SitePackages: []string{"/usr/lib/python3/dist-packages"}}, {From: "/usr/bin/python3", Err: "/usr/bin/python3 did not answer within 5s"}}
				return f
			},
			want: map[string]want{
				"jax": {status: Warn, title: "no JAX CUDA plugin found in 2 Python environment(s)",
					evidence: "python3 (/usr/bin/python3): site-packages /usr/lib/python3/dist-packages; no JAX CUDA plugin|/usr/bin/python3: /usr/bin/python3 did not answer within 5s",
					fix:      `python3 -m pip install -U "jax[cuda12]"` + "|`gotrain setup xla --cuda`|nothing to fix"},
				"pjrt_api": {status: Skip, title: "no PJRT plugins"},
			},
		},
		{
			name: "no JAX plugin found, gpu requested", setup: noGPU, device: "gpu", ok: false,
			want: map[string]want{
				"jax": {status: Fail, title: "no JAX CUDA plugin found in 0 Python environment(s)", fix: `"jax[cuda12]"|gotrain setup xla --cuda`},
			},
		},
		{
			name: "PJRT_PLUGIN_LIBRARY_PATH at JAX's plugin folder", ok: true,
			setup: func() *fake {
				f := jaxMachine()
				dir := venvSP + "/jax_plugins/xla_cuda12"
				f.env["PJRT_PLUGIN_LIBRARY_PATH"] = dir
				f.inv.SearchPaths, f.inv.PythonEnvs = []string{dir}, nil
				f.inv.Plugins[1].Source = device.SourceSearchPath
				f.dirs[dir] = []string{"xla_cuda_plugin.so", "__init__.py"}
				return f
			},
			want: map[string]want{
				"plugins": {status: OK, evidence: "searched: " + venvSP + "/jax_plugins/xla_cuda12", absent: "ignored", fix: "-"},
				"jax":     {status: OK, title: "JAX CUDA plugin cuda12", evidence: "PJRT_PLUGIN_LIBRARY_PATH=\"" + venvSP + "/jax_plugins/xla_cuda12\" replaces discovery"},
			},
		},
		{
			name: "noxla build, auto", device: "auto", ok: true,
			setup: func() *fake {
				f := noGPU()
				f.inv.XLACompiled, f.inv.NoXLAReason = false, "this binary was built with -tags noxla (pure Go): it cannot load PJRT plugins"
				return f
			},
			want: map[string]want{
				"build":       {status: Warn, title: "pure-Go build", evidence: "-tags noxla", fix: "without -tags noxla|CGO_ENABLED=1"},
				"plugins":     {status: Skip, fix: "-"},
				"xla_devices": {status: Skip, fix: "-"},
				"live":        {status: Warn, title: "no accelerator", evidence: "no accelerator was exercised", fix: "build"},
			},
		},
		{
			name: "noxla build, gpu requested", device: "gpu", ok: false,
			setup: func() *fake {
				f := noGPU()
				f.inv.XLACompiled, f.inv.NoXLAReason = false, "this binary was built with -tags noxla (pure Go): it cannot load PJRT plugins"
				return f
			},
			want: map[string]want{
				"build": {status: Fail, evidence: "--device gpu needs XLA", fix: "without -tags noxla"},
				"live":  {status: Fail, title: "--device gpu cannot be used", evidence: "candidate gpu: rejected: this binary was built with -tags noxla", fix: "build"},
			},
		},
		{
			name: "no plugins, auto", setup: noGPU, ok: true,
			want: map[string]want{
				"plugins":     {status: Warn, title: "no PJRT plugins found", evidence: "PJRT_PLUGIN_LIBRARY_PATH not set|searched: " + goxla + " (missing), " + nvidiaDir + " (missing)", fix: "gotrain setup xla|PJRT_PLUGIN_LIBRARY_PATH"},
				"xla_devices": {status: Skip},
				"gpu_memory":  {status: Skip},
				"live":        {status: Warn, title: "--device auto chose cpu", evidence: "candidate gpu: rejected: no CUDA PJRT plugin|candidate cpu: chosen|verify on cpu: ok|no accelerator was exercised", fix: "plugins, jax, nvidia"},
			},
		},
		{
			name: "no plugins, PJRT_PLUGIN_LIBRARY_PATH set, misnamed JAX plugin", ok: true,
			setup: func() *fake {
				f := noGPU()
				f.env["PJRT_PLUGIN_LIBRARY_PATH"] = "/opt/jax"
				f.inv.SearchPaths = []string{"/opt/jax"}
				f.dirs["/opt/jax"] = []string{"xla_cuda_plugin.so", "libfoo.so"}
				return f
			},
			want: map[string]want{
				"plugins": {status: Warn, evidence: `PJRT_PLUGIN_LIBRARY_PATH="/opt/jax" replaces|searched: /opt/jax|ignored /opt/jax/xla_cuda_plugin.so`, fix: "symlink named pjrt_c_api_<name>_plugin.so|--plugin FILE"},
				"jax":     {status: Warn, title: "the Python environments were not searched, as PJRT_PLUGIN_LIBRARY_PATH is set", fix: "add JAX's plugin folder (<site-packages>/jax_plugins/xla_cuda12) to it or unset it"},
			},
		},
		{
			name: "no plugins, gpu requested", setup: noGPU, device: "gpu", ok: false,
			want: map[string]want{
				"plugins": {status: Fail, fix: "gotrain setup xla"},
				"nvidia":  {status: Fail, title: "nvidia-smi not found", evidence: "--device gpu needs an NVIDIA GPU", fix: "install the NVIDIA driver"},
				"live":    {status: Fail, title: "--device gpu cannot be used; nothing was run", evidence: "candidate gpu: rejected: no CUDA PJRT plugin found in " + goxla, fix: "plugins, jax, nvidia|gotrain setup xla --cuda|jax[cuda12]|--device auto"},
			},
		},
		{
			name: "broken CUDA plugin, NVIDIA libraries missing", ok: false,
			setup: func() *fake {
				f := healthy()
				f.inv.Plugins[1] = device.Plugin{Name: "cuda", Path: "/opt/xla/cuda/pjrt_c_api_cuda_plugin.so", Probed: true, Err: "dlopen: libcudnn.so.9: cannot open shared object file: No such file or directory"}
				return f
			},
			want: map[string]want{
				"plugins":     {status: Fail, title: "1 of 2 PJRT plugin(s) failed to load: cuda", evidence: "FAILED to load: dlopen: libcudnn.so.9|NVIDIA libraries folder /opt/xla/cuda/nvidia: missing", fix: "NVIDIA libraries|gotrain setup xla --cuda --force|PJRT C API 0.83"},
				"xla_devices": {status: OK, evidence: "cuda: not loaded (see plugins)"},
				"live":        {status: Warn, title: "chose xla:cpu:0", evidence: "candidate gpu: rejected: plugin /opt/xla/cuda/pjrt_c_api_cuda_plugin.so present but failed to load", fix: "plugins"},
			},
		},
		{
			name: "only plugin broken", ok: false,
			setup: func() *fake {
				f := noGPU()
				f.inv.Plugins = []device.Plugin{{Name: "cpu", Path: cpuPlugin, Probed: true, Err: "undefined symbol: GetPjrtApi"}}
				return f
			},
			want: map[string]want{
				"plugins":     {status: Fail, fix: "PJRT C API 0.83"},
				"xla_devices": {status: Skip, title: "no PJRT plugin loaded", fix: "-"},
			},
		},
		{
			name: "broken CPU plugin, API mismatch", ok: false,
			setup: func() *fake {
				f := healthy()
				f.inv.Plugins[0] = device.Plugin{Name: "cpu", Path: cpuPlugin, Probed: true, Err: "loading PJRT plugin panicked: runtime error: invalid memory address or nil pointer dereference"}
				return f
			},
			want: map[string]want{
				"plugins": {status: Fail, title: "failed to load: cpu", fix: "PJRT C API 0.83|remove the broken file"},
				"live":    {status: OK, title: "xla:cuda:0 works"},
			},
		},
		{
			name: "CUDA plugin with 0 devices while nvidia-smi lists 2 GPUs", ok: false,
			setup: func() *fake {
				f := healthy()
				f.inv.Plugins[1].Devices = nil
				return f
			},
			want: map[string]want{
				"xla_devices": {status: Fail, title: "CUDA plugin cuda sees 0 devices while nvidia-smi lists 2 GPU(s)", evidence: "cuda: 0 device(s)|CUDA_VISIBLE_DEVICES not set|NVIDIA libraries folder " + nvidiaDir + ": cublas, cudnn", fix: "driver 550.54.15|CUDA version|gotrain setup xla --cuda --force"},
				"live":        {status: Warn, evidence: "plugin " + cudaPath + " present but 0 devices", fix: "xla_devices"},
			},
		},
		{
			name: "CUDA plugin with 0 devices, CUDA_VISIBLE_DEVICES set", ok: false,
			setup: func() *fake {
				f := healthy()
				f.inv.Plugins[1].Devices = nil
				f.env["CUDA_VISIBLE_DEVICES"] = "-1"
				return f
			},
			want: map[string]want{
				"xla_devices":              {status: Fail, evidence: `CUDA_VISIBLE_DEVICES="-1"`, fix: "unset CUDA_VISIBLE_DEVICES"},
				"env_cuda_visible_devices": {status: Fail, title: `CUDA_VISIBLE_DEVICES="-1" hides every GPU`, evidence: "nvidia-smi lists 2 GPU(s): indices 0..1|not usable: -1", fix: "unset CUDA_VISIBLE_DEVICES|export CUDA_VISIBLE_DEVICES=0"},
			},
		},
		{
			name: "CUDA_VISIBLE_DEVICES empty", ok: false,
			setup: func() *fake {
				f := healthy()
				f.env["CUDA_VISIBLE_DEVICES"] = ""
				return f
			},
			want: map[string]want{"env_cuda_visible_devices": {status: Fail, title: "CUDA_VISIBLE_DEVICES is empty: CUDA sees no GPU", fix: "unset CUDA_VISIBLE_DEVICES"}},
		},
		{
			name: "CUDA_VISIBLE_DEVICES=5 with 2 GPUs", ok: false,
			setup: func() *fake {
				f := healthy()
				f.env["CUDA_VISIBLE_DEVICES"] = "5"
				return f
			},
			want: map[string]want{"env_cuda_visible_devices": {status: Fail, title: `"5" hides every GPU`, evidence: "indices 0..1|not usable: 5", fix: "indices of GPUs that exist"}},
		},
		{
			name: "CUDA_VISIBLE_DEVICES=0,5,1 with 2 GPUs", ok: true,
			setup: func() *fake {
				f := healthy()
				f.env["CUDA_VISIBLE_DEVICES"] = "0,5,1"
				return f
			},
			want: map[string]want{"env_cuda_visible_devices": {status: Warn, title: "names GPUs that do not exist", evidence: "visible: 0|ignored (CUDA stops at the first invalid entry): 5, 1", fix: "unset"}},
		},
		{
			name: "CUDA_VISIBLE_DEVICES=1 with 2 GPUs", ok: true,
			setup: func() *fake {
				f := healthy()
				f.env["CUDA_VISIBLE_DEVICES"] = "1"
				return f
			},
			want: map[string]want{"env_cuda_visible_devices": {status: OK, title: "CUDA sees GPU(s) 1, renumbered from 0", fix: "-"}},
		},
		{
			name: "CUDA_VISIBLE_DEVICES=-1 without GPUs", setup: func() *fake { f := noGPU(); f.env["CUDA_VISIBLE_DEVICES"] = "-1"; return f }, ok: true,
			want: map[string]want{"env_cuda_visible_devices": {status: Warn, evidence: "indices cannot be checked", fix: "unset"}},
		},
		{
			name: "XLA_FLAGS forcing the host device count", ok: true,
			setup: func() *fake {
				f := healthy()
				f.env["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8 --xla_dump_to=/tmp/x"
				return f
			},
			want: map[string]want{"env_xla_flags": {status: Warn, title: "--xla_force_host_platform_device_count=8 splits the host CPU into 8 XLA devices", evidence: "other flags (not checked): --xla_dump_to=/tmp/x", fix: "remove --xla_force_host_platform_device_count"}},
		},
		{
			name: "XLA_FLAGS with a missing CUDA data dir", ok: true,
			setup: func() *fake {
				f := healthy()
				f.env["XLA_FLAGS"] = "--xla_gpu_cuda_data_dir=/home/someone/else/nvidia"
				return f
			},
			want: map[string]want{"env_xla_flags": {status: Warn, title: "--xla_gpu_cuda_data_dir=/home/someone/else/nvidia does not exist", fix: "point --xla_gpu_cuda_data_dir at the folder"}},
		},
		{
			name: "XLA_FLAGS with an existing CUDA data dir", ok: true,
			setup: func() *fake {
				f := healthy()
				f.env["XLA_FLAGS"] = "--xla_gpu_cuda_data_dir=" + nvidiaDir
				return f
			},
			want: map[string]want{"env_xla_flags": {status: OK, evidence: nvidiaDir + " exists", fix: "-"}},
		},
		{
			name: "low free memory", ok: true,
			setup: func() *fake {
				f := healthy()
				f.inv.NVIDIA.GPUs[1].MemoryUsedMB = 81000
				return f
			},
			want: map[string]want{"gpu_memory": {status: Warn, title: "under 1 GiB free: GPU 1 has 559 MiB", evidence: "GPU 0: 81059 MiB free|GPU 1: 559 MiB free of 81559 MiB (81000 MiB used)", fix: "nvidia-smi|--device gpu:N"}},
		},
		{
			name: "GOMLX_BACKEND set to an unknown backend", ok: true,
			setup: func() *fake {
				f := healthy()
				f.env["GOMLX_BACKEND"] = "simplego"
				delete(f.env, device.NoAutoInstallEnv)
				return f
			},
			want: map[string]want{
				"env_gomlx_backend": {status: Warn, title: `GOMLX_BACKEND="simplego" overrides`, evidence: `"simplego" is not a backend compiled into this binary`, fix: "unset GOMLX_BACKEND"},
				"env_auto_install":  {status: OK, evidence: "not set; the device package turns GoMLX's auto-install off itself", fix: "-"},
			},
		},
		{
			name: "nvidia-smi absent, auto", setup: noGPU, ok: true,
			want: map[string]want{"nvidia": {status: Warn, title: "no NVIDIA driver: nvidia-smi not found", evidence: "nvidia-smi not found on PATH", fix: "install the NVIDIA driver|nothing to fix"}},
		},
		{
			name: "nvidia-smi absent, gpu:0 requested", setup: noGPU, device: "gpu:0", ok: false,
			want: map[string]want{"nvidia": {status: Fail, evidence: "--device gpu:0 needs an NVIDIA GPU", fix: "install the NVIDIA driver"}},
		},
		{
			name: "nvidia-smi fails", device: "auto", ok: true,
			setup: func() *fake {
				f := noGPU()
				f.inv.NVIDIA = device.NVIDIAInfo{SMIPath: "/usr/bin/nvidia-smi", Err: "/usr/bin/nvidia-smi failed: exit status 9"}
				return f
			},
			want: map[string]want{"nvidia": {status: Warn, title: "nvidia-smi failed", evidence: "exit status 9", fix: "driver/library version mismatch"}},
		},
		{
			name: "device index beyond the plugin's devices", setup: healthy, device: "gpu:3", ok: false,
			want: map[string]want{
				"xla_devices": {status: Fail, title: "--device gpu:3 asks for device 3 but plugin cuda has 2", fix: "index below 2"},
				"live":        {status: Fail, evidence: "device 3 requested but plugin cuda has 2 device(s)"},
			},
		},
		{
			name: "GPU utilisation stays at 0", burst: 100 * time.Millisecond, ok: true,
			setup: func() *fake { f := healthy(); f.util = [][]int{{0, 0}}; return f },
			want:  map[string]want{"live": {status: Warn, title: "utilisation stayed at 0%", fix: "env_cuda_visible_devices|longer --burst"}},
		},
		{
			name: "GPU busy before the burst", burst: 100 * time.Millisecond, ok: true,
			setup: func() *fake { f := healthy(); f.util = [][]int{{40, 0}}; return f },
			want:  map[string]want{"live": {status: OK, evidence: "other processes may be using the GPU"}},
		},
		{
			name: "utilisation cannot be sampled: compare with CPU", burst: 100 * time.Millisecond, ok: true,
			setup: func() *fake { f := healthy(); f.utilErr = errors.New("nvidia-smi hung"); return f },
			want:  map[string]want{"live": {status: OK, title: "ran 4000.0× as fast as on the CPU", evidence: "could not sample GPU utilisation (nvidia-smi hung)|same burst on the CPU (go): 10.0 GFLOP/s"}},
		},
		{
			name: "TPU without nvidia-smi: compare with CPU", burst: 100 * time.Millisecond, ok: true,
			setup: func() *fake {
				f := noGPU()
				f.inv.Plugins = []device.Plugin{{Name: "tpu", Path: "/usr/local/lib/go-xla/pjrt_c_api_tpu_plugin.so", Probed: true, Devices: xlaDevs(4, "TPU v5 lite")}}
				return f
			},
			want: map[string]want{"live": {status: OK, title: "xla:tpu:0 works (verified); the burst ran 9000.0× as fast", evidence: "cannot be read (no nvidia-smi for this device)|xla:tpu:0 is 9000.00× the CPU"}},
		},
		{
			name: "accelerator slower than the CPU", burst: 100 * time.Millisecond, device: "tpu", ok: true,
			setup: func() *fake {
				f := noGPU()
				f.inv.Plugins = []device.Plugin{{Name: "tpu", Path: "/usr/local/lib/go-xla/pjrt_c_api_tpu_plugin.so", Probed: true, Devices: xlaDevs(1, "TPU")}}
				f.rates = map[string]float64{"xla:tpu:0": 5, "go": 10}
				return f
			},
			want: map[string]want{
				"nvidia": {status: Warn},
				"live":   {status: Warn, title: "0.50× as fast as the CPU", fix: "not running on it"},
			},
		},
		{
			name: "burst fails", burst: 100 * time.Millisecond, ok: false,
			setup: func() *fake { f := healthy(); f.burstErr = errors.New("RESOURCE_EXHAUSTED: out of memory"); return f },
			want:  map[string]want{"live": {status: Fail, title: "burst of matmuls on xla:cuda:0 failed: RESOURCE_EXHAUSTED", fix: "gpu_memory"}},
		},
		{
			name: "verification fails", ok: false,
			setup: func() *fake {
				f := healthy()
				f.verify = &device.VerifyResult{RelError: 0.5, Tolerance: 1e-4, Err: "relative error 0.5 exceeds 1e-04"}
				return f
			},
			want: map[string]want{"live": {status: Fail, title: "xla:cuda:0 failed the checked computation", evidence: "relative error 5.00e-01", fix: "devices --verify"}},
		},
		{
			name: "explicit go device", setup: noGPU, device: "go", ok: true,
			want: map[string]want{
				"nvidia": {status: Warn},
				"live":   {status: OK, title: "go works; no accelerator was exercised (none was requested)", evidence: "no accelerator was exercised: the work ran on go", fix: "-"},
			},
		},
		{
			name: "fallback from tpu to an idle GPU", device: "tpu", burst: 100 * time.Millisecond, ok: false,
			setup: func() *fake { f := healthy(); f.util = [][]int{{0, 0}}; return f },
			want:  map[string]want{"live": {status: Fail, title: "--device tpu cannot be used; fell back to xla:cuda:0|stayed at 0%", fix: "TPU VM|longer --burst"}},
		},
		{
			name: "fallback from gpu", setup: noGPU, device: "gpu", ok: false,
			want: map[string]want{"live": {status: Fail, title: "--device gpu cannot be used; fell back to cpu", evidence: "falling back to cpu|no accelerator was exercised", fix: "gotrain setup xla --cuda"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.setup()
			opts := Options{Device: tt.device, Burst: tt.burst, Fallback: strings.HasPrefix(tt.name, "fallback"), PluginFile: tt.plugin}
			rep, err := Run(context.Background(), opts, f.probes())
			if err != nil {
				t.Fatal(err)
			}
			if len(f.discover) != 1 || f.discover[0].PluginFile != tt.plugin || !f.discover[0].Probe {
				t.Errorf("Discover called with %+v, want one call probing, with plugin file %q", f.discover, tt.plugin)
			}
			if len(rep.Findings) != 12 {
				t.Errorf("%d findings, want 12", len(rep.Findings))
			}
			for id, w := range tt.want {
				check(t, rep, id, w)
			}
			if rep.OK != tt.ok {
				t.Errorf("OK = %v, want %v (failed: %v, resolve error %q)", rep.OK, tt.ok, rep.Failed(), rep.ResolveError)
			}
			if (rep.Selected == nil) != (rep.ResolveError != "") {
				t.Errorf("selected %v with resolve error %q", rep.Selected, rep.ResolveError)
			}
			if tt.name == "healthy GPU machine" || tt.name == "JAX plugin found" || tt.name == "explicit plugin path" {
				for _, f := range rep.Findings {
					if f.Status != OK {
						t.Errorf("healthy machine: %s is %s: %s", f.ID, f.Status, f.Title)
					}
				}
			}
		})
	}
}

func TestFallbackSelection(t *testing.T) {
	rep, err := Run(context.Background(), Options{Device: "gpu", Fallback: true}, noGPU().probes())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Selected == nil || !rep.Selected.FellBack || rep.Selected.Device.Name != "cpu" || rep.OK {
		t.Errorf("fallback report: selected %+v, ok %v", rep.Selected, rep.OK)
	}
	// A fallback is a failure of the request: doctor's verdict says so.
	if err := rep.Err(); err == nil || !strings.Contains(err.Error(), "--device gpu cannot be used (") {
		t.Errorf("Err() = %v, want --device gpu cannot be used (warning)", err)
	}
}

func TestNoBurstOnCPU(t *testing.T) {
	f := noGPU()
	if _, err := Run(context.Background(), Options{Burst: time.Second}, f.probes()); err != nil {
		t.Fatal(err)
	}
	if len(f.bursts) != 0 {
		t.Errorf("burst ran on %v although no accelerator was chosen", f.bursts)
	}
}

func TestInvalidDevice(t *testing.T) {
	_, err := Run(context.Background(), Options{Device: "gpu:x"}, noGPU().probes())
	if err == nil || !strings.Contains(err.Error(), device.ValidForms) {
		t.Errorf("err = %v, want the valid forms", err)
	}
}

func TestEnvReadBeforeDiscovery(t *testing.T) {
	f := healthy()
	p := f.probes()
	discover := p.Discover
	p.Discover = func(o device.DiscoverOptions) device.Inventory {
		f.env["XLA_FLAGS"] = "--xla_gpu_cuda_data_dir=/set/by/plugin/loading"
		return discover(o)
	}
	rep, err := Run(context.Background(), Options{}, p)
	if err != nil {
		t.Fatal(err)
	}
	check(t, rep, "env_xla_flags", want{status: OK, fix: "-"})
}

func TestParseCUDAVisible(t *testing.T) {
	tests := []struct {
		v                string
		n                int
		visible, dropped string
	}{
		{"", 2, "", ""},
		{"-1", 2, "", "-1"},
		{"5", 2, "", "5"},
		{"5", 0, "5", ""},
		{"0, 1", 2, "0,1", ""},
		{"1,x,0", 2, "1", "x,0"},
		{"GPU-8e1c,0", 2, "GPU-8e1c,0", ""},
		{"MIG-1/2/3", 1, "MIG-1/2/3", ""},
	}
	for _, tt := range tests {
		vis, drop := parseCUDAVisible(tt.v, tt.n)
		if strings.Join(vis, ",") != tt.visible || strings.Join(drop, ",") != tt.dropped {
			t.Errorf("parseCUDAVisible(%q, %d) = %v, %v; want %q, %q", tt.v, tt.n, vis, drop, tt.visible, tt.dropped)
		}
	}
}

func TestParseUtilization(t *testing.T) {
	got, err := ParseUtilization("37\n 0 \n\n100\n")
	if err != nil || !slices.Equal(got, []int{37, 0, 100}) {
		t.Errorf("ParseUtilization = %v, %v", got, err)
	}
	if _, err := ParseUtilization("[N/A]\n"); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("N/A: err = %v", err)
	}
}

func TestWriteText(t *testing.T) {
	rep, err := Run(context.Background(), Options{Device: "gpu"}, noGPU().probes())
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Err(); err == nil || !strings.Contains(err.Error(), "--device gpu cannot be used") {
		t.Errorf("Err() = %v, want --device gpu cannot be used", err)
	}
	var b bytes.Buffer
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, w := range []string{
		"[ok]   build: XLA-capable build",
		"[fail] plugins: no PJRT plugins found",
		"\n       searched: ",
		"\n       fix: install plugins with `gotrain setup xla`",
		"[skip] xla_devices:",
		"[fail] live: --device gpu cannot be used",
		"--device gpu cannot be used\n",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("text lacks %q:\n%s", w, out)
		}
	}
	if n := strings.Count(out, "\n["); n != len(rep.Findings)-1 {
		t.Errorf("%d finding lines after the first, want %d:\n%s", n, len(rep.Findings)-1, out)
	}
}

// TestLiveRealCPU runs the doctor with the real probes on this machine's
// devices, with no plugins on the search path: the live check must run on the
// CPU and say that no accelerator was exercised.
func TestLiveRealCPU(t *testing.T) {
	t.Setenv("PJRT_PLUGIN_LIBRARY_PATH", t.TempDir())
	for _, tt := range []struct {
		device string
		status Status
		title  string
	}{
		{"auto", Warn, "no accelerator: --device auto chose cpu"},
		{"cpu", OK, "cpu works; no accelerator was exercised"},
		{"go", OK, "go works; no accelerator was exercised"},
	} {
		rep, err := Run(context.Background(), Options{Device: tt.device, Burst: 10 * time.Millisecond}, DefaultProbes())
		if err != nil {
			t.Fatal(err)
		}
		live, _ := rep.Finding("live")
		if live.Status != tt.status || !strings.Contains(live.Title, tt.title) {
			t.Errorf("%s: live = %s %q, want %s %q", tt.device, live.Status, live.Title, tt.status, tt.title)
		}
		ev := strings.Join(live.Evidence, "\n")
		if !strings.Contains(ev, "verify on "+tt.device) && tt.device != "auto" || !strings.Contains(ev, ": ok, relative error") || !strings.Contains(ev, "no accelerator was exercised") {
			t.Errorf("%s: evidence:\n%s", tt.device, ev)
		}
		if rep.Selected == nil || rep.Selected.Device.Accelerator() {
			t.Errorf("%s: selected %+v", tt.device, rep.Selected)
		}
		if err := rep.Err(); (err == nil) != rep.OK {
			t.Errorf("%s: Err() = %v with OK %v", tt.device, err, rep.OK)
		}
	}
	rep, err := Run(context.Background(), Options{Device: "gpu"}, DefaultProbes())
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK || rep.ResolveError == "" || !slices.Contains(rep.Failed(), "live") {
		t.Errorf("--device gpu on a machine without plugins: ok %v, failed %v, error %q", rep.OK, rep.Failed(), rep.ResolveError)
	}
}
