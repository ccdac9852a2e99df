package device

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"

	"github.com/gotrain/gotrain/internal/nvsmi"
)

// Inventory is everything discovery found out about this machine. It is plain
// data, so resolution can be tested with fake inventories.
type Inventory struct {
	// XLACompiled tells whether this binary can load PJRT plugins.
	XLACompiled bool `json:"xla_compiled"`
	// NoXLAReason says why XLA is not compiled in (for example "built with -tags noxla").
	NoXLAReason string `json:"no_xla_reason,omitempty"`
	// SearchPaths are the folders searched for PJRT plugins, in order
	// (none when an explicit plugin file was given).
	SearchPaths []string `json:"search_paths"`
	// PluginFile is the explicit plugin file (DiscoverOptions.PluginFile):
	// when set, it is the only plugin considered.
	PluginFile string `json:"plugin_file,omitempty"`
	// PluginFileErr says why the explicit plugin file cannot be used.
	PluginFileErr string `json:"plugin_file_error,omitempty"`
	// PythonEnvs are the Python environments searched for JAX's CUDA
	// plugin (none when PJRT_PLUGIN_LIBRARY_PATH or an explicit plugin
	// file replaces discovery).
	PythonEnvs []PythonEnv `json:"python_envs,omitempty"`
	// PJRTLoader is the PJRT C API version GoMLX's loader speaks, with the
	// loader's name: "0.83 (go-xla v0.1.4)".
	PJRTLoader string `json:"pjrt_loader"`
	// Plugins are the PJRT plugin files found, with their probe results.
	Plugins []Plugin `json:"plugins"`
	// NVIDIA describes the NVIDIA driver and GPUs, as nvidia-smi reports them.
	NVIDIA NVIDIAInfo `json:"nvidia"`
	// Env holds the environment variables that change which devices are seen.
	Env map[string]string `json:"env,omitempty"`
}

// Plugin is one PJRT plugin file.
type Plugin struct {
	// Name is the plugin name taken from its file name (pjrt_c_api_<name>_plugin.so).
	Name string `json:"name"`
	// Path is the plugin's absolute path.
	Path string `json:"path"`
	// Probed is true when the plugin was loaded to count its devices.
	Probed bool `json:"probed"`
	// Err is the error met while loading it, if any.
	Err string `json:"error,omitempty"`
	// Devices are the addressable devices the plugin reported.
	Devices []XLADevice `json:"devices"`
	// Version is the description of the backend GoMLX opened on the
	// plugin (its platform and PJRT C API version), when probed.
	Version string `json:"version,omitempty"`
	// Source says where it was found: SourceSearchPath, SourceJAX or
	// SourceExplicit.
	Source string `json:"source,omitempty"`
	// PJRTAPI is the PJRT C API version gotrain read from the plugin
	// before loading it (when probed; unknown in a pure-Go build).
	PJRTAPI *PJRTAPI `json:"pjrt_api,omitempty"`
	// Libs are the NVIDIA libraries of the Python environment of a JAX
	// CUDA plugin (nil for other plugins).
	Libs *PluginLibs `json:"nvidia_libraries,omitempty"`
}

// XLADevice is one device of a PJRT plugin.
type XLADevice struct {
	Index       int    `json:"index"`
	Description string `json:"description"`
}

// Class returns "gpu", "tpu" or "cpu" for the plugin's hardware class.
func (p Plugin) Class() string { return pluginClass(p.Name) }

func pluginClass(name string) string {
	n := strings.ToLower(filepath.Base(name))
	switch {
	case strings.HasPrefix(n, "cuda"), strings.HasPrefix(n, "rocm"), strings.Contains(n, "cuda"):
		return "gpu"
	case strings.HasPrefix(n, "tpu"), strings.Contains(n, "tpu"):
		return "tpu"
	case strings.HasPrefix(n, "cpu"):
		return "cpu"
	}
	return "other"
}

// NVIDIAInfo is what nvidia-smi reported.
type NVIDIAInfo = nvsmi.Info

// NVIDIAGPU is one NVIDIA GPU as nvidia-smi sees it.
type NVIDIAGPU = nvsmi.GPU

