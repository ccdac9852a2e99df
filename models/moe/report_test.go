package moe

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestReportWriteText checks the text of `gotrain moe train`, with the
// load in slot order and a split, and the JSON's keys of the load.
func TestReportWriteText(t *testing.T) {
	r := &Result{Summary: Summary{Data: "digits (embedded 8x8)", TestAccuracy: 0.28611, TestLoss: 2.00441, Epochs: 3, Steps: 60,
		StepsPerSecond: 274.437, MedianStepMS: 3.64, FirstStepMS: 4.2}, BatchSize: 64, Experts: 4, Devices: 1,
		Load: map[int]float64{3: 0.067, 0: 0.346, 10: 0.291, 2: 0.296}, DroppedShare: 0.014, ExpertsPerDevice: []int{4},
		Grown: []GrowEvent{{Parent: 0, Child: 3, Device: 0, Step: 40}}, Parallel: "data", ParallelNote: "expert parallelism was requested but ..."}
	opts := Options{Model: Config{Hidden: []int{8, 4}, TopK: 2, CapacityFactor: 1.25, BalanceAlpha: 0.01, ExpertParallel: true},
		OutDir: "runs/moe"}
	rep := r.Report(opts, "go", "")
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := `device:        go (1 device(s), data parallel)
parallel:      expert parallelism was requested but ...
data:          digits (embedded 8x8)
model:         4 experts [8 4], top-2, capacity factor 1.25, balance alpha 0.01
training:      3 epochs, 60 steps, batch 64, 274.44 steps/s (median 3.6 ms, first 4 ms)
test accuracy: 0.2861 (loss 2.0044)
expert load:   0:34.6% 2:29.6% 3:6.7% 10:29.1% (dropped over capacity 1.40%)
per device:    [4]
grown:         expert 0 -> slot 3 (device 0) after step 40
outputs:       runs/moe
`
	if got := b.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	js, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(js); !strings.Contains(s, `"expert_load":{"0":0.346,"10":0.291,"2":0.296,"3":0.067}`) ||
		!strings.Contains(s, `"parallel":"data","parallel_requested":"expert","parallel_note":"expert parallelism was requested but ..."`) ||
		strings.Contains(s, "Model") {
		t.Errorf("JSON: %s", s)
	}
	// What was asked for ran: no note, the same placement twice.
	r.Parallel, r.ParallelNote = "expert", ""
	js, err = json.Marshal(r.Report(opts, "xla:cuda:0", ""))
	if s := string(js); err != nil || !strings.Contains(s, `"parallel":"expert","parallel_requested":"expert","data"`) {
		t.Errorf("JSON: %s, %v", s, err)
	}
}
