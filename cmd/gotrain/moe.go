package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/models/moe"
	"github.com/gotrain/gotrain/train"
)

func newMoECmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "moe", Short: "Mixture-of-experts classifier (docs/MOE.md)"}
	cmd.AddCommand(newMoETrainCmd(g))
	return cmd
}

// moeTrainFlags are the flags of `moe train` that the harness's Config
// does not hold.
type moeTrainFlags struct {
	run                           runFlags
	dataset, dataDir, parallel    string
	hidden, checkpointDir         string
	valFraction                   float64
	model                         moe.Config
	grow, monitorMemory, download bool
	growPatience                  int
	growMinDelta                  float64
}

// moeFields maps moe's option names in its errors to the flags.
var moeFields = map[string]string{"Experts": "experts", "MaxExperts": "max-experts", "TopK": "top-k",
	"GateHidden": "gate-hidden", "CapacityFactor": "capacity-factor", "BalanceAlpha": "balance-alpha"}

// moeTrainReport is the JSON printed by `moe train --json`.
type moeTrainReport struct {
	Device         string             `json:"device"`
	Fallback       string             `json:"fallback,omitempty"`
	Devices        int                `json:"devices"`
	Parallel       string             `json:"parallel"`
	Data           string             `json:"data"`
	TestAccuracy   float64            `json:"test_accuracy"`
	TestLoss       float64            `json:"test_loss"`
	Epochs         int                `json:"epochs"`
	Steps          int64              `json:"steps"`
	StepsPerSecond float64            `json:"steps_per_second"`
	MedianStepMS   float64            `json:"median_step_ms"`
	FirstStepMS    float64            `json:"first_step_ms"`
	BatchSize      int                `json:"batch_size"`
	Experts        int                `json:"experts"`
	ExpertLoad     map[string]float64 `json:"expert_load"`
	DroppedShare   float64            `json:"dropped_share"`
	ExpertsPerDev  []int              `json:"experts_per_device"`
	Grown          []moe.GrowEvent    `json:"grown,omitempty"`
	PeakMemoryMiB  float64            `json:"peak_memory_mib"`
	Out            string             `json:"out"`
	Files          []string           `json:"files"`
	Stopped        string             `json:"stopped,omitempty"`
}

func newMoETrainCmd(g *globals) *cobra.Command {
	fl := moeTrainFlags{model: moe.DefaultConfig()}
	cfg := train.DefaultConfig()
	cfg.Optimizer = train.OptimizerAdam
	cfg.Epochs = 5
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
			return flagError(runMoETrain(cmd, g, &fl, &cfg), moeFields)
		},
	}
	f := cmd.Flags()
	f.StringVar(&fl.dataset, "dataset", moe.DatasetAuto, "auto (MNIST when --data-dir holds it, else digits), mnist or digits")
	f.StringVar(&fl.dataDir, "data-dir", "", "folder of the MNIST IDX files, optionally .gz (default: "+mnist+")")
	f.BoolVar(&fl.download, "download", false, "download MNIST into --data-dir (default: "+mnist+") from its canonical mirrors, checksums verified, when the files are not there")
	f.Float64Var(&fl.valFraction, "val-fraction", 0.1, "fraction of the training images held out for validation")
	f.StringVar(&fl.parallel, "parallel", "data", "with --devices > 1: data (experts replicated) or expert (experts sharded over the devices)")
	f.IntVar(&fl.model.Experts, "experts", fl.model.Experts, "number of experts")
	f.IntVar(&fl.model.MaxExperts, "max-experts", 0, "expert slots for --grow-experts (0: --experts + 4 with --grow-experts, else --experts)")
	f.IntVar(&fl.model.TopK, "top-k", fl.model.TopK, "experts per example: 1 or 2")
	f.StringVar(&fl.hidden, "hidden", "256", "hidden layer sizes of each expert, comma-separated")
	f.IntVar(&fl.model.GateHidden, "gate-hidden", 0, "hidden size of an MLP gate (0: linear gate)")
	f.Float64Var(&fl.model.CapacityFactor, "capacity-factor", fl.model.CapacityFactor, "expert capacity = factor x top-k x batch / experts (0: unlimited)")
	f.Float64Var(&fl.model.BalanceAlpha, "balance-alpha", fl.model.BalanceAlpha, "weight of the load-balancing loss (0: off)")
	f.BoolVar(&fl.model.Dense, "dense", false, "run every expert on every example (no sparse dispatch; same predictions)")
	f.BoolVar(&fl.grow, "grow-experts", false, "split the most loaded expert when the validation loss plateaus")
	f.IntVar(&fl.growPatience, "grow-patience", 1, "epochs without validation improvement before a split")
	f.Float64Var(&fl.growMinDelta, "grow-min-delta", 0.001, "least validation-loss decrease that counts as improvement")
	f.BoolVar(&fl.monitorMemory, "monitor-memory", false, "record resident memory every epoch (epochs.jsonl, summary)")
	addTrainFlags(cmd, &cfg, &fl.run, trainFlagSpec{
		batchDefault: "256", batchUsage: "batch size, or auto (the largest that fits, on an accelerator; 256 on the host)",
		outDefault: "runs/moe", outUsage: "output directory of the run: plots, performance_summary.txt, metrics.jsonl, epochs.jsonl, checkpoints/",
		noCheckpointDirAlias: true, omit: []string{"plots-dir", "perf-summary"}})
	// Before --out held everything, --checkpoint-dir named the checkpoints' folder; it still does.
	f.StringVar(&fl.checkpointDir, "checkpoint-dir", "", "checkpoint directory (default: --out/checkpoints)")
	_ = f.MarkDeprecated("checkpoint-dir", "use --out (checkpoints go to --out/checkpoints)")
	return cmd
}

