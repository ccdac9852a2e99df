package doctor

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gotrain/gotrain/device"
)

// BurstSize is the side of the square float32 matrices device.Burst multiplies.
const BurstSize = device.BurstSize

// live resolves the requested device, verifies it and, for an accelerator,
// keeps it busy for a burst while watching GPU utilisation (or comparing its
// speed with the CPU's when utilisation cannot be read). prior are the
// findings of the other checks, to point at in fixes.
func (c *checker) live(ctx context.Context, prior []Finding) (Finding, device.Resolution, error) {
	f := Finding{ID: "live"}
	res, err := c.res, c.resErr
	for _, a := range res.Attempts {
		if a.OK {
			f.Evidence = append(f.Evidence, fmt.Sprintf("candidate %s: chosen", a.Candidate))
		} else {
			f.Evidence = append(f.Evidence, fmt.Sprintf("candidate %s: rejected: %s", a.Candidate, a.Reason))
		}
	}
	notOK := problemIDs(prior)
	if err != nil {
		f.Status = Fail
		f.Title = fmt.Sprintf("--device %s cannot be used; nothing was run", c.spec)
		f.Fix = c.unusableFix(notOK)
		return f, res, err
	}
	d := res.Device
	f.Status = OK
	if res.FellBack {
		f.Status = Fail
		f.Evidence = append(f.Evidence, res.Warning)
		f.Fix = c.unusableFix(notOK)
	}
	f.Evidence = append(f.Evidence, fmt.Sprintf("running on %s: %s", d.Name, d.Description))
	vr := c.p.Verify(d)
	if !vr.OK {
		f.Status = Fail
		f.Title = fmt.Sprintf("%s failed the checked computation: %s", d.Name, vr.Err)
		f.Evidence = append(f.Evidence, fmt.Sprintf("verify on %s: relative error %.2e (tolerance %.0e): %s", d.Name, vr.RelError, vr.Tolerance, vr.Err))
		f.Fix = joinFix(f.Fix, "the device computes wrong results or cannot run: run `gotrain --device "+d.Name+" devices --verify --log-level debug`, and reinstall its plugin (`gotrain setup xla [--cuda] --force`)")
		return f, res, nil
	}
	f.Evidence = append(f.Evidence, fmt.Sprintf("verify on %s: ok, relative error %.2e (tolerance %.0e), first call %.2f ms (with any graph building and compilation), median %.3f ms over %d calls",
		d.Name, vr.RelError, vr.Tolerance, vr.FirstMS, vr.MedianMS, vr.Repeats))

	if !d.Accelerator() {
		f.Evidence = append(f.Evidence, fmt.Sprintf("no accelerator was exercised: the work ran on %s, the host CPU", d.Name))
		switch {
		case f.Status == Fail:
			f.Title = fmt.Sprintf("--device %s cannot be used; fell back to %s, no accelerator was exercised", c.spec, d.Name)
		case c.spec.Kind == device.Auto:
			f.Status = Warn
			f.Title = fmt.Sprintf("no accelerator: --device auto chose %s, so no GPU or TPU was exercised", d.Name)
			f.Fix = "for a GPU or TPU, deal with what the findings above report"
			if len(notOK) > 0 {
				f.Fix += " (" + strings.Join(notOK, ", ") + ")"
			}
		default:
			f.Title = fmt.Sprintf("%s works; no accelerator was exercised (none was requested)", d.Name)
		}
		return f, res, nil
	}

	title := fmt.Sprintf("%s works (verified)", d.Name)
	if f.Status == Fail {
		title = fmt.Sprintf("--device %s cannot be used; fell back to %s, which works", c.spec, d.Name)
	}
	dur := c.opts.Burst
	if dur <= 0 {
		f.Evidence = append(f.Evidence, "burst skipped (--burst 0): accelerator use not measured")
		f.Title = title
		return f, res, nil
	}
	if d.Class == "gpu" && c.inv.NVIDIA.SMIPath != "" && len(c.inv.NVIDIA.GPUs) > 0 {
		u := c.burstWithUtilization(ctx, d, dur)
		switch {
		case u.burstErr != nil:
			f.Status = Fail
			f.Title = fmt.Sprintf("burst of matmuls on %s failed: %v", d.Name, u.burstErr)
			f.Fix = joinFix(f.Fix, "run `gotrain --device "+d.Name+" devices --verify --log-level debug` to see the error; free GPU memory (see gpu_memory) or reinstall the plugin")
			return f, res, nil
		case u.samples > 0:
			f.Evidence = append(f.Evidence,
				fmt.Sprintf("burst: %v of %d×%d float32 matmuls on %s: %.1f GFLOP/s", dur, BurstSize, BurstSize, d.Name, u.rate),
				fmt.Sprintf("GPU utilisation before the burst: %s; peak during it: %s (%d nvidia-smi samples)", percents(u.before), percents(u.peak), u.samples))
			if slices.Max(u.before) > 0 {
				f.Evidence = append(f.Evidence, "utilisation was already above 0% before the burst: other processes may be using the GPU")
			}
			if slices.Max(u.peak) > 0 {
				f.Title = title + fmt.Sprintf("; GPU utilisation rose to %d%% during the burst", slices.Max(u.peak))
				return f, res, nil
			}
			if f.Status != Fail {
				f.Status = Warn
			}
			f.Title = title + ", but GPU utilisation stayed at 0% during the burst"
			f.Fix = joinFix(f.Fix, "the matmuls may not have run on a GPU that nvidia-smi sees: check env_cuda_visible_devices and xla_devices, and retry with a longer --burst (nvidia-smi averages utilisation over up to 1 s)")
			return f, res, nil
		default:
			f.Evidence = append(f.Evidence, fmt.Sprintf("could not sample GPU utilisation (%v): comparing with the CPU instead", u.sampleErr))
		}
	} else {
		f.Evidence = append(f.Evidence, "GPU utilisation cannot be read (no nvidia-smi for this device): comparing with the CPU instead")
	}

	rate, err := c.p.Burst(d, dur)
	if err != nil {
		f.Status = Fail
		f.Title = fmt.Sprintf("burst of matmuls on %s failed: %v", d.Name, err)
		f.Fix = joinFix(f.Fix, "run `gotrain --device "+d.Name+" devices --verify --log-level debug` to see the error")
		return f, res, nil
	}
	cpu := device.Device{Name: "go", Kind: device.SimpleGo, Class: "cpu", Description: "GoMLX simplego (pure Go) on " + device.HostInfo()}
	cpuRate, err := c.p.Burst(cpu, dur)
	f.Evidence = append(f.Evidence, fmt.Sprintf("burst: %v of %d×%d float32 matmuls on %s: %.1f GFLOP/s", dur, BurstSize, BurstSize, d.Name, rate))
	if err != nil || cpuRate <= 0 {
		f.Evidence = append(f.Evidence, fmt.Sprintf("same burst on the CPU (go) failed: %v", err))
		f.Title = title + "; speed against the CPU unknown"
		return f, res, nil
	}
	ratio := rate / cpuRate
	f.Evidence = append(f.Evidence, fmt.Sprintf("same burst on the CPU (go): %.1f GFLOP/s; %s is %.2f× the CPU", cpuRate, d.Name, ratio))
	if ratio < 1 {
		if f.Status != Fail {
			f.Status = Warn
		}
		f.Fix = joinFix(f.Fix, "an accelerator slower than the CPU suggests the work is not running on it, or that it is shared or throttled: check xla_devices and the device's own tools")
		f.Title = title + fmt.Sprintf(", but it ran the burst %.2f× as fast as the CPU", ratio)
		return f, res, nil
	}
	f.Title = title + fmt.Sprintf("; the burst ran %.1f× as fast as on the CPU", ratio)
	return f, res, nil
}

