package moe

import (
	stdcontext "context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/train"
)

// readEpochs parses an epochs.jsonl.
func readEpochs(t *testing.T, path string) []EpochRecord {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []EpochRecord
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r EpochRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

// TestResumedRunContinuesEpochLog checks that a resumed run appends to
// epochs.jsonl and numbers its epochs on from the checkpoint, instead of
// overwriting the log from epoch 1.
func TestResumedRunContinuesEpochLog(t *testing.T) {
	d, err := Digits(0.1, 2)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := train.DefaultConfig()
	cfg.Optimizer, cfg.LearningRate, cfg.BatchSize = train.OptimizerAdam, 0.005, 128
	cfg.CheckpointDir, cfg.Progress = filepath.Join(dir, "ckpt"), train.ProgressOff
	opts := Options{Model: Config{Experts: 2, Hidden: []int{8}, TopK: 1, CapacityFactor: 2}, Data: d, Train: cfg, OutDir: filepath.Join(dir, "out")}
	opts.Train.Epochs = 2
	first, err := Train(stdcontext.Background(), testBackend(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.Train.Epochs, opts.Train.Resume = 4, true
	second, err := Train(stdcontext.Background(), testBackend(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	if second.Train.Resumed != first.Steps {
		t.Fatalf("resumed at step %d, want %d", second.Train.Resumed, first.Steps)
	}
	if len(second.History) != 2 || second.History[0].Epoch != 3 || second.History[1].Epoch != 4 {
		t.Errorf("resumed run's epochs: %+v, want 3 and 4", second.History)
	}
	log := readEpochs(t, filepath.Join(opts.OutDir, EpochsFile))
	if len(log) != 4 {
		t.Fatalf("epochs.jsonl holds %d epochs, want the 2 of each run", len(log))
	}
	spe := first.Steps / 2
	for i, r := range log {
		if r.Epoch != i+1 || r.Step != int64(i+1)*spe {
			t.Errorf("record %d: epoch %d at step %d, want epoch %d at step %d", i, r.Epoch, r.Step, i+1, int64(i+1)*spe)
		}
	}
	if log[0].TrainLoss != first.History[0].TrainLoss || log[3].TrainLoss != second.History[1].TrainLoss {
		t.Error("the log's records are not the runs' own")
	}
}

func TestEpochOf(t *testing.T) {
	for _, c := range []struct {
		step int64
		spe  int
		want int
	}{{1, 10, 1}, {10, 10, 1}, {11, 10, 2}, {20, 10, 2}, {25, 10, 3}, {7, 1, 7}, {3, 0, 3}} {
		if got := epochOf(c.step, c.spe); got != c.want {
			t.Errorf("epochOf(%d, %d) = %d, want %d", c.step, c.spe, got, c.want)
		}
	}
}

// TestEpochLogKeepsRecordsUpToTheCheckpoint checks what a resumed run
// writes: the earlier records up to the step it resumed from (records of
// steps it repeats are dropped, lines that are not records kept), then
// its own; a fresh run writes only its own.
func TestEpochLogKeepsRecordsUpToTheCheckpoint(t *testing.T) {
	path := filepath.Join(t.TempDir(), EpochsFile)
	old := `{"epoch":1,"step":10,"train_loss":3,"val_loss":-1,"val_accuracy":-1}
{"epoch":2,"step":20,"train_loss":2,"val_loss":2.5,"val_accuracy":0.4}
not a record
{"epoch":3,"step":30,"train_loss":1.9,"val_loss":2.4,"val_accuracy":0.5}
`
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	history := []EpochRecord{{Epoch: 3, Step: 30, TrainLoss: 1.5, ValLoss: 2, ValAccuracy: 0.6}, {Epoch: 4, Step: 40, TrainLoss: 1, ValLoss: math.NaN()}}
	tests := []struct {
		name    string
		resumed int64
		steps   []int64 // the records' steps in the log
		lines   int
	}{
		{"resumed mid-epoch 3", 25, []int64{10, 20, 30, 40}, 5},
		{"resumed at the end", 30, []int64{10, 20, 30, 30, 40}, 6},
		{"fresh run", 0, []int64{30, 40}, 2},
	}
	for _, tt := range tests {
		b, all, err := epochLog(path, tt.resumed, history)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		if len(lines) != tt.lines {
			t.Errorf("%s: %d lines, want %d:\n%s", tt.name, len(lines), tt.lines, b)
		}
		var steps []int64
		for _, r := range all {
			steps = append(steps, r.Step)
		}
		if len(steps) != len(tt.steps) {
			t.Errorf("%s: records at steps %v, want %v", tt.name, steps, tt.steps)
			continue
		}
		for i := range steps {
			if steps[i] != tt.steps[i] {
				t.Errorf("%s: records at steps %v, want %v", tt.name, steps, tt.steps)
				break
			}
		}
		if tt.resumed > 0 && !math.IsNaN(all[0].ValLoss) {
			t.Errorf("%s: a -1 validation loss read back as %v, want NaN", tt.name, all[0].ValLoss)
		}
		if !strings.HasSuffix(string(b), `"val_loss":-1,"val_accuracy":-1,"epoch_seconds":0,"load":null,"dropped":0,"experts":0,"experts_per_device":null}`+"\n") {
			t.Errorf("%s: the last record does not hold the NaN validation loss as -1:\n%s", tt.name, b)
		}
	}
}
