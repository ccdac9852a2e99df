package moe

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// Report is what `gotrain moe train` prints about a run: the Result's
// summary with the device it ran on and the model as configured. Its JSON
// is the command's --json report.
type Report struct {
	// Device is the name of the device trained on; Fallback the warning
	// of a device fallback, if there was one.
	Device   string `json:"device"`
	Fallback string `json:"fallback,omitempty"`
	Devices  int    `json:"devices"`
	// Ranks is the number of processes trained across (--distributed),
	// each on an equal share of every batch; absent for one.
	Ranks int `json:"ranks,omitempty"`
	// Parallel is how the run placed the experts (Result.Parallel):
	// "expert" or "data"; ParallelRequested is what Model.ExpertParallel
	// asked for, and ParallelNote why the two differ ("" when they do not).
	Parallel          string `json:"parallel"`
	ParallelRequested string `json:"parallel_requested"`
	ParallelNote      string `json:"parallel_note,omitempty"`
	Summary
	BatchSize int `json:"batch_size"`
	Experts   int `json:"experts"`
	// ExpertLoad is the Result's Load: each active slot's share.
	ExpertLoad    map[int]float64 `json:"expert_load"`
	DroppedShare  float64         `json:"dropped_share"`
	ExpertsPerDev []int           `json:"experts_per_device"`
	Grown         []GrowEvent     `json:"grown,omitempty"`
	PeakMemoryMiB float64         `json:"peak_memory_mib"`
	// Out is the output directory (Options.OutDir) and Files what went there.
	Out   string   `json:"out"`
	Files []string `json:"files"`
	// Stopped is the early-stopping reason, if training stopped early.
	Stopped string `json:"stopped,omitempty"`
	// Model is the model as configured (Options.Model).
	Model Config `json:"-"`
}

// Report returns the report of r, trained with opts on the device named
// device (fallback: the warning of a device fallback, or "").
func (r *Result) Report(opts Options, device, fallback string) *Report {
	requested := parallelName(opts.Model.ExpertParallel)
	parallel := r.Parallel
	if parallel == "" { // a Result not made by Train
		parallel = requested
	}
	return &Report{Device: device, Fallback: fallback, Devices: r.Devices, Parallel: parallel, ParallelRequested: requested,
		ParallelNote: r.ParallelNote, Summary: r.Summary, BatchSize: r.BatchSize, Experts: r.Experts,
		ExpertLoad: r.Load, DroppedShare: r.DroppedShare, ExpertsPerDev: r.ExpertsPerDevice, Grown: r.Grown,
		PeakMemoryMiB: r.PeakMemoryMiB, Out: opts.OutDir, Files: r.Files, Stopped: r.Train.Stopped, Model: opts.Model,
		Ranks: r.ranks()}
}

// ranks is the number of processes the run trained across (0 for one).
func (r *Result) ranks() int {
	if r.Perf.Ranks > 1 {
		return r.Perf.Ranks
	}
	return 0
}

// WriteText writes the report as `gotrain moe train` prints it: the
// device, the data, the model, the training's steps and speed, the test
// accuracy, the experts' load and placement, the splits and the output
// directory.
func (rep *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	m := rep.Model
	fmt.Fprintf(&b, "device:        %s (%d device(s), %s parallel)\n", rep.Device, rep.Devices, rep.Parallel)
	if rep.ParallelNote != "" {
		fmt.Fprintf(&b, "parallel:      %s\n", rep.ParallelNote)
	}
	if rep.Ranks > 1 {
		fmt.Fprintf(&b, "ranks:         %d processes, %d examples of every batch each, gradients summed before each step (rank 0's report)\n", rep.Ranks, rep.BatchSize/rep.Ranks)
	}
	fmt.Fprintf(&b, "data:          %s\n", rep.Data)
	fmt.Fprintf(&b, "model:         %d experts %v, top-%d, capacity factor %g, balance alpha %g\n",
		rep.Experts, m.Hidden, m.TopK, m.CapacityFactor, m.BalanceAlpha)
	fmt.Fprintf(&b, "training:      %d epochs, %d steps, batch %d, %.2f steps/s (median %.1f ms, first %.0f ms)\n",
		rep.Epochs, rep.Steps, rep.BatchSize, rep.StepsPerSecond, rep.MedianStepMS, rep.FirstStepMS)
	fmt.Fprintf(&b, "test accuracy: %.4f (loss %.4f)\n", rep.TestAccuracy, rep.TestLoss)
	slots := make([]int, 0, len(rep.ExpertLoad))
	for s := range rep.ExpertLoad {
		slots = append(slots, s)
	}
	sort.Ints(slots)
	loads := make([]string, len(slots))
	for i, s := range slots {
		loads[i] = fmt.Sprintf("%d:%.1f%%", s, 100*rep.ExpertLoad[s])
	}
	fmt.Fprintf(&b, "expert load:   %s (dropped over capacity %.2f%%)\n", strings.Join(loads, " "), 100*rep.DroppedShare)
	fmt.Fprintf(&b, "per device:    %v\n", rep.ExpertsPerDev)
	for _, ev := range rep.Grown {
		fmt.Fprintf(&b, "grown:         expert %d -> slot %d (device %d) after step %d\n", ev.Parent, ev.Child, ev.Device, ev.Step)
	}
	fmt.Fprintf(&b, "outputs:       %s\n", rep.Out)
	_, err := io.WriteString(w, b.String())
	return err
}

// parallelName is the name of a placement of the experts: "expert" when
// they are sharded over the devices, else "data".
func parallelName(expertParallel bool) string {
	if expertParallel {
		return "expert"
	}
	return "data"
}
