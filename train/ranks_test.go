package train

import (
	stdcontext "context"
	"errors"
	"math"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/train/losses"

	"github.com/gotrain/gotrain/dist"
)

// rankRun is what one rank of runRanks did.
type rankRun struct {
	res     Result
	err     error
	losses  []float64
	weights map[string][]byte
	h       *Harness
}

// runRanks trains n harnesses together on in-process ranks (dist.Local),
// each on a backend of its own, from cfg (mod, when set, changes rank
// r's copy and may set up its harness before Run).
func runRanks(t *testing.T, n int, cfg Config, model ModelFn, mod func(rank int, c *Config), setup func(rank int, h *Harness), ctxs ...stdcontext.Context) []rankRun {
	t.Helper()
	comms := dist.Local(n)
	bs := make([]backends.Backend, n)
	for r := range n {
		bs[r] = testBackend(t)
	}
	data := make([]*Dataset, n)
	for r := range n {
		data[r] = synthData(t, 256, false)
	}
	out := make([]rankRun, n)
	var wg sync.WaitGroup
	for r, c := range comms {
		wg.Go(func() {
			defer c.Close()
			rc := cfg
			rc.Comm = c
			if mod != nil {
				mod(r, &rc)
			}
			h, err := New(bs[r], rc, model, losses.MeanSquaredError, data[r])
			if err != nil {
				out[r].err = err
				return
			}
			h.SetProgressWriter(nil)
			h.SetLogger(nil)
			h.SetStepHook(func(_ int64, loss float64) { out[r].losses = append(out[r].losses, loss) })
			if setup != nil {
				setup(r, h)
			}
			ctx := stdcontext.Background()
			if r < len(ctxs) && ctxs[r] != nil {
				ctx = ctxs[r]
			}
			out[r].res, out[r].err = h.RunContext(ctx)
			out[r].h = h
			out[r].weights = map[string][]byte{}
			for v := range h.Context().IterVariables() {
				if v.Trainable && v.HasValue() {
					tv, err := v.Value()
					if err == nil {
						_ = tv.ConstBytes(func(b []byte) { out[r].weights[v.ScopeAndName()] = append([]byte(nil), b...) })
					}
				}
			}
		})
	}
	wg.Wait()
	return out
}

// oneProcess trains cfg in this process alone and returns its losses and
// trainable weights.
func oneProcess(t *testing.T, cfg Config, model ModelFn) rankRun {
	t.Helper()
	return runRanks(t, 1, cfg, model, func(_ int, c *Config) { c.Comm = nil }, nil)[0]
}

// Training across 2 and 4 ranks with global batch B follows one process
// with batch B: the loss curve within 1e-5 relative over 50 steps (only
// the order of the gradient sums differs), and every rank ends with the
// same weights, which match one process's.
func TestRanksMatchOneProcess(t *testing.T) {
	cases := []struct {
		name string
		mod  func(*Config)
	}{
		{"adam", nil},
		{"adamw cosine warmup clip", func(c *Config) {
			c.Optimizer, c.Cosine, c.WarmupSteps, c.ClipNorm = OptimizerAdamW, true, 10, 0.5
		}},
		{"sgd accumulate 2", func(c *Config) { c.Optimizer, c.Accumulate, c.LearningRate = OptimizerSGD, 2, 0.05 }},
		{"ema", func(c *Config) { c.EMADecay = 0.9 }},
		{"loss scaling", func(c *Config) { c.DynamicLossScaling = true }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(tc.mod)
			cfg.Steps, cfg.BatchSize = 50, 32
			one := oneProcess(t, cfg, mlp)
			if one.err != nil {
				t.Fatal(one.err)
			}
			for _, n := range []int{2, 4} {
				runs := runRanks(t, n, cfg, mlp, nil, nil)
				for r, run := range runs {
					if run.err != nil {
						t.Fatalf("%d ranks, rank %d: %v", n, r, run.err)
					}
					// 96 parameters (4x16 + 16 + 16x1) and the loss
					// and flag each step.
					if p := run.h.Perf(); p.Ranks != n || p.BytesSent < 50*(96*4+16) {
						t.Fatalf("%d ranks, rank %d: Perf says %d ranks, %d bytes sent", n, r, p.Ranks, p.BytesSent)
					}
					if len(run.losses) != len(one.losses) {
						t.Fatalf("%d ranks, rank %d: %d steps, one process %d", n, r, len(run.losses), len(one.losses))
					}
					for i, l := range run.losses {
						if rel := math.Abs(l-one.losses[i]) / math.Abs(one.losses[i]); rel > 1e-5 {
							t.Fatalf("%d ranks, rank %d, step %d: loss %.9g, one process %.9g (relative %.2g)", n, r, i+1, l, one.losses[i], rel)
						}
					}
					for name, w := range run.weights {
						if string(w) != string(runs[0].weights[name]) {
							t.Fatalf("%d ranks: rank %d's %s differs from rank 0's", n, r, name)
						}
						a, b := bytesFloats(w), bytesFloats(one.weights[name])
						for i := range a {
							if math.Abs(float64(a[i]-b[i])) > 1e-4*(1+math.Abs(float64(b[i]))) {
								t.Fatalf("%d ranks: %s[%d] = %g, one process %g", n, name, i, a[i], b[i])
							}
						}
					}
				}
			}
		})
	}
}

