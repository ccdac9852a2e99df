package transformer

import (
	"bytes"
	stdcontext "context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/backends"

	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/train"
)

// ckptMagic is the first line of a checkpoint file (package train).
const ckptMagic = "GOTRAIN-CKPT-1\n"

// fuzzBackend is goBackend for any test or fuzz target.
func fuzzBackend(tb testing.TB) backends.Backend {
	tb.Helper()
	backendOnce.Do(func() {
		_, testBackend, backendErr = device.Open("go")
	})
	if backendErr != nil {
		tb.Fatal(backendErr)
	}
	return testBackend
}

// tinyCheckpoint pretrains a one-block model of width 4 for two steps and
// returns its checkpoint file's bytes.
func tinyCheckpoint(tb testing.TB, b backends.Backend) []byte {
	tb.Helper()
	cfg := train.DefaultConfig()
	cfg.CheckpointDir, cfg.Progress, cfg.LogEvery = tb.TempDir(), "off", 1000
	res, err := Train(stdcontext.Background(), b, Options{Arch: Arch{Layers: 1, Heads: 2, Width: 4, Context: 4, Hidden: 8},
		PretrainText: pretrainText, Pretrain: Phase{Steps: 2, BatchSize: 4}, Stride: 3, ValFraction: -1, Train: cfg})
	if err != nil {
		tb.Fatal(err)
	}
	out, err := os.ReadFile(res.Checkpoint)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// fixChecksum replaces the last 32 bytes of b with the SHA-256 of the rest.
func fixChecksum(b []byte) []byte {
	if len(b) >= sha256.Size {
		sum := sha256.Sum256(b[:len(b)-sha256.Size])
		copy(b[len(b)-sha256.Size:], sum[:])
	}
	return b
}

// splitCheckpoint returns the JSON header and the variables' bytes of a
// checkpoint file.
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

// checkModelFile writes b as a model file, loads it as `lm transformer
// sample` does and samples a few characters with and without the cache:
// nothing may panic, an error must name the file, and a loaded model must
// sample.
func checkModelFile(t *testing.T, be backends.Backend, b []byte) {
	path := filepath.Join(t.TempDir(), "model.gtc")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Load(be, path)
	if err != nil {
		if !strings.Contains(err.Error(), path) {
			t.Fatalf("error does not name the file: %v", err)
		}
		return
	}
	if err := m.Arch.Validate(); err != nil {
		t.Fatalf("loaded an invalid model: %v", err)
	}
	prompt, err := m.Vocab.Decode([]int{0})
	if err != nil {
		t.Fatal(err)
	}
	for _, noCache := range []bool{false, true} {
		if _, err := m.Sample(SampleOptions{Prompt: prompt, Length: 2, Temperature: 1, Seed: 1, NoCache: noCache}); err != nil {
			t.Fatalf("a loaded model does not sample (no cache %v): %v", noCache, err)
		}
	}
}

// FuzzLoad checks that no model file makes Load, or sampling from what it
// loads, panic. Each input is also tried with its checksum made right, so
// that the fuzzer reaches the header, the variables and the model's
// metadata (vocabulary, architecture) they hold.
func FuzzLoad(f *testing.F) {
	be := fuzzBackend(f)
	v1, err := os.ReadFile(filepath.Join("testdata", "transformer-v1.gtc"))
	if err != nil {
		f.Fatal(err)
	}
	for _, good := range [][]byte{tinyCheckpoint(f, be), v1} {
		f.Add(good)
		f.Add(good[:len(good)/2])
		hdr, _ := splitCheckpoint(f, good)
		for _, at := range []int{3, len(ckptMagic) + 2, len(ckptMagic) + 8 + len(hdr)/3, len(ckptMagic) + 8 + len(hdr) + 1, len(good) - 40} {
			c := slices.Clone(good)
			c[at] ^= 0x5a
			f.Add(c)
		}
	}
	f.Add([]byte(ckptMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkModelFile(t, be, b)
		if len(b) >= sha256.Size {
			checkModelFile(t, be, fixChecksum(slices.Clone(b)))
		}
	})
}

// FuzzLoadHeader fuzzes the JSON header of a small model file, keeping its
// variables' bytes and fixing the checksum.
func FuzzLoadHeader(f *testing.F) {
	be := fuzzBackend(f)
	good := tinyCheckpoint(f, be)
	hdr, blob := splitCheckpoint(f, good)
	f.Add(slices.Clone(hdr))
	f.Add(bytes.Replace(hdr, []byte(`"dims":[4]`), []byte(`"dims":[-4]`), 1))
	f.Add(bytes.Replace(hdr, []byte(`"name":"arch"`), []byte(`"name":"arch2"`), 1))
	f.Fuzz(func(t *testing.T, h []byte) {
		checkModelFile(t, be, buildCheckpoint(h, blob))
	})
}

// TestLoadRefusesMetadataThatDisagreesWithWeights checks that a model file
// whose architecture (its metadata, under a valid checksum) does not
// describe its weights is refused with an error naming the file, instead
// of a model that makes up the missing weights or sizes its cache by the
// metadata.
func TestLoadRefusesMetadataThatDisagreesWithWeights(t *testing.T) {
	be := fuzzBackend(t)
	good := tinyCheckpoint(t, be) // 1 layer, 2 heads, width 4, context 4, hidden 8
	hdr, blob := splitCheckpoint(t, good)
	var h struct {
		Variables []struct {
			Scope, Name  string
			Offset, Size int
		}
	}
	if err := json.Unmarshal(hdr, &h); err != nil {
		t.Fatal(err)
	}
	at := -1
	for _, v := range h.Variables {
		if v.Scope == MetaScope && v.Name == "arch" && v.Size == 32 {
			at = v.Offset
		}
	}
	if at < 0 {
		t.Fatal("no arch variable of 8 int32s in the checkpoint")
	}
	base := [8]int32{1, 2, 4, 4, 8, 0, 0, 0}
	for _, c := range []struct {
		i int
		v int32
	}{{0, 2}, {0, 1 << 30}, {1, 3}, {2, 8}, {3, 1 << 30}, {3, 5}, {4, 9}, {6, 1}, {7, 1}, {0, -1}} {
		arch := base
		arch[c.i] = c.v
		b := slices.Clone(blob)
		for i, v := range arch {
			binary.LittleEndian.PutUint32(b[at+4*i:], uint32(v))
		}
		path := filepath.Join(t.TempDir(), "model.gtc")
		if err := os.WriteFile(path, buildCheckpoint(hdr, b), 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := Load(be, path)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), MetaScope+"/arch") {
			t.Errorf("arch %v: model %v, error %v; want an error naming %s and the metadata", arch, m != nil, err, path)
		}
	}
	// The unchanged metadata loads.
	b := slices.Clone(blob)
	for i, v := range base {
		binary.LittleEndian.PutUint32(b[at+4*i:], uint32(v))
	}
	path := filepath.Join(t.TempDir(), "model.gtc")
	if err := os.WriteFile(path, buildCheckpoint(hdr, b), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(be, path); err != nil {
		t.Errorf("the model's own metadata: %v", err)
	}
}