// EnvVars are the environment variables that influence device discovery.
var EnvVars = []string{"PJRT_PLUGIN_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "XLA_FLAGS", "GOMLX_BACKEND", "LD_LIBRARY_PATH", NoAutoInstallEnv, "VIRTUAL_ENV", "CONDA_PREFIX"}

// NoAutoInstallEnv is GoMLX's switch that stops it from downloading plugins.
const NoAutoInstallEnv = "GOMLX_NO_AUTO_INSTALL"

// DiscoverOptions control discovery.
type DiscoverOptions struct {
	// Probe loads each plugin found to count its devices (XLA builds only).
	Probe bool
	// SkipNVIDIA skips running nvidia-smi.
	SkipNVIDIA bool
	// SkipPython skips asking the Python environments for JAX's CUDA plugin.
	SkipPython bool
	// PluginFile is an explicit PJRT plugin file: when set, it is the only
	// plugin considered, and neither the plugin folders nor the Python
	// environments are searched.
	PluginFile string
}

// Discover inspects this machine: compiled-in backends, PJRT plugins and
// NVIDIA GPUs. It never downloads anything. The plugins are the explicit
// plugin file when one is given; else the plugin files in the search
// folders (PluginSearchPaths), then, unless PJRT_PLUGIN_LIBRARY_PATH
// replaces the default folders, JAX's CUDA plugins in the Python
// environments (FindPythonEnvs, FindJAXPlugins). The first plugin of each
// name wins. Probing reads each plugin's PJRT C API version, then loads
// it to count its devices, unless its version is one GoMLX's loader
// cannot use.
func Discover(opts DiscoverOptions) Inventory {
	inv := Inventory{
		XLACompiled: xlaCompiled,
		NoXLAReason: noXLAReason,
		PJRTLoader:  LoaderPJRTAPI() + " (" + PJRTLoader + ")",
		Env:         map[string]string{},
	}
	for _, name := range EnvVars {
		if v, ok := os.LookupEnv(name); ok {
			inv.Env[name] = v
		}
	}
	if !opts.SkipNVIDIA {
		inv.NVIDIA = QueryNVIDIA(context.Background())
	}
	switch _, replaced := os.LookupEnv("PJRT_PLUGIN_LIBRARY_PATH"); {
	case opts.PluginFile != "":
		inv.PluginFile = opts.PluginFile
		if p, err := ExplicitPlugin(opts.PluginFile); err != nil {
			inv.PluginFileErr = err.Error()
		} else {
			inv.Plugins = []Plugin{p}
		}
	default:
		inv.SearchPaths = PluginSearchPaths()
		inv.Plugins = FindPlugins(inv.SearchPaths)
		if !replaced && !opts.SkipPython {
			inv.PythonEnvs = FindPythonEnvs(context.Background())
			inv.Plugins = mergePlugins(inv.Plugins, FindJAXPlugins(inv.PythonEnvs))
		}
	}
	switch {
	case opts.Probe && xlaCompiled:
		for i := range inv.Plugins {
			probePlugin(&inv.Plugins[i])
		}
	case !xlaCompiled:
		for i := range inv.Plugins {
			a := unknownPJRTAPI("a pure-Go build cannot call the plugin's GetPjrtApi")
			inv.Plugins[i].PJRTAPI = &a
		}
	}
	return inv
}

// mergePlugins appends to ps the plugins of more whose name and path are
// not taken yet.
func mergePlugins(ps, more []Plugin) []Plugin {
	for _, p := range more {
		if !slices.ContainsFunc(ps, func(q Plugin) bool { return q.Name == p.Name || q.Path == p.Path }) {
			ps = append(ps, p)
		}
	}
	return ps
}

// systemPluginDirs are the machine-wide plugin folders of the default
// search (a variable so that tests can hide a machine's plugins).
var systemPluginDirs = []string{"/usr/local/lib/go-xla", "/usr/local/lib/go-xla/nvidia"}

// PluginSearchPaths returns the folders GoMLX searches for PJRT plugins:
// $PJRT_PLUGIN_LIBRARY_PATH when set, else ~/.local/lib/go-xla[/nvidia],
// /usr/local/lib/go-xla[/nvidia] and the absolute entries of LD_LIBRARY_PATH.
func PluginSearchPaths() []string {
	if v, ok := os.LookupEnv("PJRT_PLUGIN_LIBRARY_PATH"); ok {
		return slices.DeleteFunc(strings.Split(v, ":"), func(p string) bool { return p == "" })
	}
	var paths []string
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, ".local", "lib", "go-xla")
		paths = append(paths, p, filepath.Join(p, "nvidia"))
	}
	paths = append(paths, systemPluginDirs...)
	for _, p := range strings.Split(os.Getenv("LD_LIBRARY_PATH"), ":") {
		if p != "" && filepath.IsAbs(p) {
			paths = append(paths, p)
		}
	}
	return paths
}

var pluginFileRes = []*regexp.Regexp{
	regexp.MustCompile(`^pjrt_c_api_(.+)_plugin\.(so|dylib|dll)$`),
	regexp.MustCompile(`^pjrt[-_]plugin[-_](.+)\.(so|dylib|dll)$`),
}

// PluginNameFromFile returns the plugin name encoded in a PJRT plugin file
// name, or "" when the name does not follow GoMLX's patterns.
func PluginNameFromFile(path string) string {
	base := filepath.Base(path)
	for _, re := range pluginFileRes {
		if m := re.FindStringSubmatch(base); m != nil {
			return m[1]
		}
	}
	return ""
}

// FindPlugins lists the PJRT plugin files in the given folders: files
// named as GoMLX names plugins, and JAX's CUDA plugin when a folder is its
// jax_plugins/xla_cudaNN folder (named cudaNN, with its environment's
// NVIDIA libraries). The first file of a given plugin name wins, as in
// GoMLX.
func FindPlugins(paths []string) []Plugin {
	var out []Plugin
	seen := map[string]bool{}
	ldPath := os.Getenv("LD_LIBRARY_PATH")
	for _, dir := range paths {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			path := filepath.Join(dir, e.Name())
			_, _, jax := JAXLayout(path)
			if PluginNameFromFile(e.Name()) == "" && !jax {
				continue
			}
			p := describePlugin(path, SourceSearchPath, ldPath)
			if seen[p.Name] {
				continue
			}
			seen[p.Name] = true
			out = append(out, p)
		}
	}
	return out
}

// QueryNVIDIA asks nvidia-smi for the driver version and the GPUs. It returns
// an NVIDIAInfo with Err set when nvidia-smi is absent or fails.
func QueryNVIDIA(ctx context.Context) NVIDIAInfo { return nvsmi.Query(ctx) }

// ParseNVIDIASMI parses the CSV that nvidia-smi prints (see nvsmi.Parse).
func ParseNVIDIASMI(text string) ([]NVIDIAGPU, string, error) { return nvsmi.Parse(text) }

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// HostInfo is a one-line description of the host CPU.
func HostInfo() string {
	model := ""
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "model name") {
				_, model, _ = strings.Cut(l, ":")
				model = strings.TrimSpace(model)
				break
			}
		}
	}
	if model == "" {
		model = runtime.GOARCH
	}
	return fmt.Sprintf("%s, %d logical CPUs", model, runtime.NumCPU())
}
