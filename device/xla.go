//go:build ((linux && amd64) || darwin) && !noxla

package device

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gomlx/go-xla/pkg/installer"
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/xla"
)

const (
	xlaCompiled = true
	noXLAReason = ""
)

func init() {
	// Never download plugins behind the user's back: gotrain installs them
	// only through `gotrain setup xla`.
	xla.EnableAutoInstall(false)
}

// xlaConfig is the GoMLX backend configuration that loads the plugin at path.
func xlaConfig(p Plugin) string {
	cfg := "xla:" + p.Path
	if p.Class() == "cpu" {
		cfg += ",shared_buffers"
	}
	return cfg
}

// prepareCUDAEnv sets XLA_FLAGS' CUDA data dir (where XLA finds ptxas and
// libdevice) before a CUDA plugin is loaded, unless XLA_FLAGS sets it
// already: for a JAX plugin, its environment's nvidia/cuda_nvcc (none when
// the environment has no nvcc package); for go-xla's layout, the nvidia/
// folder beside the plugin (otherwise go-xla writes a path of its own).
// XLA reads XLA_FLAGS with getenv when the plugin starts, and os.Setenv in
// a cgo binary sets the C environment, so the plugin sees it.
func prepareCUDAEnv(p Plugin) {
	if p.Class() != "gpu" {
		return
	}
	if p.Libs != nil && os.Getenv("GOPJRT_CUDA_CHECKS") == "" {
		// go-xla looks for ../nvidia beside a CUDA plugin and warns when it
		// is missing, as it is in JAX's layout (site-packages/nvidia is two
		// folders up): its warning would send users after the wrong folder.
		_ = os.Setenv("GOPJRT_CUDA_CHECKS", "0")
	}
	flags := os.Getenv("XLA_FLAGS")
	if strings.Contains(flags, "--xla_gpu_cuda_data_dir") {
		return
	}
	dir := filepath.Join(filepath.Dir(filepath.Dir(p.Path)), "nvidia")
	if _, err := os.Stat(dir); err != nil {
		dir = filepath.Join(filepath.Dir(p.Path), "nvidia")
	}
	if p.Libs != nil {
		if dir = p.Libs.CUDADataDir; dir == "" {
			return
		}
	}
	_ = os.Setenv("XLA_FLAGS", strings.TrimSpace(flags+" --xla_gpu_cuda_data_dir="+dir))
}

// preparePlugin does what gotrain does before GoMLX's loader sees a
// plugin: it loads the NVIDIA libraries of a JAX plugin's environment
// (preloadLibraries; a clash with another environment's, loaded first,
// refuses the plugin), reads the plugin's PJRT C API version (readPJRTAPI)
// and records both in p. It returns an error when the plugin cannot be
// loaded, is not a PJRT plugin, or speaks a PJRT C API version the loader
// cannot use (the error gives both versions and a fix): GoMLX's loader
// checks none of this, and calling a plugin of another ABI can crash the
// process instead of failing.
func preparePlugin(p *Plugin) error {
	if p.Libs != nil {
		preloadLibraries(p.Libs, p.Path)
		if c := p.Libs.Conflicts; len(c) > 0 {
			return fmt.Errorf("plugin %s: its NVIDIA libraries clash with another environment's, loaded first in this process (%s; %d in all): the plugin would run on that environment's copies; use one environment: --plugin %s, or PJRT_PLUGIN_LIBRARY_PATH", p.Path, c[0], len(c), p.Path)
		}
	}
	api, err := readPJRTAPI(p.Path)
	p.PJRTAPI = &api
	if err != nil {
		return err
	}
	if api.Refused() {
		return refusal(*p)
	}
	return nil
}

// openXLA creates a GoMLX XLA backend for the plugin (loadXLA).
func openXLA(p Plugin) (backends.Backend, error) { return loadXLA(&p) }

// loadXLA prepares the plugin (preparePlugin, prepareCUDAEnv) and creates
// a GoMLX XLA backend on it, turning panics from a broken plugin into
// errors.
func loadXLA(p *Plugin) (b backends.Backend, err error) {
	defer func() {
		if r := recover(); r != nil {
			b, err = nil, fmt.Errorf("loading PJRT plugin %s panicked: %v", p.Path, r)
		}
	}()
	if err := preparePlugin(p); err != nil {
		return nil, err
	}
	prepareCUDAEnv(*p)
	return backends.NewWithConfig(xlaConfig(*p))
}

// probePlugin loads a plugin and records its PJRT C API version, its
// libraries and its devices.
func probePlugin(p *Plugin) {
	p.Probed = true
	b, err := loadXLA(p)
	if err != nil {
		p.Err = firstLine(err.Error())
		return
	}
	defer b.Finalize()
	for i := 0; i < b.NumDevices(); i++ {
		p.Devices = append(p.Devices, XLADevice{Index: i, Description: b.DeviceDescription(backends.DeviceNum(i))})
	}
	p.Version = b.Description()
}

// runInstaller downloads the plugins with go-xla's installer.
func runInstaller(dest string, cuda bool) error {
	if err := installer.CPUAutoInstall(dest, true, installer.Normal); err != nil {
		return err
	}
	if cuda {
		return installer.CudaInstall("cuda13", "latest", dest, true, installer.Normal)
	}
	return nil
}
