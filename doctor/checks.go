package doctor

import (
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/gomlx/gomlx/backends"

	"github.com/gotrain/gotrain/device"
)

// lowFreeMiB is the free GPU memory below which gpu_memory warns.
const lowFreeMiB = 1024

// Fix texts shared by several checks.
const (
	fixSetupXLA   = "install plugins with `gotrain setup xla` (add --cuda on a machine with an NVIDIA GPU and driver); offline, copy pjrt_c_api_<name>_plugin.so into one of the searched folders or point PJRT_PLUGIN_LIBRARY_PATH at its folder"
	fixCUDAVisibl = "unset CUDA_VISIBLE_DEVICES, or set it to indices of GPUs that exist (nvidia-smi lists them), for example `export CUDA_VISIBLE_DEVICES=0`"
)

// orFail returns Fail when cond holds, Warn otherwise.
func orFail(cond bool) Status {
	if cond {
		return Fail
	}
	return Warn
}

// build reports whether this binary can load PJRT plugins at all.
func (c *checker) build() Finding {
	f := Finding{ID: "build", Evidence: []string{fmt.Sprintf("%s/%s, %s", runtime.GOOS, runtime.GOARCH, runtime.Version())}}
	if c.inv.XLACompiled {
		f.Status, f.Title = OK, "XLA-capable build: PJRT plugins can be loaded"
		f.Evidence = append(f.Evidence, "cgo enabled, XLA backend compiled in (plugins are loaded with dlopen at run time)")
		return f
	}
	f.Status = orFail(c.want != "")
	f.Title = "pure-Go build (noxla): no XLA, so no GPU or TPU, can be used"
	f.Evidence = append(f.Evidence, c.inv.NoXLAReason)
	if c.want != "" {
		f.Evidence = append(f.Evidence, fmt.Sprintf("--device %s needs XLA", c.spec))
	}
	f.Fix = "rebuild with cgo and without -tags noxla on linux/amd64 or darwin: `CGO_ENABLED=1 go build ./cmd/gotrain` (or `go install github.com/gotrain/gotrain/cmd/gotrain@latest`)"
	return f
}

// plugins reports the PJRT plugin files found and whether they load.
func (c *checker) plugins() Finding {
	f := Finding{ID: "plugins"}
	if c.inv.PluginFile != "" {
		return c.explicitPlugin(f)
	}
	if v, ok := c.getenv("PJRT_PLUGIN_LIBRARY_PATH"); ok {
		f.Evidence = append(f.Evidence, fmt.Sprintf("PJRT_PLUGIN_LIBRARY_PATH=%q replaces the default folders", v))
	} else {
		f.Evidence = append(f.Evidence, "PJRT_PLUGIN_LIBRARY_PATH not set: default folders searched")
	}
	var dirs []string
	for _, d := range c.inv.SearchPaths {
		if !c.p.Exists(d) {
			d += " (missing)"
		}
		dirs = append(dirs, d)
	}
	f.Evidence = append(f.Evidence, "searched: "+strings.Join(dirs, ", "))
	misnamed := c.misnamedPlugins()
	for _, m := range misnamed {
		f.Evidence = append(f.Evidence, fmt.Sprintf("ignored %s: its name does not match pjrt_c_api_<name>_plugin.so or pjrt[-_]plugin[-_]<name>.so", m))
	}
	fixMisnamed := ""
	if len(misnamed) > 0 {
		fixMisnamed = "; a plugin with another name (such as JAX's xla_cuda_plugin.so outside its jax_plugins/xla_cudaNN folder) needs a symlink named pjrt_c_api_<name>_plugin.so beside it, or pass it with --plugin FILE"
	}
	return c.pluginsLoad(f, fixMisnamed)
}

// explicitPlugin reports the explicit plugin file: the only one considered.
func (c *checker) explicitPlugin(f Finding) Finding {
	f.Evidence = append(f.Evidence, fmt.Sprintf("explicit plugin file (--plugin): %s: the only plugin considered; the plugin folders and the Python environments were not searched", c.inv.PluginFile))
	if c.inv.PluginFileErr != "" {
		f.Status = Fail
		f.Title = "the explicit plugin file cannot be used: " + c.inv.PluginFileErr
		f.Fix = fixExplicitFile
		return f
	}
	return c.pluginsLoad(f, "")
}

