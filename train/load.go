package train

import (
	"fmt"
	"os"
	"strings"

	"github.com/gomlx/gomlx/backends"
)

// LoadForInference restores a checkpoint written by a harness run into a
// fresh harness on backend, for sampling or evaluation: path is a
// checkpoint file, or a directory whose newest valid checkpoint is used:
// a run folder's, or that of the newest run in a folder of runs
// (RunCheckpoints; invalid files are skipped and named in the error if
// none is valid).
// model and loss only have to build: the restored variables carry the
// real shapes. The file is read once and checked (size, checksum, then
// every header field against the file) before anything it describes is
// allocated, and errors name path. The harness has a one-row placeholder
// data set (the checkpoint's data position is not restored) and no
// logger; read its Context. A checkpoint of a run with Config.EMADecay
// loads with the moving averages as the weights.
func LoadForInference(backend backends.Backend, path string, model ModelFn, loss LossFn) (*Harness, error) {
	f, hdr, blob, err := firstReadableCheckpoint(path)
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	h, err := inferenceHarness(backend, model, loss)
	if err != nil {
		return nil, err
	}
	// The data position only matters to training; the placeholder data
	// set has none to restore.
	hdr.Data = DataPosition{}
	if err := (&Checkpointer{}).load(h, hdr, blob); err != nil {
		return nil, fmt.Errorf("train: loading %s: %w", f, err)
	}
	// A run with EMADecay saved the weights' moving averages: inference
	// uses them (AveragedWeights tells).
	if err := h.applyEMA(); err != nil {
		return nil, fmt.Errorf("train: loading %s: %w", f, err)
	}
	return h, nil
}

// firstReadableCheckpoint reads the checkpoint file path, or the first
// that reads of a run folder's or a folder of runs' files, newest first
// (RunCheckpoints): its name, header and bytes. Otherwise the error wraps
// ErrNoCheckpoint with why each file failed (or the Stat error).
func firstReadableCheckpoint(path string) (string, ckptHeader, []byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", ckptHeader{}, nil, err
	}
	files := []string{path}
	if fi.IsDir() {
		if files, err = RunCheckpoints(path); err != nil {
			return "", ckptHeader{}, nil, err
		}
	}
	var skipped []string
	for _, f := range files {
		hdr, blob, err := readCheckpointFile(f)
		if err != nil {
			skipped = append(skipped, err.Error())
			continue
		}
		return f, hdr, blob, nil
	}
	if len(skipped) > 0 {
		return "", ckptHeader{}, nil, fmt.Errorf("%s: %w: %s", path, ErrNoCheckpoint, strings.Join(skipped, "; "))
	}
	return "", ckptHeader{}, nil, fmt.Errorf("%s: %w (no checkpoint files)", path, ErrNoCheckpoint)
}

// inferenceHarness returns a harness for model and loss on a one-row
// placeholder data set, without checkpoints or a logger.
func inferenceHarness(backend backends.Backend, model ModelFn, loss LossFn) (*Harness, error) {
	cfg := DefaultConfig()
	cfg.Steps, cfg.BatchSize, cfg.NoCheckpoint, cfg.CheckpointDir = 1, 1, true, ""
	ds, err := NewDataset([]float32{0}, 1, []float32{0}, 1, 0, false)
	if err != nil {
		return nil, err
	}
	h, err := New(backend, cfg, model, loss, ds)
	if err != nil {
		return nil, err
	}
	h.SetLogger(nil)
	return h, nil
}
