package transformer

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/train"
)

// TestReportWriteText checks the text of `gotrain lm transformer train`:
// a run whose pretraining stopped early and whose instruction tuning
// resumed (complete already), with every loss measured; then a resumed
// pretraining and a skipped phase, with no loss measured; and the JSON's
// loss keys.
func TestReportWriteText(t *testing.T) {
	r := &Result{Arch: Arch{Vocab: 26, Layers: 1, Heads: 2, Width: 8, Context: 12, Hidden: 24, Attention: AttentionSoftmax,
		FFN: FFNSwiGLU, Norm: NormRMS}, Params: 1160, ValLoss: 2, ResponseLossBefore: 3.24171, ResponseLossAfter: 3.11279,
		Checkpoint: "ck/instruct/ckpt-3.gtc",
		Pretrain: &PhaseResult{Examples: 186, Phase: Phase{BatchSize: 8, Accumulate: 2}, FirstLoss: 3.26493, FirstStepSec: 0.0056,
			StepSec: 0.00274, Train: train.Result{Steps: 3, Loss: 3.19799, Stopped: "no better val_loss"}},
		Instruct: &PhaseResult{Examples: 24, Phase: Phase{BatchSize: 4, Accumulate: 1}, ResumedFrom: "ck/instruct/ckpt-3.gtc",
			Train: train.Result{Steps: 3, Resumed: 3}}}
	opts := Options{PretrainPath: "corpus.txt", InstructionPath: "inst.jsonl", Train: train.Config{BatchSize: 32}}
	var b strings.Builder
	if err := r.Report(opts, "go", "").WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := `device:      go
model:       1 layers x 2 heads, width 8, context 12, ffn swiglu (24), attention softmax, norm rms, vocabulary 26, 1160 parameters
pretrain:    186 examples, batch 8 x 2, 3 steps (first step 0.006s, median step 0.003s), loss 3.1980 (first step 3.2649)
             stopped: no better val_loss
instruct:    24 examples, batch 4 x 1, already complete at step 3
             resumed from ck/instruct/ckpt-3.gtc (step 3)
val loss:    2.0000 nats/char, perplexity 7.389
response:    loss 3.2417 before instruction tuning, 3.1128 after (nats/char of the responses)
checkpoint:  ck/instruct/ckpt-3.gtc
`
	if got := b.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}

	r.ValLoss, r.ResponseLossBefore, r.ResponseLossAfter, r.Checkpoint = math.NaN(), math.NaN(), math.NaN(), ""
	r.Pretrain = &PhaseResult{Examples: 186, Phase: Phase{BatchSize: 8, Accumulate: 1}, ResumedFrom: "ck/pretrain/ckpt-2.gtc",
		FirstLoss: 3.1, FirstStepSec: 0.004, StepSec: 0.002, Train: train.Result{Steps: 4, Resumed: 2, Loss: 3}}
	r.Instruct = &PhaseResult{Skipped: "no instructions"}
	rep := r.Report(opts, "cpu", "")
	b.Reset()
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want = `device:      cpu
model:       1 layers x 2 heads, width 8, context 12, ffn swiglu (24), attention softmax, norm rms, vocabulary 26, 1160 parameters
pretrain:    186 examples, batch 8 x 1, 4 steps (first step 0.004s, median step 0.002s), loss 3.0000 (first step 3.1000)
             resumed from ck/pretrain/ckpt-2.gtc (step 2)
instruct:    skipped: no instructions
`
	if got := b.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	js, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(js); strings.Contains(s, "response_loss_before") || strings.Contains(s, "val_loss_nats_per_char") ||
		!strings.Contains(s, `"pretrain_data":"corpus.txt"`) {
		t.Errorf("JSON: %s", s)
	}
}

