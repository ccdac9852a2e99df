package moe

import (
	stdcontext "context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/train"
)

func TestConfigValidate(t *testing.T) {
	ok := Config{Inputs: 4, Classes: 3, Experts: 2, TopK: 2, Hidden: []int{5}}
	tests := []struct {
		name  string
		edit  func(*Config)
		valid bool
	}{
		{"ok", func(*Config) {}, true},
		{"top-3", func(c *Config) { c.TopK = 3 }, false},
		{"top-k above experts", func(c *Config) { c.Experts = 1 }, false},
		{"max below experts", func(c *Config) { c.MaxExperts = 1 }, false},
		{"negative alpha", func(c *Config) { c.BalanceAlpha = -1 }, false},
		{"slots not divisible", func(c *Config) { c.MaxExperts, c.Devices, c.ExpertParallel = 3, 2, true }, false},
		{"zero hidden", func(c *Config) { c.Hidden = []int{0} }, false},
		{"no capacity limit", func(c *Config) { c.CapacityFactor = 0 }, true},
		{"negative capacity factor", func(c *Config) { c.CapacityFactor = -1 }, false},
		{"infinite alpha", func(c *Config) { c.BalanceAlpha = math.Inf(1) }, false},
		{"experts beyond MaxSlots", func(c *Config) { c.Experts = MaxSlots + 1 }, false},
		{"max experts beyond MaxSlots", func(c *Config) { c.MaxExperts = 1 << 40 }, false},
		{"huge hidden", func(c *Config) { c.Hidden = []int{1 << 40} }, false},
		{"parameters beyond MaxParams", func(c *Config) { c.Inputs, c.Experts, c.Hidden = 1<<20, 4096, []int{1 << 20} }, false},
		{"negative devices", func(c *Config) { c.Devices = -1 }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.edit(&c)
			if err := c.Validate(); (err == nil) != tc.valid {
				t.Errorf("Validate() = %v, want valid %v", err, tc.valid)
			}
		})
	}
}

// TestGrowKeepsPredictions splits an expert and checks that the logits do
// not change, while the child's weights do differ from the parent's.
func TestGrowKeepsPredictions(t *testing.T) {
	b := testBackend(t)
	tests := []struct {
		name       string
		k          int
		gateHidden int
		hidden     []int
		cf         float64
	}{
		{"top-1 linear gate", 1, 0, []int{6}, 0},
		{"top-2 linear gate", 2, 0, []int{6}, 0},
		{"top-2 MLP gate, two hidden layers", 2, 5, []int{6, 4}, 0},
		{"top-2 sparse dispatch, no drops", 2, 0, []int{6}, 100},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := New(Config{Inputs: 4, Classes: 3, Experts: 3, MaxExperts: 5, Hidden: tc.hidden,
				GateHidden: tc.gateHidden, TopK: tc.k, CapacityFactor: tc.cf, Devices: 1}, 7)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.New().Checked(false)
			exec, err := context.NewExecAny(b, ctx, func(ctx *context.Context, x *graph.Node) *graph.Node {
				return m.logits(ctx, x, tc.cf, false)
			})
			if err != nil {
				t.Fatal(err)
			}
			defer exec.Finalize()
			r := rand.New(rand.NewPCG(1, 2))
			x := make([]float32, 64*4)
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			in := tensors.FromFlatDataAndDimensions(x, 64, 4)
			logits := func() []float32 {
				out, err := exec.Exec(in)
				if err != nil {
					t.Fatal(err)
				}
				return values(t, out[0])
			}
			before := logits()
			for split := range 2 {
				ev, err := m.Grow(ctx, split, 0.1, 3)
				if err != nil {
					t.Fatal(err)
				}
				if ev.Parent != split || ev.Child != 3+split {
					t.Errorf("split %d: event %+v, want parent %d child %d", split, ev, split, 3+split)
				}
				after := logits()
				for i := range before {
					if math.Abs(float64(before[i]-after[i])) > 1e-4*(1+math.Abs(float64(before[i]))) {
						t.Fatalf("split %d: logit %d changed from %g to %g", split, i, before[i], after[i])
					}
				}
			}
			if _, err := m.Grow(ctx, 0, 0.1, 3); err != ErrNoFreeSlot {
				t.Errorf("third split: %v, want ErrNoFreeSlot", err)
			}
			w, err := m.readVar(ctx, ExpertWeights+"0")
			if err != nil {
				t.Fatal(err)
			}
			n := 4 * tc.hidden[0]
			same := true
			for i := range n {
				same = same && w[i] == w[3*n+i]
			}
			if same {
				t.Error("the child's first-layer weights equal the parent's: no perturbation")
			}
		})
	}
}

