package device

import (
	"fmt"
	"strings"
	"sync"

	"github.com/gomlx/gomlx/backends"
	_ "github.com/gomlx/gomlx/backends/simplego" // registers the "go" backend

	"github.com/gotrain/gotrain/cpubackend" // registers the "cpu" backend
	"github.com/gotrain/gotrain/internal/fastgrad"
)

// Backend configurations, one per kind of engine. Every GoMLX backend gotrain
// opens is opened by an Engine with one of these (or, for XLA, with the
// plugin's path), so "cpu" and "go" mean the same thing in every command.
const (
	// CPUConfig runs graphs on gotrain's own CPU backend (package
	// cpubackend), for device "cpu": operations one at a time, each using
	// every core through the SGEMM pool.
	CPUConfig = cpubackend.BackendName + ":ops_sequential"
	// SimpleGoConfig runs graphs on GoMLX's pure-Go simplego, for device
	// "go": operations one at a time (each still uses the cores), which
	// avoids simplego v0.26's worker-pool deadlock when several operations
	// are ready at once.
	SimpleGoConfig = "go:ops_sequential"
)

// Request is what a command asks of Select: the --device text and how the
// command's workload constrains the choice.
type Request struct {
	// Device is the --device value: auto, cpu, go, gpu, gpu:N, cuda:N,
	// tpu, tpu:N, xla:<plugin> or xla:<plugin>:N ("" means auto).
	Device string
	// Fallback lets an explicit request that cannot be met continue on the
	// next best device; Engine.Warning then says why, and callers print it.
	Fallback bool
	// PreferNative makes auto choose gotrain's native Go code over XLA's
	// CPU plugin when there is no accelerator: for workloads whose native
	// code is faster than any graph backend on a CPU (forests, signal
	// features).
	PreferNative bool
	// Accept, when set, is the workload's own test of a device: it returns
	// why the workload cannot run there, or nil. A rejected device is
	// recorded among the attempts with that reason, as if it were not
	// available (auto and --fallback go on to the next candidate).
	Accept func(Device) error
	// PluginFile is an explicit PJRT plugin file to use (for example JAX's
	// <site-packages>/jax_plugins/xla_cuda12/xla_cuda_plugin.so): when set,
	// discovery considers that plugin only (DiscoverOptions.PluginFile).
	// It is ignored when Inventory is given.
	PluginFile string
	// Inventory is what was discovered about the machine; nil discovers it
	// (probing plugins only when the request can need XLA).
	Inventory *Inventory
}

// UnavailableError is the error of Select when the request cannot be met.
// It wraps ErrUnavailable and carries the resolution: every candidate tried
// and why it was rejected.
type UnavailableError struct {
	// Resolution has the request and the attempts.
	Resolution Resolution
	msg        string
}

func (e *UnavailableError) Error() string { return e.msg }

// Unwrap returns ErrUnavailable.
func (e *UnavailableError) Unwrap() error { return ErrUnavailable }

// Engine is where a command's work runs: gotrain's native Go code on the
// host CPU (graph work on the host then runs on gotrain's backend "cpu"),
// GoMLX's pure-Go simplego, or a device of an XLA PJRT plugin. It is the
// only thing in gotrain that opens a GoMLX backend. An Engine is safe for
// concurrent use; Close releases its backend.
type Engine struct {
	// Resolution records the request, the device chosen, every candidate
	// tried and why each was rejected.
	Resolution Resolution

	mu      sync.Mutex
	backend backends.Backend
	closed  bool
}

// Select turns a --device request into an Engine. It is the one place that
// parses a device spec and resolves it against the machine: an explicit
// device that cannot be used is an error (an *UnavailableError naming every
// reason) unless req.Fallback is set. No backend is opened until
// Engine.Backend is called.
func Select(req Request) (*Engine, error) {
	text := req.Device
	if strings.TrimSpace(text) == "" {
		text = "auto"
	}
	spec, err := ParseSpec(text)
	if err != nil {
		return nil, err
	}
	var inv Inventory
	if req.Inventory != nil {
		inv = *req.Inventory
	} else {
		needXLA := spec.Kind != CPU && spec.Kind != Go
		inv = Discover(DiscoverOptions{Probe: needXLA, SkipNVIDIA: !needXLA, SkipPython: !needXLA, PluginFile: req.PluginFile})
	}
	res, err := resolve(spec, inv, Options{Fallback: req.Fallback, PreferNative: req.PreferNative}, req.Accept)
	if err != nil {
		return nil, &UnavailableError{Resolution: res, msg: err.Error()}
	}
	return &Engine{Resolution: res}, nil
}

// SelectEach returns one engine for each --device form in specs, resolved
// against one discovery of the machine, without duplicates (the first of
// two forms naming the same device wins). The form "all" stands for every
// available device, in the order of List. A form that cannot be used is an
// error with the reason; Fallback and Accept of req apply to every form.
func SelectEach(specs []string, req Request) ([]*Engine, error) {
	var inv Inventory
	if req.Inventory != nil {
		inv = *req.Inventory
	} else {
		inv = Discover(DiscoverOptions{Probe: true, PluginFile: req.PluginFile})
	}
	r := req
	r.Inventory = &inv
	var out []*Engine
	seen := map[string]bool{}
	add := func(e *Engine) {
		if !seen[e.Name()] {
			seen[e.Name()] = true
			out = append(out, e)
		}
	}
	for _, s := range specs {
		s = strings.TrimSpace(s)
		if strings.EqualFold(s, "all") {
			for _, en := range List(inv) {
				if en.Available {
					r.Device = en.Name
					if e, err := Select(r); err == nil {
						add(e)
					}
				}
			}
			continue
		}
		r.Device = s
		e, err := Select(r)
		if err != nil {
			return nil, err
		}
		add(e)
	}
	return out, nil
}

