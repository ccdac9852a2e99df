package main

import (
	"errors"
	"fmt"
	"math"

	"github.com/spf13/cobra"

	"github.com/gotrain/gotrain/models/charlstm"
	"github.com/gotrain/gotrain/models/text"
	"github.com/gotrain/gotrain/train"
)

func newLMCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "lm", Short: "Train language models and sample from them"}
	lstm := &cobra.Command{Use: "lstm", Short: "Character-level LSTM language model (docs/LSTM.md)"}
	lstm.AddCommand(newLMTrainCmd(g), newLMSampleCmd(g))
	cmd.AddCommand(lstm, newLMTransformerCmd(g))
	return cmd
}

// lmTrainFlags are the flags of `lm lstm train` that the harness's Config
// does not hold.
type lmTrainFlags struct {
	run                    runFlags
	data                   string
	hidden, layers, seqLen int
	step                   int
	valFraction            float64
}

// lmTrainReport is the JSON printed by `lm lstm train --json`.
type lmTrainReport struct {
	Device        string           `json:"device"`
	Fallback      string           `json:"fallback,omitempty"`
	Result        *charlstm.Result `json:"result"`
	ValLoss       *float64         `json:"val_loss_nats_per_char,omitempty"`
	ValPerplexity *float64         `json:"val_perplexity,omitempty"`
	BatchSize     int              `json:"batch_size"`
	FirstStepSec  float64          `json:"first_step_seconds"`
	StepSec       float64          `json:"median_step_seconds"`
	Config        train.Config     `json:"config"`
}

// lmFields maps charlstm's option names in its errors to the flags.
var lmFields = map[string]string{"Hidden": "hidden-size", "Layers": "layers", "SeqLength": "seq-length"}

func newLMTrainCmd(g *globals) *cobra.Command {
	fl := lmTrainFlags{}
	cfg := train.DefaultConfig()
	cfg.Optimizer = train.OptimizerAdam
	cfg.Epochs = 50
	cfg.LearningRate = 0.001
	cfg.ClipNorm = 5
	cfg.EarlyStopPatience = 20
	cfg.EarlyStopMonitor = "val_loss"
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
			return flagError(runLMTrain(cmd, g, &fl, &cfg), lmFields)
		},
	}
	f := cmd.Flags()
	f.StringVar(&fl.data, "data", "", "UTF-8 text corpus (default: $GOROOT/"+text.DefaultCorpusName+")")
	f.IntVar(&fl.hidden, "hidden-size", 512, "LSTM hidden size")
	f.IntVar(&fl.layers, "layers", 2, "stacked LSTM layers")
	f.IntVar(&fl.seqLen, "seq-length", 100, "characters per training window (the model reads them, predicting each next one)")
	f.IntVar(&fl.step, "step", 3, "stride between training windows, in characters")
	f.Float64Var(&fl.valFraction, "val-fraction", 0.1, "fraction of the text, at its end, held out for validation")
	addTrainFlags(cmd, &cfg, &fl.run, trainFlagSpec{
		batchDefault: "512", batchUsage: "batch size, or auto (the largest that fits, on an accelerator; 64 on the host)",
		outDefault: "checkpoints", outUsage: "output directory of the run: its checkpoints"})
	f.Lookup("early-stop-patience").Usage = "stop after this many validations (one per epoch, or --eval-every steps) without a better --early-stop-monitor (0: no early stopping)"
	deprecatedAlias(f, "lr", func(n string) { f.Float64Var(&cfg.LearningRate, n, cfg.LearningRate, "peak learning rate") }, "learning-rate")
	deprecatedAlias(f, "early-stop-patience", func(n string) {
		f.IntVar(&cfg.EarlyStopPatience, n, cfg.EarlyStopPatience, "early-stopping patience")
	}, "patience")
	deprecatedAlias(f, "steps", func(n string) { f.IntVar(&cfg.Steps, n, cfg.Steps, "optimizer steps") }, "max-steps")
	return cmd
}