// TestSetPhases checks how settings for both phases merge with each
// phase's own, and the checks of SetPhases.
func TestSetPhases(t *testing.T) {
	pre := Phase{Epochs: 1, BatchSize: 32, Accumulate: 1}
	inst := Phase{Epochs: 3, BatchSize: 16, Accumulate: 1, Steps: 7, LearningRate: 0.5}
	arch := Arch{Layers: 1, Heads: 2, Width: 8, Context: 12}
	for _, tc := range []struct {
		name                string
		both                Both
		preGiven, instGiven Given
		auto                bool
		noInstructions      bool
		wantPre, wantInst   Phase
	}{
		{name: "own settings", wantPre: pre, wantInst: inst},
		{name: "both", both: Both{BatchSize: 6, Epochs: 2, Accumulate: 4, Steps: 5},
			wantPre:  Phase{Epochs: 2, BatchSize: 6, Accumulate: 4, Steps: 5},
			wantInst: Phase{Epochs: 2, BatchSize: 6, Accumulate: 4, Steps: 7, LearningRate: 0.5}},
		{name: "given wins", both: Both{BatchSize: 6, Epochs: 2, Accumulate: 4}, preGiven: Given{BatchSize: true},
			instGiven: Given{Epochs: true, Accumulate: true},
			wantPre:   Phase{Epochs: 2, BatchSize: 32, Accumulate: 4},
			wantInst:  Phase{Epochs: 3, BatchSize: 6, Accumulate: 1, Steps: 7, LearningRate: 0.5}},
		{name: "auto", both: Both{BatchSize: 6}, auto: true, instGiven: Given{BatchSize: true},
			wantPre: Phase{Epochs: 1, Accumulate: 1}, wantInst: inst},
		{name: "no instructions", noInstructions: true, wantPre: pre},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{Arch: arch, PretrainPath: "corpus.txt", InstructionPath: "inst.jsonl", AutoBatchSize: tc.auto}
			if tc.noInstructions {
				o.InstructionPath = ""
			}
			if err := o.SetPhases(pre, tc.preGiven, inst, tc.instGiven, tc.both); err != nil {
				t.Fatal(err)
			}
			if o.Pretrain != tc.wantPre || o.Instruct != tc.wantInst {
				t.Errorf("pretrain %+v, instruct %+v; want %+v, %+v", o.Pretrain, o.Instruct, tc.wantPre, tc.wantInst)
			}
		})
	}

	// A phase of 0 epochs is skipped, whatever its steps, and its data dropped.
	o := Options{Arch: arch, PretrainPath: "corpus.txt", InstructionPath: "inst.jsonl"}
	if err := o.SetPhases(pre, Given{}, Phase{Steps: 9, BatchSize: 4, Accumulate: 1}, Given{}, Both{Steps: 3}); err != nil {
		t.Fatal(err)
	}
	if o.Instruct != (Phase{}) || o.InstructionPath != "" || o.PretrainPath != "corpus.txt" || o.Pretrain.Steps != 3 {
		t.Errorf("skipped instruction phase: %+v", o)
	}

	for _, tc := range []struct {
		name      string
		pre, inst Phase
		both      Both
		arch      Arch
		want      string
	}{
		{"negative", pre, inst, Both{Steps: -1}, arch, "Both.Steps, Both.Epochs, Both.Accumulate, Pretrain.Steps and Instruct.Steps must be >= 0"},
		{"negative phase steps", pre, Phase{Epochs: 1, Steps: -2}, Both{}, arch, "must be >= 0"},
		{"batch", Phase{Epochs: 1, Accumulate: 1}, inst, Both{}, arch, "Pretrain.BatchSize 0: want >= 1"},
		{"accumulate", pre, Phase{Epochs: 1, BatchSize: 4}, Both{}, arch, "Instruct.Accumulate 0: want >= 1"},
		{"nothing", Phase{}, Phase{}, Both{Steps: 4}, arch, "nothing to train: Pretrain.Epochs is 0 and there is no InstructionPath"},
		{"arch", pre, inst, Both{}, Arch{Layers: 1, Heads: 3, Width: 8}, "Width 8 is not a multiple of Heads 3"},
	} {
		o := Options{Arch: tc.arch, InstructionPath: "inst.jsonl"}
		if err := o.SetPhases(tc.pre, Given{}, tc.inst, Given{}, tc.both); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}
