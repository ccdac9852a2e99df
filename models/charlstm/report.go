package charlstm

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/gotrain/gotrain/train"
)

// Report is what `gotrain lm lstm train` prints about a run: the Result
// with the device it ran on, the validation loss and the step times. Its
// JSON is the command's --json report.
type Report struct {
	// Device is the name of the device trained on; Fallback the warning
	// of a device fallback, if there was one.
	Device   string  `json:"device"`
	Fallback string  `json:"fallback,omitempty"`
	Result   *Result `json:"result"`
	// ValLoss and ValPerplexity are the Result's (nil without validation).
	ValLoss       *float64 `json:"val_loss_nats_per_char,omitempty"`
	ValPerplexity *float64 `json:"val_perplexity,omitempty"`
	// BatchSize is the batch size trained with.
	BatchSize int `json:"batch_size"`
	// FirstStepSec and StepSec are the first step's time and the median
	// of the later ones, in seconds.
	FirstStepSec float64 `json:"first_step_seconds"`
	StepSec      float64 `json:"median_step_seconds"`
	// Config is the harness configuration trained with.
	Config train.Config `json:"config"`
}

// Report returns the report of r, trained on the device named device
// (fallback: the warning of a device fallback, or "").
func (r *Result) Report(device, fallback string) *Report {
	rep := &Report{Device: device, Fallback: fallback, Result: r, BatchSize: r.BatchSize,
		FirstStepSec: r.Perf.First.Seconds(), StepSec: r.Perf.SteadyMedian().Seconds(), Config: r.Config}
	if !math.IsNaN(r.ValLoss) {
		rep.ValLoss, rep.ValPerplexity = &r.ValLoss, &r.ValPerplexity
	}
	return rep
}

// WriteText writes the report as `gotrain lm lstm train` prints it: the
// device, the data, the model, the steps and their times, the losses, and
// where the run resumed, stopped and left its checkpoint.
func (rep *Report) WriteText(w io.Writer) error {
	r := rep.Result
	var b strings.Builder
	fmt.Fprintf(&b, "device:      %s\n", rep.Device)
	if n := r.Perf.Ranks; n > 1 {
		fmt.Fprintf(&b, "ranks:       %d processes, %d windows of every batch each, gradients summed before each step (rank 0's report)\n", n, rep.BatchSize/n)
	}
	fmt.Fprintf(&b, "data:        %s (%d train / %d validation characters, vocabulary %d, %d windows)\n",
		r.Data, r.TrainChars, r.ValChars, r.Vocab, r.Windows)
	fmt.Fprintf(&b, "model:       LSTM %d x %d, seq-length %d, batch %d\n", r.Arch.Layers, r.Arch.Hidden, r.SeqLength, rep.BatchSize)
	if r.ResumedFrom != "" {
		fmt.Fprintf(&b, "resumed:     %s (step %d)\n", r.ResumedFrom, r.Train.Resumed)
	}
	fmt.Fprintf(&b, "steps:       %d (first step %.3fs, median step %.3fs)\n", r.Train.Steps, rep.FirstStepSec, rep.StepSec)
	fmt.Fprintf(&b, "train loss:  %.4f nats/char (first step %.4f)\n", r.Train.Loss, r.FirstLoss)
	if rep.ValLoss != nil {
		fmt.Fprintf(&b, "val loss:    %.4f nats/char, perplexity %.3f\n", *rep.ValLoss, *rep.ValPerplexity)
	} else {
		fmt.Fprintln(&b, "val loss:    none (no validation text)")
	}
	if r.Train.Stopped != "" {
		fmt.Fprintf(&b, "stopped:     %s\n", r.Train.Stopped)
	}
	if r.Train.Checkpoint != "" {
		fmt.Fprintf(&b, "checkpoint:  %s\n", r.Train.Checkpoint)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