func bytesFloats(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(uint32(b[4*i]) | uint32(b[4*i+1])<<8 | uint32(b[4*i+2])<<16 | uint32(b[4*i+3])<<24)
	}
	return out
}

// A run across 2 ranks interrupted by a checkpoint and resumed on 2 ranks
// ends with exactly the weights of the uninterrupted run (random draws
// included: rank 1's stream is drawn from the step); only rank 0 writes
// checkpoints, and the other rank restores what rank 0 sends.
func TestRanksResume(t *testing.T) {
	base := testConfig(nil)
	base.BatchSize, base.NoCheckpoint = 32, false
	whole := base
	whole.Steps, whole.CheckpointDir = 30, t.TempDir()
	want := runRanks(t, 2, whole, noisyMLP, nil, nil)
	for _, r := range want {
		if r.err != nil {
			t.Fatal(r.err)
		}
	}
	dir := t.TempDir()
	first := base
	first.Steps, first.CheckpointDir = 12, dir
	// Rank 1 is given a checkpoint folder of its own, which must stay
	// empty: it writes nothing and resumes from what rank 0 sends.
	other := t.TempDir()
	onOwnDir := func(r int, c *Config) {
		if r == 1 {
			c.CheckpointDir = other
		}
	}
	for _, r := range runRanks(t, 2, first, noisyMLP, onOwnDir, nil) {
		if r.err != nil {
			t.Fatal(r.err)
		}
	}
	if ents, _ := os.ReadDir(other); len(ents) != 0 {
		t.Fatalf("rank 1 wrote %d entries in its checkpoint folder", len(ents))
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("rank 0 wrote %d run folders, want 1", len(ents))
	}
	second := first
	second.Steps, second.Resume = 30, true
	got := runRanks(t, 2, second, noisyMLP, onOwnDir, nil)
	for r := range got {
		if got[r].err != nil {
			t.Fatal(got[r].err)
		}
		if got[r].res.Resumed != 12 || got[r].res.Steps != 30 {
			t.Fatalf("rank %d resumed at %d and ended at %d, want 12 and 30", r, got[r].res.Resumed, got[r].res.Steps)
		}
		for name, w := range want[r].weights {
			if string(got[r].weights[name]) != string(w) {
				t.Fatalf("rank %d: %s after resuming differs from the uninterrupted run", r, name)
			}
		}
	}
	// Nothing to resume from: every rank fails alike, none hangs.
	empty := first
	empty.CheckpointDir, empty.Resume = t.TempDir(), true
	for r, run := range runRanks(t, 2, empty, mlp, nil, nil) {
		if !errors.Is(run.err, ErrNoCheckpoint) {
			t.Errorf("rank %d resuming from an empty folder: %v, want ErrNoCheckpoint", r, run.err)
		}
	}
}

// Ranks that would train different models (other initial weights on one
// rank) fail after the first step instead of drifting apart, and ranks
// launched with other options fail before training.
func TestRanksRefuseDifferentWeights(t *testing.T) {
	cfg := testConfig(nil)
	cfg.BatchSize = 32
	otherInit := func(r int, h *Harness) {
		if r == 1 {
			h.Context().SetParam(context.ParamInitialSeed, cfg.Seed+1)
			if err := h.Context().ResetRNGState(); err != nil {
				t.Error(err)
			}
		}
	}
	for r, run := range runRanks(t, 2, cfg, mlp, nil, otherInit) {
		if run.err == nil || !strings.Contains(run.err.Error(), "after step 1 rank 1 holds other weights") {
			t.Errorf("rank %d: %v, want the weights' disagreement", r, run.err)
		}
	}
	for _, mod := range []func(*Config){
		func(c *Config) { c.Seed++ },
		func(c *Config) { c.Steps++ },
		func(c *Config) { c.LogEvery++ },
	} {
		runs := runRanks(t, 2, cfg, mlp, func(r int, c *Config) {
			if r == 1 {
				mod(c)
			}
		}, nil)
		for r, run := range runs {
			if run.err == nil || !strings.Contains(run.err.Error(), "rank 1 trains another run than rank 0") {
				t.Errorf("rank %d: %v, want the runs' disagreement", r, run.err)
			}
			if len(run.losses) != 0 {
				t.Errorf("rank %d trained %d steps before refusing", r, len(run.losses))
			}
		}
	}
}