// pluginsLoad finishes the plugins finding with what loading each plugin
// gave; fixMisnamed is added to the fixes that point at the plugin folders.
func (c *checker) pluginsLoad(f Finding, fixMisnamed string) Finding {
	if !c.inv.XLACompiled {
		f.Status, f.Title = Skip, "plugins not checked: this binary cannot load them (see build)"
		for _, p := range c.inv.Plugins {
			f.Evidence = append(f.Evidence, fmt.Sprintf("found %s: %s", p.Name, p.Path))
		}
		return f
	}
	if len(c.inv.Plugins) == 0 {
		f.Status = orFail(c.want != "")
		f.Title = "no PJRT plugins found: XLA has nothing to load"
		f.Fix = fixSetupXLA + fixMisnamed
		return f
	}
	var broken []device.Plugin
	hasWanted := c.want == ""
	for _, p := range c.inv.Plugins {
		hasWanted = hasWanted || pluginWanted(c.spec, p)
		switch {
		case p.Err != "":
			broken = append(broken, p)
			f.Evidence = append(f.Evidence, fmt.Sprintf("%s (%s): FAILED to load: %s", p.Name, p.Path, p.Err))
			if p.Class() == "gpu" {
				f.Evidence = append(f.Evidence, c.nvidiaLibs(p))
			}
		case !p.Probed:
			f.Evidence = append(f.Evidence, fmt.Sprintf("%s (%s): not probed", p.Name, p.Path))
		default:
			s := fmt.Sprintf("%s (%s): loaded, %d device(s)", p.Name, p.Path, len(p.Devices))
			if p.PJRTAPI != nil {
				s += ", PJRT C API " + p.PJRTAPI.Version
			}
			if p.Version != "" {
				s += ", " + p.Version
			}
			f.Evidence = append(f.Evidence, s)
		}
		switch {
		case p.Source == device.SourceJAX && p.Libs != nil:
			f.Evidence = append(f.Evidence, fmt.Sprintf("%s: JAX's CUDA plugin, from the Python environment %s (see jax)", p.Name, p.Libs.SitePackages))
		case p.Source == device.SourceExplicit:
			f.Evidence = append(f.Evidence, fmt.Sprintf("%s: the explicit plugin file", p.Name))
		}
	}
	if len(broken) > 0 {
		f.Status = Fail
		names := make([]string, len(broken))
		for i, p := range broken {
			names[i] = p.Name
		}
		f.Title = fmt.Sprintf("%d of %d PJRT plugin(s) failed to load: %s", len(broken), len(c.inv.Plugins), strings.Join(names, ", "))
		f.Fix = brokenPluginFix(broken)
		return f
	}
	if !hasWanted {
		f.Status = Fail
		f.Title = fmt.Sprintf("no PJRT plugin for --device %s among the %d found", c.spec, len(c.inv.Plugins))
		switch c.want {
		case "gpu":
			f.Fix = "install the CUDA plugin with `gotrain setup xla --cuda` (needs an NVIDIA driver), or JAX's with `python3 -m pip install -U \"jax[cuda12]\"` in the Python environment you use (see jax), or copy pjrt_c_api_cuda_plugin.so into a searched folder"
		case "tpu":
			f.Fix = "run on a TPU VM, or copy the TPU plugin as pjrt_c_api_tpu_plugin.so into a searched folder"
		default:
			f.Fix = fixSetupXLA
		}
		f.Fix += fixMisnamed
		return f
	}
	names := make([]string, len(c.inv.Plugins))
	for i, p := range c.inv.Plugins {
		names[i] = p.Name
	}
	f.Status, f.Title = OK, fmt.Sprintf("%d PJRT plugin(s) load: %s", len(c.inv.Plugins), strings.Join(names, ", "))
	return f
}

