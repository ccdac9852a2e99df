package train

import (
	"fmt"
	"time"
)

// PlanAfterSteps is the fewest steps a time-limited run (Config.TimeLimit)
// takes before it plans its end: the first compiles the graph, so at least
// a few more are needed to time a step.
const PlanAfterSteps = 5

// planMargin is the share of a step's and an evaluation's measured times
// added to them when planning, for the drift of a machine's speed over a
// run.
const planMargin = 0.02

// PlanSteps returns the last step of a time-limited run that has done
// done steps and has left of its budget: the most steps after done that
// fit, at stepTime each, with an evaluation of evalTime every evalEvery
// steps and one after the last step (none when the last step is a multiple
// of evalEvery: that evaluation is the last). The result is at most limit
// and at least done (no further step fits).
func PlanSteps(done int64, left, stepTime, evalTime time.Duration, evalEvery, limit int64) int64 {
	var used time.Duration
	for s := done + 1; s <= limit; s++ {
		used += stepTime
		final := evalTime
		if evalEvery > 0 && s%evalEvery == 0 {
			used += evalTime
			final = 0
		}
		if used+final > left {
			return s - 1
		}
	}
	return max(limit, done)
}

// timeLimit is the state of a time-limited run (Config.TimeLimit).
type timeLimit struct {
	deadline time.Time
	// planAt is the step after which the run plans its end; planned tells
	// that it did (or that a resumed run restored its plan).
	planAt  int64
	planned bool
	// cap is the run's last step without the limit (Steps or Epochs).
	cap int64
	// step and eval are the planned times of a step and an evaluation.
	step, eval time.Duration
}

// startTimeLimit sets up the time limit at the start of RunContext.
func (h *Harness) startTimeLimit() {
	h.limit = nil
	if h.cfg.TimeLimit <= 0 {
		return
	}
	h.limit = &timeLimit{
		deadline: h.runStart.Add(h.cfg.TimeLimit),
		planAt:   h.step + int64(max(h.cfg.WarmupSteps, PlanAfterSteps)),
		planned:  h.plannedSteps > 0,
		cap:      int64(h.totalSteps),
	}
}

// setTotalSteps makes n the run's last step: the schedule's end too, so
// the training graphs are built again when the schedule depends on it.
func (h *Harness) setTotalSteps(n int64) {
	if int(n) == h.totalSteps {
		return
	}
	h.totalSteps = int(n)
	h.opt.totalSteps = int(n)
	if h.cfg.Cosine && h.trainer != nil {
		h.trainer.ResetComputationGraphs()
	}
}

// planEnd plans the run's last step once the steps before limit.planAt
// are done (see Config.TimeLimit). evaluated tells that an evaluation ran
// after this step already (its time is h.evalTime).
//
// Without Cosine the schedule does not end at the plan, so every later
// evaluation plans again, from the times measured so far: the run uses the
// budget as the steps' speed turns out, not as its first steps measured it.
func (h *Harness) planEnd(evaluated bool) (stop bool, reason string, err error) {
	l := h.limit
	if l == nil || h.step < l.planAt {
		return false, "", nil
	}
	first := !l.planned
	if first {
		l.planned = true
		if h.evaluator != nil && !evaluated {
			stop, reason, err := h.evaluate(h.runCtx)
			if err != nil || stop {
				return stop, reason, err
			}
		}
	} else if h.cfg.Cosine || !evaluated || h.step >= int64(h.totalSteps) {
		return false, "", nil
	}
	// A step's time is its median, plus its share of the run's time
	// outside steps and evaluations (logs, progress, the loop itself).
	var overhead time.Duration
	if n := h.perf.Steps - h.runSteps; n > 0 {
		outside := h.now().Sub(h.runStart) - (h.perf.Total - h.runStepTime) - h.evalTotal
		overhead = max(outside, 0) / time.Duration(n)
	}
	l.step = time.Duration(float64(h.perf.SteadyMedian()+overhead) * (1 + planMargin))
	if h.evaluator != nil {
		l.eval = time.Duration(float64(h.evalTime) * (1 + planMargin))
	}
	left := l.deadline.Sub(h.now())
	n := PlanSteps(h.step, left, l.step, l.eval, int64(h.evalEvery()), l.cap)
	if first || n != h.plannedSteps {
		h.logf(fmt.Sprintf("train: time limit %v: planned %d steps (%.3f s a step, %.1f s an evaluation, %v left after step %d)",
			h.cfg.TimeLimit, n, l.step.Seconds(), l.eval.Seconds(), left.Round(time.Second), h.step))
	}
	h.plannedSteps = n
	h.setTotalSteps(n)
	return false, "", nil
}

// timeUp tells whether the step after h.step and the final evaluation
// would end past the time limit; it then gives the reason to stop.
func (h *Harness) timeUp() (bool, string) {
	l := h.limit
	if l == nil {
		return false, ""
	}
	step := max(l.step, h.perf.Last)
	var eval time.Duration
	if h.evaluator != nil {
		eval = max(l.eval, time.Duration(float64(h.evalTime)*(1+planMargin)))
	}
	if !l.planned {
		// Before the plan no time is known: stop only past the deadline.
		step, eval = 0, 0
	}
	if h.now().Add(step + eval).Before(l.deadline) {
		return false, ""
	}
	return true, fmt.Sprintf("time limit %v: stopped after step %d of %d planned", h.cfg.TimeLimit, h.step, h.totalSteps)
}
