package train

import (
	"errors"
	"fmt"
	"time"

	"github.com/gomlx/gomlx/backends"
)

// DefaultMinThroughputGain is the least relative throughput gain for
// which FindBatchSizeByThroughput keeps doubling the batch size (5 %).
const DefaultMinThroughputGain = 0.05

// MeasureFunc runs training at a batch size and returns its throughput in
// examples per second, an error wrapping ErrOutOfMemory if the size does
// not fit (in device memory or in a memory budget), or any other error to
// abort the search.
type MeasureFunc func(batchSize int) (samplesPerSec float64, err error)

// BatchTrial is one batch size tried by FindBatchSizeByThroughput.
type BatchTrial struct {
	// Size is the batch size.
	Size int `json:"size"`
	// Fits is false when the size ran out of memory.
	Fits bool `json:"fits"`
	// SamplesPerSec is the measured throughput (0 when it did not fit).
	SamplesPerSec float64 `json:"samples_per_s"`
}

// BatchSizeChoice is the outcome of FindBatchSizeByThroughput.
type BatchSizeChoice struct {
	// Size is the chosen batch size.
	Size int `json:"size"`
	// SamplesPerSec is its measured throughput.
	SamplesPerSec float64 `json:"samples_per_s"`
	// Reason says why the search stopped there.
	Reason string `json:"reason"`
	// Trials lists every size tried, in order.
	Trials []BatchTrial `json:"trials"`
}

// FindBatchSizeByThroughput doubles the batch size from start while it
// fits and its throughput improves by more than minGain (a fraction; 0.05
// is 5 %) over the previous size, up to limit. It returns the last size
// whose doubling paid off: the one before a size that gained at most
// minGain (a larger batch is not worth so little: more memory, fewer
// updates per epoch), the one before a size that ran out of memory, or
// limit. Reason says which, with the numbers.
// Unlike FindBatchSize it does not binary-search: on a CPU, throughput is
// what bounds the useful batch size, and one doubling is the resolution.
func FindBatchSizeByThroughput(start, limit int, minGain float64, measure MeasureFunc) (BatchSizeChoice, error) {
	var ch BatchSizeChoice
	if start < 1 || limit < start {
		return ch, fmt.Errorf("train: batch-size finder: want 1 <= start (%d) <= limit (%d)", start, limit)
	}
	if minGain < 0 {
		return ch, fmt.Errorf("train: batch-size finder: minimum gain %g: want >= 0", minGain)
	}
	for n := start; ; n = min(n*2, limit) {
		sps, err := measure(n)
		if err != nil && !errors.Is(err, ErrOutOfMemory) {
			return ch, fmt.Errorf("train: batch-size finder: trying batch size %d: %w", n, err)
		}
		ch.Trials = append(ch.Trials, BatchTrial{Size: n, Fits: err == nil, SamplesPerSec: sps})
		if err != nil {
			if ch.Size == 0 {
				return ch, fmt.Errorf("train: batch-size finder: the smallest batch size %d does not fit: %w", start, err)
			}
			ch.Reason = fmt.Sprintf("batch size %d does not fit (%v); %d is the largest that did", n, err, ch.Size)
			return ch, nil
		}
		if ch.Size != 0 && sps <= ch.SamplesPerSec*(1+minGain) {
			gain := 100 * (sps/ch.SamplesPerSec - 1)
			ch.Reason = fmt.Sprintf("throughput at batch size %d (%.1f examples/s) is %+.1f%% over %d (%.1f examples/s), not more than %.0f%%",
				n, sps, gain, ch.Size, ch.SamplesPerSec, 100*minGain)
			return ch, nil
		}
		ch.Size, ch.SamplesPerSec = n, sps
		if n >= limit {
			ch.Reason = fmt.Sprintf("reached the limit %d with throughput still improving (%.1f examples/s)", limit, sps)
			return ch, nil
		}
	}
}

// StepThroughput returns a MeasureFunc that builds a fresh Harness (no
// checkpoints, logs, progress or resume) at the batch size tried, runs one
// step to compile, then steps optimizer steps, and returns their
// throughput. A batch that runs out of memory (IsOutOfMemory), or after
// which the process's peak resident memory (PeakMemoryBytes) exceeds
// memBudget bytes (when positive), counts as not fitting. The peak only
// grows, so once a size exceeds the budget every larger one does too. It
// leaves the data position where it was.
func StepThroughput(backend backends.Backend, cfg Config, model ModelFn, loss LossFn, data *Dataset, steps int, memBudget uint64) MeasureFunc {
	steps = max(steps, 1)
	return func(n int) (float64, error) {
		c := cfg
		c.BatchSize, c.Steps, c.Accumulate = n, steps+1, 1
		c.NoCheckpoint, c.Resume, c.MetricsLog, c.PerfSummary, c.PlotsDir = true, false, "", "", ""
		c.EarlyStopMonitor, c.Progress = "", ProgressOff
		pos := data.Position()
		defer func() { _ = data.SetPosition(pos) }()
		fail := func(err error) (float64, error) {
			if IsOutOfMemory(err) {
				return 0, fmt.Errorf("%w: %v", ErrOutOfMemory, err)
			}
			return 0, err
		}
		h, err := New(backend, c, model, loss, data)
		if err != nil {
			return fail(err)
		}
		if _, err := h.TrainStep(); err != nil {
			return fail(err)
		}
		start := time.Now()
		for range steps {
			if _, err := h.TrainStep(); err != nil {
				return fail(err)
			}
		}
		elapsed := time.Since(start)
		if peak := PeakMemoryBytes(); memBudget > 0 && peak > memBudget {
			return 0, fmt.Errorf("%w: peak host memory %.1f MiB exceeds the budget of %.1f MiB",
				ErrOutOfMemory, float64(peak)/(1<<20), float64(memBudget)/(1<<20))
		}
		if elapsed <= 0 {
			elapsed = time.Nanosecond
		}
		return float64(n*steps) / elapsed.Seconds(), nil
	}
}
