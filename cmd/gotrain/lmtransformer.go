package main

import (
	"errors"
	"fmt"
	"log/slog"
	"math"

	"github.com/gomlx/gomlx/backends"
	"github.com/spf13/cobra"

	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/models/text"
	"github.com/gotrain/gotrain/models/transformer"
	"github.com/gotrain/gotrain/train"
)

func newLMTransformerCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "transformer", Short: "Character-level transformer language model, pretraining and instruction tuning (docs/TRANSFORMER.md)"}
	cmd.AddCommand(newLMTransformerTrainCmd(g), newLMTransformerSampleCmd(g))
	return cmd
}

// lmTransformerFlags are the flags of `lm transformer train` that the
// harness's Config does not hold.
type lmTransformerFlags struct {
	run                           runFlags
	pretrainData, instructionData string
	arch                          transformer.Arch
	pre, inst                     transformer.Phase
	steps, epochs, accumulate     int
	stride                        int
	valFraction                   float64
}

// lmTransformerReport is the JSON printed by `lm transformer train --json`.
type lmTransformerReport struct {
	Device             string              `json:"device"`
	Fallback           string              `json:"fallback,omitempty"`
	PretrainData       string              `json:"pretrain_data,omitempty"`
	InstructionData    string              `json:"instruction_data,omitempty"`
	Result             *transformer.Result `json:"result"`
	ValLoss            *float64            `json:"val_loss_nats_per_char,omitempty"`
	ResponseLossBefore *float64            `json:"response_loss_before,omitempty"`
	ResponseLossAfter  *float64            `json:"response_loss_after,omitempty"`
	Config             train.Config        `json:"config"`
}

// lmTransformerFields maps transformer's option names in its errors to the flags.
var lmTransformerFields = map[string]string{"Layers": "layers", "Heads": "heads", "Width": "width", "Context": "context",
	"Hidden": "ffn-hidden", "Attention": "attention", "FFN": "ffn", "Norm": "norm"}