// TestTrainDigits trains a small mixture on the embedded digits in CI time
// and checks accuracy, that every expert gets traffic, and the files.
func TestTrainDigits(t *testing.T) {
	b := testBackend(t)
	d, err := Digits(0.1, 1)
	if err != nil {
		t.Fatal(err)
	}
	cfg := train.DefaultConfig()
	cfg.Optimizer, cfg.LearningRate, cfg.BatchSize, cfg.Epochs = train.OptimizerAdam, 0.005, 64, 8
	cfg.NoCheckpoint, cfg.Progress, cfg.LogEvery = true, train.ProgressOff, 5
	out := t.TempDir()
	start := time.Now()
	res, err := Train(stdcontext.Background(), b, Options{
		Model: Config{Experts: 4, MaxExperts: 5, Hidden: []int{32}, TopK: 2, CapacityFactor: 2, BalanceAlpha: 0.01},
		Train: cfg, Data: d, OutDir: out, GrowExperts: true, GrowPatience: 1, GrowMinDelta: 0.5,
		Logf: t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	t.Logf("test accuracy %.4f after %d epochs in %v; load %v; grown %v", res.TestAccuracy, res.Epochs, took, res.Load, res.Grown)
	if res.TestAccuracy < 0.85 {
		t.Errorf("test accuracy %.4f, want >= 0.85", res.TestAccuracy)
	}
	if took > 30*time.Second {
		t.Errorf("training took %v, want < 30s", took)
	}
	if len(res.Grown) == 0 || res.Experts != 5 {
		t.Errorf("grown %v, %d experts: want one split to 5 experts (GrowMinDelta 0.5 forces a plateau)", res.Grown, res.Experts)
	}
	for s, share := range res.Load {
		if share < 0.01 {
			t.Errorf("expert %d received %.4f of the traffic, want every expert used", s, share)
		}
	}
	for _, f := range []string{PlotTrainingMetrics, PlotExpertActivations, PlotDeviceDistribution,
		"performance_summary.txt", "metrics.jsonl", "epochs.jsonl"} {
		if fi, err := os.Stat(filepath.Join(out, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}
}

func TestMNISTMissing(t *testing.T) {
	_, err := MNIST(t.TempDir(), 0.1, 1)
	if err == nil {
		t.Fatal("MNIST on an empty directory: no error")
	}
	if !errorsIs(err, ErrNoMNIST) || !errorsIs(err, data.ErrMNISTMissing) {
		t.Errorf("error %v does not wrap ErrNoMNIST and data.ErrMNISTMissing", err)
	}
}

func TestLoadData(t *testing.T) {
	base := t.TempDir()
	t.Setenv(data.DataDirEnv, base)
	want := filepath.Join(base, "mnist")
	var logs []string
	logf := func(format string, args ...any) { logs = append(logs, fmt.Sprintf(format, args...)) }

	d, err := LoadData(stdcontext.Background(), DataOptions{Dataset: DatasetAuto, ValFraction: 0.1, Seed: 1, Logf: logf})
	if err != nil || d.Inputs != 64 || !strings.Contains(d.Name, "digits") {
		t.Fatalf("auto without MNIST: %v, %v; want the digits", d, err)
	}
	if len(logs) != 1 || !strings.Contains(logs[0], want) {
		t.Errorf("auto without MNIST logged %q; want one line naming %s, the folder searched", logs, want)
	}
	_, err = LoadData(stdcontext.Background(), DataOptions{Dataset: DatasetMNIST, ValFraction: 0.1, Seed: 1})
	if !errorsIs(err, data.ErrMNISTMissing) || !strings.Contains(err.Error(), want) {
		t.Errorf("mnist without its files: %v; want an error wrapping data.MNISTMissingError(%s)", err, want)
	}
	other := t.TempDir()
	_, err = LoadData(stdcontext.Background(), DataOptions{Dataset: DatasetMNIST, Dir: other})
	if !errorsIs(err, data.ErrMNISTMissing) || !strings.Contains(err.Error(), other) {
		t.Errorf("mnist in an empty Dir: %v; want an error naming %s", err, other)
	}
	if _, err := LoadData(stdcontext.Background(), DataOptions{Dataset: "cifar"}); err == nil || !strings.Contains(err.Error(), `"cifar"`) {
		t.Errorf("unknown data set: %v", err)
	}
	if d, err := LoadData(stdcontext.Background(), DataOptions{Dataset: DatasetDigits, Download: true, ValFraction: 0.1, Seed: 1}); err != nil || d.Inputs != 64 {
		t.Errorf("digits with Download: %v (nothing to download)", err)
	}
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }

// TestSparseMatchesDense checks that sparse dispatch computes the same
// logits as running every expert on every example, with and without
// assignments dropped over capacity.
func TestSparseMatchesDense(t *testing.T) {
	b := testBackend(t)
	for _, tc := range []struct {
		name string
		k    int
		cf   float64
	}{{"top-1 tight capacity", 1, 0.5}, {"top-2 tight capacity", 2, 0.6}, {"top-2 roomy", 2, 4}} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(5, 6))
			x := make([]float32, 32*6)
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			var got [2][]float32
			for i, dense := range []bool{true, false} {
				m, err := New(Config{Inputs: 6, Classes: 3, Experts: 4, Hidden: []int{5}, TopK: tc.k, CapacityFactor: tc.cf, Dense: dense}, 11)
				if err != nil {
					t.Fatal(err)
				}
				exec, err := context.NewExecAny(b, context.New().Checked(false), func(ctx *context.Context, x *graph.Node) *graph.Node {
					return m.logits(ctx, x, tc.cf, false)
				})
				if err != nil {
					t.Fatal(err)
				}
				out, err := exec.Exec(tensors.FromFlatDataAndDimensions(x, 32, 6))
				exec.Finalize()
				if err != nil {
					t.Fatal(err)
				}
				got[i] = values(t, out[0])
			}
			if !near(got[0], got[1], 1e-5) {
				t.Errorf("sparse logits differ from dense:\n%v\n%v", got[1], got[0])
			}
		})
	}
}

