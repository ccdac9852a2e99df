package charlstm

import (
	stdcontext "context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gomlx/gomlx/backends"

	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/dist"
	"github.com/gotrain/gotrain/train"
)

// lstmLosses trains a small 2-layer char-LSTM for 50 steps of global
// batch 32 with comm (nil: one process) and returns the result and, on
// rank 0, every step's loss from the metrics log in dir.
func lstmLosses(b backends.Backend, comm dist.Comm, dir string) (*Result, []float64, error) {
	cfg := quickConfig(50, 32)
	cfg.LearningRate, cfg.LogEvery, cfg.EvalEvery, cfg.Comm = 0.005, 1, 10, comm
	cfg.MetricsLog = filepath.Join(dir, "metrics.jsonl")
	corpus := strings.Repeat("the quick brown fox jumps over the lazy dog; pack my box with five dozen liquor jugs. ", 12)
	res, err := Train(stdcontext.Background(), b, Options{Path: "pangrams", Text: corpus, Hidden: 32, Layers: 2,
		SeqLength: 16, Step: 4, ValFraction: 0.1, Train: cfg})
	if err != nil || cfg.Rank() != 0 {
		return res, nil, err
	}
	recs, err := train.ReadMetricsLog(cfg.MetricsLog)
	if err != nil {
		return nil, nil, err
	}
	var losses []float64
	for _, r := range recs {
		if l, ok := r["loss"].(float64); ok {
			losses = append(losses, l)
		}
	}
	return res, losses, nil
}

// Two ranks with global batch 32 follow one process with batch 32: the
// loss of each of 50 steps within 1e-3 relative (issue 21's bound), the
// same validation loss on both ranks, and rank 1 writes no log.
func TestTrainAcrossRanks(t *testing.T) {
	_, want, err := lstmLosses(testBackend(t), nil, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 50 {
		t.Fatalf("one process logged %d losses, want 50", len(want))
	}
	comms := dist.Local(2)
	bs := make([]backends.Backend, 2)
	dirs := []string{t.TempDir(), t.TempDir()}
	for r := range bs {
		e, b, err := device.Open("go")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(e.Close)
		bs[r] = b
	}
	res := make([]*Result, 2)
	errs := make([]error, 2)
	var got []float64
	var wg sync.WaitGroup
	for r, c := range comms {
		wg.Go(func() {
			defer c.Close()
			var l []float64
			res[r], l, errs[r] = lstmLosses(bs[r], c, dirs[r])
			if r == 0 {
				got = l
			}
		})
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("2 ranks logged %d losses, one process %d", len(got), len(want))
	}
	worst := 0.0
	for i := range want {
		rel := math.Abs(got[i]-want[i]) / math.Abs(want[i])
		worst = max(worst, rel)
		if rel > 1e-3 {
			t.Errorf("step %d: loss %.6f on 2 ranks, %.6f in one process (relative %.2g)", i+1, got[i], want[i], rel)
		}
	}
	t.Logf("largest relative loss difference over 50 steps: %.3g (loss %.4f -> %.4f)", worst, want[0], want[len(want)-1])
	if res[0].ValLoss != res[1].ValLoss {
		t.Errorf("validation loss %v on rank 0, %v on rank 1", res[0].ValLoss, res[1].ValLoss)
	}
	if ents, _ := os.ReadDir(dirs[1]); len(ents) != 0 {
		t.Errorf("rank 1 wrote %d files, want none", len(ents))
	}
}