// misnamedPlugins lists files in the search folders that look like PJRT
// plugins but that GoMLX ignores because of their names.
func (c *checker) misnamedPlugins() []string {
	var out []string
	for _, dir := range c.inv.SearchPaths {
		names, err := c.p.ListDir(dir)
		if err != nil {
			continue
		}
		for _, n := range names {
			l := strings.ToLower(n)
			if !strings.HasSuffix(l, ".so") || device.PluginNameFromFile(n) != "" {
				continue
			}
			if _, _, jax := device.JAXLayout(filepath.Join(dir, n)); jax {
				continue // found as JAX's CUDA plugin
			}
			if strings.Contains(l, "pjrt") || (strings.Contains(l, "xla") && strings.Contains(l, "plugin")) {
				out = append(out, filepath.Join(dir, n))
			}
		}
	}
	return out
}

// nvidiaDir is the folder holding the NVIDIA libraries of a CUDA plugin:
// for JAX's plugin, its environment's site-packages/nvidia; else, as
// gotrain points XLA at it, ../nvidia from the plugin's folder, or nvidia/
// beside it (go-xla installs the plugin inside that folder).
func (c *checker) nvidiaDir(p device.Plugin) string {
	if p.Libs != nil {
		return p.Libs.NVIDIADir
	}
	dir := filepath.Join(filepath.Dir(filepath.Dir(p.Path)), "nvidia")
	if c.p.Exists(dir) {
		return dir
	}
	return filepath.Join(filepath.Dir(p.Path), "nvidia")
}

// nvidiaLibs describes the NVIDIA library folder of a CUDA plugin.
func (c *checker) nvidiaLibs(p device.Plugin) string {
	dir := c.nvidiaDir(p)
	names, err := c.p.ListDir(dir)
	if err != nil {
		return fmt.Sprintf("NVIDIA libraries folder %s: missing (%v)", dir, err)
	}
	names = slices.DeleteFunc(names, func(n string) bool { return device.PluginNameFromFile(n) != "" })
	if len(names) == 0 {
		return fmt.Sprintf("NVIDIA libraries folder %s: holds no libraries", dir)
	}
	return fmt.Sprintf("NVIDIA libraries folder %s: %s", dir, strings.Join(names, ", "))
}

// brokenPluginFix says what to do about plugins that failed to load, guided
// by the loader's errors.
func brokenPluginFix(broken []device.Plugin) string {
	var libs, cuda, refused, other bool
	var jaxFixes []string
	for _, p := range broken {
		if p.PJRTAPI != nil && p.PJRTAPI.Refused() {
			refused = true
			continue
		}
		other = true
		e := strings.ToLower(p.Err)
		missing := strings.Contains(e, "cannot open shared object") || strings.Contains(e, "libcu") || strings.Contains(e, "libnv")
		if p.Libs != nil && (missing || p.Class() == "gpu") {
			jaxFixes = append(jaxFixes, fmt.Sprintf("JAX's CUDA plugin %s needs the NVIDIA libraries of its Python environment (see jax): `%s -m pip install -U \"jax[cuda%s]\"` in %s", p.Name, p.Libs.Interpreter(), p.Libs.CUDA, p.Libs.SitePackages))
			continue
		}
		libs = libs || missing
		cuda = cuda || p.Class() == "gpu"
	}
	var parts []string
	if refused {
		parts = append(parts, "a plugin of a PJRT C API version gotrain's loader cannot use is not loaded: see pjrt_api for both versions and what to install")
	}
	parts = append(parts, jaxFixes...)
	if libs || cuda {
		parts = append(parts, "a CUDA plugin needs the NVIDIA libraries (cuBLAS, cuDNN, nvcc's ptxas...) in the nvidia/ folder next to it: reinstall them with `gotrain setup xla --cuda --force`")
	}
	if other {
		parts = append(parts, fmt.Sprintf("gotrain's loader (%s) speaks PJRT C API %s, and gotrain checks a plugin's version only once the plugin loads: use a plugin built for that API (`gotrain setup xla` installs matching ones, or pin the matching JAX/jaxlib release), or remove the broken file from the search path", device.PJRTLoader, device.LoaderPJRTAPI()))
	}
	return strings.Join(parts, "; ")
}