// TestTrainResumeKeepsGrownExperts checks that a checkpoint holds the
// grown experts and that training resumes from it.
func TestTrainResumeKeepsGrownExperts(t *testing.T) {
	b := testBackend(t)
	d, err := Digits(0.1, 2)
	if err != nil {
		t.Fatal(err)
	}
	cfg := train.DefaultConfig()
	cfg.Optimizer, cfg.LearningRate, cfg.BatchSize = train.OptimizerAdam, 0.005, 64
	cfg.CheckpointDir, cfg.Progress = filepath.Join(t.TempDir(), "ckpt"), train.ProgressOff
	opts := Options{Model: Config{Experts: 2, MaxExperts: 4, Hidden: []int{16}, TopK: 2, CapacityFactor: 2, BalanceAlpha: 0.01},
		Data: d, GrowExperts: true, GrowMinDelta: 10}
	opts.Train = cfg
	opts.Train.Epochs = 3
	first, err := Train(stdcontext.Background(), b, opts)
	if err != nil {
		t.Fatal(err)
	}
	if first.Experts != 3 {
		t.Fatalf("first run: %d experts, want 3 (one split after epoch 2)", first.Experts)
	}
	opts.Train.Epochs, opts.Train.Resume, opts.GrowExperts = 6, true, false
	second, err := Train(stdcontext.Background(), b, opts)
	if err != nil {
		t.Fatal(err)
	}
	if second.Train.Resumed != first.Steps || second.Steps != 2*first.Steps {
		t.Errorf("resumed at %d to %d steps, want %d to %d", second.Train.Resumed, second.Steps, first.Steps, 2*first.Steps)
	}
	if second.Experts != 3 {
		t.Errorf("resumed run has %d experts, want the 3 of the checkpoint", second.Experts)
	}
}

