package charlstm

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
)

// ckptMagic is the first line of a checkpoint file (package train).
const ckptMagic = "GOTRAIN-CKPT-1\n"

// tinyCheckpoint trains a model of one layer of 4 for two steps and
// returns its checkpoint file's bytes.
func tinyCheckpoint(tb testing.TB, b backends.Backend) []byte {
	tb.Helper()
	cfg := quickConfig(2, 4)
	cfg.NoCheckpoint, cfg.CheckpointDir = false, tb.TempDir()
	res, err := Train(stdcontext.Background(), b, Options{Path: "alphabet", Text: strings.Repeat(alphabet, 2), Hidden: 4, Layers: 1,
		SeqLength: 4, Step: 3, ValFraction: -1, Train: cfg})
	if err != nil {
		tb.Fatal(err)
	}
	out, err := os.ReadFile(res.Train.Checkpoint)
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

// checkModelFile writes b as a model file, loads it as `lm lstm sample`
// does and samples a few characters: nothing may panic, an error must name
// the file, and a loaded model must sample.
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
	if m.Arch.Validate() != nil || m.SeqLength < 1 {
		t.Fatalf("loaded an invalid model: %+v, sequence length %d", m.Arch, m.SeqLength)
	}
	prompt, err := m.Vocab.Decode([]int{0})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Sample(SampleOptions{Prompt: prompt, Length: 2, Temperature: 1, Seed: 1}); err != nil {
		t.Fatalf("a loaded model does not sample: %v", err)
	}
}

// fuzzModelSeeds are the model files the fuzz targets start from: one made
// in the test and the committed checkpoint of an earlier release.
func fuzzModelSeeds(f *testing.F, be backends.Backend) [][]byte {
	v1, err := os.ReadFile(filepath.Join("testdata", "lstm-v1.gtc"))
	if err != nil {
		f.Fatal(err)
	}
	return [][]byte{tinyCheckpoint(f, be), v1}
}

// FuzzLoad checks that no model file makes Load, or sampling from what it
// loads, panic. Each input is also tried with its checksum made right, so
// that the fuzzer reaches the header, the variables and the model's
// metadata (vocabulary, architecture) they hold.
func FuzzLoad(f *testing.F) {
	be := testBackend(f)
	for _, good := range fuzzModelSeeds(f, be) {
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
	be := testBackend(f)
	good := tinyCheckpoint(f, be)
	hdr, blob := splitCheckpoint(f, good)
	f.Add(slices.Clone(hdr))
	f.Add(bytes.Replace(hdr, []byte(`"dims":[3]`), []byte(`"dims":[-3]`), 1))
	f.Add(bytes.Replace(hdr, []byte(`"name":"arch"`), []byte(`"name":"arch2"`), 1))
	f.Fuzz(func(t *testing.T, h []byte) {
		checkModelFile(t, be, buildCheckpoint(h, blob))
	})
}

// TestLoadRefusesMetadataThatDisagreesWithWeights checks that a model file
// whose architecture (its metadata, under a valid checksum) does not
// describe its weights is refused with an error naming the file, instead
// of a model that makes up the missing weights or sizes its states by the
// metadata.
func TestLoadRefusesMetadataThatDisagreesWithWeights(t *testing.T) {
	be := testBackend(t)
	good := tinyCheckpoint(t, be) // hidden 4, 1 layer, sequence 4
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
		if v.Scope == MetaScope && v.Name == "arch" && v.Size == 12 {
			at = v.Offset
		}
	}
	if at < 0 {
		t.Fatal("no arch variable of 3 int32s in the checkpoint")
	}
	for _, arch := range [][3]int32{{4, 2, 4}, {4, 0, 4}, {5, 1, 4}, {-4, 1, 4}, {1 << 30, 1, 4}, {4, 1 << 30, 4}, {4, 1, 0}, {4, 1, -3}} {
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
			t.Errorf("hidden %d, layers %d, sequence %d: model %v, error %v; want an error naming %s and the metadata", arch[0], arch[1], arch[2], m != nil, err, path)
		}
	}
}