// unusableFix says what to do when the requested device cannot be used.
func (c *checker) unusableFix(notOK []string) string {
	var parts []string
	if len(notOK) > 0 {
		parts = append(parts, "deal with the findings above ("+strings.Join(notOK, ", ")+")")
	}
	hasPlugin := false
	for _, p := range c.inv.Plugins {
		hasPlugin = hasPlugin || pluginWanted(c.spec, p)
	}
	if c.inv.XLACompiled && !hasPlugin {
		switch c.want {
		case "gpu":
			parts = append(parts, "install the CUDA plugin with `gotrain setup xla --cuda`, or JAX's with `python3 -m pip install -U \"jax[cuda12]\"` in the Python environment you use, on a machine with an NVIDIA GPU and driver")
		case "tpu":
			parts = append(parts, "run on a TPU VM with the TPU PJRT plugin installed")
		default:
			parts = append(parts, "install the plugin with `gotrain setup xla` or point PJRT_PLUGIN_LIBRARY_PATH at its folder")
		}
	}
	return strings.Join(append(parts, "or use --device auto, which picks the best device available"), "; ")
}

// joinFix appends a fix to an existing one.
func joinFix(fix, more string) string {
	if fix == "" {
		return more
	}
	return fix + "; " + more
}

// problemIDs lists the IDs of the findings that warn or fail.
func problemIDs(fs []Finding) []string {
	var ids []string
	for _, f := range fs {
		if f.Status == Warn || f.Status == Fail {
			ids = append(ids, f.ID)
		}
	}
	return ids
}

