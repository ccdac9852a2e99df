package train

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gomlx/gomlx/backends"
)

// ErrOutOfMemory is what a FitsFunc wraps to say a batch size does not fit.
var ErrOutOfMemory = errors.New("out of memory")

// FitsFunc tries a batch size (typically one training step) and returns nil
// if it fits, an error wrapping ErrOutOfMemory if it does not, and any other
// error to abort the search.
type FitsFunc func(batchSize int) error

// FindBatchSize returns the largest batch size in [start, limit] that fits:
// it doubles from start until a size fails or limit is reached, then binary
// searches between the last size that fitted and the first that failed.
// It returns an error if start itself does not fit.
func FindBatchSize(start, limit int, fits FitsFunc) (int, error) {
	if start < 1 || limit < start {
		return 0, fmt.Errorf("train: batch-size finder: want 1 <= start (%d) <= limit (%d)", start, limit)
	}
	try := func(n int) (bool, error) {
		err := fits(n)
		if err == nil {
			return true, nil
		}
		if errors.Is(err, ErrOutOfMemory) {
			return false, nil
		}
		return false, fmt.Errorf("train: batch-size finder: trying batch size %d: %w", n, err)
	}
	ok, err := try(start)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, fmt.Errorf("train: batch-size finder: the smallest batch size %d does not fit: %w", start, ErrOutOfMemory)
	}
	good, bad := start, 0
	for bad == 0 && good < limit {
		n := min(good*2, limit)
		ok, err := try(n)
		if err != nil {
			return 0, err
		}
		if ok {
			good = n
		} else {
			bad = n
		}
	}
	for bad-good > 1 {
		mid := good + (bad-good)/2
		ok, err := try(mid)
		if err != nil {
			return 0, err
		}
		if ok {
			good = mid
		} else {
			bad = mid
		}
	}
	return good, nil
}

// IsOutOfMemory tells whether err reports a device or host running out of
// memory: it wraps ErrOutOfMemory, or its text carries XLA's
// RESOURCE_EXHAUSTED, "out of memory" or "OOM".
func IsOutOfMemory(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrOutOfMemory) {
		return true
	}
	s := strings.ToLower(err.Error())
	return strings.Contains(s, "resource_exhausted") || strings.Contains(s, "out of memory") ||
		strings.Contains(s, " oom") || strings.HasPrefix(s, "oom")
}

// StepFits returns a FitsFunc that runs one training step of a fresh
// Harness (no checkpoints, logs or resume) at the batch size tried, and
// reports an out-of-memory failure (IsOutOfMemory) as ErrOutOfMemory. The
// limit given to FindBatchSize should not exceed data.Len().
func StepFits(backend backends.Backend, cfg Config, model ModelFn, loss LossFn, data *Dataset) FitsFunc {
	return func(n int) error {
		c := cfg
		c.BatchSize, c.Steps, c.Accumulate = n, 1, 1
		c.NoCheckpoint, c.Resume, c.MetricsLog, c.PerfSummary = true, false, "", ""
		c.EarlyStopMonitor = ""
		pos := data.Position()
		defer func() { _ = data.SetPosition(pos) }()
		h, err := New(backend, c, model, loss, data)
		if err == nil {
			_, err = h.TrainStep()
		}
		if IsOutOfMemory(err) {
			return fmt.Errorf("%w: %v", ErrOutOfMemory, err)
		}
		return err
	}
}

// ParseBatchSize parses a batch size given as text: a positive integer,
// or "auto" (any case) for an automatic one (see AutoBatchSize). "" is
// neither: n is 0 and auto false.
func ParseBatchSize(s string) (n int, auto bool, err error) {
	switch {
	case s == "":
		return 0, false, nil
	case strings.EqualFold(s, "auto"):
		return 0, true, nil
	}
	if n, err = strconv.Atoi(s); err != nil || n < 1 {
		return 0, false, fmt.Errorf("BatchSize %q: want a positive integer or auto", s)
	}
	return n, false, nil
}

// AutoBatchSize resolves an automatic batch size: on an accelerator
// (IsAccelerator) it returns what find returns, typically FindBatchSize
// with StepFits; on a host backend, which has no device memory to probe, it
// returns hostDefault without calling find. note says which, for a log
// line.
func AutoBatchSize(backend backends.Backend, hostDefault int, find func() (int, error)) (n int, note string, err error) {
	if !IsAccelerator(backend) {
		return hostDefault, fmt.Sprintf("automatic batch size on a host backend: using %d (no device memory to probe)", hostDefault), nil
	}
	if n, err = find(); err != nil {
		return 0, "", fmt.Errorf("train: automatic batch size: %w", err)
	}
	return n, fmt.Sprintf("automatic batch size: %d, the largest that fits", n), nil
}