// nvidia reports the driver and GPUs as nvidia-smi sees them.
func (c *checker) nvidia() Finding {
	f := Finding{ID: "nvidia"}
	nv := c.inv.NVIDIA
	wantGPU := c.want == "gpu"
	if len(nv.GPUs) == 0 {
		f.Status = orFail(wantGPU)
		switch {
		case nv.SMIPath == "":
			f.Title = "no NVIDIA driver: nvidia-smi not found"
			f.Fix = "install the NVIDIA driver (it ships nvidia-smi) and make sure nvidia-smi is on PATH"
		case nv.Err != "":
			f.Title = "nvidia-smi failed: no GPU information"
			f.Fix = "run nvidia-smi to see its error; a driver/library version mismatch after an upgrade needs a reboot or a driver reload"
		default:
			f.Title = "nvidia-smi lists no GPUs"
			f.Fix = "check that the GPU is attached to this machine or container (for Docker: --gpus all)"
		}
		if nv.SMIPath != "" {
			f.Evidence = append(f.Evidence, "nvidia-smi: "+nv.SMIPath)
		}
		if nv.Err != "" {
			f.Evidence = append(f.Evidence, nv.Err)
		}
		if wantGPU {
			f.Evidence = append(f.Evidence, fmt.Sprintf("--device %s needs an NVIDIA GPU", c.spec))
		} else {
			f.Fix += "; on a machine without an NVIDIA GPU there is nothing to fix: use --device auto, cpu or go"
		}
		return f
	}
	f.Status = OK
	f.Title = fmt.Sprintf("NVIDIA driver %s, %d GPU(s)", nv.Driver, len(nv.GPUs))
	f.Evidence = append(f.Evidence, "nvidia-smi: "+nv.SMIPath, "driver version: "+nv.Driver)
	for _, g := range nv.GPUs {
		f.Evidence = append(f.Evidence, fmt.Sprintf("GPU %d: %s, memory %d of %d MiB used, utilisation %d%%", g.Index, g.Name, g.MemoryUsedMB, g.MemoryTotalMB, g.UtilPercent))
	}
	if nv.Err != "" {
		f.Status = Warn
		f.Evidence = append(f.Evidence, "partial output: "+nv.Err)
		f.Fix = "run nvidia-smi to see the full output; the GPUs listed may be incomplete"
	}
	return f
}

