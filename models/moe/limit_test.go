package moe

import (
	stdcontext "context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/data"
)

// writeTinyMNIST writes MNIST's four IDX files with n images of 28×28.
func writeTinyMNIST(t *testing.T, dir string, n int) {
	t.Helper()
	idx := func(magic uint32, dims []uint32, body []byte) []byte {
		b := binary.BigEndian.AppendUint32(nil, magic)
		for _, d := range dims {
			b = binary.BigEndian.AppendUint32(b, d)
		}
		return append(b, body...)
	}
	labels := make([]byte, n)
	for i := range labels {
		labels[i] = byte(i % 10)
	}
	for _, p := range []string{"train", "t10k"} {
		for name, b := range map[string][]byte{
			p + "-images-idx3-ubyte": idx(0x803, []uint32{uint32(n), 28, 28}, make([]byte, n*28*28)),
			p + "-labels-idx1-ubyte": idx(0x801, []uint32{uint32(n)}, labels),
		} {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestLoadDataCapsMNISTFiles checks that DataOptions.MaxBytes caps each
// MNIST file, with an error naming the file and the option.
func TestLoadDataCapsMNISTFiles(t *testing.T) {
	dir := t.TempDir()
	writeTinyMNIST(t, dir, 20)
	d, err := LoadData(stdcontext.Background(), DataOptions{Dataset: DatasetMNIST, Dir: dir})
	if err != nil || d.Inputs != 784 {
		t.Fatalf("tiny MNIST: %v", err)
	}
	_, err = LoadData(stdcontext.Background(), DataOptions{Dataset: DatasetMNIST, Dir: dir, MaxBytes: 4096})
	if !errors.Is(err, data.ErrTooLarge) || !strings.Contains(err.Error(), "train-images-idx3-ubyte is larger than the 4 KiB limit; raise it with DataOptions.MaxBytes") {
		t.Errorf("MaxBytes 4096: %v", err)
	}
}
