package radioml

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzOpen feeds arbitrary bytes to the reader as a file: opening and
// reading the first records must return an error or records, never panic,
// hang or allocate beyond the limits (sizes are checked against the
// input's length first). Seeds: the small fixtures and cut copies.
// Run: go test ./signal/radioml -run '^$' -fuzz FuzzOpen -fuzztime 1m
// -fuzzminimizetime 1s (minimizing the larger seeds' finds takes long).
func FuzzOpen(f *testing.F) {
	for _, name := range []string{"latest.hdf5", "latest_single.hdf5", "latest_chunked.hdf5", "no_z.hdf5", "not_onehot.hdf5", "bad_shape.hdf5"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := open(bytes.NewReader(data), int64(len(data)), "fuzz.hdf5")
		if err != nil {
			return
		}
		if file.FrameLen > 1<<16 {
			return // a real read of this size is allowed; not here
		}
		b, err := file.Read(0, min(file.N, 4))
		if err != nil {
			return
		}
		for i := range b.Class {
			if b.Class[i] < 0 || b.Class[i] >= len(Classes) {
				t.Fatalf("record %d: class %d", i, b.Class[i])
			}
		}
	})
}
