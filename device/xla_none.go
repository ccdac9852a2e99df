//go:build !(((linux && amd64) || darwin) && !noxla)

package device

import (
	"errors"

	"github.com/gomlx/gomlx/backends"
)

const (
	xlaCompiled = false
	noXLAReason = "this binary was built with -tags noxla (pure Go): it cannot load PJRT plugins"
)

func xlaConfig(p Plugin) string { return "xla:" + p.Path }

func openXLA(Plugin) (backends.Backend, error) { return nil, errors.New(noXLAReason) }

func probePlugin(p *Plugin) { p.Probed, p.Err = true, noXLAReason }

func runInstaller(string, bool) error { return errors.New(noXLAReason) }
