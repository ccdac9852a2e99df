package transformer

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/gotrain/gotrain/train"
)

// Report is what `gotrain lm transformer train` prints about a run: the
// Result with the device it ran on, the data and the losses. Its JSON is
// the command's --json report.
type Report struct {
	// Device is the name of the device trained on; Fallback the warning
	// of a device fallback, if there was one.
	Device   string `json:"device"`
	Fallback string `json:"fallback,omitempty"`
	// PretrainData and InstructionData are the data's paths.
	PretrainData    string  `json:"pretrain_data,omitempty"`
	InstructionData string  `json:"instruction_data,omitempty"`
	Result          *Result `json:"result"`
	// ValLoss, ResponseLossBefore and ResponseLossAfter are the Result's
	// (nil when not measured).
	ValLoss            *float64 `json:"val_loss_nats_per_char,omitempty"`
	ResponseLossBefore *float64 `json:"response_loss_before,omitempty"`
	ResponseLossAfter  *float64 `json:"response_loss_after,omitempty"`
	// Config is the harness configuration of Options.Train.
	Config train.Config `json:"config"`
}

// Report returns the report of r, trained with opts on the device named
// device (fallback: the warning of a device fallback, or "").
func (r *Result) Report(opts Options, device, fallback string) *Report {
	pre := r.PretrainPath // the default corpus, when Train read it
	if pre == "" {
		pre = opts.PretrainPath
	}
	return &Report{Device: device, Fallback: fallback, PretrainData: pre, InstructionData: opts.InstructionPath,
		Result: r, ValLoss: measured(&r.ValLoss), ResponseLossBefore: measured(&r.ResponseLossBefore),
		ResponseLossAfter: measured(&r.ResponseLossAfter), Config: opts.Train}
}

// measured returns v, or nil when *v is NaN (not measured).
func measured(v *float64) *float64 {
	if math.IsNaN(*v) {
		return nil
	}
	return v
}

// WriteText writes the report as `gotrain lm transformer train` prints
// it: the device, the model, each phase (its steps, times and losses, or
// why it was skipped, where it resumed and why it stopped), the
// validation and response losses and the last checkpoint.
func (rep *Report) WriteText(w io.Writer) error {
	r, a := rep.Result, rep.Result.Arch
	var b strings.Builder
	fmt.Fprintf(&b, "device:      %s\n", rep.Device)
	fmt.Fprintf(&b, "model:       %d layers x %d heads, width %d, context %d, ffn %s (%d), attention %s, norm %s, vocabulary %d, %d parameters\n",
		a.Layers, a.Heads, a.Width, a.Context, a.FFN, a.Hidden, a.Attention, a.Norm, a.Vocab, r.Params)
	for _, ph := range []struct {
		name string
		r    *PhaseResult
	}{{"pretrain:", r.Pretrain}, {"instruct:", r.Instruct}} {
		p := ph.r
		switch {
		case p == nil:
			continue
		case p.Skipped != "":
			fmt.Fprintf(&b, "%-12s skipped: %s\n", ph.name, p.Skipped)
			continue
		case p.Train.Steps == p.Train.Resumed && p.ResumedFrom != "":
			fmt.Fprintf(&b, "%-12s %d examples, batch %d x %d, already complete at step %d\n",
				ph.name, p.Examples, p.Phase.BatchSize, p.Phase.Accumulate, p.Train.Steps)
		default:
			fmt.Fprintf(&b, "%-12s %d examples, batch %d x %d, %d steps (first step %.3fs, median step %.3fs), loss %.4f (first step %.4f)\n",
				ph.name, p.Examples, p.Phase.BatchSize, p.Phase.Accumulate, p.Train.Steps, p.FirstStepSec, p.StepSec, p.Train.Loss, p.FirstLoss)
		}
		if p.ResumedFrom != "" {
			fmt.Fprintf(&b, "             resumed from %s (step %d)\n", p.ResumedFrom, p.Train.Resumed)
		}
		if p.Train.Stopped != "" {
			fmt.Fprintf(&b, "             stopped: %s\n", p.Train.Stopped)
		}
	}
	if rep.ValLoss != nil {
		fmt.Fprintf(&b, "val loss:    %.4f nats/char, perplexity %.3f\n", *rep.ValLoss, math.Exp(*rep.ValLoss))
	}
	if rep.ResponseLossAfter != nil {
		before := "n/a (resumed mid-phase)"
		if rep.ResponseLossBefore != nil {
			before = fmt.Sprintf("%.4f", *rep.ResponseLossBefore)
		}
		fmt.Fprintf(&b, "response:    loss %s before instruction tuning, %.4f after (nats/char of the responses)\n", before, *rep.ResponseLossAfter)
	}
	if r.Checkpoint != "" {
		fmt.Fprintf(&b, "checkpoint:  %s\n", r.Checkpoint)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
