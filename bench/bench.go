// Package bench times gotrain's workloads on the native CPU path and on every
// available device, the first call (graph building and compilation) apart from
// the steady state, and checks each device's output against the CPU's.
//
// Timings are honest about asynchronous devices: every timed call ends with
// its results copied back to the host, so no unfinished work is left when the
// clock is read.
package bench

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/internal/stats"
)

// Size selects workload sizes.
type Size string

const (
	// Small sizes run in seconds (CI).
	Small Size = "small"
	// Seed sizes are the ones the seed systems used.
	Seed Size = "seed"
)

// ParseSize checks a --size value.
func ParseSize(s string) (Size, error) {
	switch Size(s) {
	case Small, Seed:
		return Size(s), nil
	}
	return "", fmt.Errorf("bench: size %q: want small or seed", s)
}

// ErrUnsupported is returned by a workload that has no implementation for a device.
var ErrUnsupported = errors.New("not supported on this device")

// ErrMismatch is wrapped by Report.Err when a device's output differs from
// the CPU's by more than the workload's tolerance.
var ErrMismatch = errors.New("output differs from the CPU's")

// DefaultTolerance is the relative error up to which a device's output
// matches the CPU's for MatMul and the forests (their Tolerance): float32
// rounding in another order of operations stays orders of magnitude
// below it, a wrong result does not.
const DefaultTolerance = 1e-4

// Tolerance is how close a device's output must be to the CPU's to match.
type Tolerance struct {
	// Rel is the largest relative error that matches.
	Rel float64
	// Floors, when set, holds one floor per output value and measures
	// each value's error against its own magnitude:
	// |got_i − want_i| / max(|want_i|, Floors[i]) (a floor of 0 is plain
	// relative; 0/0 is 0). Use it for outputs whose values differ in unit
	// and scale (features), where an error relative to the largest value
	// would leave the small ones unchecked. Without floors the error is
	// max_i |got_i − want_i| / max_i |want_i|, as suits a matrix, whose
	// small entries carry the rounding of large sums.
	Floors []float64
}

// Output is what one call of a workload produced.
type Output struct {
	// Values are compared against the CPU's for parity.
	Values []float64
	// Items is the number of work units done (rows, FLOPs, ...), for throughput.
	Items float64
}

// Workload is one benchmarked computation.
type Workload interface {
	// Name identifies the workload.
	Name() string
	// Describe says what one call does at this size.
	Describe() string
	// Unit is the throughput unit, per second (for example "rows/s").
	Unit() string
	// Tolerance is how close a device's output must be to the CPU's
	// (Options.Tolerance, when set, replaces its Rel).
	Tolerance() Tolerance
	// Runner prepares the workload on a device and returns the call to time.
	// It returns ErrUnsupported (wrapped, with the reason) when the device
	// cannot run it. close releases what Runner allocated.
	// The engine owns the backend: close releases only what Runner made.
	Runner(e *device.Engine) (call func() (Output, error), close func(), err error)
}

// Result is one workload on one device.
type Result struct {
	Workload    string  `json:"workload"`
	Description string  `json:"description"`
	Device      string  `json:"device"`
	Engine      string  `json:"engine"`
	Available   bool    `json:"available"`
	Reason      string  `json:"reason,omitempty"`
	FirstMS     float64 `json:"first_call_ms"`
	MedianMS    float64 `json:"median_ms"`
	MinMS       float64 `json:"min_ms"`
	MaxMS       float64 `json:"max_ms"`
	Repeats     int     `json:"repeats"`
	Throughput  float64 `json:"throughput"`
	Unit        string  `json:"unit"`
	SpeedUp     float64 `json:"speedup_vs_cpu"`
	// Parity is the verdict against the CPU: "reference" on the CPU,
	// "identical", "within <tolerance>" or "MISMATCH: <what differs>"
	// (Mismatch) on a device, "" where the device could not run it.
	Parity string `json:"parity"`
	// MaxRelError is the largest relative error against the CPU's output,
	// measured as the workload's Tolerance says.
	MaxRelError float64 `json:"max_rel_error"`
	// Tolerance is the largest relative error that matched (the
	// workload's Tolerance.Rel, or Options.Tolerance).
	Tolerance  float64 `json:"tolerance"`
	RSSMiB     float64 `json:"host_rss_mib"`
	PeakRSSMiB float64 `json:"host_peak_rss_mib"`
}

// Options control Run.
type Options struct {
	// Repeats is the number of timed calls after the first (at least 1).
	Repeats int
	// Engines are where to run (package device selects them); the first
	// must be the native CPU, the reference for speed-ups and parity.
	Engines []*device.Engine
	// Tolerance, when > 0, replaces the Rel of every workload's Tolerance
	// (its floors kept).
	Tolerance float64
	// Progress, when set, is called before each measurement.
	Progress func(workload, device string)
	// Perturb, when set, replaces each device's output (the CPU's
	// included) before the comparison: a fault injected by tests, to check
	// that a mismatch is caught and reported. Leave it nil.
	Perturb func(workload, device string, values []float64) []float64
}

// Mismatch reports whether r's output differs from the CPU's by more than
// its tolerance.
func (r *Result) Mismatch() bool {
	return r.Available && strings.HasPrefix(r.Parity, mismatch)
}

// mismatch starts the parity verdict of an output that does not match.
const mismatch = "MISMATCH"

