package train

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/ml/train/losses"
)

// smallCheckpoint trains a tiny model for two steps and returns the bytes
// of its checkpoint.
func smallCheckpoint(tb testing.TB, b backends.Backend) []byte {
	tb.Helper()
	h, err := New(b, testConfig(func(c *Config) { c.BatchSize, c.Steps = 16, 2 }), noisyMLP, losses.MeanSquaredError, synthDataN(64))
	if err != nil {
		tb.Fatal(err)
	}
	h.SetLogger(nil)
	h.SetProgressWriter(nil)
	if _, err := h.Run(); err != nil {
		tb.Fatal(err)
	}
	path, err := (&Checkpointer{Dir: tb.TempDir()}).Save(h, 0.5)
	if err != nil {
		tb.Fatal(err)
	}
	out, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// synthDataN is synthData without a *testing.T: n rows of 4 inputs.
func synthDataN(n int) *Dataset {
	x := make([]float32, n*4)
	y := make([]float32, n)
	for i := range x {
		x[i] = float32(math.Sin(float64(i)))
	}
	for i := range y {
		y[i] = x[4*i] * 0.5
	}
	ds, err := NewDataset(x, 4, y, 1, 1, false)
	if err != nil {
		panic(err)
	}
	return ds
}

// splitCheckpoint returns the header and the variables' bytes of a
// checkpoint file's bytes.
func splitCheckpoint(tb testing.TB, b []byte) (hdr, blob []byte) {
	tb.Helper()
	start := len(ckptMagic) + 8
	n := int(binary.LittleEndian.Uint64(b[len(ckptMagic):]))
	return b[start : start+n], b[start+n : len(b)-sha256.Size]
}

// buildCheckpoint assembles a checkpoint file with a correct checksum.
func buildCheckpoint(hdr, blob []byte) []byte {
	var out bytes.Buffer
	out.WriteString(ckptMagic)
	_ = binary.Write(&out, binary.LittleEndian, uint64(len(hdr)))
	out.Write(hdr)
	out.Write(blob)
	sum := sha256.Sum256(out.Bytes())
	return append(out.Bytes(), sum[:]...)
}

// fixChecksum replaces the last 32 bytes of b with the checksum of the rest.
func fixChecksum(b []byte) []byte {
	if len(b) < sha256.Size {
		return b
	}
	sum := sha256.Sum256(b[:len(b)-sha256.Size])
	copy(b[len(b)-sha256.Size:], sum[:])
	return b
}

// editHeader returns good with its JSON header changed by edit and the
// checksum made right.
func editHeader(t *testing.T, good []byte, edit func(h map[string]any)) []byte {
	t.Helper()
	hb, blob := splitCheckpoint(t, good)
	var h map[string]any
	d := json.NewDecoder(bytes.NewReader(hb))
	d.UseNumber()
	if err := d.Decode(&h); err != nil {
		t.Fatal(err)
	}
	edit(h)
	nb, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	return buildCheckpoint(nb, blob)
}

// firstVar returns the first variable of a decoded header.
func firstVar(h map[string]any) map[string]any {
	return h["variables"].([]any)[0].(map[string]any)
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestCheckpointReaderChecksHeaderAgainstFile checks that sizes, offsets
// and dimensions in a header (with a valid checksum) that do not fit the
// file are errors naming the file and the variable, without a panic and
// without an allocation beyond the file's size.
func TestCheckpointReaderChecksHeaderAgainstFile(t *testing.T) {
	good := smallCheckpoint(t, testBackend(t))
	cases := []struct {
		name string
		edit func(h map[string]any)
		want string
	}{
		{"offset near 2^63", func(h map[string]any) { firstVar(h)["offset"] = int64(math.MaxInt64 - 3) }, "outside the file's"},
		{"size near 2^63", func(h map[string]any) { firstVar(h)["size"] = int64(math.MaxInt64) }, "outside the file's"},
		{"negative offset", func(h map[string]any) { firstVar(h)["offset"] = -8 }, "outside the file's"},
		{"negative dimension", func(h map[string]any) { firstVar(h)["dims"] = []int{-4, -1} }, "negative dimension"},
		{"huge dimensions", func(h map[string]any) { firstVar(h)["dims"] = []int64{1 << 40, 1 << 40} }, "more bytes than the file's"},
		{"dimensions overflowing", func(h map[string]any) { firstVar(h)["dims"] = []int64{1 << 32, 1 << 32, 1 << 32} }, "more bytes than the file's"},
		{"size not the shape's", func(h map[string]any) { firstVar(h)["dims"] = []int{1} }, "bytes for shape [1]"},
		{"unknown dtype", func(h map[string]any) { firstVar(h)["dtype"] = "Float99" }, "dtype \"Float99\""},
		{"invalid dtype", func(h map[string]any) { firstVar(h)["dtype"] = "InvalidDType" }, "dtype"},
		{"rank", func(h map[string]any) { firstVar(h)["dims"] = make([]int, 40) }, "rank 40"},
		{"negative data offset", func(h map[string]any) { h["data"] = map[string]any{"epoch": 0, "offset": -1} }, "data position"},
	}
	dir := t.TempDir()
	for _, c := range cases {
		b := editHeader(t, good, c.edit)
		path := filepath.Join(dir, "ckpt-000000000002.gtc")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		var err error
		n := allocated(func() { _, _, err = readCheckpointFile(path) })
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %v, want one naming %s and containing %q", c.name, err, path, c.want)
		}
		if n > 4*uint64(len(b))+1<<20 {
			t.Errorf("%s: %d bytes allocated for a file of %d", c.name, n, len(b))
		}
	}
	// The file itself reads back.
	path := filepath.Join(dir, "good.gtc")
	if err := os.WriteFile(path, good, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := readCheckpointFile(path); err != nil {
		t.Fatal(err)
	}
}

// TestCheckpointReaderRefusesSpecialFiles checks that a FIFO named like a
// checkpoint is refused instead of read without end.
func TestCheckpointReaderRefusesSpecialFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ckpt-000000000001.gtc")
	if err := mkfifo(path); err != nil {
		t.Skipf("no FIFO: %v", err)
	}
	if _, _, err := readCheckpointFile(path); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("FIFO: %v, want a refusal", err)
	}
}