// TestTrainOptionDefaults checks what Train fills in: the automatic batch
// size (256 on a host backend), the devices from Train.Devices, and the
// expert slots of a growing model (Experts + 4).
func TestTrainOptionDefaults(t *testing.T) {
	d, err := Digits(0.1, 1)
	if err != nil {
		t.Fatal(err)
	}
	cfg := train.DefaultConfig()
	cfg.BatchSize, cfg.Steps, cfg.NoCheckpoint, cfg.Progress = 7, 1, true, train.ProgressOff
	res, err := Train(stdcontext.Background(), testBackend(t), Options{
		Model: Config{Experts: 2, Hidden: []int{8}, TopK: 1, ExpertParallel: true}, Train: cfg, Data: d,
		AutoBatchSize: true, GrowExperts: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.BatchSize != 256 || res.Devices != 1 || len(res.Active) != 6 || res.Experts != 2 {
		t.Errorf("batch size %d, devices %d, %d slots for %d experts; want 256, 1, 6 slots (2 + 4), 2", res.BatchSize, res.Devices, len(res.Active), res.Experts)
	}
	// Expert parallelism on one device: data parallel ran, and the result says why.
	if res.Parallel != "data" || !strings.Contains(res.ParallelNote, "expert parallelism was requested but needs more than one device") ||
		!strings.Contains(res.ParallelNote, "this run has 1, so it trained single-device") {
		t.Errorf("ExpertParallel on one device: parallel %q, note %q; want data and the reason", res.Parallel, res.ParallelNote)
	}
	res, err = Train(stdcontext.Background(), testBackend(t), Options{Model: Config{Experts: 2, Hidden: []int{8}, TopK: 1}, Train: cfg, Data: d})
	if err != nil {
		t.Fatal(err)
	}
	if res.Parallel != "data" || res.ParallelNote != "" {
		t.Errorf("data parallel on one device: parallel %q, note %q; want data and no note", res.Parallel, res.ParallelNote)
	}
	cfg.Devices = "2"
	if _, err := Train(stdcontext.Background(), testBackend(t), Options{Model: Config{Experts: 2, Hidden: []int{8}, TopK: 1}, Train: cfg, Data: d}); err == nil ||
		!strings.Contains(err.Error(), "Devices 2") {
		t.Errorf("Train.Devices 2 on one device: %v, want an error naming Devices", err)
	}
}

func TestParseHidden(t *testing.T) {
	for in, want := range map[string]string{"256": "[256]", " 512, 256,": "[512 256]", "": "[]"} {
		if got, err := ParseHidden(in); err != nil || fmt.Sprint(got) != want {
			t.Errorf("ParseHidden(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	for _, in := range []string{"256,x", "0", "-4,8"} {
		if _, err := ParseHidden(in); err == nil || err.Error() != fmt.Sprintf("Hidden %q: want positive sizes separated by commas", in) {
			t.Errorf("ParseHidden(%q): %v", in, err)
		}
	}
}