// CloseAll closes each of engines (Close; nil ones are skipped), as a
// deferred call after SelectEach.
func CloseAll(engines []*Engine) {
	for _, e := range engines {
		if e != nil {
			e.Close()
		}
	}
}

// Open selects the engine for a --device value (no fallback) and opens its
// backend: the shortest way for a Go program to get a GoMLX backend on the
// device a user named. Close the engine when done; it closes the backend.
func Open(device string) (*Engine, backends.Backend, error) {
	return WithBackend(Select(Request{Device: device}))
}

// WithBackend takes Select's results and opens the engine's backend,
// closing the engine if that fails: e, b, err := WithBackend(Select(req)).
func WithBackend(e *Engine, err error) (*Engine, backends.Backend, error) {
	if err != nil {
		return nil, nil, err
	}
	b, err := e.Backend()
	if err != nil {
		e.Close()
		return nil, nil, err
	}
	return e, b, nil
}

// Device is the device chosen.
func (e *Engine) Device() Device { return e.Resolution.Device }

// Name is the canonical name of the device chosen ("cpu", "go",
// "xla:cuda:0", ...).
func (e *Engine) Name() string { return e.Resolution.Device.Name }

// Native tells whether the engine is gotrain's native Go code on the host
// CPU: workloads that have native code run it; graph work runs on the
// backend Backend opens (gotrain's "cpu").
func (e *Engine) Native() bool { return e.Resolution.Device.Kind == Native }

// Accelerator tells whether the device is a GPU or TPU.
func (e *Engine) Accelerator() bool { return e.Resolution.Device.Accelerator() }

// Warning is the one line to print when an explicit request fell back to
// another device ("" when it did not).
func (e *Engine) Warning() string {
	if e.Resolution.FellBack {
		return e.Resolution.Warning
	}
	return ""
}

// DeviceNum is the device number within the backend, for the DeviceNum
// options of the graph packages (backends.DeviceNum(e.DeviceNum()) for
// GoMLX's executions).
func (e *Engine) DeviceNum() int { return e.Resolution.Device.Index }

// Backend opens, on the first call, the GoMLX backend that runs graph work
// on the engine's device and returns it; later calls return the same
// backend. Native engines open gotrain's CPU backend (CPUConfig), "go"
// opens simplego (SimpleGoConfig) and XLA devices their plugin.
func (e *Engine) Backend() (backends.Backend, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, fmt.Errorf("device %s: engine is closed", e.Name())
	}
	if e.backend == nil {
		b, err := open(e.Resolution.Device)
		if err != nil {
			return nil, err
		}
		e.backend = b
	}
	return e.backend, nil
}

// Close releases the backend, if one was opened. It is safe to call more
// than once.
func (e *Engine) Close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.backend != nil {
		e.backend.Finalize()
		e.backend = nil
	}
	e.closed = true
}

// open creates the GoMLX backend that runs graph workloads for d, with the
// one configuration of its kind. On the pure-Go backends it first installs
// the DotGeneral-based gradients of package fastgrad (GoMLX's own are 17x
// slower there).
func open(d Device) (backends.Backend, error) {
	switch d.Kind {
	case Native, SimpleGo:
		fastgrad.Register()
		return newBackend(d.BackendConfig())
	case XLAKind:
		if d.Plugin == nil {
			return nil, fmt.Errorf("device %s: no plugin", d.Name)
		}
		b, err := openXLA(*d.Plugin)
		if err != nil {
			return nil, fmt.Errorf("device %s: %w", d.Name, err)
		}
		return b, nil
	}
	return nil, fmt.Errorf("device %s: unknown kind %q", d.Name, d.Kind)
}

func newBackend(config string) (b backends.Backend, err error) {
	defer func() {
		if r := recover(); r != nil {
			b, err = nil, fmt.Errorf("creating GoMLX backend %q: %v", config, r)
		}
	}()
	return backends.NewWithConfig(config)
}

// SelectTimed returns the engines a benchmark times, as `gotrain bench`
// does: the native CPU first (the reference), then the device of the
// --device form spec when it is neither "" nor auto, else each form of
// the comma-separated list ("" means all: every available device). The
// engines come from SelectEach.
func SelectTimed(spec, list string, req Request) ([]*Engine, error) {
	specs := []string{"cpu"}
	switch s := strings.TrimSpace(spec); {
	case s != "" && !strings.EqualFold(s, "auto"):
		specs = append(specs, s)
	case strings.TrimSpace(list) == "":
		specs = append(specs, "all")
	default:
		specs = append(specs, strings.Split(list, ",")...)
	}
	return SelectEach(specs, req)
}
