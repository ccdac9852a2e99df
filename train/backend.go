package train

import (
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"

	"github.com/gotrain/gotrain/cpubackend"
	"github.com/gotrain/gotrain/internal/fastgrad"
)

// RegisterFastDotGradients replaces GoMLX's gradients of Dot and
// DotGeneral (broadcast, multiply, reduce-sum: fast on XLA, which fuses
// them, and slow on the pure-Go backends, which materialise the broadcast)
// by gradients written as DotGenerals, as JAX does. The values are the same
// up to rounding. It changes graph.VJPRegistration, a process-wide table, so
// it affects graphs built afterwards on every backend; it is safe to call
// more than once. Engines of package device call it when they open a
// pure-Go backend.
func RegisterFastDotGradients() { fastgrad.Register() }

// IsSimpleGo tells whether b is GoMLX's pure-Go backend.
func IsSimpleGo(b backends.Backend) bool {
	if b == nil {
		return false
	}
	_, ok := b.(*simplego.Backend)
	return ok
}

// IsPureGo tells whether b runs in this process's Go code on the host CPU:
// simplego or gotrain's cpu backend.
func IsPureGo(b backends.Backend) bool {
	if b == nil {
		return false
	}
	_, ok := b.(*cpubackend.Backend)
	return ok || IsSimpleGo(b)
}