func newLMTransformerTrainCmd(g *globals) *cobra.Command {
	fl := lmTransformerFlags{}
	cfg := train.DefaultConfig()
	cfg.Optimizer = train.OptimizerAdamW
	cfg.LearningRate = 0.001
	cfg.ClipNorm = 1
	cmd := &cobra.Command{
		Use:   "train [--pretrain-data FILE.txt] [--instruction-data FILE.jsonl]",
		Short: "Pretrain a character-level transformer on text, then instruction-tune it",
		Long: `lm transformer train builds a vocabulary of the runes of the corpus and the
instruction data, checks that the device has every operation the model uses,
then trains in two phases with the training harness: pretraining on windows
of --context+1 characters of the corpus (its last --val-fraction held out for
validation), then instruction tuning on the JSONL examples
{"prompt": ..., "response": ...}, with the loss on the response characters
only. --batch-size, --epochs and --accumulate set both phases unless the
phase's own flag is given; --steps caps each phase. A phase with 0 epochs is
skipped. Checkpoints go to --out/pretrain and --out/instruct; --resume
continues the phase the run was in. The default corpus is Newton's Opticks
from the Go source tree.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return flagError(runLMTransformerTrain(cmd, g, &fl, &cfg), lmTransformerFields)
		},
	}
	f := cmd.Flags()
	f.StringVar(&fl.pretrainData, "pretrain-data", "", "UTF-8 text corpus for pretraining (default: $GOROOT/"+text.DefaultCorpusName+")")
	f.IntVar(&fl.pre.Epochs, "pretrain-epochs", 1, "passes over the pretraining windows (0: no pretraining)")
	f.IntVar(&fl.pre.BatchSize, "pretrain-batch-size", 32, "pretraining micro-batch size (windows)")
	f.IntVar(&fl.pre.Accumulate, "pretrain-accumulate", 1, "pretraining micro-batches per optimizer step")
	f.IntVar(&fl.pre.Steps, "pretrain-max-steps", 0, "stop pretraining after N optimizer steps (0: --steps, else the epochs)")
	f.StringVar(&fl.instructionData, "instruction-data", "", `JSONL instruction data, one {"prompt": ..., "response": ...} per line (none: no instruction tuning)`)
	f.IntVar(&fl.inst.Epochs, "instruction-epochs", 3, "passes over the instruction examples (0: no instruction tuning)")
	f.IntVar(&fl.inst.BatchSize, "instruction-batch-size", 16, "instruction-tuning micro-batch size (examples; at most their number)")
	f.IntVar(&fl.inst.Accumulate, "instruction-accumulate", 1, "instruction-tuning micro-batches per optimizer step")
	f.IntVar(&fl.inst.Steps, "instruction-max-steps", 0, "stop instruction tuning after N optimizer steps (0: --steps, else the epochs)")
	f.Float64Var(&fl.inst.LearningRate, "instruction-lr", 0, "peak learning rate of instruction tuning (0: --lr)")
	f.IntVar(&fl.arch.Layers, "layers", 4, "transformer blocks")
	f.IntVar(&fl.arch.Heads, "heads", 4, "attention heads")
	f.IntVar(&fl.arch.Width, "width", 128, "model width (a multiple of --heads)")
	f.IntVar(&fl.arch.Context, "context", 64, "context length in characters")
	f.IntVar(&fl.arch.Hidden, "ffn-hidden", 0, "feed-forward inner width (0: 8/3 x width, rounded up to a multiple of 8)")
	f.StringVar(&fl.arch.Attention, "attention", transformer.AttentionSoftmax, "attention: softmax, or poly (polynomial kernel normalised per query)")
	f.StringVar(&fl.arch.FFN, "ffn", transformer.FFNSwiGLU, "feed-forward: swiglu, or richards (GLU with a learnable Richards-curve gate)")
	f.StringVar(&fl.arch.Norm, "norm", transformer.NormRMS, "normalisation: rms (RMSNorm) or layer (LayerNorm)")
	f.IntVar(&fl.stride, "stride", 4, "distance in characters between the starts of two pretraining windows")
	f.Float64Var(&fl.valFraction, "val-fraction", 0.1, "fraction of the corpus, at its end, held out for validation (0: none)")
	addTrainFlags(cmd, &cfg, &fl.run, trainFlagSpec{
		batchDefault: "", batchUsage: "batch size of both phases, N or auto (the largest that fits, on an accelerator; 32 on the host), unless the phase's flag is given (default: --pretrain-batch-size, --instruction-batch-size)",
		outDefault: "checkpoints", outUsage: "output directory of the run: checkpoints in DIR/pretrain and DIR/instruct",
		omit: []string{"steps", "epochs", "accumulate"}})
	f.IntVar(&fl.steps, "steps", 0, "cap on the optimizer steps of each phase (0: run the epochs)")
	f.IntVar(&fl.epochs, "epochs", 0, "passes over the data of both phases, unless the phase's flag is given (0: --pretrain-epochs, --instruction-epochs)")
	f.IntVar(&fl.accumulate, "accumulate", 0, "micro-batches per optimizer step in both phases, unless the phase's flag is given (0: --pretrain-accumulate, --instruction-accumulate)")
	deprecatedAlias(f, "steps", func(n string) { f.IntVar(&fl.steps, n, 0, "cap on the optimizer steps of each phase") }, "max-steps")
	return cmd
}

func runLMTransformerTrain(cmd *cobra.Command, g *globals, fl *lmTransformerFlags, cfg *train.Config) error {
	const name = "lm transformer train"
	c := *cfg
	auto, err := fl.run.resolve(&c, fl.run.out, transformer.ResumeDir)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if fl.steps < 0 || fl.pre.Steps < 0 || fl.inst.Steps < 0 || fl.epochs < 0 || fl.accumulate < 0 {
		return fmt.Errorf("%s: --steps, --epochs, --accumulate, --pretrain-max-steps and --instruction-max-steps must be >= 0", name)
	}
	// --batch-size, --epochs, --accumulate and --steps set both phases,
	// unless the phase's own flag is given.
	batch := 0
	if fl.run.batchSize != "" && !auto {
		batch = c.BatchSize
	}
	phase := func(p transformer.Phase, prefix string) transformer.Phase {
		set := cmd.Flags().Changed
		switch {
		case set(prefix + "-batch-size"):
		case auto:
			p.BatchSize = 0 // picked by transformer.Train (Options.AutoBatchSize)
		case batch > 0:
			p.BatchSize = batch
		}
		if fl.epochs > 0 && !set(prefix+"-epochs") {
			p.Epochs = fl.epochs
		}
		if fl.accumulate > 0 && !set(prefix+"-accumulate") {
			p.Accumulate = fl.accumulate
		}
		if p.Steps == 0 {
			p.Steps = fl.steps
		}
		if p.Epochs == 0 {
			return transformer.Phase{} // skipped, whatever --steps says
		}
		return p
	}
	opts := transformer.Options{Arch: fl.arch, Pretrain: phase(fl.pre, "pretrain"), Instruct: phase(fl.inst, "instruction"),
		Stride: fl.stride, Train: c, AutoBatchSize: auto, Logf: logf, Progress: cmd.ErrOrStderr()}
	if fl.instructionData == "" {
		opts.Instruct = transformer.Phase{}
	}
	for _, p := range []struct {
		prefix string
		ph     transformer.Phase
	}{{"pretrain", opts.Pretrain}, {"instruction", opts.Instruct}} {
		switch {
		case p.ph.Epochs == 0: // skipped
		case p.ph.BatchSize < 1 && !(auto && p.ph.BatchSize == 0):
			return fmt.Errorf("%s: --%s-batch-size %d: want >= 1", name, p.prefix, p.ph.BatchSize)
		case p.ph.Accumulate < 1:
			return fmt.Errorf("%s: --%s-accumulate %d: want >= 1", name, p.prefix, p.ph.Accumulate)
		}
	}
	if fl.valFraction < 0 || fl.valFraction >= 1 {
		return fmt.Errorf("%s: --val-fraction %g: want 0 <= f < 1", name, fl.valFraction)
	}
	opts.ValFraction = fl.valFraction
	if opts.ValFraction == 0 {
		opts.ValFraction = -1
	}
	if opts.Pretrain.Epochs > 0 {
		if opts.PretrainPath = fl.pretrainData; opts.PretrainPath == "" {
			if opts.PretrainPath, err = text.DefaultCorpusPath(); err != nil {
				return fmt.Errorf("%s: %w (name a corpus with --pretrain-data FILE.txt)", name, err)
			}
		}
	}
	if opts.Instruct.Epochs > 0 {
		opts.InstructionPath = fl.instructionData
	}
	if opts.Pretrain.Epochs == 0 && opts.Instruct.Epochs == 0 {
		return fmt.Errorf("%s: nothing to train: --pretrain-epochs is 0 and there is no --instruction-data (with --instruction-epochs > 0)", name)
	}
	probe := fl.arch
	probe.Vocab, probe.Context = 1, max(probe.Context, 1)
	if err := probe.Validate(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	eng, backend, err := g.trainEngine(cmd)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	defer func() { eng.Close() }() // eng may be replaced by the fallback below
	prec, err := train.ResolvePrecision(c.Precision, backend, train.IsAccelerator(backend))
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	devName := eng.Name()
	var goEngine *device.Engine
	checked, warning, err := transformer.PrepareBackend(backend, fl.arch, prec, g.fallback, func() (backends.Backend, error) {
		// The device lacks an operation the model uses: continue on
		// simplego (only with --fallback), selected like any device.
		e, b, err := device.Open(string(device.SimpleGo))
		if err != nil {
			return nil, err
		}
		goEngine, devName = e, e.Name()
		return b, nil
	})
	if err != nil {
		if goEngine != nil {
			goEngine.Close()
		}
		var miss *transformer.MissingError
		if errors.As(err, &miss) && !g.fallback {
			return fmt.Errorf("%s: device %s: %w; pass --fallback to continue on a device that has them", name, eng.Name(), err)
		}
		return fmt.Errorf("%s: device %s: %w", name, eng.Name(), err)
	}
	fallback := eng.Warning()
	if checked != backend {
		eng.Close()
		eng = goEngine
		fmt.Fprintln(cmd.ErrOrStderr(), warning)
		fallback = warning
	} else {
		if goEngine != nil {
			goEngine.Close()
		}
		slog.Info(name+": device check passed: the backend has every operation the model uses", "device", devName, "backend", backend.Name())
	}
	backend = checked
	ctx, stop := train.NotifyContext(cmd.Context())
	defer stop()
	out, err := transformer.Train(ctx, backend, opts)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	rep := lmTransformerReport{Device: devName, Fallback: fallback, PretrainData: opts.PretrainPath,
		InstructionData: opts.InstructionPath, Result: out, Config: opts.Train}
	if !math.IsNaN(out.ValLoss) {
		rep.ValLoss = &out.ValLoss
	}
	if !math.IsNaN(out.ResponseLossBefore) {
		rep.ResponseLossBefore = &out.ResponseLossBefore
	}
	if !math.IsNaN(out.ResponseLossAfter) {
		rep.ResponseLossAfter = &out.ResponseLossAfter
	}
	if g.json {
		return printJSON(cmd.OutOrStdout(), rep)
	}
	w := cmd.OutOrStdout()
	a := out.Arch
	fmt.Fprintf(w, "device:      %s\n", rep.Device)
	fmt.Fprintf(w, "model:       %d layers x %d heads, width %d, context %d, ffn %s (%d), attention %s, norm %s, vocabulary %d, %d parameters\n",
		a.Layers, a.Heads, a.Width, a.Context, a.FFN, a.Hidden, a.Attention, a.Norm, a.Vocab, out.Params)
	for _, ph := range []struct {
		name string
		r    *transformer.PhaseResult
	}{{"pretrain", out.Pretrain}, {"instruct", out.Instruct}} {
		if ph.r == nil {
			continue
		}
		if ph.r.Skipped != "" {
			fmt.Fprintf(w, "%-12s skipped: %s\n", ph.name+":", ph.r.Skipped)
			continue
		}
		if ph.r.Train.Steps == ph.r.Train.Resumed && ph.r.ResumedFrom != "" {
			fmt.Fprintf(w, "%-12s %d examples, batch %d x %d, already complete at step %d\n",
				ph.name+":", ph.r.Examples, ph.r.Phase.BatchSize, ph.r.Phase.Accumulate, ph.r.Train.Steps)
		} else {
			fmt.Fprintf(w, "%-12s %d examples, batch %d x %d, %d steps (first step %.3fs, median step %.3fs), loss %.4f (first step %.4f)\n",
				ph.name+":", ph.r.Examples, ph.r.Phase.BatchSize, ph.r.Phase.Accumulate, ph.r.Train.Steps, ph.r.FirstStepSec, ph.r.StepSec,
				ph.r.Train.Loss, ph.r.FirstLoss)
		}
		if ph.r.ResumedFrom != "" {
			fmt.Fprintf(w, "             resumed from %s (step %d)\n", ph.r.ResumedFrom, ph.r.Train.Resumed)
		}
		if ph.r.Train.Stopped != "" {
			fmt.Fprintf(w, "             stopped: %s\n", ph.r.Train.Stopped)
		}
	}
	if rep.ValLoss != nil {
		fmt.Fprintf(w, "val loss:    %.4f nats/char, perplexity %.3f\n", out.ValLoss, math.Exp(out.ValLoss))
	}
	if rep.ResponseLossAfter != nil {
		before := "n/a (resumed mid-phase)"
		if rep.ResponseLossBefore != nil {
			before = fmt.Sprintf("%.4f", out.ResponseLossBefore)
		}
		fmt.Fprintf(w, "response:    loss %s before instruction tuning, %.4f after (nats/char of the responses)\n", before, out.ResponseLossAfter)
	}
	if out.Checkpoint != "" {
		fmt.Fprintf(w, "checkpoint:  %s\n", out.Checkpoint)
	}
	return nil
}

// lmTransformerSampleReport is the JSON printed by `lm transformer sample --json`.
type lmTransformerSampleReport struct {
	Device      string  `json:"device"`
	Model       string  `json:"model"`
	Step        int64   `json:"step"`
	Prompt      string  `json:"prompt"`
	Text        string  `json:"text"`
	Length      int     `json:"length"`
	Temperature float64 `json:"temperature"`
	TopK        int     `json:"top_k"`
	Seed        uint64  `json:"seed"`
}

func newLMTransformerSampleCmd(g *globals) *cobra.Command {
	var model string
	var so transformer.SampleOptions
	cmd := &cobra.Command{
		Use:   "sample --model CKPT --prompt TEXT",
		Short: "Generate text with a trained transformer (key/value cache)",
		Long: `lm transformer sample reads the prompt and generates --length characters,
drawing each from the softmax of the logits divided by --temperature (0: the
most likely character), among the --top-k most likely (0: all). The same
--seed gives the same text. Each character costs one incremental step with a
key/value cache. --model is a checkpoint file written by lm transformer train,
or a run's --out directory (its newest instruction-tuned checkpoint, else
its newest pretrained one).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			const name = "lm transformer sample"
			if model == "" {
				return errors.New(name + ": --model is required (a checkpoint file or directory written by lm transformer train)")
			}
			eng, backend, err := g.trainEngine(cmd)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			defer eng.Close()
			m, err := transformer.Load(backend, model)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			text, err := m.Sample(so)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), lmTransformerSampleReport{Device: eng.Name(), Model: model, Step: m.Step,
					Prompt: so.Prompt, Text: text, Length: so.Length, Temperature: so.Temperature, TopK: so.TopK, Seed: so.Seed})
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), so.Prompt+text)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&model, "model", "", "checkpoint file, or checkpoint directory, written by lm transformer train")
	f.StringVar(&so.Prompt, "prompt", "The ", "text the model reads before generating (every character must be in its vocabulary)")
	f.IntVar(&so.Length, "length", 200, "characters to generate")
	f.Float64Var(&so.Temperature, "temperature", 1, "sampling temperature (0: argmax)")
	f.IntVar(&so.TopK, "top-k", 0, "draw among the K most likely characters (0: all)")
	f.Uint64Var(&so.Seed, "seed", 0, "sampling seed")
	return cmd
}
