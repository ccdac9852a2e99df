package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gotrain/gotrain/train"
)

// exportFormats are the formats of `gotrain export --format`.
var exportFormats = []string{"safetensors"}

func newExportCmd(g *globals) *cobra.Command {
	var format, model, out string
	var opts train.ExportOptions
	cmd := &cobra.Command{
		Use:   "export --model CKPT --out FILE [--format safetensors]",
		Short: "Write a trained model's weights to a file other tools read (safetensors)",
		Long: `export writes the weights of a neural model trained by gotrain (lm lstm,
lm transformer, moe, signal classify --model resnet) to --out in
--format safetensors (Hugging Face's format: numpy, PyTorch and others read
it). --model is a checkpoint file, a run folder or a folder of runs (its
newest run's newest valid checkpoint), as for sample. Each tensor is named
by its variable's scope and name ("l1/w"); the optimizer state, step
counters and random-number state are left out (docs/TRAINING.md lists the
names per model). A run trained with --ema exports the moving averages of
the weights (--weights auto, the default), or the trained weights with
--weights raw. The file is replaced atomically. The library call behind
this command is train.ExportSafetensors.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case model == "" || out == "":
				return errors.New("export: --model and --out are required")
			case format != "safetensors":
				return fmt.Errorf("export: --format %q: want one of %v", format, exportFormats)
			}
			if err := g.outputs(cmd, []string{"out"}, []string{"model"}, nil); err != nil {
				return err
			}
			rep, err := train.ExportSafetensors(model, out, opts)
			if err != nil {
				return flagError(fmt.Errorf("export: %w", err), fieldFlags(cmd.Flags(), &opts))
			}
			return g.print(cmd, rep)
		},
	}
	f := cmd.Flags()
	f.StringVar(&format, "format", "safetensors", "output format: safetensors")
	f.StringVar(&model, "model", "", "checkpoint file, run folder or folder of runs (its newest run's newest checkpoint) written by a training command")
	f.StringVar(&out, "out", "", "the file to write (- for standard output)")
	f.StringVar(&opts.Weights, "weights", train.WeightsAuto, "auto (the moving averages of a run trained with --ema, else the trained weights), ema or raw")
	return cmd
}
