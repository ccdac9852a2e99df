package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/gomlx/gomlx/backends"
	"github.com/spf13/cobra"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/models/moe"
	"github.com/gotrain/gotrain/train"
)

// moeTrainFlags are the flags of `moe train`: data and opts hold those of
// moe.DataOptions and moe.Options (its Train those of the harness).
type moeTrainFlags struct {
	run                             runFlags
	parallel, hidden, checkpointDir string
	data                            moe.DataOptions
	opts                            moe.Options
}

func newMoETrainCmd(g *globals) *cobra.Command {
	fl := moeTrainFlags{data: moe.DataOptions{Logf: logf, ValFraction: 0.1}, opts: moe.DefaultOptions()}
	fl.opts.Logf = logf
	mnist := "$" + data.DataDirEnv + "/mnist, else ~/.local/share/gotrain/mnist"
	if dir, err := data.MNISTDir(""); err == nil {
		mnist += "; here " + dir
	}
	cmd := &cobra.Command{
		Use:   "train",
		Short: "Train a mixture-of-experts classifier on MNIST or the embedded digits",
		Long: `moe train trains a mixture of experts: a gate routes each image to its
top-k expert MLPs (renormalised), with a capacity limit per expert and the
Switch load-balancing loss. MNIST is read from IDX files in --data-dir
(default $` + data.DataDirEnv + `/mnist, else ~/.local/share/gotrain/mnist);
--download fetches them there first; without them --dataset auto uses the
embedded 8x8 digits. --grow-experts splits the most loaded expert when the
validation loss plateaus. Plots, the performance summary, the metrics log
and checkpoints (--out/checkpoints) go to --out.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return flagError(runMoETrain(cmd, g, &fl), fieldFlags(cmd.Flags(), &fl.opts, &fl.data))
		},
	}
	f, m, o := cmd.Flags(), &fl.opts.Model, &fl.opts
	f.StringVar(&fl.data.Dataset, "dataset", moe.DatasetAuto, "auto (MNIST when --data-dir holds it, else digits), mnist or digits")
	f.StringVar(&fl.data.Dir, "data-dir", "", "folder of the MNIST IDX files, optionally .gz (default: "+mnist+")")
	f.BoolVar(&fl.data.Download, "download", false, "download MNIST into --data-dir (default: "+mnist+") from its canonical mirrors, checksums verified, when the files are not there")
	f.Float64Var(&fl.data.ValFraction, "val-fraction", fl.data.ValFraction, "fraction of the training images held out for validation")
	f.StringVar(&fl.parallel, "parallel", "data", "with --devices > 1: data (experts replicated) or expert (experts sharded over the devices)")
	f.IntVar(&m.Experts, "experts", m.Experts, "number of experts")
	f.IntVar(&m.MaxExperts, "max-experts", 0, "expert slots for --grow-experts (0: --experts + 4 with --grow-experts, else --experts)")
	f.IntVar(&m.TopK, "top-k", m.TopK, "experts per example: 1 or 2")
	f.StringVar(&fl.hidden, "hidden", "256", "hidden layer sizes of each expert, comma-separated")
	f.IntVar(&m.GateHidden, "gate-hidden", 0, "hidden size of an MLP gate (0: linear gate)")
	f.Float64Var(&m.CapacityFactor, "capacity-factor", m.CapacityFactor, "expert capacity = factor x top-k x batch / experts (0: unlimited)")
	f.Float64Var(&m.BalanceAlpha, "balance-alpha", m.BalanceAlpha, "weight of the load-balancing loss (0: off)")
	f.BoolVar(&m.Dense, "dense", false, "run every expert on every example (no sparse dispatch; same predictions)")
	f.BoolVar(&o.GrowExperts, "grow-experts", false, "split the most loaded expert when the validation loss plateaus")
	f.IntVar(&o.GrowPatience, "grow-patience", o.GrowPatience, "epochs without validation improvement before a split")
	f.Float64Var(&o.GrowMinDelta, "grow-min-delta", o.GrowMinDelta, "least validation-loss decrease that counts as improvement")
	f.Float64Var(&o.WarmupFraction, "warmup-fraction", o.WarmupFraction, "with --warmup-steps 0: warm the learning rate up over this fraction of the run's steps (0: no warm-up)")
	f.BoolVar(&o.MonitorMemory, "monitor-memory", false, "record resident memory every epoch (epochs.jsonl, summary)")
	fl.run.batchSize, fl.run.out = fmt.Sprint(o.Train.BatchSize), "runs/moe"
	addTrainFlags(cmd, &o.Train, &fl.run, "batch size, or auto (the largest that fits, on an accelerator; 256 on the host)",
		"output directory of the run: plots, performance_summary.txt, metrics.jsonl, epochs.jsonl, and checkpoints/ with a folder per run",
		"plots-dir", "perf-summary")
	// Before --out held everything, --checkpoint-dir named the checkpoints' folder; it still does.
	addDistributedFlag(cmd, &fl.run)
	f.StringVar(&fl.checkpointDir, "checkpoint-dir", "", "checkpoint directory (default: --out/checkpoints)")
	_ = f.MarkDeprecated("checkpoint-dir", "use --out (checkpoints go to --out/checkpoints)")
	return cmd
}

// runMoETrain runs `moe train` with the flags' values.
func runMoETrain(cmd *cobra.Command, g *globals, fl *moeTrainFlags) error {
	const name = "moe train"
	if err := g.outputs(cmd, []string{"metrics-log"}, nil, nil); err != nil {
		return err
	}
	if fl.parallel != "data" && fl.parallel != "expert" {
		return fmt.Errorf("%s: --parallel %q: want data or expert", name, fl.parallel)
	}
	o := fl.opts
	var err error
	if o.Model.Hidden, err = moe.ParseHidden(fl.hidden); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	o.Model.ExpertParallel = fl.parallel == "expert"
	o.Model.Inputs, o.Model.Classes = 0, 0 // the data's (moe.Train)
	ckpt := filepath.Join(fl.run.out, "checkpoints")
	if fl.checkpointDir != "" {
		ckpt = fl.checkpointDir
	}
	if o.AutoBatchSize, err = o.Train.SetRun(fl.run.batchSize, ckpt, fl.run.resume, train.ResumeDir); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	o.Train.PlotsDir, o.OutDir = fl.run.out, fl.run.out
	o.Progress, fl.data.Seed, fl.data.MaxBytes = cmd.ErrOrStderr(), o.Train.Seed, g.maxInput()
	if err := g.joinRanks(name, &fl.run, &o.Train); err != nil {
		return err
	}
	return g.runTraining(cmd, name, func(ctx context.Context, eng *device.Engine, backend backends.Backend) (textReport, error) {
		var err error
		if o.Data, err = moe.LoadData(ctx, fl.data); err != nil {
			return nil, err
		}
		out, err := moe.Train(ctx, backend, o)
		if err != nil && (out == nil || !errors.Is(err, train.ErrInterrupted)) {
			return nil, err
		}
		// An interrupted run reports too, and fails with its error.
		return out.Report(o, eng.Name(), eng.Warning()), err
	})
}
