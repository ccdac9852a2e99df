package charlstm

import (
	stdcontext "context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/models/text"
)

// TestTrainCapsCorpus checks that Options.MaxBytes caps the corpus file,
// with an error naming the file and the option.
func TestTrainCapsCorpus(t *testing.T) {
	p := filepath.Join(t.TempDir(), "corpus.txt")
	if err := os.WriteFile(p, []byte(strings.Repeat(alphabet, 4)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Train(stdcontext.Background(), testBackend(t), Options{Path: p, Hidden: 4, Layers: 1, SeqLength: 4, Step: 2,
		ValFraction: -1, Train: quickConfig(1, 4), MaxBytes: 100})
	if !errors.Is(err, text.ErrTooLarge) || !strings.Contains(err.Error(), p+" is larger than the 100 bytes limit; raise it with Options.MaxBytes") {
		t.Errorf("corpus of %d bytes under a cap of 100: %v", 4*len(alphabet), err)
	}
}

// TestArchIsBounded checks that an architecture beyond MaxParams is
// refused, naming the limit, before anything is sized by it.
func TestArchIsBounded(t *testing.T) {
	for _, a := range []Arch{{Vocab: 10, Hidden: 1 << 20, Layers: 1}, {Vocab: 10, Hidden: 64, Layers: 1 << 30}} {
		if err := a.Validate(); err == nil || !strings.Contains(err.Error(), "MaxParams") {
			t.Errorf("%+v: %v", a, err)
		}
	}
	if err := (Arch{Vocab: 100, Hidden: 512, Layers: 2}).Validate(); err != nil {
		t.Errorf("the default size: %v", err)
	}
}

// TestSampleRefusesLengthBeyondLimit checks that a sample length beyond
// MaxSampleLength is an error naming the limit, not an allocation of it.
func TestSampleRefusesLengthBeyondLimit(t *testing.T) {
	m, err := Load(testBackend(t), filepath.Join("testdata", "lstm-v1.gtc"))
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = m.Sample(SampleOptions{Prompt: "abc", Length: 1e12})
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "MaxSampleLength") {
		t.Errorf("length 10^12: %v", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Errorf("%d bytes allocated before the error", n)
	}
}

// TestTrainReadsDefaultCorpus checks that without Path or Text, Train
// reads the default corpus under GOROOT (text.DefaultCorpusPath) and
// reports it as the data, and that a missing default says so.
func TestTrainReadsDefaultCorpus(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, filepath.FromSlash(text.DefaultCorpusName))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.Repeat(alphabet, 4)), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOROOT", root)
	o := Options{Hidden: 4, Layers: 1, SeqLength: 4, Step: 2, ValFraction: -1, Train: quickConfig(1, 4)}
	res, err := Train(stdcontext.Background(), testBackend(t), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Data != p || res.Vocab != len(alphabet) {
		t.Errorf("trained on %q (vocabulary %d), want the default corpus %s", res.Data, res.Vocab, p)
	}
	t.Setenv("GOROOT", t.TempDir())
	if _, err := Train(stdcontext.Background(), testBackend(t), o); err == nil || !strings.Contains(err.Error(), "charlstm: no corpus given, and text: default corpus") {
		t.Errorf("without a default corpus: %v", err)
	}
}
