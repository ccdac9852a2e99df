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

// prepareCUDAEnv sets XLA_FLAGS' CUDA data dir to the nvidia/ folder beside
// the plugin before it is loaded; otherwise go-xla writes a path of its own.
func prepareCUDAEnv(p Plugin) {
	if p.Class() != "gpu" {
		return
	}
	flags := os.Getenv("XLA_FLAGS")
	if strings.Contains(flags, "--xla_gpu_cuda_data_dir") {
		return
	}
	dir := filepath.Join(filepath.Dir(filepath.Dir(p.Path)), "nvidia")
	if _, err := os.Stat(dir); err != nil {
		dir = filepath.Join(filepath.Dir(p.Path), "nvidia")
	}
	_ = os.Setenv("XLA_FLAGS", strings.TrimSpace(flags+" --xla_gpu_cuda_data_dir="+dir))
}

// openXLA creates a GoMLX XLA backend for the plugin, turning panics from a
// broken plugin into errors.
func openXLA(p Plugin) (b backends.Backend, err error) {
	defer func() {
		if r := recover(); r != nil {
			b, err = nil, fmt.Errorf("loading PJRT plugin %s panicked: %v", p.Path, r)
		}
	}()
	prepareCUDAEnv(p)
	return backends.NewWithConfig(xlaConfig(p))
}

// probePlugin loads a plugin and records its devices.
func probePlugin(p *Plugin) {
	p.Probed = true
	b, err := openXLA(*p)
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
