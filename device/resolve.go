package device

import (
	"errors"
	"fmt"
	"strings"
)

// Kind is the execution engine behind a resolved device.
type Kind string

const (
	// Native is gotrain's own Go code on the host CPU (graph workloads use
	// gotrain's GoMLX backend "cpu", package cpubackend).
	Native Kind = "native"
	// SimpleGo is GoMLX's pure-Go backend.
	SimpleGo Kind = "go"
	// XLAKind is a device of a PJRT plugin loaded by GoMLX's XLA backend.
	XLAKind Kind = "xla"
)

// Device is a device chosen by Resolve.
type Device struct {
	// Name is the canonical name, for example "cpu", "go" or "xla:cuda:0".
	Name string `json:"name"`
	// Kind is the engine that runs the work.
	Kind Kind `json:"kind"`
	// Class is "cpu", "gpu" or "tpu".
	Class string `json:"class"`
	// Plugin is the PJRT plugin, for XLA devices.
	Plugin *Plugin `json:"plugin,omitempty"`
	// Index is the device number within its backend.
	Index int `json:"index"`
	// Description is a human description of the device.
	Description string `json:"description"`
}

// Accelerator tells whether the device is a GPU or TPU.
func (d Device) Accelerator() bool { return d.Class == "gpu" || d.Class == "tpu" }

// BackendConfig is the GoMLX backend configuration an Engine opens for
// this device: CPUConfig for the native CPU, SimpleGoConfig for "go" and
// "xla:<plugin path>[,options]" for an XLA device.
func (d Device) BackendConfig() string {
	switch {
	case d.Kind == XLAKind && d.Plugin != nil:
		return xlaConfig(*d.Plugin)
	case d.Kind == SimpleGo:
		return SimpleGoConfig
	}
	return CPUConfig
}

// Attempt records one candidate considered by Resolve.
type Attempt struct {
	// Candidate is the device form tried, for example "gpu" or "xla:cpu".
	Candidate string `json:"candidate"`
	// OK is true for the candidate that was chosen.
	OK bool `json:"ok"`
	// Reason says why the candidate was rejected (empty when chosen).
	Reason string `json:"reason,omitempty"`
}

// Resolution is the result of resolving a Spec.
type Resolution struct {
	// Requested is the spec the user gave.
	Requested Spec `json:"-"`
	// RequestedText is Requested in canonical form.
	RequestedText string `json:"requested"`
	// Device is the device chosen.
	Device Device `json:"device"`
	// Attempts lists every candidate tried, in order.
	Attempts []Attempt `json:"attempts"`
	// FellBack is true when an explicit request could not be met and a fallback device was chosen.
	FellBack bool `json:"fell_back"`
	// Warning is the one line to print when FellBack is true.
	Warning string `json:"warning,omitempty"`
}

// Summary describes the choice and the rejected candidates in one line.
func (r Resolution) Summary() string {
	var rej []string
	for _, a := range r.Attempts {
		if !a.OK {
			rej = append(rej, a.Candidate+": "+a.Reason)
		}
	}
	s := fmt.Sprintf("device %s chose %s", r.RequestedText, r.Device.Name)
	if len(rej) > 0 {
		s += " (rejected " + strings.Join(rej, "; ") + ")"
	}
	return s
}

// Options control resolution.
type Options struct {
	// Fallback lets an explicit request that cannot be met continue on the next best device.
	Fallback bool
	// PreferNative makes auto choose the native CPU path over XLA's CPU plugin,
	// for workloads whose native code is faster than XLA on a CPU (forests).
	PreferNative bool
}

// ErrUnavailable is wrapped by the error Resolve returns when a request cannot be met.
var ErrUnavailable = errors.New("requested device is not available")

// resolve chooses the device for spec among what inv offers. An explicit
// request that cannot be met is an error naming every reason, unless
// opts.Fallback is set, in which case the next best device is returned with
// FellBack and Warning set. accept, when not nil, may reject a device that
// is available, with the workload's reason.
func resolve(spec Spec, inv Inventory, opts Options, accept func(Device) error) (Resolution, error) {
	res := Resolution{Requested: spec, RequestedText: spec.String()}
	try := func(c Spec) (Device, bool) {
		d, reason := check(c, inv)
		if reason == "" && accept != nil {
			if err := accept(d); err != nil {
				reason = err.Error()
			}
		}
		res.Attempts = append(res.Attempts, Attempt{Candidate: c.String(), OK: reason == "", Reason: reason})
		return d, reason == ""
	}
	chain := autoChain(opts)
	if spec.Kind == Auto {
		for _, c := range chain {
			if d, ok := try(c); ok {
				res.Device = d
				return res, nil
			}
		}
		return res, fmt.Errorf("device: %w: no device usable (%s)", ErrUnavailable, reasons(res.Attempts))
	}
	if d, ok := try(spec); ok {
		res.Device = d
		return res, nil
	}
	first := res.Attempts[0]
	if !opts.Fallback {
		return res, fmt.Errorf("device: %w: %s: %s (hint: %s)", ErrUnavailable, first.Candidate, first.Reason, hint(spec))
	}
	for _, c := range chain {
		if c.String() == spec.String() {
			continue
		}
		if d, ok := try(c); ok {
			res.Device, res.FellBack = d, true
			res.Warning = fmt.Sprintf("warning: --device %s is not available (%s); falling back to %s", first.Candidate, first.Reason, d.Name)
			return res, nil
		}
	}
	return res, fmt.Errorf("device: %w: %s", ErrUnavailable, reasons(res.Attempts))
}