// parseHidden parses --hidden.
func parseHidden(s string) ([]int, error) {
	var out []int
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--hidden %q: want positive sizes separated by commas", s)
		}
		out = append(out, n)
	}
	return out, nil
}

func runMoETrain(cmd *cobra.Command, g *globals, fl *moeTrainFlags, cfg *train.Config) error {
	const name = "moe train"
	if fl.valFraction < 0 || fl.valFraction >= 1 {
		return fmt.Errorf("%s: --val-fraction %g: want 0 <= f < 1", name, fl.valFraction)
	}
	if fl.parallel != "data" && fl.parallel != "expert" {
		return fmt.Errorf("%s: --parallel %q: want data or expert", name, fl.parallel)
	}
	hidden, err := parseHidden(fl.hidden)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	mc := fl.model
	mc.Hidden, mc.ExpertParallel = hidden, fl.parallel == "expert"
	mc.Inputs, mc.Classes = 0, 0 // the data's (moe.Train)
	c := *cfg
	ckpt := filepath.Join(fl.run.out, "checkpoints")
	if fl.checkpointDir != "" {
		ckpt = fl.checkpointDir
	}
	auto, err := fl.run.resolve(&c, ckpt, train.ResumeDir)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	c.PlotsDir = fl.run.out
	ctx, stop := train.NotifyContext(cmd.Context())
	defer stop()
	d, err := moe.LoadData(ctx, moe.DataOptions{Dataset: fl.dataset, Dir: fl.dataDir, Download: fl.download,
		ValFraction: fl.valFraction, Seed: c.Seed, Logf: logf})
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	eng, backend, err := g.trainEngine(cmd)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	defer eng.Close()
	out, err := moe.Train(ctx, backend, moe.Options{Model: mc, Train: c, Data: d, OutDir: fl.run.out, AutoBatchSize: auto,
		GrowExperts: fl.grow, GrowPatience: fl.growPatience, GrowMinDelta: fl.growMinDelta,
		MonitorMemory: fl.monitorMemory, Progress: cmd.ErrOrStderr(), Logf: logf})
	if err != nil && (out == nil || !errors.Is(err, train.ErrInterrupted)) {
		return fmt.Errorf("%s: %w", name, err)
	}
	nDev := out.Devices
	rep := moeTrainReport{Device: eng.Name(), Fallback: eng.Warning(), Devices: nDev, Parallel: fl.parallel,
		Data: out.Data, TestAccuracy: out.TestAccuracy, TestLoss: out.TestLoss, Epochs: out.Epochs, Steps: out.Steps,
		StepsPerSecond: out.StepsPerSecond, MedianStepMS: out.MedianStepMS, FirstStepMS: out.FirstStepMS,
		BatchSize: out.BatchSize, Experts: out.Experts, ExpertLoad: map[string]float64{}, DroppedShare: out.DroppedShare,
		ExpertsPerDev: out.ExpertsPerDevice, Grown: out.Grown, PeakMemoryMiB: out.PeakMemoryMiB, Out: fl.run.out,
		Files: out.Files, Stopped: out.Train.Stopped}
	for s, v := range out.Load {
		rep.ExpertLoad[strconv.Itoa(s)] = v
	}
	if g.json {
		if perr := printJSON(cmd.OutOrStdout(), rep); perr != nil {
			return perr
		}
		return err
	}
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "device:        %s (%d device(s), %s parallel)\n", rep.Device, nDev, fl.parallel)
	fmt.Fprintf(w, "data:          %s\n", rep.Data)
	fmt.Fprintf(w, "model:         %d experts %v, top-%d, capacity factor %g, balance alpha %g\n",
		rep.Experts, hidden, mc.TopK, mc.CapacityFactor, mc.BalanceAlpha)
	fmt.Fprintf(w, "training:      %d epochs, %d steps, batch %d, %.2f steps/s (median %.1f ms, first %.0f ms)\n",
		rep.Epochs, rep.Steps, rep.BatchSize, rep.StepsPerSecond, rep.MedianStepMS, rep.FirstStepMS)
	fmt.Fprintf(w, "test accuracy: %.4f (loss %.4f)\n", rep.TestAccuracy, rep.TestLoss)
	slots := make([]int, 0, len(out.Load))
	for s := range out.Load {
		slots = append(slots, s)
	}
	sort.Ints(slots)
	var loads []string
	for _, s := range slots {
		loads = append(loads, fmt.Sprintf("%d:%.1f%%", s, 100*out.Load[s]))
	}
	fmt.Fprintf(w, "expert load:   %s (dropped over capacity %.2f%%)\n", strings.Join(loads, " "), 100*rep.DroppedShare)
	fmt.Fprintf(w, "per device:    %v\n", rep.ExpertsPerDev)
	for _, ev := range rep.Grown {
		fmt.Fprintf(w, "grown:         expert %d -> slot %d (device %d) after step %d\n", ev.Parent, ev.Child, ev.Device, ev.Step)
	}
	fmt.Fprintf(w, "outputs:       %s\n", rep.Out)
	return err
}
