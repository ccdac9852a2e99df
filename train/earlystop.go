package train

import (
	"errors"
	"fmt"
	"math"
)

// ErrNonFiniteLoss is wrapped by the error returned when training stops on a
// NaN or infinite loss.
var ErrNonFiniteLoss = errors.New("non-finite loss")

// EarlyStopping decides when to stop training: on a plateau of the monitored
// value (no improvement larger than MinDelta for Patience checks) and on a
// non-finite loss. It is a plain state machine; its exported fields are its
// whole state, so it can be checkpointed as JSON.
type EarlyStopping struct {
	// Mode is ModeMin (lower is better) or ModeMax.
	Mode string `json:"mode"`
	// Patience is the number of checks without improvement that stops training.
	Patience int `json:"patience"`
	// MinDelta is the least change that counts as an improvement.
	MinDelta float64 `json:"min_delta"`
	// Seen tells whether a value was recorded.
	Seen bool `json:"seen"`
	// Best is the best value seen.
	Best float64 `json:"best"`
	// BestStep is the step of Best.
	BestStep int64 `json:"best_step"`
	// Bad is the number of checks since the last improvement.
	Bad int `json:"bad"`
}

// NewEarlyStopping returns an EarlyStopping with no value seen yet.
func NewEarlyStopping(mode string, patience int, minDelta float64) *EarlyStopping {
	return &EarlyStopping{Mode: mode, Patience: patience, MinDelta: minDelta, BestStep: -1}
}

// Improved tells whether value improves on the best value by more than MinDelta.
func (e *EarlyStopping) Improved(value float64) bool {
	if !e.Seen {
		return true
	}
	if e.Mode == ModeMax {
		return value > e.Best+e.MinDelta
	}
	return value < e.Best-e.MinDelta
}

// Update records the monitored value at step and tells whether to stop. It
// returns an error wrapping ErrNonFiniteLoss if value is NaN or infinite.
func (e *EarlyStopping) Update(step int64, value float64) (stop bool, reason string, err error) {
	if err := CheckFinite(step, value); err != nil {
		return true, err.Error(), err
	}
	if e.Improved(value) {
		e.Seen, e.Best, e.BestStep, e.Bad = true, value, step, 0
		return false, "", nil
	}
	e.Bad++
	if e.Bad >= e.Patience {
		return true, fmt.Sprintf("early stopping at step %d: no improvement larger than %g for %d checks (best %g at step %d)",
			step, e.MinDelta, e.Bad, e.Best, e.BestStep), nil
	}
	return false, "", nil
}

// CheckFinite returns an error wrapping ErrNonFiniteLoss, with a message
// that says what to try, if loss is NaN or infinite.
func CheckFinite(step int64, loss float64) error {
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return fmt.Errorf("train: %w at step %d (loss = %v): training diverged; "+
			"try a lower LearningRate, ClipNorm 1.0, WarmupSteps, or Precision 32", ErrNonFiniteLoss, step, loss)
	}
	return nil
}