func autoChain(opts Options) []Spec {
	chain := []Spec{
		{Kind: GPU, Plugin: "cuda", Index: AnyIndex},
		{Kind: TPU, Plugin: "tpu", Index: AnyIndex},
	}
	xlaCPU := Spec{Kind: XLA, Plugin: "cpu", Index: AnyIndex}
	if opts.PreferNative {
		return append(chain, Spec{Kind: CPU, Index: AnyIndex}, xlaCPU)
	}
	return append(chain, xlaCPU, Spec{Kind: CPU, Index: AnyIndex})
}

func reasons(as []Attempt) string {
	var parts []string
	for _, a := range as {
		if !a.OK {
			parts = append(parts, a.Candidate+": "+a.Reason)
		}
	}
	return strings.Join(parts, "; ")
}

func hint(spec Spec) string {
	switch spec.Kind {
	case GPU:
		return "install the CUDA PJRT plugin with `gotrain setup xla --cuda`, or JAX's with `pip install -U \"jax[cuda12]\"` in the active Python environment (gotrain finds it there), on a machine with an NVIDIA driver; or pass --fallback to continue on the next best device"
	case TPU:
		return "run on a TPU VM with the TPU PJRT plugin installed, or pass --fallback"
	case XLA:
		return "install plugins with `gotrain setup xla`, point PJRT_PLUGIN_LIBRARY_PATH at them, or pass --fallback"
	}
	return "run `gotrain devices` to see what is available"
}

// check returns the device for a concrete candidate, or the reason it cannot be used.
func check(c Spec, inv Inventory) (Device, string) {
	switch c.Kind {
	case CPU:
		return Device{Name: "cpu", Kind: Native, Class: "cpu", Index: 0, Description: "native Go on " + HostInfo() + " (graphs: gotrain cpu backend)"}, ""
	case Go:
		return Device{Name: "go", Kind: SimpleGo, Class: "cpu", Index: 0, Description: "GoMLX simplego (pure Go) on " + HostInfo()}, ""
	}
	if !inv.XLACompiled {
		if inv.NoXLAReason == "" {
			return Device{}, "this binary cannot load PJRT plugins" // never "" (available)
		}
		return Device{}, inv.NoXLAReason
	}
	var matches []Plugin
	for _, p := range inv.Plugins {
		if pluginMatches(c, p) {
			matches = append(matches, p)
		}
	}
	what := map[SpecKind]string{GPU: "CUDA", TPU: "TPU", XLA: fmt.Sprintf("%q", c.Plugin)}[c.Kind]
	if len(matches) == 0 {
		r := fmt.Sprintf("no %s PJRT plugin found in %s", what, strings.Join(inv.SearchPaths, ":"))
		if envs := searchedSitePackages(inv); len(envs) > 0 && c.Kind == GPU {
			r += " nor in the Python environments' " + strings.Join(envs, ":")
		}
		if inv.PluginFile != "" {
			r = fmt.Sprintf("no %s PJRT plugin: only the plugin file %s was considered", what, inv.PluginFile)
			if inv.PluginFileErr != "" {
				r += " (" + inv.PluginFileErr + ")"
			}
		}
		if c.Kind == GPU && len(inv.NVIDIA.GPUs) == 0 && inv.NVIDIA.Err != "" {
			r += "; " + inv.NVIDIA.Err
		}
		return Device{}, r
	}
	var why []string
	for _, p := range matches {
		switch {
		case p.Err != "":
			why = append(why, fmt.Sprintf("plugin %s present but failed to load: %s", p.Path, p.Err))
		case !p.Probed:
			why = append(why, fmt.Sprintf("plugin %s present but not probed", p.Path))
		case len(p.Devices) == 0:
			r := fmt.Sprintf("plugin %s present but 0 devices", p.Path)
			if c.Kind == GPU {
				if v, ok := inv.Env["CUDA_VISIBLE_DEVICES"]; ok {
					r += fmt.Sprintf(" (CUDA_VISIBLE_DEVICES=%q hides devices)", v)
				} else if inv.NVIDIA.Err != "" {
					r += "; " + inv.NVIDIA.Err
				}
			}
			why = append(why, r)
		case c.Index != AnyIndex && c.Index >= len(p.Devices):
			why = append(why, fmt.Sprintf("device %d requested but plugin %s has %d device(s)", c.Index, p.Name, len(p.Devices)))
		default:
			idx := max(c.Index, 0)
			pp := p
			class := p.Class()
			name := fmt.Sprintf("xla:%s:%d", p.Name, idx)
			return Device{Name: name, Kind: XLAKind, Class: class, Plugin: &pp, Index: idx, Description: p.Devices[idx].Description}, ""
		}
	}
	return Device{}, strings.Join(why, "; ")
}

// searchedSitePackages lists the site-packages folders searched for JAX's
// CUDA plugin.
func searchedSitePackages(inv Inventory) []string {
	var out []string
	for _, e := range inv.PythonEnvs {
		out = append(out, e.SitePackages...)
	}
	return out
}

func pluginMatches(c Spec, p Plugin) bool {
	switch c.Kind {
	case GPU:
		return p.Class() == "gpu"
	case TPU:
		return p.Class() == "tpu"
	case XLA:
		if c.Plugin == p.Name || c.Plugin == p.Path {
			return true
		}
		// "xla:cpu" matches versioned files such as pjrt_c_api_cpu_v0.83.1_plugin.so.
		return strings.HasPrefix(p.Name, c.Plugin+"_") || strings.HasPrefix(p.Name, c.Plugin+"-")
	}
	return false
}
