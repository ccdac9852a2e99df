// Package doctor diagnoses why an accelerator is or is not used: it inspects
// the build, the PJRT plugins, the NVIDIA driver, the devices XLA sees, free
// GPU memory and the environment variables that hide or redirect devices, then
// resolves the requested device and exercises it live.
//
// Every check produces a Finding with a status, the facts seen and, when
// something is wrong, what to do about it. All access to the machine goes
// through Probes, so tests can replace it with fakes.
package doctor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/gotrain/gotrain/device"
)

// Status is the outcome of one check.
type Status string

const (
	// OK means the check found nothing wrong.
	OK Status = "ok"
	// Warn means something may stop an accelerator from being used, or a
	// setting may surprise, but the requested device can still be used.
	Warn Status = "warn"
	// Fail means the requested device cannot be used, or something is broken.
	Fail Status = "fail"
	// Skip means the check does not apply (for example no NVIDIA GPU to look at).
	Skip Status = "skip"
)

// Finding is the result of one check.
type Finding struct {
	// ID names the check: build, plugins, jax, pjrt_api, nvidia,
	// xla_devices, gpu_memory, env_cuda_visible_devices, env_xla_flags,
	// env_gomlx_backend, env_auto_install or live.
	ID string `json:"id"`
	// Title summarises the outcome in one line.
	Title string `json:"title"`
	// Status is ok, warn, fail or skip.
	Status Status `json:"status"`
	// Evidence lists the facts the check saw.
	Evidence []string `json:"evidence,omitempty"`
	// Fix says what to do; empty when the status is ok or skip.
	Fix string `json:"fix,omitempty"`
}

// Report is everything Run found.
type Report struct {
	// Requested is the --device value in canonical form.
	Requested string `json:"requested"`
	// Findings are the checks' results, in the order they ran.
	Findings []Finding `json:"findings"`
	// Selected is the resolution of the requested device; nil when it failed.
	Selected *device.Resolution `json:"selected"`
	// ResolveError says why the requested device cannot be used, when it cannot.
	ResolveError string `json:"resolve_error,omitempty"`
	// OK is true when the requested device resolved without falling back and
	// no finding failed.
	OK bool `json:"ok"`
}

// Failed returns the IDs of the findings whose status is Fail.
func (r Report) Failed() []string {
	var ids []string
	for _, f := range r.Findings {
		if f.Status == Fail {
			ids = append(ids, f.ID)
		}
	}
	return ids
}

// Finding returns the finding with the given ID, and whether there is one.
func (r Report) Finding(id string) (Finding, bool) {
	for _, f := range r.Findings {
		if f.ID == id {
			return f, true
		}
	}
	return Finding{}, false
}

// Options control Run.
type Options struct {
	// Device is the --device value to diagnose ("" means auto).
	Device string
	// Fallback resolves like --fallback: the live check then runs on the next
	// best device, but the report still fails because the request was not met.
	Fallback bool
	// Burst is how long the live check keeps the chosen accelerator busy with
	// matmuls; 0 or less skips the burst.
	Burst time.Duration
	// PluginFile is an explicit PJRT plugin file, the only plugin
	// discovery considers (device.DiscoverOptions.PluginFile).
	PluginFile string
}

// Probes are the doctor's only ways to look at the machine. A nil field is
// replaced by its real implementation from DefaultProbes.
type Probes struct {
	// Discover returns the device inventory for the options given (Run
	// asks for every plugin probed, and passes Options.PluginFile).
	Discover func(device.DiscoverOptions) device.Inventory
	// Env looks up an environment variable.
	Env func(name string) (string, bool)
	// Exists tells whether a file or folder exists.
	Exists func(path string) bool
	// ListDir returns the names of the entries of a folder.
	ListDir func(dir string) ([]string, error)
	// SampleUtilization returns each NVIDIA GPU's current utilisation in
	// percent, in nvidia-smi's order.
	SampleUtilization func(ctx context.Context) ([]int, error)
	// Verify runs device.Verify's checked computation on a device.
	Verify func(d device.Device) device.VerifyResult
	// Burst runs 1024×1024 float32 matmuls on a device for about the given
	// time and returns the rate reached in GFLOP/s.
	Burst func(d device.Device, duration time.Duration) (float64, error)
}

// DefaultProbes returns the probes that look at this machine.
func DefaultProbes() Probes {
	return Probes{
		Discover: device.Discover,
		Env:      os.LookupEnv,
		Exists:   func(path string) bool { _, err := os.Stat(path); return err == nil },
		ListDir: func(dir string) ([]string, error) {
			entries, err := os.ReadDir(dir)
			names := make([]string, 0, len(entries))
			for _, e := range entries {
				names = append(names, e.Name())
			}
			return names, err
		},
		SampleUtilization: SampleUtilization,
		Verify:            func(d device.Device) device.VerifyResult { return device.Verify(d, 5) },
		Burst:             device.Burst,
	}
}

func (p Probes) withDefaults() Probes {
	d := DefaultProbes()
	if p.Discover == nil {
		p.Discover = d.Discover
	}
	if p.Env == nil {
		p.Env = d.Env
	}
	if p.Exists == nil {
		p.Exists = d.Exists
	}
	if p.ListDir == nil {
		p.ListDir = d.ListDir
	}
	if p.SampleUtilization == nil {
		p.SampleUtilization = d.SampleUtilization
	}
	if p.Verify == nil {
		p.Verify = d.Verify
	}
	if p.Burst == nil {
		p.Burst = d.Burst
	}
	return p
}

