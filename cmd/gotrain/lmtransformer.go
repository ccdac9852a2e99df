package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/gomlx/gomlx/backends"
	"github.com/spf13/cobra"

	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/models/text"
	"github.com/gotrain/gotrain/models/transformer"
	"github.com/gotrain/gotrain/train"
)

func newLMTransformerCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "transformer", Short: "Character-level transformer language model, pretraining and instruction tuning (docs/TRANSFORMER.md)"}
	cmd.AddCommand(newLMTransformerTrainCmd(g), newSampleCmd(g, "lm transformer", "Generate text with a trained transformer (key/value cache)",
		`lm transformer sample reads the prompt and generates --length characters,
drawing each from the softmax of the logits divided by --temperature (0: the
most likely character), among the --top-k most likely (0: all). The same
--seed gives the same text. Each character costs one incremental step with a
key/value cache. --model is a checkpoint file written by lm transformer train,
or a run's --out directory (its newest instruction-tuned checkpoint, else
its newest pretrained one).`,
		"checkpoint file, or checkpoint directory, written by lm transformer train", true,
		func(b backends.Backend, r *sampleReport) error {
			m, err := transformer.Load(b, r.Model)
			if err == nil {
				r.Step = m.Step
				r.Text, err = m.Sample(transformer.SampleOptions{Prompt: r.Prompt, Length: r.Length, Temperature: r.Temperature,
					TopK: *r.TopK, Seed: r.Seed})
			}
			return err
		}))
	return cmd
}

// lmTransformerFlags are the flags of `lm transformer train`: opts holds
// those of transformer.Options (its Train those of the harness).
type lmTransformerFlags struct {
	run          runFlags
	pretrainData string
	pre, inst    transformer.Phase
	both         transformer.Both
	opts         transformer.Options
}

// lmTransformerFields maps transformer's option names in its errors to the flags.
var lmTransformerFields = map[string]string{"Layers": "layers", "Heads": "heads", "Width": "width", "Context": "context",
	"Hidden": "ffn-hidden", "Attention": "attention", "FFN": "ffn", "Norm": "norm", "InstructionPath": "instruction-data",
	"Both.Steps": "steps", "Both.Epochs": "epochs", "Both.Accumulate": "accumulate",
	"Pretrain.Steps": "pretrain-max-steps", "Pretrain.Epochs": "pretrain-epochs", "Pretrain.BatchSize": "pretrain-batch-size",
	"Pretrain.Accumulate": "pretrain-accumulate", "Instruct.Steps": "instruction-max-steps", "Instruct.Epochs": "instruction-epochs",
	"Instruct.BatchSize": "instruction-batch-size", "Instruct.Accumulate": "instruction-accumulate"}

func newLMTransformerTrainCmd(g *globals) *cobra.Command {
	fl := lmTransformerFlags{opts: transformer.Options{Train: train.DefaultConfig(), Logf: logf}}
	fl.opts.Train.Optimizer = train.OptimizerAdamW
	fl.opts.Train.LearningRate = 0.001
	fl.opts.Train.ClipNorm = 1
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
			return flagError(runLMTransformerTrain(cmd, g, fl), lmTransformerFields)
		},
	}
	f, a := cmd.Flags(), &fl.opts.Arch
	f.StringVar(&fl.pretrainData, "pretrain-data", "", "UTF-8 text corpus for pretraining (default: $GOROOT/"+text.DefaultCorpusName+")")
	f.IntVar(&fl.pre.Epochs, "pretrain-epochs", 1, "passes over the pretraining windows (0: no pretraining)")
	f.IntVar(&fl.pre.BatchSize, "pretrain-batch-size", 32, "pretraining micro-batch size (windows)")
	f.IntVar(&fl.pre.Accumulate, "pretrain-accumulate", 1, "pretraining micro-batches per optimizer step")
	f.IntVar(&fl.pre.Steps, "pretrain-max-steps", 0, "stop pretraining after N optimizer steps (0: --steps, else the epochs)")
	f.StringVar(&fl.opts.InstructionPath, "instruction-data", "", `JSONL instruction data, one {"prompt": ..., "response": ...} per line (none: no instruction tuning)`)
	f.IntVar(&fl.inst.Epochs, "instruction-epochs", 3, "passes over the instruction examples (0: no instruction tuning)")
	f.IntVar(&fl.inst.BatchSize, "instruction-batch-size", 16, "instruction-tuning micro-batch size (examples; at most their number)")
	f.IntVar(&fl.inst.Accumulate, "instruction-accumulate", 1, "instruction-tuning micro-batches per optimizer step")
	f.IntVar(&fl.inst.Steps, "instruction-max-steps", 0, "stop instruction tuning after N optimizer steps (0: --steps, else the epochs)")
	f.Float64Var(&fl.inst.LearningRate, "instruction-lr", 0, "peak learning rate of instruction tuning (0: --lr)")
	f.IntVar(&a.Layers, "layers", 4, "transformer blocks")
	f.IntVar(&a.Heads, "heads", 4, "attention heads")
	f.IntVar(&a.Width, "width", 128, "model width (a multiple of --heads)")
	f.IntVar(&a.Context, "context", 64, "context length in characters")
	f.IntVar(&a.Hidden, "ffn-hidden", 0, "feed-forward inner width (0: 8/3 x width, rounded up to a multiple of 8)")
	f.StringVar(&a.Attention, "attention", transformer.AttentionSoftmax, "attention: softmax, or poly (polynomial kernel normalised per query)")
	f.StringVar(&a.FFN, "ffn", transformer.FFNSwiGLU, "feed-forward: swiglu, or richards (GLU with a learnable Richards-curve gate)")
	f.StringVar(&a.Norm, "norm", transformer.NormRMS, "normalisation: rms (RMSNorm) or layer (LayerNorm)")
	f.IntVar(&fl.opts.Stride, "stride", 4, "distance in characters between the starts of two pretraining windows")
	f.Float64Var(&fl.opts.ValFraction, "val-fraction", 0.1, "fraction of the corpus, at its end, held out for validation (0: none)")
	addTrainFlags(cmd, &fl.opts.Train, &fl.run, trainFlagSpec{
		batchDefault: "", batchUsage: "batch size of both phases, N or auto (the largest that fits, on an accelerator; 32 on the host), unless the phase's flag is given (default: --pretrain-batch-size, --instruction-batch-size)",
		outDefault: "checkpoints", outUsage: "output directory of the run: checkpoints in DIR/pretrain and DIR/instruct",
		omit: []string{"steps", "epochs", "accumulate"}})
	f.IntVar(&fl.both.Steps, "steps", 0, "cap on the optimizer steps of each phase (0: run the epochs)")
	f.IntVar(&fl.both.Epochs, "epochs", 0, "passes over the data of both phases, unless the phase's flag is given (0: --pretrain-epochs, --instruction-epochs)")
	f.IntVar(&fl.both.Accumulate, "accumulate", 0, "micro-batches per optimizer step in both phases, unless the phase's flag is given (0: --pretrain-accumulate, --instruction-accumulate)")
	deprecatedAlias(f, "steps", "max-steps")
	deprecatedAlias(f, "out", "checkpoint-dir")
	return cmd
}

