package train

import (
	"crypto/sha256"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/ml/train/losses"

	"github.com/gotrain/gotrain/device"
)

// TestLoadForInferenceChecksBeforeAllocating checks that a model file's
// data offset, which only training uses, cannot make loading allocate:
// 10^12 with a valid checksum loads, and with a corrupt one is refused by
// the checksum.
func TestLoadForInferenceChecksBeforeAllocating(t *testing.T) {
	b := testBackend(t)
	good := smallCheckpoint(t, b)
	dir := t.TempDir()
	for _, off := range []int64{1e12, math.MaxInt64} {
		huge := editHeader(t, good, func(h map[string]any) { h["data"] = map[string]any{"epoch": 0, "offset": off} })
		path := filepath.Join(dir, "model.gtc")
		if err := os.WriteFile(path, huge, 0o644); err != nil {
			t.Fatal(err)
		}
		var h *Harness
		var err error
		if n := allocated(func() { h, err = LoadForInference(b, path, noisyMLP, losses.MeanSquaredError) }); n > 256<<20 {
			t.Errorf("offset %d: %d bytes allocated", off, n)
		}
		if err != nil || h.Step() != 2 {
			t.Errorf("offset %d: %v", off, err)
		}
		corrupt := slices.Clone(huge)
		corrupt[len(corrupt)-1] ^= 1
		if err := os.WriteFile(path, corrupt, 0o644); err != nil {
			t.Fatal(err)
		}
		if n := allocated(func() { _, err = LoadForInference(b, path, noisyMLP, losses.MeanSquaredError) }); n > 256<<20 {
			t.Errorf("offset %d, corrupt: %d bytes allocated", off, n)
		}
		if !errors.Is(err, ErrNoCheckpoint) || !strings.Contains(err.Error(), "checksum mismatch") {
			t.Errorf("offset %d, corrupt: %v, want a checksum error", off, err)
		}
	}
}

// TestLoadForInferenceNamesTheUsersFile checks that the errors about a
// truncated model file name that file, not a temporary copy.
func TestLoadForInferenceNamesTheUsersFile(t *testing.T) {
	b := testBackend(t)
	good := smallCheckpoint(t, b)
	path := filepath.Join(t.TempDir(), "my-model.gtc")
	for _, n := range []int{len(good) - 1, len(good) / 2, 10} {
		if err := os.WriteFile(path, good[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := LoadForInference(b, path, noisyMLP, losses.MeanSquaredError)
		if err == nil || !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), os.TempDir()+string(filepath.Separator)+"gotrain-model-") {
			t.Errorf("%d bytes: %v, want an error naming %s only", n, err, path)
		}
	}
	if _, err := LoadForInference(b, path+".absent", noisyMLP, losses.MeanSquaredError); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("absent file: %v", err)
	}
}

// fuzzBackend opens simplego for a fuzz target.
func fuzzBackend(f *testing.F) backends.Backend {
	e, b, err := device.Open("go")
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(e.Close)
	return b
}

// checkLoadForInference writes b as a checkpoint file and loads it: it
// must not panic, must fail with an error naming the file or load, and a
// loaded harness holds the checkpoint's step.
func checkLoadForInference(t *testing.T, be backends.Backend, b []byte) {
	path := filepath.Join(t.TempDir(), "ckpt-000000000002.gtc")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	hdr, _, derr := decodeCheckpoint(b, path)
	h, err := LoadForInference(be, path, noisyMLP, losses.MeanSquaredError)
	if err != nil {
		if !strings.Contains(err.Error(), path) {
			t.Fatalf("error does not name the file: %v", err)
		}
		return
	}
	if derr != nil {
		t.Fatalf("loaded a file the reader refuses: %v", derr)
	}
	if h.Step() != hdr.Step {
		t.Fatalf("step %d, header says %d", h.Step(), hdr.Step)
	}
}

// FuzzLoadForInference checks that no checkpoint file makes the model
// loader panic or allocate beyond the file. Each input is also tried with
// its checksum made right, so that the fuzzer gets past the checksum.
func FuzzLoadForInference(f *testing.F) {
	be := fuzzBackend(f)
	good := smallCheckpoint(f, be)
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(good[:len(ckptMagic)+8])
	hb, _ := splitCheckpoint(f, good)
	for _, at := range []int{3, len(ckptMagic), len(ckptMagic) + 3, len(ckptMagic) + 8 + len(hb)/2, len(ckptMagic) + 8 + len(hb) + 5, len(good) - 1} {
		c := slices.Clone(good)
		c[at] ^= 0x41
		f.Add(c)
	}
	f.Add([]byte(ckptMagic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		checkLoadForInference(t, be, b)
		if len(b) >= sha256.Size {
			checkLoadForInference(t, be, fixChecksum(slices.Clone(b)))
		}
	})
}

// FuzzCheckpointHeader fuzzes the JSON header of a small valid
// checkpoint, keeping its variables' bytes and fixing the checksum, to
// explore the header's checks.
func FuzzCheckpointHeader(f *testing.F) {
	be := fuzzBackend(f)
	good := smallCheckpoint(f, be)
	hb, blob := splitCheckpoint(f, good)
	f.Add(slices.Clone(hb))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"variables":[{"scope":"/l1","name":"w","dtype":"Float32","dims":[-1],"offset":0,"size":4}]}`))
	f.Add([]byte(`{"data":{"epoch":0,"offset":1000000000000},"variables":[]}`))
	f.Fuzz(func(t *testing.T, h []byte) {
		checkLoadForInference(t, be, buildCheckpoint(h, blob))
	})
}
