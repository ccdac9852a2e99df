package doctor

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/gotrain/gotrain/device"
)

// fixExplicitFile is the fix for an explicit plugin file that cannot be used.
const fixExplicitFile = "give --plugin the path of an existing PJRT plugin file (JAX's is <site-packages>/jax_plugins/xla_cuda12/xla_cuda_plugin.so), or leave --plugin out to search the plugin folders and the Python environments"

// jax reports JAX's CUDA plugins: those found in the Python environments
// (or given as the explicit plugin file) with their NVIDIA libraries, or,
// when there is none, how to get one.
func (c *checker) jax() Finding {
	f := Finding{ID: "jax"}
	inv := c.inv
	explicit := inv.PluginFile != ""
	if explicit {
		f.Evidence = append(f.Evidence, fmt.Sprintf("explicit plugin file %s (--plugin): the Python environments were not searched", inv.PluginFile))
	} else if v, ok := c.getenv("PJRT_PLUGIN_LIBRARY_PATH"); ok && len(inv.PythonEnvs) == 0 {
		f.Evidence = append(f.Evidence, fmt.Sprintf("PJRT_PLUGIN_LIBRARY_PATH=%q replaces discovery: the Python environments were not searched", v))
	}
	for _, e := range inv.PythonEnvs {
		f.Evidence = append(f.Evidence, describeEnv(e))
	}
	var jax []device.Plugin
	for _, p := range inv.Plugins {
		if p.Libs != nil {
			jax = append(jax, p)
		}
	}
	switch {
	case !inv.XLACompiled:
		f.Status, f.Title = Skip, "not checked: this binary cannot load plugins (see build)"
		return f
	case explicit && inv.PluginFileErr != "":
		f.Status, f.Title = Skip, "the explicit plugin file cannot be used (see plugins)"
		return f
	case len(jax) == 0:
		return c.noJAX(f)
	}
	gpuUsable := false
	for _, p := range inv.Plugins {
		gpuUsable = gpuUsable || p.Class() == "gpu" && p.Probed && p.Err == "" && len(p.Devices) > 0
	}
	f.Status = OK
	var names, problems, fixes []string
	for _, p := range jax {
		l := p.Libs
		names = append(names, fmt.Sprintf("%s in %s", p.Name, l.SitePackages))
		f.Evidence = append(f.Evidence, fmt.Sprintf("JAX CUDA plugin %s: %s (%s)", p.Name, p.Path, p.Source))
		if len(l.Dirs) == 0 {
			f.Evidence = append(f.Evidence, fmt.Sprintf("NVIDIA libraries: no %s/*/lib folder", l.NVIDIADir))
		} else {
			pkgs := make([]string, len(l.Dirs))
			for i, d := range l.Dirs {
				pkgs[i] = filepath.Base(filepath.Dir(d))
			}
			f.Evidence = append(f.Evidence, fmt.Sprintf("NVIDIA libraries in %s: %s", l.NVIDIADir, strings.Join(pkgs, ", ")))
		}
		if len(l.OnLDPath) > 0 {
			f.Evidence = append(f.Evidence, "found on LD_LIBRARY_PATH instead: "+strings.Join(l.OnLDPath, ", "))
		}
		if len(l.Preloaded) > 0 {
			base := make([]string, len(l.Preloaded))
			for i, p := range l.Preloaded {
				base[i] = filepath.Base(p)
			}
			f.Evidence = append(f.Evidence, "loaded before the plugin, each after those it needs: "+strings.Join(base, ", "))
		}
		if len(l.PreloadErrors) > 0 {
			f.Evidence = append(f.Evidence, "could not be loaded: "+strings.Join(l.PreloadErrors, "; "))
			problems = append(problems, fmt.Sprintf("%d NVIDIA libraries of plugin %s could not be loaded", len(l.PreloadErrors), p.Name))
			fixes = append(fixes, fmt.Sprintf("reinstall them: `%s -m pip install -U --force-reinstall \"jax[cuda%s]\"`", l.Interpreter(), l.CUDA))
			f.Status = worse(f.Status, Warn)
		}
		if len(l.Missing) > 0 {
			problems = append(problems, fmt.Sprintf("NVIDIA libraries missing next to plugin %s: %s", p.Name, strings.Join(l.Missing, ", ")))
			fixes = append(fixes, fmt.Sprintf("install them in that environment: `%s -m pip install -U \"jax[cuda%s]\"` installs the nvidia-*-cu%s packages beside the plugin; or, with CUDA %s installed on the system, put its library folders on LD_LIBRARY_PATH before starting gotrain (a running process cannot change it)", l.Interpreter(), l.CUDA, l.CUDA, l.CUDA))
			f.Status = worse(f.Status, orFail(c.want == "gpu" && !gpuUsable))
		}
		if l.CUDADataDir != "" {
			f.Evidence = append(f.Evidence, fmt.Sprintf("ptxas and libdevice: %s (gotrain sets --xla_gpu_cuda_data_dir to it unless XLA_FLAGS sets it)", l.CUDADataDir))
		} else {
			problems = append(problems, fmt.Sprintf("no CUDA compiler package beside plugin %s: XLA cannot find ptxas and libdevice", p.Name))
			fixes = append(fixes, fmt.Sprintf("`%s -m pip install -U nvidia-cuda-nvcc-cu%s` (jax[cuda%s] installs it), or set XLA_FLAGS=--xla_gpu_cuda_data_dir=<a CUDA installation>", l.Interpreter(), l.CUDA, l.CUDA))
			f.Status = worse(f.Status, Warn)
		}
	}
	prefix := ""
	if explicit {
		prefix = "explicit plugin file used: "
	}
	if len(problems) == 0 {
		f.Title = prefix + "JAX CUDA plugin " + strings.Join(names, "; ") + ", with its NVIDIA libraries"
		return f
	}
	f.Title = prefix + strings.Join(problems, "; ")
	f.Fix = strings.Join(fixes, "; ")
	return f
}

