package device

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"
)

// InstallOptions control InstallXLA.
type InstallOptions struct {
	// LibDir is the "lib" folder under which go-xla/ is created (default ~/.local/lib).
	LibDir string
	// CUDA also installs the CUDA plugin and NVIDIA libraries.
	CUDA bool
	// Force allows replacing an existing go-xla/nvidia folder.
	Force bool
	// Timeout bounds the network preflight check.
	Timeout time.Duration
	// Dial is the dialer used for the preflight (nil: net.Dialer).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// Hosts the plugin installer downloads from.
var (
	cpuPluginHost  = "github.com:443"
	cudaPluginHost = "pypi.org:443"
)

// ErrOffline is wrapped by InstallXLA's error when the download hosts cannot be reached.
var ErrOffline = errors.New("network unreachable")

// InstallXLA installs the XLA CPU PJRT plugin (and with opts.CUDA the CUDA one)
// into opts.LibDir/go-xla. It first checks, with a short timeout, that the
// download hosts can be reached, so that offline it fails fast with a clear
// message and never leaves a half-installed or deleted plugin folder behind.
func InstallXLA(ctx context.Context, opts InstallOptions) (string, error) {
	if !xlaCompiled {
		return "", errors.New("setup: " + noXLAReason + "; build gotrain without -tags noxla (cgo enabled) to use XLA plugins")
	}
	if opts.LibDir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("setup: finding home folder: %w", err)
		}
		opts.LibDir = filepath.Join(home, ".local", "lib")
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Second
	}
	if opts.Dial == nil {
		opts.Dial = (&net.Dialer{}).DialContext
	}
	dest := filepath.Join(opts.LibDir, "go-xla")
	nvidia := filepath.Join(dest, "nvidia")
	if opts.CUDA && !opts.Force {
		if _, err := os.Stat(nvidia); err == nil {
			return "", fmt.Errorf("setup: %s already exists and the CUDA installer would delete it before downloading; rerun with --force to replace it", nvidia)
		}
	}
	hosts := []string{cpuPluginHost}
	if opts.CUDA {
		hosts = append(hosts, cudaPluginHost)
	}
	for _, h := range hosts {
		cctx, cancel := context.WithTimeout(ctx, opts.Timeout)
		conn, err := opts.Dial(cctx, "tcp", h)
		cancel()
		if err != nil {
			return "", fmt.Errorf("setup: %w: cannot reach %s (%v); the plugins are downloaded from there. Offline, copy a pjrt_c_api_<name>_plugin.so into %s or point PJRT_PLUGIN_LIBRARY_PATH at its folder", ErrOffline, h, err, dest)
		}
		_ = conn.Close()
	}
	if err := runInstaller(dest, opts.CUDA); err != nil {
		return "", fmt.Errorf("setup: installing into %s: %w", dest, err)
	}
	return dest, nil
}