// Run measures every workload on every device.
func Run(workloads []Workload, opts Options) ([]Result, error) {
	if opts.Repeats < 1 {
		return nil, fmt.Errorf("bench: repeats = %d, want >= 1", opts.Repeats)
	}
	if len(opts.Engines) == 0 || !opts.Engines[0].Native() {
		return nil, errors.New("bench: the first device must be the native CPU (the reference)")
	}
	var out []Result
	for _, w := range workloads {
		tol := w.Tolerance()
		if opts.Tolerance > 0 {
			tol.Rel = opts.Tolerance
		}
		if !(tol.Rel >= 0) {
			return nil, fmt.Errorf("bench: %s: tolerance %v, want >= 0", w.Name(), tol.Rel)
		}
		var ref *Result
		var refValues []float64
		for _, e := range opts.Engines {
			if opts.Progress != nil {
				opts.Progress(w.Name(), e.Name())
			}
			r, values := measure(w, e, opts.Repeats)
			r.Tolerance = tol.Rel
			if r.Available && opts.Perturb != nil {
				values = opts.Perturb(w.Name(), e.Name(), values)
			}
			if ref == nil {
				if !r.Available {
					return nil, fmt.Errorf("bench: %s failed on the CPU: %s", w.Name(), r.Reason)
				}
				if tol.Floors != nil && len(tol.Floors) != len(values) {
					return nil, fmt.Errorf("bench: %s: its tolerance has %d floors for %d values", w.Name(), len(tol.Floors), len(values))
				}
				r.SpeedUp, r.Parity = 1, "reference"
				refValues = values
				out = append(out, r)
				ref = &out[len(out)-1]
				continue
			}
			if r.Available {
				r.SpeedUp = ref.MedianMS / r.MedianMS
				r.MaxRelError, r.Parity = compare(values, refValues, tol)
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// Measure times the workloads of size (Workloads) on opts.Engines with
// Run, as `gotrain bench` does, and returns its report: the host
// (device.HostInfo), the size and the results. A size other than Small or
// Seed is an error (ParseSize).
func Measure(size Size, opts Options) (*Report, error) {
	if _, err := ParseSize(string(size)); err != nil {
		return nil, err
	}
	ws, err := Workloads(size)
	if err != nil {
		return nil, err
	}
	results, err := Run(ws, opts)
	if err != nil {
		return nil, err
	}
	return &Report{Host: device.HostInfo(), Results: results, Size: string(size)}, nil
}

func measure(w Workload, e *device.Engine, repeats int) (Result, []float64) {
	r := Result{Workload: w.Name(), Description: w.Describe(), Device: e.Name(), Engine: string(e.Device().Kind), Unit: w.Unit(), Repeats: repeats}
	call, closeFn, err := w.Runner(e)
	if err != nil {
		r.Reason = err.Error()
		return r, nil
	}
	defer closeFn()
	start := time.Now()
	first, err := call()
	r.FirstMS = ms(time.Since(start))
	if err != nil {
		r.Reason = err.Error()
		return r, nil
	}
	times := make([]float64, 0, repeats)
	for range repeats {
		start := time.Now()
		if _, err := call(); err != nil {
			r.Reason = err.Error()
			return r, nil
		}
		times = append(times, ms(time.Since(start)))
	}
	r.Available = true
	r.MedianMS = stats.Median(times)
	r.MinMS, r.MaxMS = times[0], times[0]
	for _, t := range times {
		r.MinMS, r.MaxMS = min(r.MinMS, t), max(r.MaxMS, t)
	}
	if r.MedianMS > 0 {
		r.Throughput = first.Items / (r.MedianMS / 1e3)
	}
	r.RSSMiB, r.PeakRSSMiB = rss()
	return r, first.Values
}

// compare returns the largest relative error of got against want, measured
// as tol says, and a parity verdict.
func compare(got, want []float64, tol Tolerance) (float64, string) {
	if len(got) != len(want) {
		return math.Inf(1), fmt.Sprintf("%s: %d values, CPU has %d", mismatch, len(got), len(want))
	}
	var scale float64 // the largest |want|, without floors
	for _, w := range want {
		scale = max(scale, math.Abs(w))
	}
	identical := true
	rel, worst := 0.0, -1
	for i := range want {
		g, w := got[i], want[i]
		if g == w || math.IsNaN(g) && math.IsNaN(w) {
			continue
		}
		identical = false
		d := math.Abs(g - w)
		s := scale
		if tol.Floors != nil {
			s = max(math.Abs(w), tol.Floors[i])
		}
		e := d // all of want is 0: the absolute error
		if s > 0 {
			e = d / s
		} else if tol.Floors != nil {
			e = math.Inf(1) // against an exact zero with a floor of 0
		}
		if math.IsNaN(e) || e > rel || worst < 0 {
			rel, worst = e, i
		}
		if math.IsNaN(e) {
			break
		}
	}
	if identical {
		return 0, "identical"
	}
	if rel <= tol.Rel {
		return rel, fmt.Sprintf("within %.0e", tol.Rel)
	}
	return rel, fmt.Sprintf("%s: rel error %.2e > %.0e (value %d)", mismatch, rel, tol.Rel, worst)
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// rss returns the process's resident and peak resident memory in MiB (0 where
// /proc is not available).
func rss() (cur, peak float64) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return float64(m.Sys) / (1 << 20), 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "VmRSS:":
			cur = kb / 1024
		case "VmHWM:":
			peak = kb / 1024
		}
	}
	return cur, peak
}
