package main

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gomlx/gomlx/backends"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gotrain/gotrain/models/charlstm"
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
	data, batchSize, resume string
	hidden, layers, seqLen  int
	step                    int
	valFraction             float64
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

// lmFlagsReplaced are the harness flags that `lm lstm train` replaces with
// the seed's names (or does not offer).
var lmFlagsReplaced = map[string]bool{
	"lr": true, "batch-size": true, "resume": true, "steps": true,
	"early-stop-patience": true, "early-stop-monitor": true, "early-stop-mode": true,
}

func newLMTrainCmd(g *globals) *cobra.Command {
	fl := lmTrainFlags{}
	cfg := train.DefaultConfig()
	cfg.Optimizer = train.OptimizerAdam
	cfg.Epochs = 50
	cfg.LearningRate = 0.001
	cfg.ClipNorm = 5
	cfg.EarlyStopPatience = 20
	cmd := &cobra.Command{
		Use:   "train [--data FILE.txt]",
		Short: "Train a character-level LSTM on a UTF-8 text",
		Long: `lm lstm train builds a vocabulary of the runes of the corpus, holds out its
last 10% for validation, cuts the rest into windows of --seq-length+1
characters every --step characters and trains a stacked LSTM to predict the
next character, with the training harness (checkpoints, resume, clipping).
It reports the validation loss in nats per character and the perplexity.
The default corpus is Newton's Opticks from the Go source tree.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runLMTrain(cmd, g, &fl, &cfg) },
	}
	f := cmd.Flags()
	f.StringVar(&fl.data, "data", "", "UTF-8 text corpus (default: $GOROOT/"+charlstm.DefaultCorpusName+")")
	f.StringVar(&fl.batchSize, "batch-size", "512", "batch size, or auto (the largest that fits, on an accelerator)")
	f.IntVar(&fl.hidden, "hidden-size", 512, "LSTM hidden size")
	f.IntVar(&fl.layers, "layers", 2, "stacked LSTM layers")
	f.IntVar(&fl.seqLen, "seq-length", 100, "characters per training window (the model reads them, predicting each next one)")
	f.IntVar(&fl.step, "step", 3, "stride between training windows, in characters")
	f.Float64Var(&fl.valFraction, "val-fraction", 0.1, "fraction of the text, at its end, held out for validation")
	f.Float64Var(&cfg.LearningRate, "learning-rate", cfg.LearningRate, "peak learning rate")
	f.IntVar(&cfg.EarlyStopPatience, "patience", cfg.EarlyStopPatience, "stop after this many validations (one per epoch, or --eval-every steps) without a lower validation loss (0: off)")
	f.StringVar(&fl.resume, "resume", "", "continue from this checkpoint file or directory (the newest checkpoint of its directory)")
	f.IntVar(&cfg.Steps, "max-steps", 0, "stop after N optimizer steps (0: run --epochs)")
	var harness pflag.FlagSet
	cfg.AddFlags(&harness)
	harness.VisitAll(func(hf *pflag.Flag) {
		if !lmFlagsReplaced[hf.Name] {
			f.AddFlag(hf)
		}
	})
	return cmd
}

func runLMTrain(cmd *cobra.Command, g *globals, fl *lmTrainFlags, cfg *train.Config) error {
	path := fl.data
	if path == "" {
		p, err := charlstm.DefaultCorpusPath()
		if err != nil {
			return fmt.Errorf("lm lstm train: %w", err)
		}
		path = p
	}
	text, err := charlstm.LoadText(path)
	if err != nil {
		return fmt.Errorf("lm lstm train: %w", err)
	}
	if fl.valFraction < 0 || fl.valFraction >= 1 {
		return fmt.Errorf("lm lstm train: --val-fraction %g: want 0 <= f < 1", fl.valFraction)
	}
	c := *cfg
	if c.EarlyStopPatience > 0 {
		c.EarlyStopMonitor = "val_loss" // Train falls back to "loss" without validation text
	} else {
		c.EarlyStopPatience = 1 // unused: early stopping is off
	}
	if fl.resume != "" {
		if c.NoCheckpoint {
			return errors.New("lm lstm train: --resume and --no-checkpoint exclude each other")
		}
		dir, err := resumeDir(fl.resume)
		if err != nil {
			return fmt.Errorf("lm lstm train: %w", err)
		}
		c.CheckpointDir, c.Resume = dir, true
	}
	eng, backend, err := g.trainEngine(cmd)
	if err != nil {
		return fmt.Errorf("lm lstm train: %w", err)
	}
	defer eng.Close()
	opts := charlstm.Options{Path: path, Text: text, Hidden: fl.hidden, Layers: fl.layers, SeqLength: fl.seqLen,
		Step: fl.step, ValFraction: fl.valFraction, Train: c,
		Logf:     func(format string, args ...any) { slog.Info(fmt.Sprintf(format, args...)) },
		Progress: cmd.ErrOrStderr()}
	if opts.ValFraction == 0 {
		opts.ValFraction = -1
	}
	if opts.Train.BatchSize, err = lmBatchSize(fl.batchSize, backend, opts); err != nil {
		return fmt.Errorf("lm lstm train: %w", err)
	}
	ctx, stop := train.NotifyContext(cmd.Context())
	defer stop()
	opts.Context = ctx
	out, err := charlstm.Train(backend, opts)
	if err != nil {
		return fmt.Errorf("lm lstm train: %w", err)
	}
	rep := lmTrainReport{Device: eng.Name(), Fallback: eng.Warning(), Result: out, BatchSize: opts.Train.BatchSize,
		FirstStepSec: out.Perf.First.Seconds(), StepSec: out.Perf.SteadyMedian().Seconds(), Config: opts.Train}
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

// resumeDir returns the checkpoint directory of a --resume value: the
// directory itself, or the directory of a file that must be its newest
// checkpoint (the harness resumes from the newest).
func resumeDir(p string) (string, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return "", fmt.Errorf("--resume: %w", err)
	}
	if fi.IsDir() {
		return p, nil
	}
	dir := filepath.Dir(p)
	files, err := (&train.Checkpointer{Dir: dir}).List()
	if err != nil {
		return "", fmt.Errorf("--resume %s: %w", p, err)
	}
	if len(files) == 0 || filepath.Clean(files[0]) != filepath.Clean(p) {
		newest := "none"
		if len(files) > 0 {
			newest = files[0]
		}
		return "", fmt.Errorf("--resume %s: training resumes from the newest checkpoint of %s, which is %s; pass the directory or that file", p, dir, newest)
	}
	return dir, nil
}

// lmBatchSize parses --batch-size: a number, or auto. auto searches the
// largest batch that fits (charlstm.AutoBatchSize) on an accelerator; on the
// host there is no device memory to probe and it picks 64.
func lmBatchSize(s string, backend backends.Backend, opts charlstm.Options) (int, error) {
	return batchSize("lm lstm train", s, backend, 64, func() (int, error) {
		return charlstm.AutoBatchSize(backend, opts, 32, 4096)
	})
}

// batchSize parses --batch-size: a positive integer, or auto, which runs find
// on an accelerator and picks hostDefault on a host backend (no device memory
// to probe).
func batchSize(cmd, s string, backend backends.Backend, hostDefault int, find func() (int, error)) (int, error) {
	if !strings.EqualFold(s, "auto") {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return 0, fmt.Errorf("--batch-size %q: want a positive integer or auto", s)
		}
		return n, nil
	}
	if !train.IsAccelerator(backend) {
		slog.Info(cmd+": --batch-size auto on a host backend: using the default (no device memory to probe)", "batch_size", hostDefault)
		return hostDefault, nil
	}
	n, err := find()
	if err != nil {
		return 0, fmt.Errorf("--batch-size auto: %w", err)
	}
	slog.Info(cmd+": --batch-size auto", "batch_size", n)
	return n, nil
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