// xlaDevices reports the devices each PJRT plugin sees, compared with nvidia-smi.
func (c *checker) xlaDevices() Finding {
	f := Finding{ID: "xla_devices"}
	if !c.inv.XLACompiled {
		f.Status, f.Title = Skip, "not an XLA build (see build)"
		return f
	}
	if len(c.inv.Plugins) == 0 {
		f.Status, f.Title = Skip, "no PJRT plugins to ask (see plugins)"
		return f
	}
	nGPU := len(c.inv.NVIDIA.GPUs)
	cvd, cvdSet := c.getenv("CUDA_VISIBLE_DEVICES")
	f.Status = OK
	var problems, fixes []string
	total, loaded := 0, 0
	raise := func(s Status) {
		if s == Fail || f.Status == OK {
			f.Status = s
		}
	}
	for _, p := range c.inv.Plugins {
		switch {
		case p.Err != "":
			f.Evidence = append(f.Evidence, fmt.Sprintf("%s: not loaded (see plugins)", p.Name))
			continue
		case !p.Probed:
			f.Evidence = append(f.Evidence, fmt.Sprintf("%s: not probed", p.Name))
			continue
		}
		loaded++
		total += len(p.Devices)
		descs := make([]string, len(p.Devices))
		for i, d := range p.Devices {
			descs[i] = fmt.Sprintf("%d: %s", d.Index, d.Description)
		}
		s := fmt.Sprintf("%s: %d device(s)", p.Name, len(p.Devices))
		if len(descs) > 0 {
			s += " (" + strings.Join(descs, "; ") + ")"
		}
		f.Evidence = append(f.Evidence, s)
		isGPU := p.Class() == "gpu"
		switch {
		case isGPU && len(p.Devices) == 0 && nGPU > 0:
			raise(Fail)
			problems = append(problems, fmt.Sprintf("CUDA plugin %s sees 0 devices while nvidia-smi lists %d GPU(s)", p.Name, nGPU))
			if cvdSet {
				f.Evidence = append(f.Evidence, fmt.Sprintf("CUDA_VISIBLE_DEVICES=%q", cvd))
				fixes = append(fixes, fixCUDAVisibl)
			} else {
				f.Evidence = append(f.Evidence, "CUDA_VISIBLE_DEVICES not set", c.nvidiaLibs(p))
				fixes = append(fixes, fmt.Sprintf("the plugin cannot use driver %s: check that the plugin's CUDA version is supported by the driver (the nvidia-smi header shows the newest CUDA it supports) and that the NVIDIA libraries are in %s; %s", c.inv.NVIDIA.Driver, c.nvidiaDir(p), reinstall(p)))
			}
		case isGPU && len(p.Devices) == 0:
			raise(orFail(c.want == "gpu"))
			problems = append(problems, fmt.Sprintf("CUDA plugin %s sees 0 devices and nvidia-smi lists no GPUs", p.Name))
			fixes = append(fixes, "run on a machine with an NVIDIA GPU and driver (see nvidia)")
		case len(p.Devices) == 0:
			raise(Warn)
			problems = append(problems, fmt.Sprintf("plugin %s sees 0 devices", p.Name))
			fixes = append(fixes, fmt.Sprintf("remove or replace plugin %s (%s)", p.Name, p.Path))
		case isGPU && !cvdSet && len(p.Devices) < nGPU:
			raise(Warn)
			problems = append(problems, fmt.Sprintf("CUDA plugin %s sees %d of the %d GPUs nvidia-smi lists", p.Name, len(p.Devices), nGPU))
			fixes = append(fixes, "check the missing GPUs with nvidia-smi (MIG mode, a GPU in a bad state, or a container that exposes only some of them)")
		}
		if c.spec.Index != device.AnyIndex && c.spec.Index >= len(p.Devices) && len(p.Devices) > 0 && pluginWanted(c.spec, p) {
			raise(Fail)
			problems = append(problems, fmt.Sprintf("--device %s asks for device %d but plugin %s has %d", c.spec, c.spec.Index, p.Name, len(p.Devices)))
			fixes = append(fixes, fmt.Sprintf("use an index below %d", len(p.Devices)))
		}
	}
	if loaded == 0 {
		f.Status, f.Title = Skip, "no PJRT plugin loaded (see plugins)"
		return f
	}
	if f.Status == OK {
		f.Title = fmt.Sprintf("XLA sees %d device(s)", total)
		return f
	}
	f.Title = strings.Join(problems, "; ")
	f.Fix = strings.Join(slices.Compact(fixes), "; ")
	return f
}

// reinstall says how to reinstall a CUDA plugin and its libraries.
func reinstall(p device.Plugin) string {
	if p.Libs != nil {
		return fmt.Sprintf("reinstall with `%s -m pip install -U --force-reinstall \"jax[cuda%s]\"`", p.Libs.Interpreter(), p.Libs.CUDA)
	}
	return "reinstall with `gotrain setup xla --cuda --force`"
}

// pluginWanted tells whether a request names the plugin's kind.
func pluginWanted(s device.Spec, p device.Plugin) bool {
	switch s.Kind {
	case device.GPU:
		return p.Class() == "gpu"
	case device.TPU:
		return p.Class() == "tpu"
	case device.XLA:
		return s.Plugin == p.Name || s.Plugin == p.Path || strings.HasPrefix(p.Name, s.Plugin+"_") || strings.HasPrefix(p.Name, s.Plugin+"-")
	}
	return false
}

