package train

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gotrain/gotrain/internal/atomicfile"
)

// MetricsLog writes one JSON object per line.
type MetricsLog struct {
	f *os.File
	w *bufio.Writer
}

// OpenMetricsLog opens path for appending (so a resumed run continues it),
// through internal/atomicfile: a new log gets the usual permission bits, a
// FIFO or character device is written through, a folder or other special
// file is refused.
func OpenMetricsLog(path string) (*MetricsLog, error) {
	f, err := atomicfile.OpenAppend(path)
	if err != nil {
		return nil, fmt.Errorf("train: opening metrics log: %w", err)
	}
	return &MetricsLog{f: f, w: bufio.NewWriter(f)}, nil
}

// Write appends rec as one JSON line and flushes it.
func (l *MetricsLog) Write(rec map[string]any) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("train: metrics log: %w", err)
	}
	b = append(b, '\n')
	if _, err := l.w.Write(b); err != nil {
		return fmt.Errorf("train: writing metrics log: %w", err)
	}
	if err := l.w.Flush(); err != nil {
		return fmt.Errorf("train: writing metrics log: %w", err)
	}
	return nil
}

// Close flushes and closes the log.
func (l *MetricsLog) Close() error {
	if err := l.w.Flush(); err != nil {
		_ = l.f.Close()
		return fmt.Errorf("train: closing metrics log: %w", err)
	}
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("train: closing metrics log: %w", err)
	}
	return nil
}

// Perf holds the timing of a run: the first step (graph building and
// compilation) apart from the steady steps after it.
type Perf struct {
	// Device is the backend name.
	Device string `json:"device"`
	// Precision is the resolved precision.
	Precision string `json:"precision"`
	// BatchSize is the micro-batch size and Accumulate the micro-batches per step.
	BatchSize, Accumulate int
	// Devices is the number of devices trained on (data parallel).
	Devices int `json:"devices,omitempty"`
	// Ranks is the number of processes trained across (Config.Comm),
	// each on BatchSize/Ranks examples of every batch; 0 or 1: one.
	Ranks int `json:"ranks,omitempty"`
	// CommSeconds is the time this rank spent in the collective calls of
	// its optimizer steps (summing the gradients and the loss), and
	// BytesSent the payload it handed over for the other ranks (see
	// dist.Comm.BytesSent); both 0 in one process.
	CommSeconds float64 `json:"comm_seconds,omitempty"`
	BytesSent   int64   `json:"bytes_sent,omitempty"`
	// Data says where the training data lives (host or device-resident).
	Data string `json:"data,omitempty"`
	// Steps is the number of optimizer steps timed.
	Steps int `json:"steps"`
	// First is the duration of the first step (includes compilation).
	First time.Duration `json:"first"`
	// Last is the duration of the last step.
	Last time.Duration `json:"last"`
	// Total is the duration of all steps.
	Total time.Duration `json:"total"`
	// steady holds the durations after the first.
	steady []time.Duration
}

func (p *Perf) addStep(d time.Duration) {
	if p.Steps == 0 {
		p.First = d
	} else {
		p.steady = append(p.steady, d)
	}
	p.Steps++
	p.Last = d
	p.Total += d
}

// SteadyMedian is the median duration of the steps after the first.
func (p Perf) SteadyMedian() time.Duration {
	if len(p.steady) == 0 {
		return p.First
	}
	s := append([]time.Duration(nil), p.steady...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// SamplesPerSec is the steady throughput in examples per second, from the
// median step time after the first (0 before any step).
func (p Perf) SamplesPerSec() float64 {
	med := p.SteadyMedian()
	if med <= 0 {
		return 0
	}
	return float64(p.BatchSize*max(p.Accumulate, 1)) / med.Seconds()
}

// PeakMemoryBytes is the peak resident memory of the process (VmHWM on
// Linux), or the memory the Go runtime obtained from the OS elsewhere. It
// does not include accelerator memory.
func PeakMemoryBytes() uint64 {
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				f := strings.Fields(rest)
				if len(f) >= 1 {
					if kb, err := strconv.ParseUint(f[0], 10, 64); err == nil {
						return kb * 1024
					}
				}
			}
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.Sys
}

// Summary formats the performance summary (performance_summary.txt).
func (p Perf) Summary() string {
	var b strings.Builder
	steady := p.SteadyMedian()
	fmt.Fprintf(&b, "device: %s\n", p.Device)
	if p.Ranks > 1 {
		fmt.Fprintf(&b, "ranks: %d processes (data parallel, %d examples of every batch each; this file is rank 0's)\n", p.Ranks, p.BatchSize/p.Ranks)
		fmt.Fprintf(&b, "collective calls: %.3f s, %d bytes sent by rank 0\n", p.CommSeconds, p.BytesSent)
	}
	if p.Devices > 1 {
		fmt.Fprintf(&b, "devices: %d (data parallel)\n", p.Devices)
	}
	fmt.Fprintf(&b, "precision: %s\n", p.Precision)
	fmt.Fprintf(&b, "batch: %d x %d accumulated = %d examples per step\n", p.BatchSize, max(p.Accumulate, 1), p.BatchSize*max(p.Accumulate, 1))
	if p.Data != "" {
		fmt.Fprintf(&b, "data: %s\n", p.Data)
	}
	fmt.Fprintf(&b, "steps: %d\n", p.Steps)
	fmt.Fprintf(&b, "first step (includes compilation): %.3f ms\n", float64(p.First.Microseconds())/1000)
	fmt.Fprintf(&b, "steady step (median after the first): %.3f ms\n", float64(steady.Microseconds())/1000)
	fmt.Fprintf(&b, "compile overhead (first - steady): %.3f ms\n", float64((p.First-steady).Microseconds())/1000)
	if steady > 0 {
		fmt.Fprintf(&b, "steps/s (steady): %.2f\n", float64(time.Second)/float64(steady))
	}
	fmt.Fprintf(&b, "peak host memory: %.1f MiB\n", float64(PeakMemoryBytes())/(1<<20))
	return b.String()
}

// WriteSummary writes Summary to path, atomically (internal/atomicfile).
func (p Perf) WriteSummary(path string) error {
	if err := atomicfile.WriteFile(path, []byte(p.Summary())); err != nil {
		return fmt.Errorf("train: writing performance summary: %w", err)
	}
	return nil
}
