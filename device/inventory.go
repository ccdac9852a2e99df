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
	// SearchPaths are the folders searched for PJRT plugins, in order.
	SearchPaths []string `json:"search_paths"`
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
	// Version is the PJRT C API version the plugin reports, when probed.
	Version string `json:"version,omitempty"`
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
var EnvVars = []string{"PJRT_PLUGIN_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "XLA_FLAGS", "GOMLX_BACKEND", "LD_LIBRARY_PATH", NoAutoInstallEnv}

// NoAutoInstallEnv is GoMLX's switch that stops it from downloading plugins.
const NoAutoInstallEnv = "GOMLX_NO_AUTO_INSTALL"

// DiscoverOptions control discovery.
type DiscoverOptions struct {
	// Probe loads each plugin found to count its devices (XLA builds only).
	Probe bool
	// SkipNVIDIA skips running nvidia-smi.
	SkipNVIDIA bool
}

// Discover inspects this machine: compiled-in backends, PJRT plugins on the
// search path, and NVIDIA GPUs. It never downloads anything.
func Discover(opts DiscoverOptions) Inventory {
	inv := Inventory{
		XLACompiled: xlaCompiled,
		NoXLAReason: noXLAReason,
		SearchPaths: PluginSearchPaths(),
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
	inv.Plugins = FindPlugins(inv.SearchPaths)
	if opts.Probe && xlaCompiled {
		for i := range inv.Plugins {
			probePlugin(&inv.Plugins[i])
		}
	}
	return inv
}

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
	paths = append(paths, "/usr/local/lib/go-xla", "/usr/local/lib/go-xla/nvidia")
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

// FindPlugins lists the PJRT plugin files in the given folders. The first file
// of a given plugin name wins, as in GoMLX.
func FindPlugins(paths []string) []Plugin {
	var out []Plugin
	seen := map[string]bool{}
	for _, dir := range paths {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			name := PluginNameFromFile(e.Name())
			if name == "" || seen[name] {
				continue
			}
			seen[name] = true
			out = append(out, Plugin{Name: name, Path: filepath.Join(dir, e.Name())})
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