// runLMTransformerTrain runs `lm transformer train` with the flags' values.
func runLMTransformerTrain(cmd *cobra.Command, g *globals, fl lmTransformerFlags) error {
	const name = "lm transformer train"
	o := fl.opts
	var err error
	if o.AutoBatchSize, err = fl.run.resolve(&o.Train, fl.run.out, transformer.ResumeDir); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if fl.run.batchSize != "" && !o.AutoBatchSize {
		fl.both.BatchSize = o.Train.BatchSize
	}
	given := func(prefix string) transformer.Given {
		set := cmd.Flags().Changed
		return transformer.Given{BatchSize: set(prefix + "-batch-size"), Epochs: set(prefix + "-epochs"), Accumulate: set(prefix + "-accumulate")}
	}
	if err := o.SetPhases(fl.pre, given("pretrain"), fl.inst, given("instruction"), fl.both); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if o.ValFraction < 0 || o.ValFraction >= 1 {
		return fmt.Errorf("%s: --val-fraction %g: want 0 <= f < 1", name, o.ValFraction)
	} else if o.ValFraction == 0 {
		o.ValFraction = -1 // none; transformer's 0 is its default
	}
	if o.Pretrain.Epochs > 0 {
		if o.PretrainPath = fl.pretrainData; o.PretrainPath == "" {
			if o.PretrainPath, err = text.DefaultCorpusPath(); err != nil {
				return fmt.Errorf("%s: %w (name a corpus with --pretrain-data FILE.txt)", name, err)
			}
		}
	}
	o.Progress = cmd.ErrOrStderr()
	return g.runTraining(cmd, name, func(ctx context.Context, eng *device.Engine, backend backends.Backend) (textReport, error) {
		prec, err := train.ResolvePrecision(o.Train.Precision, backend, train.IsAccelerator(backend))
		if err != nil {
			return nil, err
		}
		// A device that lacks an operation the model uses is an error, or
		// with --fallback a move to simplego, selected like any device.
		var alt *device.Engine
		checked, warning, err := transformer.PrepareBackend(backend, o.Arch, prec, g.fallback, func() (b backends.Backend, err error) {
			alt, b, err = device.Open(string(device.SimpleGo))
			return b, err
		})
		if alt != nil {
			defer alt.Close()
		}
		if errors.As(err, new(*transformer.MissingError)) && !g.fallback {
			return nil, fmt.Errorf("device %s: %w; pass --fallback to continue on a device that has them", eng.Name(), err)
		} else if err != nil {
			return nil, fmt.Errorf("device %s: %w", eng.Name(), err)
		}
		fallback := eng.Warning()
		if checked != backend {
			eng.Close()
			eng, fallback = alt, warning
			fmt.Fprintln(cmd.ErrOrStderr(), warning)
		} else {
			slog.Info(name+": device check passed: the backend has every operation the model uses", "device", eng.Name(), "backend", backend.Name())
		}
		out, err := transformer.Train(ctx, checked, o)
		if err != nil {
			return nil, err
		}
		return out.Report(o, eng.Name(), fallback), nil
	})
}
