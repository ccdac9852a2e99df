package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/gomlx/gomlx/backends"
	"github.com/spf13/cobra"

	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/models/charlstm"
	"github.com/gotrain/gotrain/models/text"
	"github.com/gotrain/gotrain/models/transformer"
	"github.com/gotrain/gotrain/train"
)

func newLSTMSampleCmd(g *globals) *cobra.Command {
	return newSampleCmd(g, "lm lstm", "Generate text with a trained character-level LSTM",
		`lm lstm sample reads the prompt and generates --length characters, drawing
each from the softmax of the logits divided by --temperature (0: the most
likely character). The same --seed gives the same text. --model is a
checkpoint file written by lm lstm train, or its directory (the newest).`,
		"checkpoint file (or directory: its newest) written by lm lstm train", false,
		charlstm.Generate)
}

func newLMTrainCmd(g *globals) *cobra.Command {
	var rf runFlags
	o := charlstm.DefaultOptions()
	o.Logf = logf
	cmd := &cobra.Command{
		Use:   "train [--data FILE.txt]",
		Short: "Train a character-level LSTM on a UTF-8 text",
		Long: `lm lstm train builds a vocabulary of the runes of the corpus, holds out its
last 10% for validation, cuts the rest into windows of --seq-length+1
characters every --step characters and trains a stacked LSTM to predict the
next character, with the training harness (checkpoints in --out, --resume,
clipping, early stopping on the validation loss). It reports the validation
loss in nats per character and the perplexity. The default corpus is
Newton's Opticks from the Go source tree.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return flagError(runLMTrain(cmd, g, &rf, &o), fieldFlags(cmd.Flags(), &o))
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Path, "data", "", "UTF-8 text corpus (default: $GOROOT/"+text.DefaultCorpusName+")")
	f.IntVar(&o.Hidden, "hidden-size", o.Hidden, "LSTM hidden size")
	f.IntVar(&o.Layers, "layers", o.Layers, "stacked LSTM layers")
	f.IntVar(&o.SeqLength, "seq-length", o.SeqLength, "characters per training window (the model reads them, predicting each next one)")
	f.IntVar(&o.Step, "step", o.Step, "stride between training windows, in characters")
	f.Float64Var(&o.ValFraction, "val-fraction", o.ValFraction, "fraction of the text, at its end, held out for validation (0: none)")
	rf.batchSize, rf.out = fmt.Sprint(o.Train.BatchSize), "checkpoints"
	addTrainFlags(cmd, &o.Train, &rf, "batch size, or auto (the largest that fits, on an accelerator; 64 on the host)",
		"output directory: each run keeps its checkpoints in a folder of its own there (run-TIME-ID, with run.json)")
	addDistributedFlag(cmd, &rf)
	f.Lookup("early-stop-patience").Usage = "stop after this many validations (every --eval-every steps) without a better --early-stop-monitor (0: no early stopping)"
	deprecatedAlias(f, "lr", "learning-rate")
	deprecatedAlias(f, "early-stop-patience", "patience")
	deprecatedAlias(f, "steps", "max-steps")
	deprecatedAlias(f, "out", "checkpoint-dir")
	return cmd
}

// runLMTrain runs `lm lstm train` with o, the options the flags set.
func runLMTrain(cmd *cobra.Command, g *globals, rf *runFlags, opts *charlstm.Options) error {
	const name = "lm lstm train"
	if err := g.outputs(cmd, []string{"metrics-log", "perf-summary"}, []string{"data"}, nil); err != nil {
		return err
	}
	o := *opts
	err := valFraction(&o.ValFraction)
	if err == nil {
		o.AutoBatchSize, err = o.Train.SetRun(rf.batchSize, rf.out, rf.resume, train.ResumeDir)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	o.Progress, o.MaxBytes = cmd.ErrOrStderr(), g.maxInput()
	if err := g.joinRanks(name, rf, &o.Train); err != nil {
		return err
	}
	return g.runTraining(cmd, name, func(ctx context.Context, eng *device.Engine, b backends.Backend) (textReport, error) {
		out, err := charlstm.Train(ctx, b, o)
		if err != nil {
			return nil, err
		}
		return out.Report(eng.Name(), eng.Warning()), nil
	})
}

func newTransformerSampleCmd(g *globals) *cobra.Command {
	return newSampleCmd(g, "lm transformer", "Generate text with a trained transformer (key/value cache)",
		`lm transformer sample reads the prompt and generates --length characters,
drawing each from the softmax of the logits divided by --temperature (0: the
most likely character), among the --top-k most likely (0: all). The same
--seed gives the same text. Each character costs one incremental step with a
key/value cache. --model is a checkpoint file written by lm transformer train,
or a run's --out directory (its newest instruction-tuned checkpoint, else
its newest pretrained one).`,
		"checkpoint file, or checkpoint directory, written by lm transformer train", true,
		transformer.Generate)
}

// lmTransformerFlags are the flags of `lm transformer train`: opts holds
// those of transformer.Options (its Train those of the harness).
type lmTransformerFlags struct {
	run  runFlags
	both transformer.Both
	opts transformer.Options
}

func newLMTransformerTrainCmd(g *globals) *cobra.Command {
	fl := lmTransformerFlags{opts: transformer.DefaultOptions()}
	fl.opts.Logf = logf
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
			return flagError(runLMTransformerTrain(cmd, g, &fl), fieldFlags(cmd.Flags(), &fl.both, &fl.opts))
		},
	}
	f, a := cmd.Flags(), &fl.opts.Arch
	f.StringVar(&fl.opts.PretrainPath, "pretrain-data", "", "UTF-8 text corpus for pretraining (default: $GOROOT/"+text.DefaultCorpusName+")")
	f.IntVar(&fl.opts.Pretrain.Epochs, "pretrain-epochs", fl.opts.Pretrain.Epochs, "passes over the pretraining windows (0: no pretraining)")
	f.IntVar(&fl.opts.Pretrain.BatchSize, "pretrain-batch-size", fl.opts.Pretrain.BatchSize, "pretraining micro-batch size (windows)")
	f.IntVar(&fl.opts.Pretrain.Accumulate, "pretrain-accumulate", fl.opts.Pretrain.Accumulate, "pretraining micro-batches per optimizer step")
	f.IntVar(&fl.opts.Pretrain.Steps, "pretrain-max-steps", 0, "stop pretraining after N optimizer steps (0: --steps, else the epochs)")
	f.StringVar(&fl.opts.InstructionPath, "instruction-data", "", `JSONL instruction data, one {"prompt": ..., "response": ...} per line (none: no instruction tuning)`)
	f.IntVar(&fl.opts.Instruct.Epochs, "instruction-epochs", fl.opts.Instruct.Epochs, "passes over the instruction examples (0: no instruction tuning)")
	f.IntVar(&fl.opts.Instruct.BatchSize, "instruction-batch-size", fl.opts.Instruct.BatchSize, "instruction-tuning micro-batch size (examples; at most their number)")
	f.IntVar(&fl.opts.Instruct.Accumulate, "instruction-accumulate", fl.opts.Instruct.Accumulate, "instruction-tuning micro-batches per optimizer step")
	f.IntVar(&fl.opts.Instruct.Steps, "instruction-max-steps", 0, "stop instruction tuning after N optimizer steps (0: --steps, else the epochs)")
	f.Float64Var(&fl.opts.Instruct.LearningRate, "instruction-lr", 0, "peak learning rate of instruction tuning (0: --lr)")
	f.IntVar(&a.Layers, "layers", a.Layers, "transformer blocks")
	f.IntVar(&a.Heads, "heads", a.Heads, "attention heads")
	f.IntVar(&a.Width, "width", a.Width, "model width (a multiple of --heads)")
	f.IntVar(&a.Context, "context", a.Context, "context length in characters")
	f.IntVar(&a.Hidden, "ffn-hidden", 0, "feed-forward inner width (0: 8/3 x width, rounded up to a multiple of 8)")
	f.StringVar(&a.Attention, "attention", a.Attention, "attention: softmax, or poly (polynomial kernel normalised per query)")
	f.StringVar(&a.FFN, "ffn", a.FFN, "feed-forward: swiglu, or richards (GLU with a learnable Richards-curve gate)")
	f.StringVar(&a.Norm, "norm", a.Norm, "normalisation: rms (RMSNorm) or layer (LayerNorm)")
	f.IntVar(&fl.opts.Stride, "stride", fl.opts.Stride, "distance in characters between the starts of two pretraining windows")
	f.Float64Var(&fl.opts.ValFraction, "val-fraction", fl.opts.ValFraction, "fraction of the corpus, at its end, held out for validation (0: none)")
	fl.run.out = "checkpoints"
	addTrainFlags(cmd, &fl.opts.Train, &fl.run, "batch size of both phases, N or auto (the largest that fits, on an accelerator; 32 on the host), unless the phase's flag is given (default: --pretrain-batch-size, --instruction-batch-size)",
		"output directory: each run keeps its checkpoints in a folder of its own in DIR/pretrain and DIR/instruct", "steps", "epochs", "time-limit", "accumulate")
	f.IntVar(&fl.both.Steps, "steps", 0, "cap on the optimizer steps of each phase (0: run the epochs)")
	f.IntVar(&fl.both.Epochs, "epochs", 0, "passes over the data of both phases, unless the phase's flag is given (0: --pretrain-epochs, --instruction-epochs)")
	f.IntVar(&fl.both.Accumulate, "accumulate", 0, "micro-batches per optimizer step in both phases, unless the phase's flag is given (0: --pretrain-accumulate, --instruction-accumulate)")
	deprecatedAlias(f, "steps", "max-steps")
	deprecatedAlias(f, "out", "checkpoint-dir")
	return cmd
}

// runLMTransformerTrain runs `lm transformer train` with the flags' values.
func runLMTransformerTrain(cmd *cobra.Command, g *globals, fl *lmTransformerFlags) error {
	const name = "lm transformer train"
	if err := g.outputs(cmd, []string{"metrics-log", "perf-summary"}, []string{"pretrain-data", "instruction-data"}, nil); err != nil {
		return err
	}
	o := fl.opts
	var err error
	if o.AutoBatchSize, err = o.Train.SetRun(fl.run.batchSize, fl.run.out, fl.run.resume, transformer.ResumeDir); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if fl.run.batchSize != "" && !o.AutoBatchSize {
		fl.both.BatchSize = o.Train.BatchSize
	}
	given := func(prefix string) transformer.Given {
		set := cmd.Flags().Changed
		return transformer.Given{BatchSize: set(prefix + "-batch-size"), Epochs: set(prefix + "-epochs"), Accumulate: set(prefix + "-accumulate")}
	}
	if err := o.SetPhases(o.Pretrain, given("pretrain"), o.Instruct, given("instruction"), fl.both); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if err := valFraction(&o.ValFraction); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	o.Progress, o.MaxBytes = cmd.ErrOrStderr(), g.maxInput()
	return g.runTraining(cmd, name, func(ctx context.Context, eng *device.Engine, backend backends.Backend) (textReport, error) {
		// A device that lacks an operation the model uses is an error, or
		// with --fallback a move to simplego.
		var alt *device.Engine
		checked, warning, err := transformer.PrepareBackend(backend, o.Arch, o.Train.Precision, g.fallback, func() (b backends.Backend, err error) {
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
		dev, fallback := eng.Name(), eng.Warning()
		if checked != backend {
			dev, fallback = alt.Name(), warning
			fmt.Fprintln(cmd.ErrOrStderr(), warning)
		} else {
			slog.Info(name+": device check passed: the backend has every operation the model uses", "device", dev, "backend", backend.Name())
		}
		out, err := transformer.Train(ctx, checked, o)
		if err != nil {
			return nil, err
		}
		return out.Report(o, dev, fallback), nil
	})
}

// valFraction checks --val-fraction (0 <= f < 1) and turns its 0 (none)
// into the models' negative (their 0 is the default).
func valFraction(f *float64) error {
	if *f < 0 || *f >= 1 {
		return fmt.Errorf("--val-fraction %g: want 0 <= f < 1", *f)
	} else if *f == 0 {
		*f = -1
	}
	return nil
}