func percents(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprintf("GPU %d %d%%", i, x)
	}
	return strings.Join(s, ", ")
}

// utilRun is what burstWithUtilization saw.
type utilRun struct {
	rate         float64
	burstErr     error
	before, peak []int
	samples      int
	sampleErr    error
}

// burstWithUtilization runs a burst on d while sampling GPU utilisation.
// samples is 0 when utilisation could not be read during the burst.
func (c *checker) burstWithUtilization(ctx context.Context, d device.Device, dur time.Duration) utilRun {
	var u utilRun
	u.before, u.sampleErr = c.p.SampleUtilization(ctx)
	if u.sampleErr != nil || len(u.before) == 0 {
		if u.sampleErr == nil {
			u.sampleErr = fmt.Errorf("nvidia-smi reported no GPUs")
		}
		return u
	}
	u.peak = make([]int, len(u.before))
	type result struct {
		rate float64
		err  error
	}
	done := make(chan result, 1)
	go func() {
		r, err := c.p.Burst(d, dur)
		done <- result{r, err}
	}()
	tick := time.NewTicker(min(max(dur/10, 10*time.Millisecond), 250*time.Millisecond))
	defer tick.Stop()
	sample := func() {
		s, err := c.p.SampleUtilization(ctx)
		if err != nil {
			u.sampleErr = err
			return
		}
		u.samples++
		for i := range min(len(s), len(u.peak)) {
			u.peak[i] = max(u.peak[i], s[i])
		}
	}
	for {
		select {
		case r := <-done:
			u.rate, u.burstErr = r.rate, r.err
			// nvidia-smi averages over its last sample period, which still
			// covers the end of the burst.
			sample()
			return u
		case <-tick.C:
			sample()
		}
	}
}

// SampleUtilization asks nvidia-smi for each GPU's utilisation in percent.
func SampleUtilization(ctx context.Context) ([]int, error) {
	smi, err := exec.LookPath("nvidia-smi")
	if err != nil {
		return nil, fmt.Errorf("sampling GPU utilisation: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, smi, "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits").Output()
	if err != nil {
		return nil, fmt.Errorf("sampling GPU utilisation with %s: %w", smi, err)
	}
	return ParseUtilization(string(out))
}

// ParseUtilization parses nvidia-smi's output for
// --query-gpu=utilization.gpu --format=csv,noheader,nounits: one percentage
// per line, one line per GPU.
func ParseUtilization(text string) ([]int, error) {
	var out []int
	sc := bufio.NewScanner(strings.NewReader(text))
	for line := 1; sc.Scan(); line++ {
		row := strings.TrimSpace(sc.Text())
		if row == "" {
			continue
		}
		n, err := strconv.Atoi(row)
		if err != nil {
			return out, fmt.Errorf("nvidia-smi utilisation line %d: %q is not a percentage", line, row)
		}
		out = append(out, n)
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("reading nvidia-smi utilisation: %w", err)
	}
	return out, nil
}
