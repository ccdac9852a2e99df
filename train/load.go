package train

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/gomlx/gomlx/backends"
)

// LoadForInference restores a checkpoint written by a harness run into a
// fresh harness on backend, for sampling or evaluation: path is a
// checkpoint file, or a directory whose newest valid checkpoint is used
// (invalid files are skipped and named in the error if none is valid).
// model and loss only have to build: the restored variables carry the
// real shapes. The harness has a placeholder data set (as many rows as the
// checkpoints' data positions need) and no logger; read its Context.
func LoadForInference(backend backends.Backend, path string, model ModelFn, loss LossFn) (*Harness, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	dir := path
	if !fi.IsDir() {
		// The harness restores the newest checkpoint of a directory: give
		// it a directory holding only this file.
		tmp, err := os.MkdirTemp("", "gotrain-model-")
		if err != nil {
			return nil, err
		}
		defer func() { _ = os.RemoveAll(tmp) }()
		dst := filepath.Join(tmp, "ckpt-000000000000.gtc")
		if err := os.Link(path, dst); err != nil {
			if err := copyFile(path, dst); err != nil {
				return nil, err
			}
		}
		dir = tmp
	}
	cfg := DefaultConfig()
	cfg.Steps, cfg.BatchSize, cfg.CheckpointDir = 1, 1, dir
	// The harness restores the data position too: give it a placeholder
	// data set with as many rows as the largest offset among the files.
	rows := 1
	files, err := (&Checkpointer{Dir: dir}).List()
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		rows = max(rows, dataOffset(f))
	}
	ds, err := NewDataset(make([]float32, rows), 1, make([]float32, rows), 1, 0, false)
	if err != nil {
		return nil, err
	}
	h, err := New(backend, cfg, model, loss, ds)
	if err != nil {
		return nil, err
	}
	h.SetLogger(nil)
	var warns []string
	ck := &Checkpointer{Dir: dir, Warn: func(msg string) { warns = append(warns, msg) }}
	if _, err := ck.Restore(h); err != nil {
		if len(warns) > 0 {
			msg := strings.Join(warns, "; ")
			if dir != path {
				msg = strings.ReplaceAll(msg, filepath.Join(dir, "ckpt-000000000000.gtc"), path)
			}
			return nil, fmt.Errorf("%w: %s", err, msg)
		}
		return nil, err
	}
	return h, nil
}

// dataOffset reads the data-set offset from the JSON header of a
// checkpoint (a magic line, the header length as a little-endian uint64,
// the header); 0 if it cannot.
func dataOffset(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer func() { _ = f.Close() }()
	r := bufio.NewReader(f)
	if _, err := r.ReadString('\n'); err != nil {
		return 0
	}
	var n uint64
	if err := binary.Read(r, binary.LittleEndian, &n); err != nil || n > 1<<30 {
		return 0
	}
	var hdr struct {
		Data DataPosition `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(r, int64(n))).Decode(&hdr); err != nil {
		return 0
	}
	return hdr.Data.Offset
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}