// gpuMemory reports the free memory of each NVIDIA GPU.
func (c *checker) gpuMemory() Finding {
	f := Finding{ID: "gpu_memory"}
	gpus := c.inv.NVIDIA.GPUs
	if len(gpus) == 0 {
		f.Status, f.Title = Skip, "no NVIDIA GPUs listed by nvidia-smi"
		return f
	}
	f.Status = OK
	var low []string
	for _, g := range gpus {
		if g.MemoryTotalMB <= 0 {
			f.Evidence = append(f.Evidence, fmt.Sprintf("GPU %d: memory not reported", g.Index))
			continue
		}
		free := g.MemoryTotalMB - g.MemoryUsedMB
		f.Evidence = append(f.Evidence, fmt.Sprintf("GPU %d: %d MiB free of %d MiB (%d MiB used)", g.Index, free, g.MemoryTotalMB, g.MemoryUsedMB))
		if free < lowFreeMiB {
			low = append(low, fmt.Sprintf("GPU %d has %d MiB", g.Index, free))
		}
	}
	if len(low) == 0 {
		f.Title = "every GPU has at least 1 GiB free"
		return f
	}
	f.Status = Warn
	f.Title = "under 1 GiB free: " + strings.Join(low, ", ")
	f.Fix = "other processes hold the memory: stop the ones `nvidia-smi` lists, or choose another GPU with --device gpu:N"
	return f
}

// cudaVisibleDevices checks that CUDA_VISIBLE_DEVICES does not hide the GPUs.
func (c *checker) cudaVisibleDevices() Finding {
	f := Finding{ID: "env_cuda_visible_devices"}
	v, set := c.getenv("CUDA_VISIBLE_DEVICES")
	if !set {
		f.Status, f.Title = OK, "CUDA_VISIBLE_DEVICES not set: every GPU is visible"
		return f
	}
	nGPU := len(c.inv.NVIDIA.GPUs)
	f.Evidence = append(f.Evidence, fmt.Sprintf("CUDA_VISIBLE_DEVICES=%q", v))
	if nGPU > 0 {
		f.Evidence = append(f.Evidence, fmt.Sprintf("nvidia-smi lists %d GPU(s): indices 0..%d", nGPU, nGPU-1))
	} else {
		f.Evidence = append(f.Evidence, "nvidia-smi lists no GPUs: indices cannot be checked")
	}
	visible, dropped := parseCUDAVisible(v, nGPU)
	hidesAll := len(visible) == 0
	switch {
	case hidesAll:
		f.Status = orFail(nGPU > 0 || c.want == "gpu")
		if strings.TrimSpace(v) == "" {
			f.Title = "CUDA_VISIBLE_DEVICES is empty: CUDA sees no GPU"
		} else {
			f.Title = fmt.Sprintf("CUDA_VISIBLE_DEVICES=%q hides every GPU", v)
		}
		if len(dropped) > 0 {
			f.Evidence = append(f.Evidence, "not usable: "+strings.Join(dropped, ", "))
		}
		f.Fix = fixCUDAVisibl
	case len(dropped) > 0:
		f.Status = Warn
		f.Title = fmt.Sprintf("CUDA_VISIBLE_DEVICES=%q names GPUs that do not exist", v)
		f.Evidence = append(f.Evidence, "visible: "+strings.Join(visible, ", "), "ignored (CUDA stops at the first invalid entry): "+strings.Join(dropped, ", "))
		f.Fix = fixCUDAVisibl
	default:
		f.Status = OK
		f.Title = fmt.Sprintf("CUDA_VISIBLE_DEVICES=%q: CUDA sees GPU(s) %s, renumbered from 0", v, strings.Join(visible, ", "))
	}
	return f
}

// parseCUDAVisible splits a CUDA_VISIBLE_DEVICES value the way CUDA reads it:
// entries up to the first invalid one are visible, that one and the rest are
// dropped. Indices are checked against nGPU when it is positive; GPU-/MIG-
// UUIDs are taken as valid.
func parseCUDAVisible(v string, nGPU int) (visible, dropped []string) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	parts := strings.Split(v, ",")
	for i, p := range parts {
		p = strings.TrimSpace(p)
		ok := strings.HasPrefix(p, "GPU-") || strings.HasPrefix(p, "MIG-")
		if n, err := strconv.Atoi(p); err == nil {
			ok = n >= 0 && (nGPU <= 0 || n < nGPU)
		}
		if !ok {
			for _, q := range parts[i:] {
				dropped = append(dropped, strings.TrimSpace(q))
			}
			return visible, dropped
		}
		visible = append(visible, p)
	}
	return visible, nil
}

