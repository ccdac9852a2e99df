package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"

	"github.com/gomlx/gomlx/backends"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/models/moe"
	"github.com/gotrain/gotrain/train"
)

// moeDefaultDataDir is where `moe train` looks for the MNIST IDX files by
// default (relative to the working directory).
const moeDefaultDataDir = "../shared/data/mnist"

func newMoECmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "moe", Short: "Mixture-of-experts classifier (docs/MOE.md)"}
	cmd.AddCommand(newMoETrainCmd(g))
	return cmd
}

// moeTrainFlags are the flags of `moe train` that the harness's Config
// does not hold.
type moeTrainFlags struct {
	dataset, dataDir, batchSize, parallel, hidden, out string
	valFraction                                        float64
	model                                              moe.Config
	grow, monitorMemory, download                      bool
	growPatience                                       int
	growMinDelta                                       float64
}

// moeFlagsReplaced are the harness flags `moe train` replaces or sets
// itself.
var moeFlagsReplaced = map[string]bool{"batch-size": true, "plots-dir": true, "perf-summary": true}

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
	cfg.CheckpointDir = ""
	cmd := &cobra.Command{
		Use:   "train",
		Short: "Train a mixture-of-experts classifier on MNIST or the embedded digits",
		Long: `moe train trains a mixture of experts: a gate routes each image to its
top-k expert MLPs (renormalised), with a capacity limit per expert and the
Switch load-balancing loss. MNIST is read from IDX files in --data-dir
(nothing is downloaded); without them --dataset auto uses the embedded 8x8
digits. --grow-experts splits the most loaded expert when the validation
loss plateaus. Plots, the performance summary, the metrics log and
checkpoints go to --out.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runMoETrain(cmd, g, &fl, &cfg) },
	}
	f := cmd.Flags()
	f.StringVar(&fl.dataset, "dataset", "auto", "auto (MNIST when --data-dir holds it, else digits), mnist or digits")
	f.StringVar(&fl.dataDir, "data-dir", moeDefaultDataDir, "directory of the MNIST IDX files (optionally .gz)")
	f.BoolVar(&fl.download, "download", false, "download MNIST into --data-dir from its canonical mirrors (checksums verified) when the files are not there")
	f.Float64Var(&fl.valFraction, "val-fraction", 0.1, "fraction of the training images held out for validation")
	f.StringVar(&fl.batchSize, "batch-size", "256", "batch size, or auto (the largest that fits, on an accelerator)")
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
	f.StringVar(&fl.out, "out", "runs/moe", "output directory: plots, performance_summary.txt, metrics.jsonl, epochs.jsonl, checkpoints/")
	var harness pflag.FlagSet
	cfg.AddFlags(&harness)
	harness.VisitAll(func(hf *pflag.Flag) {
		if !moeFlagsReplaced[hf.Name] {
			f.AddFlag(hf)
		}
	})
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

// moeData loads the data set --dataset names.
func moeData(fl *moeTrainFlags, seed int64) (*moe.Data, error) {
	if fl.download && fl.dataset != "digits" && !moe.MNISTPresent(fl.dataDir) {
		slog.Info("moe train: downloading MNIST (--download)", "data_dir", fl.dataDir)
		if err := data.DownloadMNIST(context.Background(), fl.dataDir, data.MNISTMirrors, data.MNISTChecksums, nil); err != nil {
			return nil, err
		}
	}
	switch fl.dataset {
	case "digits":
		return moe.Digits(fl.valFraction, seed)
	case "mnist":
		return moe.MNIST(fl.dataDir, fl.valFraction, seed)
	case "auto":
		if moe.MNISTPresent(fl.dataDir) {
			return moe.MNIST(fl.dataDir, fl.valFraction, seed)
		}
		slog.Info("moe train: no MNIST IDX files, using the embedded 8x8 digits", "data_dir", fl.dataDir)
		return moe.Digits(fl.valFraction, seed)
	}
	return nil, fmt.Errorf("--dataset %q: want auto, mnist or digits", fl.dataset)
}

func runMoETrain(cmd *cobra.Command, g *globals, fl *moeTrainFlags, cfg *train.Config) error {
	if fl.valFraction < 0 || fl.valFraction >= 1 {
		return fmt.Errorf("moe train: --val-fraction %g: want 0 <= f < 1", fl.valFraction)
	}
	if fl.parallel != "data" && fl.parallel != "expert" {
		return fmt.Errorf("moe train: --parallel %q: want data or expert", fl.parallel)
	}
	hidden, err := parseHidden(fl.hidden)
	if err != nil {
		return fmt.Errorf("moe train: %w", err)
	}
	mc := fl.model
	mc.Hidden = hidden
	if fl.grow && mc.MaxExperts == 0 {
		mc.MaxExperts = mc.Experts + 4
	}
	c := *cfg
	if c.CheckpointDir == "" {
		c.CheckpointDir = fl.out + "/checkpoints"
	}
	c.PlotsDir = fl.out
	d, err := moeData(fl, c.Seed)
	if err != nil {
		return fmt.Errorf("moe train: %w", err)
	}
	mc.Inputs, mc.Classes = d.Inputs, d.Classes
	eng, backend, err := g.trainEngine(cmd)
	if err != nil {
		return fmt.Errorf("moe train: %w", err)
	}
	defer eng.Close()
	nDev, err := train.ParseDevices(c.Devices, backend.NumDevices())
	if err != nil {
		return fmt.Errorf("moe train: %w", err)
	}
	mc.Devices = nDev
	mc.ExpertParallel = fl.parallel == "expert" && nDev > 1
	if c.BatchSize, err = moeBatchSize(fl.batchSize, backend, c, mc, d); err != nil {
		return fmt.Errorf("moe train: %w", err)
	}
	ctx, stop := train.NotifyContext(cmd.Context())
	defer stop()
	out, err := moe.Train(ctx, backend, moe.Options{Model: mc, Train: c, Data: d, OutDir: fl.out,
		GrowExperts: fl.grow, GrowPatience: fl.growPatience, GrowMinDelta: fl.growMinDelta,
		MonitorMemory: fl.monitorMemory, Progress: cmd.ErrOrStderr(),
		Logf: func(format string, args ...any) { slog.Info(fmt.Sprintf(format, args...)) }})
	if err != nil && (out == nil || !errors.Is(err, train.ErrInterrupted)) {
		return fmt.Errorf("moe train: %w", err)
	}
	rep := moeTrainReport{Device: eng.Name(), Fallback: eng.Warning(), Devices: nDev, Parallel: fl.parallel,
		Data: out.Data, TestAccuracy: out.TestAccuracy, TestLoss: out.TestLoss, Epochs: out.Epochs, Steps: out.Steps,
		StepsPerSecond: out.StepsPerSecond, MedianStepMS: out.MedianStepMS, FirstStepMS: out.FirstStepMS,
		BatchSize: c.BatchSize, Experts: out.Experts, ExpertLoad: map[string]float64{}, DroppedShare: out.DroppedShare,
		ExpertsPerDev: out.ExpertsPerDevice, Grown: out.Grown, PeakMemoryMiB: out.PeakMemoryMiB, Out: fl.out,
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

// moeBatchSize parses --batch-size: a number, or auto. auto searches the
// largest batch that fits on an accelerator; on the host there is no device
// memory to probe and it picks 256.
func moeBatchSize(s string, backend backends.Backend, cfg train.Config, mc moe.Config, d *moe.Data) (int, error) {
	return batchSize("moe train", s, backend, 256, func() (int, error) {
		mc.Inputs, mc.Classes = d.Inputs, d.Classes
		m, err := moe.New(mc, cfg.Seed)
		if err != nil {
			return 0, err
		}
		ds, err := train.NewDataset(d.TrainX, d.Inputs, d.TrainY, 1, cfg.Seed, true)
		if err != nil {
			return 0, err
		}
		return train.FindBatchSize(32, min(8192, ds.Len()), train.StepFits(backend, cfg, m.ModelFn(), moe.Loss, ds))
	})
}
