package moe

import (
	"errors"
	"fmt"
	"math"
)

// check reports every Options field out of its range at once (the model's
// are Config.Validate's), each error naming the field and the range. Zero
// values mean the documented defaults.
func (o Options) check() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if o.GrowPatience < 0 {
		bad("moe: GrowPatience %d: want >= 1 epoch (0: 1)", o.GrowPatience)
	}
	if !(o.GrowMinDelta >= 0) || math.IsInf(o.GrowMinDelta, 0) {
		bad("moe: GrowMinDelta %v: want a finite number >= 0", o.GrowMinDelta)
	}
	if !(o.GrowEps >= 0) || math.IsInf(o.GrowEps, 0) {
		bad("moe: GrowEps %v: want a finite number >= 0 (0: 0.05)", o.GrowEps)
	}
	if !(o.WarmupFraction >= 0 && o.WarmupFraction < 1) {
		bad("moe: WarmupFraction %v: want a fraction from 0 (no warm-up) to below 1", o.WarmupFraction)
	}
	if o.EvalBatch < 0 {
		bad("moe: EvalBatch %d: want >= 1 (0: 1000)", o.EvalBatch)
	}
	return errors.Join(errs...)
}