// xlaFlags checks XLA_FLAGS for flags that hide or redirect devices.
func (c *checker) xlaFlags() Finding {
	f := Finding{ID: "env_xla_flags"}
	v, set := c.getenv("XLA_FLAGS")
	if !set || strings.TrimSpace(v) == "" {
		f.Status, f.Title = OK, "XLA_FLAGS not set (gotrain sets --xla_gpu_cuda_data_dir itself before loading a CUDA plugin)"
		return f
	}
	f.Evidence = append(f.Evidence, fmt.Sprintf("XLA_FLAGS=%q", v))
	f.Status = OK
	var problems, fixes, other []string
	for _, flag := range strings.Fields(v) {
		name, val, _ := strings.Cut(strings.TrimLeft(flag, "-"), "=")
		switch name {
		case "xla_force_host_platform_device_count":
			problems = append(problems, fmt.Sprintf("--xla_force_host_platform_device_count=%s splits the host CPU into %s XLA devices: xla:cpu device counts no longer match the hardware", val, val))
			fixes = append(fixes, "remove --xla_force_host_platform_device_count from XLA_FLAGS unless you are testing multi-device code on a CPU")
		case "xla_gpu_cuda_data_dir":
			if c.p.Exists(val) {
				f.Evidence = append(f.Evidence, fmt.Sprintf("--xla_gpu_cuda_data_dir=%s exists", val))
			} else {
				problems = append(problems, fmt.Sprintf("--xla_gpu_cuda_data_dir=%s does not exist: XLA cannot find libdevice and ptxas for CUDA", val))
				fixes = append(fixes, "point --xla_gpu_cuda_data_dir at the folder with the NVIDIA libraries (~/.local/lib/go-xla/nvidia after `gotrain setup xla --cuda`), or remove it and let gotrain set it")
			}
		default:
			other = append(other, flag)
		}
	}
	if len(other) > 0 {
		f.Evidence = append(f.Evidence, "other flags (not checked): "+strings.Join(other, " "))
	}
	if len(problems) == 0 {
		f.Title = "XLA_FLAGS set; no flag hides or redirects devices"
		return f
	}
	f.Status = Warn
	f.Title = strings.Join(problems, "; ")
	f.Fix = strings.Join(fixes, "; ")
	return f
}

// gomlxBackend warns when GOMLX_BACKEND is set.
func (c *checker) gomlxBackend() Finding {
	f := Finding{ID: "env_gomlx_backend"}
	v, set := c.getenv(backends.ConfigEnvVar)
	if !set {
		f.Status, f.Title = OK, "GOMLX_BACKEND not set"
		return f
	}
	f.Status = Warn
	f.Title = fmt.Sprintf("GOMLX_BACKEND=%q overrides backend selection in GoMLX code outside --device", v)
	f.Evidence = append(f.Evidence,
		fmt.Sprintf("GOMLX_BACKEND=%q", v),
		"GoMLX's backends.New() uses it in place of any other choice; gotrain's --device does not read it, so the two can disagree")
	name, _, _ := strings.Cut(v, ":")
	if registered := backends.List(); !slices.Contains(registered, name) {
		f.Evidence = append(f.Evidence, fmt.Sprintf("%q is not a backend compiled into this binary (%s): backends.New() fails with it", name, strings.Join(registered, ", ")))
	}
	f.Fix = "unset GOMLX_BACKEND and choose the device with --device"
	return f
}

// autoInstall reports whether GoMLX may download plugins by itself.
func (c *checker) autoInstall() Finding {
	f := Finding{ID: "env_auto_install", Status: OK, Title: "GoMLX's plugin auto-install is off: nothing is downloaded without `gotrain setup xla`"}
	if v, set := c.getenv(device.NoAutoInstallEnv); set {
		f.Evidence = append(f.Evidence, fmt.Sprintf("%s=%q", device.NoAutoInstallEnv, v))
	} else {
		f.Evidence = append(f.Evidence, device.NoAutoInstallEnv+" not set; the device package turns GoMLX's auto-install off itself")
	}
	return f
}