func runLMTrain(cmd *cobra.Command, g *globals, fl *lmTrainFlags, cfg *train.Config) error {
	const name = "lm lstm train"
	if fl.valFraction < 0 || fl.valFraction >= 1 {
		return fmt.Errorf("%s: --val-fraction %g: want 0 <= f < 1", name, fl.valFraction)
	}
	c := *cfg
	auto, err := fl.run.resolve(&c, fl.run.out, train.ResumeDir)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	path := fl.data
	if path == "" {
		if path, err = text.DefaultCorpusPath(); err != nil {
			return fmt.Errorf("%s: %w (name a corpus with --data FILE.txt)", name, err)
		}
	}
	eng, backend, err := g.trainEngine(cmd)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	defer eng.Close()
	opts := charlstm.Options{Path: path, Hidden: fl.hidden, Layers: fl.layers, SeqLength: fl.seqLen,
		Step: fl.step, ValFraction: fl.valFraction, Train: c, AutoBatchSize: auto, Logf: logf, Progress: cmd.ErrOrStderr()}
	if opts.ValFraction == 0 {
		opts.ValFraction = -1
	}
	ctx, stop := train.NotifyContext(cmd.Context())
	defer stop()
	out, err := charlstm.Train(ctx, backend, opts)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	rep := lmTrainReport{Device: eng.Name(), Fallback: eng.Warning(), Result: out, BatchSize: out.BatchSize,
		FirstStepSec: out.Perf.First.Seconds(), StepSec: out.Perf.SteadyMedian().Seconds(), Config: out.Config}
	if !math.IsNaN(out.ValLoss) {
		rep.ValLoss, rep.ValPerplexity = &out.ValLoss, &out.ValPerplexity
	}
	if g.json {
		return printJSON(cmd.OutOrStdout(), rep)
	}
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "device:      %s\n", rep.Device)
	fmt.Fprintf(w, "data:        %s (%d train / %d validation characters, vocabulary %d, %d windows)\n",
		out.Data, out.TrainChars, out.ValChars, out.Vocab, out.Windows)
	fmt.Fprintf(w, "model:       LSTM %d x %d, seq-length %d, batch %d\n", out.Arch.Layers, out.Arch.Hidden, fl.seqLen, rep.BatchSize)
	if out.ResumedFrom != "" {
		fmt.Fprintf(w, "resumed:     %s (step %d)\n", out.ResumedFrom, out.Train.Resumed)
	}
	fmt.Fprintf(w, "steps:       %d (first step %.3fs, median step %.3fs)\n", out.Train.Steps, rep.FirstStepSec, rep.StepSec)
	fmt.Fprintf(w, "train loss:  %.4f nats/char (first step %.4f)\n", out.Train.Loss, out.FirstLoss)
	if rep.ValLoss != nil {
		fmt.Fprintf(w, "val loss:    %.4f nats/char, perplexity %.3f\n", out.ValLoss, out.ValPerplexity)
	} else {
		fmt.Fprintln(w, "val loss:    none (no validation text)")
	}
	if out.Train.Stopped != "" {
		fmt.Fprintf(w, "stopped:     %s\n", out.Train.Stopped)
	}
	if out.Train.Checkpoint != "" {
		fmt.Fprintf(w, "checkpoint:  %s\n", out.Train.Checkpoint)
	}
	return nil
}

// lmSampleReport is the JSON printed by `lm lstm sample --json`.
type lmSampleReport struct {
	Device      string  `json:"device"`
	Model       string  `json:"model"`
	Step        int64   `json:"step"`
	Prompt      string  `json:"prompt"`
	Text        string  `json:"text"`
	Length      int     `json:"length"`
	Temperature float64 `json:"temperature"`
	Seed        uint64  `json:"seed"`
}

func newLMSampleCmd(g *globals) *cobra.Command {
	var model string
	var so charlstm.SampleOptions
	cmd := &cobra.Command{
		Use:   "sample --model CKPT --prompt TEXT",
		Short: "Generate text with a trained character-level LSTM",
		Long: `lm lstm sample reads the prompt and generates --length characters, drawing
each from the softmax of the logits divided by --temperature (0: the most
likely character). The same --seed gives the same text. --model is a
checkpoint file written by lm lstm train, or its directory (the newest).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if model == "" {
				return errors.New("lm lstm sample: --model is required (a checkpoint file or directory written by lm lstm train)")
			}
			eng, backend, err := g.trainEngine(cmd)
			if err != nil {
				return fmt.Errorf("lm lstm sample: %w", err)
			}
			defer eng.Close()
			m, err := charlstm.Load(backend, model)
			if err != nil {
				return fmt.Errorf("lm lstm sample: %w", err)
			}
			text, err := m.Sample(so)
			if err != nil {
				return fmt.Errorf("lm lstm sample: %w", err)
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), lmSampleReport{Device: eng.Name(), Model: model, Step: m.Step,
					Prompt: so.Prompt, Text: text, Length: so.Length, Temperature: so.Temperature, Seed: so.Seed})
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), so.Prompt+text)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&model, "model", "", "checkpoint file (or directory: its newest) written by lm lstm train")
	f.StringVar(&so.Prompt, "prompt", "The ", "text the model reads before generating (every character must be in its vocabulary)")
	f.IntVar(&so.Length, "length", 200, "characters to generate")
	f.Float64Var(&so.Temperature, "temperature", 1, "sampling temperature (0: argmax)")
	f.Uint64Var(&so.Seed, "seed", 0, "sampling seed")
	return cmd
}