// TestRestoreSkipsCheckpointWithImpossibleShape checks that resuming
// skips, with a warning naming it, a checkpoint whose header (under a
// valid checksum) gives a variable a negative or oversized shape, instead
// of panicking or allocating for it.
func TestRestoreSkipsCheckpointWithImpossibleShape(t *testing.T) {
	b := testBackend(t)
	good := smallCheckpoint(t, b)
	for _, dims := range [][]int64{{-4, -1}, {1 << 40, 1 << 20}} {
		dir := t.TempDir()
		path := filepath.Join(dir, "ckpt-000000000002.gtc")
		bad := editHeader(t, good, func(h map[string]any) { firstVar(h)["dims"] = dims })
		if err := os.WriteFile(path, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		h, err := New(b, testConfig(func(c *Config) { c.BatchSize, c.Steps = 16, 2 }), noisyMLP, losses.MeanSquaredError, synthDataN(64))
		if err != nil {
			t.Fatal(err)
		}
		var warned []string
		ck := &Checkpointer{Dir: dir, Warn: func(m string) { warned = append(warned, m) }}
		var rerr error
		n := allocated(func() { _, rerr = ck.Restore(h) })
		if !errors.Is(rerr, ErrNoCheckpoint) || len(warned) != 1 || !strings.Contains(warned[0], path) {
			t.Errorf("dims %v: %v, warnings %q; want ErrNoCheckpoint and a warning naming %s", dims, rerr, warned, path)
		}
		if n > 64<<20 {
			t.Errorf("dims %v: %d bytes allocated", dims, n)
		}
	}
}