// Run diagnoses the machine for the device opts.Device asks for. It returns an
// error only when opts.Device is not a valid device; everything found about
// the machine, including a device that cannot be used, is in the Report.
func Run(ctx context.Context, opts Options, probes Probes) (Report, error) {
	if opts.Device == "" {
		opts.Device = "auto"
	}
	c := &checker{opts: opts, p: probes.withDefaults(), env: map[string]envValue{}}
	// Read the environment before discovery: loading a CUDA plugin sets XLA_FLAGS.
	for _, name := range device.EnvVars {
		v, ok := c.p.Env(name)
		c.env[name] = envValue{v, ok}
	}
	c.inv = c.p.Discover(device.DiscoverOptions{Probe: true, PluginFile: opts.PluginFile})
	// The device is chosen as every command chooses it (device.Select),
	// against the inventory just discovered; nothing is opened here.
	eng, err := device.Select(device.Request{Device: opts.Device, Fallback: opts.Fallback, Inventory: &c.inv})
	var unavailable *device.UnavailableError
	switch {
	case err == nil:
		c.res = eng.Resolution
	case errors.As(err, &unavailable):
		c.res, c.resErr = unavailable.Resolution, err
	default:
		return Report{}, fmt.Errorf("doctor: %w", err)
	}
	spec := c.res.Requested
	c.spec = spec
	c.want = requestedClass(spec)
	rep := Report{Requested: spec.String()}
	rep.Findings = []Finding{
		c.build(),
		c.plugins(),
		c.jax(),
		c.pjrtAPI(),
		c.nvidia(),
		c.xlaDevices(),
		c.gpuMemory(),
		c.cudaVisibleDevices(),
		c.xlaFlags(),
		c.gomlxBackend(),
		c.autoInstall(),
	}
	live, res, resErr := c.live(ctx, rep.Findings)
	rep.Findings = append(rep.Findings, live)
	if resErr != nil {
		rep.ResolveError = resErr.Error()
	} else {
		rep.Selected = &res
	}
	rep.OK = resErr == nil && !res.FellBack && len(rep.Failed()) == 0
	return rep, nil
}

// envValue is one environment variable as read before discovery.
type envValue struct {
	value string
	set   bool
}

// checker holds what every check needs.
type checker struct {
	opts   Options
	spec   device.Spec
	res    device.Resolution // what device.Select chose, or the attempts when resErr is set
	resErr error
	p      Probes
	env    map[string]envValue
	inv    device.Inventory
	// want is "gpu", "tpu" or "xla" for an explicit XLA request, "" otherwise.
	want string
}

// requestedClass says which kind of XLA device an explicit request needs.
func requestedClass(s device.Spec) string {
	switch s.Kind {
	case device.GPU:
		return "gpu"
	case device.TPU:
		return "tpu"
	case device.XLA:
		if c := (device.Plugin{Name: s.Plugin}).Class(); c == "gpu" || c == "tpu" {
			return c
		}
		return "xla"
	}
	return ""
}

// getenv returns the value of an environment variable read before discovery.
func (c *checker) getenv(name string) (string, bool) {
	if v, ok := c.env[name]; ok {
		return v.value, v.set
	}
	return c.p.Env(name)
}

// Err is the verdict of the report as an error: nil when the requested
// device was used and no finding failed; otherwise an error saying that
// --device cannot be used (and why), or which findings failed.
func (rep *Report) Err() error {
	switch {
	case rep.ResolveError != "":
		return fmt.Errorf("doctor: --device %s cannot be used: %s", rep.Requested, rep.ResolveError)
	case rep.Selected != nil && rep.Selected.FellBack:
		return fmt.Errorf("doctor: --device %s cannot be used (%s)", rep.Requested, rep.Selected.Warning)
	case !rep.OK:
		return fmt.Errorf("doctor: failed: %s", strings.Join(rep.Failed(), ", "))
	}
	return nil
}

// WriteText writes the report for people: one line per finding with its
// status and title, then its evidence and fix indented below it.
func (rep *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	counts := map[Status]int{}
	for _, f := range rep.Findings {
		counts[f.Status]++
		fmt.Fprintf(&b, "%-6s %s: %s\n", "["+string(f.Status)+"]", f.ID, f.Title)
		for _, e := range f.Evidence {
			fmt.Fprintf(&b, "       %s\n", e)
		}
		if f.Fix != "" {
			fmt.Fprintf(&b, "       fix: %s\n", f.Fix)
		}
	}
	fmt.Fprintf(&b, "\n%d ok, %d warn, %d fail, %d skip", counts[OK], counts[Warn], counts[Fail], counts[Skip])
	switch {
	case rep.ResolveError != "":
		fmt.Fprintf(&b, "; --device %s cannot be used\n", rep.Requested)
	case rep.Selected != nil:
		fmt.Fprintf(&b, "; --device %s resolved to %s\n", rep.Requested, rep.Selected.Device.Name)
	default:
		b.WriteString("\n")
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("doctor: writing report: %w", err)
	}
	return nil
}