// noJAX finishes the jax finding when no JAX CUDA plugin was found.
func (c *checker) noJAX(f Finding) Finding {
	inv := c.inv
	if inv.PluginFile != "" {
		f.Status = OK
		f.Title = fmt.Sprintf("explicit plugin file used: %s (not in JAX's layout, so no Python environment's libraries are loaded for it)", inv.PluginFile)
		return f
	}
	var gpu []string
	for _, p := range inv.Plugins {
		if p.Class() == "gpu" {
			gpu = append(gpu, p.Name)
		}
	}
	if len(gpu) > 0 {
		f.Status = OK
		f.Title = fmt.Sprintf("no JAX CUDA plugin found; not needed: CUDA plugin %s is there", strings.Join(gpu, ", "))
		return f
	}
	f.Status = orFail(c.want == "gpu")
	f.Fix = "install JAX with its CUDA plugin and NVIDIA libraries in the Python environment you use, `python3 -m pip install -U \"jax[cuda12]\"` (\"jax[cuda13]\" for CUDA 13), and gotrain finds the plugin there; or install go-xla's CUDA plugin with `gotrain setup xla --cuda`"
	if v, ok := c.getenv("PJRT_PLUGIN_LIBRARY_PATH"); ok && len(inv.PythonEnvs) == 0 {
		f.Title = "no JAX CUDA plugin: the Python environments were not searched, as PJRT_PLUGIN_LIBRARY_PATH is set"
		f.Fix += fmt.Sprintf("; with PJRT_PLUGIN_LIBRARY_PATH set (%q), add JAX's plugin folder (<site-packages>/jax_plugins/xla_cuda12) to it or unset it", v)
	} else {
		f.Title = fmt.Sprintf("no JAX CUDA plugin found in %d Python environment(s)", len(inv.PythonEnvs))
	}
	if len(inv.NVIDIA.GPUs) == 0 && c.want != "gpu" {
		f.Fix += "; on a machine without an NVIDIA GPU there is nothing to fix"
	}
	return f
}

// describeEnv is the evidence line of one Python environment.
func describeEnv(e device.PythonEnv) string {
	s := e.From
	if e.Python != "" && e.Python != e.From {
		s += " (" + e.Python + ")"
	}
	switch {
	case e.Err != "":
		return s + ": " + e.Err
	case len(e.SitePackages) == 0:
		return s + ": no site-packages folder"
	}
	s += ": site-packages " + strings.Join(e.SitePackages, ", ")
	if len(e.Plugins) == 0 {
		return s + "; no JAX CUDA plugin"
	}
	return s + "; JAX CUDA plugin " + strings.Join(e.Plugins, ", ")
}

// pjrtAPI reports each plugin's PJRT C API version against the version
// GoMLX's loader speaks, as gotrain read it before loading the plugin.
func (c *checker) pjrtAPI() Finding {
	f := Finding{ID: "pjrt_api"}
	inv := c.inv
	f.Evidence = append(f.Evidence, "gotrain's loader speaks PJRT C API "+inv.PJRTLoader)
	switch {
	case !inv.XLACompiled:
		f.Status, f.Title = Skip, "not an XLA build: plugin versions cannot be read (see build)"
		return f
	case len(inv.Plugins) == 0:
		f.Status, f.Title = Skip, "no PJRT plugins (see plugins)"
		return f
	}
	f.Status = OK
	var problems, fixes []string
	read := 0
	for _, p := range inv.Plugins {
		a := p.PJRTAPI
		switch {
		case a == nil:
			f.Evidence = append(f.Evidence, fmt.Sprintf("%s (%s): not read (not probed)", p.Name, p.Path))
			continue
		case a.Compat == device.PJRTUnknown:
			f.Evidence = append(f.Evidence, fmt.Sprintf("%s (%s): unknown: %s (see plugins)", p.Name, p.Path, a.Err))
			continue
		}
		read++
		f.Evidence = append(f.Evidence, fmt.Sprintf("%s (%s): PJRT C API %s", p.Name, p.Path, a))
		if problem := device.PJRTAPIProblem(p); problem != "" {
			problems = append(problems, problem)
			fixes = append(fixes, device.PJRTAPIFix(p))
			if a.Refused() {
				f.Status = Fail
			} else {
				f.Status = worse(f.Status, Warn)
			}
		}
	}
	switch {
	case len(problems) > 0:
		f.Title = strings.Join(problems, "; ")
		f.Fix = strings.Join(fixes, "; ")
	case read == 0:
		f.Status, f.Title = Skip, "no plugin's version could be read (see plugins)"
	default:
		f.Title = fmt.Sprintf("%d plugin(s) speak PJRT C API %s, as gotrain's loader does", read, device.LoaderPJRTAPI())
	}
	return f
}

// worse returns the more serious of two statuses (fail, warn, ok).
func worse(a, b Status) Status {
	rank := map[Status]int{Skip: 0, OK: 1, Warn: 2, Fail: 3}
	if rank[b] > rank[a] {
		return b
	}
	return a
}
