package main

import (
	"context"
	"fmt"

	"github.com/gomlx/gomlx/backends"
	"github.com/spf13/cobra"

	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/models/charlstm"
	"github.com/gotrain/gotrain/models/text"
	"github.com/gotrain/gotrain/train"
)

func newLMCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "lm", Short: "Train language models and sample from them"}
	lstm := &cobra.Command{Use: "lstm", Short: "Character-level LSTM language model (docs/LSTM.md)"}
	lstm.AddCommand(newLMTrainCmd(g), newSampleCmd(g, "lm lstm", "Generate text with a trained character-level LSTM",
		`lm lstm sample reads the prompt and generates --length characters, drawing
each from the softmax of the logits divided by --temperature (0: the most
likely character). The same --seed gives the same text. --model is a
checkpoint file written by lm lstm train, or its directory (the newest).`,
		"checkpoint file (or directory: its newest) written by lm lstm train", false,
		func(b backends.Backend, r *sampleReport) error {
			m, err := charlstm.Load(b, r.Model)
			if err == nil {
				r.Step = m.Step
				r.Text, err = m.Sample(charlstm.SampleOptions{Prompt: r.Prompt, Length: r.Length, Temperature: r.Temperature, Seed: r.Seed})
			}
			return err
		}))
	cmd.AddCommand(lstm, newLMTransformerCmd(g))
	return cmd
}

// lmFields maps charlstm's option names in its errors to the flags.
var lmFields = map[string]string{"Hidden": "hidden-size", "Layers": "layers", "SeqLength": "seq-length"}

func newLMTrainCmd(g *globals) *cobra.Command {
	var rf runFlags
	o := charlstm.Options{Train: train.DefaultConfig(), Logf: logf}
	o.Train.Optimizer = train.OptimizerAdam
	o.Train.Epochs = 50
	o.Train.LearningRate = 0.001
	o.Train.ClipNorm = 5
	o.Train.EarlyStopPatience = 20
	o.Train.EarlyStopMonitor = "val_loss"
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
			return flagError(runLMTrain(cmd, g, &rf, o), lmFields)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Path, "data", "", "UTF-8 text corpus (default: $GOROOT/"+text.DefaultCorpusName+")")
	f.IntVar(&o.Hidden, "hidden-size", 512, "LSTM hidden size")
	f.IntVar(&o.Layers, "layers", 2, "stacked LSTM layers")
	f.IntVar(&o.SeqLength, "seq-length", 100, "characters per training window (the model reads them, predicting each next one)")
	f.IntVar(&o.Step, "step", 3, "stride between training windows, in characters")
	f.Float64Var(&o.ValFraction, "val-fraction", 0.1, "fraction of the text, at its end, held out for validation")
	addTrainFlags(cmd, &o.Train, &rf, trainFlagSpec{
		batchDefault: "512", batchUsage: "batch size, or auto (the largest that fits, on an accelerator; 64 on the host)",
		outDefault: "checkpoints", outUsage: "output directory of the run: its checkpoints"})
	f.Lookup("early-stop-patience").Usage = "stop after this many validations (one per epoch, or --eval-every steps) without a better --early-stop-monitor (0: no early stopping)"
	deprecatedAlias(f, "lr", "learning-rate")
	deprecatedAlias(f, "early-stop-patience", "patience")
	deprecatedAlias(f, "steps", "max-steps")
	deprecatedAlias(f, "out", "checkpoint-dir")
	return cmd
}

// runLMTrain runs `lm lstm train` with o, the options the flags set.
func runLMTrain(cmd *cobra.Command, g *globals, rf *runFlags, o charlstm.Options) error {
	const name = "lm lstm train"
	if o.ValFraction < 0 || o.ValFraction >= 1 {
		return fmt.Errorf("%s: --val-fraction %g: want 0 <= f < 1", name, o.ValFraction)
	} else if o.ValFraction == 0 {
		o.ValFraction = -1 // none; charlstm's 0 is its default
	}
	var err error
	if o.AutoBatchSize, err = rf.resolve(&o.Train, rf.out, train.ResumeDir); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if o.Path == "" {
		if o.Path, err = text.DefaultCorpusPath(); err != nil {
			return fmt.Errorf("%s: %w (name a corpus with --data FILE.txt)", name, err)
		}
	}
	o.Progress = cmd.ErrOrStderr()
	return g.runTraining(cmd, name, func(ctx context.Context, eng *device.Engine, b backends.Backend) (textReport, error) {
		out, err := charlstm.Train(ctx, b, o)
		if err != nil {
			return nil, err
		}
		return out.Report(eng.Name(), eng.Warning()), nil
	})
}