// The ranks compare their weights at every logged step: a rank whose
// weights drift (here changed behind the harness's back after step 3) is
// found at the next log.
func TestRanksFindDrift(t *testing.T) {
	cfg := testConfig(nil)
	cfg.BatchSize, cfg.Steps, cfg.LogEvery = 32, 20, 5
	drift := func(r int, h *Harness) {
		if r == 1 {
			h.SetStepHook(func(step int64, _ float64) {
				if step == 3 {
					v := h.Context().GetVariableByScopeAndName("/l2", "w")
					t0, _ := v.Value()
					w := tensors.MustCopyFlatData[float32](t0)
					w[0] += 1e-6
					_ = v.SetValue(tensors.FromFlatDataAndDimensions(w, 16, 1))
				}
			})
		}
	}
	for r, run := range runRanks(t, 2, cfg, mlp, nil, drift) {
		if run.err == nil || !strings.Contains(run.err.Error(), "after step 5 rank 1 holds other weights") {
			t.Errorf("rank %d: %v, want the drift found at step 5", r, run.err)
		}
	}
}

// The evaluation every rank logs and early stopping watches is rank 0's,
// and the step metrics are averaged over the ranks.
func TestRanksShareEvaluation(t *testing.T) {
	cfg := testConfig(nil)
	cfg.BatchSize, cfg.Steps, cfg.EvalEvery, cfg.LogEvery = 32, 6, 2, 1
	cfg.EarlyStopMonitor, cfg.EarlyStopPatience = "val", 1
	setup := func(r int, h *Harness) {
		calls := 0
		h.SetEvaluator(func(*Harness) (map[string]float64, error) {
			calls++
			// Rank 0 sees no improvement after its first evaluation; rank 1
			// would improve forever.
			v := 1.0
			if r == 1 {
				v = 1 / float64(calls)
			}
			return map[string]float64{"val": v}, nil
		})
		h.SetStepMetric("rank", func(labels, _ []*graph.Node) *graph.Node {
			return graph.Scalar(labels[0].Graph(), dtypes.Float32, float64(r))
		})
	}
	runs := runRanks(t, 2, cfg, mlp, nil, setup)
	for r, run := range runs {
		if run.err != nil {
			t.Fatalf("rank %d: %v", r, run.err)
		}
		if run.res.Steps != 4 || run.res.Stopped == "" {
			t.Errorf("rank %d stopped at step %d (%q), want 4 by rank 0's evaluation", r, run.res.Steps, run.res.Stopped)
		}
		if run.res.Eval["val"] != 1 {
			t.Errorf("rank %d's evaluation %v, want rank 0's", r, run.res.Eval)
		}
		for _, rec := range run.h.History() {
			if v, ok := rec["rank"]; ok && v != 0.5 {
				t.Fatalf("rank %d logged step metric %v, want the mean 0.5", r, v)
			}
		}
	}
}

// A run cancelled on one rank stops on every rank at the same step (the
// next one), and
// rank 0 writes the checkpoint to resume from.
func TestRanksInterruptTogether(t *testing.T) {
	cfg := testConfig(nil)
	cfg.BatchSize, cfg.Steps, cfg.NoCheckpoint, cfg.CheckpointDir = 32, 1000, false, t.TempDir()
	ctx, cancel := stdcontext.WithCancelCause(stdcontext.Background())
	setup := func(r int, h *Harness) {
		if r == 1 {
			h.SetStepHook(func(step int64, _ float64) {
				if step == 5 {
					cancel(errors.New("test stop"))
				}
			})
		}
	}
	runs := runRanks(t, 2, cfg, mlp, nil, setup, nil, ctx)
	for r, run := range runs {
		if !errors.Is(run.err, ErrInterrupted) {
			t.Fatalf("rank %d: %v, want ErrInterrupted", r, run.err)
		}
		// Rank 1 was cancelled after step 5; the ranks learn it together
		// in step 6's collective call and stop after it.
		if run.res.Steps != 6 {
			t.Errorf("rank %d stopped after step %d, want 6", r, run.res.Steps)
		}
	}
	if runs[0].res.Checkpoint == "" || runs[1].res.Checkpoint != "" {
		t.Errorf("checkpoints %q (rank 0) and %q (rank 1): want rank 0's only", runs[0].res.Checkpoint, runs[1].res.Checkpoint)
	}
}

func TestRanksRefusals(t *testing.T) {
	cases := []struct {
		name string
		mod  func(*Config)
		want string
	}{
		{"batch", func(c *Config) { c.BatchSize = 33 }, "not a multiple of the 2 ranks"},
		{"find lr", func(c *Config) { c.FindLR = true }, "FindLR"},
		{"device data", func(c *Config) { c.DeviceDataBudgetMiB = 1 }, "DeviceDataBudgetMiB"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(tc.mod)
			for r, run := range runRanks(t, 2, cfg, mlp, nil, nil) {
				if run.err == nil || !strings.Contains(run.err.Error(), tc.want) {
					t.Errorf("rank %d: %v, want an error naming %q", r, run.err, tc.want)
				}
			}
		})
	}
}
