package transformer

import (
	stdcontext "context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/models/text"
	"github.com/gotrain/gotrain/train"
)

// examples reads the same instruction example for ever.
type examples struct{ left []byte }

func (e *examples) Read(p []byte) (int, error) {
	if len(e.left) == 0 {
		e.left = []byte(`{"prompt": "say a", "response": "a"}` + "\n")
	}
	n := copy(p, e.left)
	e.left = e.left[n:]
	return n, nil
}

// TestInstructionsAreCapped checks that instruction data beyond the cap
// (an endless stream, a larger file) is refused with an error naming it,
// the cap and the option, and one within it reads.
func TestInstructionsAreCapped(t *testing.T) {
	if _, err := readInstructions(&examples{}, "endless.jsonl", 1<<20); !errors.Is(err, text.ErrTooLarge) ||
		!strings.Contains(err.Error(), "endless.jsonl is larger than the 1 MiB limit") {
		t.Errorf("endless: %v", err)
	}
	p := filepath.Join(t.TempDir(), "inst.jsonl")
	if err := os.WriteFile(p, []byte(strings.Repeat(`{"prompt": "say a", "response": "a"}`+"\n", 10)), 0o644); err != nil {
		t.Fatal(err)
	}
	if exs, err := LoadInstructionsMax(p, 1000); err != nil || len(exs) != 10 {
		t.Errorf("within the cap: %d examples, %v", len(exs), err)
	}
	if _, err := LoadInstructionsMax(p, 100); !errors.Is(err, text.ErrTooLarge) || !strings.Contains(err.Error(), p+" is larger than the 100 bytes limit") {
		t.Errorf("beyond the cap: %v", err)
	}
	if _, err := LoadInstructionsMax(p, -5); err == nil || !strings.Contains(err.Error(), "maxBytes -5") {
		t.Errorf("negative cap: %v", err)
	}
}

// TestTrainCapsDataFiles checks that Options.MaxBytes caps the corpus and
// the instruction file, with errors naming the file and the option.
func TestTrainCapsDataFiles(t *testing.T) {
	dir := t.TempDir()
	corpus := filepath.Join(dir, "corpus.txt")
	inst := filepath.Join(dir, "inst.jsonl")
	if err := os.WriteFile(corpus, []byte(pretrainText), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(inst, []byte(strings.Repeat(`{"prompt": "say a", "response": "a"}`+"\n", 10)), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := train.DefaultConfig()
	cfg.NoCheckpoint, cfg.Progress = true, "off"
	for _, o := range []Options{
		{PretrainPath: corpus, Pretrain: Phase{Steps: 1, BatchSize: 2}},
		{InstructionPath: inst, Instruct: Phase{Steps: 1, BatchSize: 2}},
	} {
		o.Arch, o.Stride, o.ValFraction, o.Train, o.MaxBytes = Arch{Layers: 1, Heads: 1, Width: 4, Context: 8}, 3, -1, cfg, 100
		name := o.PretrainPath + o.InstructionPath
		_, err := Train(stdcontext.Background(), fuzzBackend(t), o)
		if !errors.Is(err, text.ErrTooLarge) || !strings.Contains(err.Error(), name+" is larger than the 100 bytes limit; raise it with Options.MaxBytes") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestArchAndRowsAreBounded checks that an architecture beyond MaxParams
// and instruction rows beyond text.MaxWindowValues are refused, naming the
// limit, before anything is sized by them.
func TestArchAndRowsAreBounded(t *testing.T) {
	for _, a := range []Arch{
		{Vocab: 10, Layers: 1, Heads: 1, Width: 1 << 20, Context: 8},
		{Vocab: 10, Layers: 1 << 30, Heads: 1, Width: 8, Context: 8},
		{Vocab: 10, Layers: 1, Heads: 1, Width: 8, Context: 1 << 40},
	} {
		if err := a.Validate(); err == nil || !strings.Contains(err.Error(), "MaxParams") {
			t.Errorf("%+v: %v", a, err)
		}
	}
	v, err := text.NewVocab("ab")
	if err != nil {
		t.Fatal(err)
	}
	exs := make([]Example, 1<<11)
	for i := range exs {
		exs[i] = Example{Prompt: "a", Response: "b"}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, _, err = InstructionRows(v, exs, 1<<20)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "MaxWindowValues") {
		t.Errorf("2^31 values: %v", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Errorf("%d bytes allocated before the error", n)
	}
}

// TestSampleRefusesLengthBeyondLimit checks that a sample length beyond
// MaxSampleLength is an error naming the limit, not an allocation of it.
func TestSampleRefusesLengthBeyondLimit(t *testing.T) {
	m, err := Load(fuzzBackend(t), filepath.Join("testdata", "transformer-v1.gtc"))
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = m.Sample(SampleOptions{Prompt: "repeat cat:", Length: 1e12})
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "MaxSampleLength") {
		t.Errorf("length 10^12: %v", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Errorf("%d bytes allocated before the error", n)
	}
}

// TestTrainReadsDefaultCorpus checks that with pretraining on and neither
// PretrainPath nor PretrainText, Train pretrains on the default corpus
// under GOROOT (text.DefaultCorpusPath) and reports its path, and that a
// missing default says so.
func TestTrainReadsDefaultCorpus(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, filepath.FromSlash(text.DefaultCorpusName))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(pretrainText), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOROOT", root)
	cfg := train.DefaultConfig()
	cfg.NoCheckpoint, cfg.Progress = true, "off"
	o := Options{Arch: Arch{Layers: 1, Heads: 1, Width: 4, Context: 8}, Stride: 3, ValFraction: -1, Train: cfg,
		Pretrain: Phase{Steps: 1, BatchSize: 2, Accumulate: 1}}
	res, err := Train(stdcontext.Background(), fuzzBackend(t), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.PretrainPath != p || res.Pretrain == nil || res.Pretrain.Train.Steps != 1 {
		t.Errorf("pretrained on %q (%+v), want one step on the default corpus %s", res.PretrainPath, res.Pretrain, p)
	}
	if rep := res.Report(o, "go", ""); rep.PretrainData != p {
		t.Errorf("the report's pretrain_data is %q, want %s", rep.PretrainData, p)
	}
	t.Setenv("GOROOT", t.TempDir())
	if _, err := Train(stdcontext.Background(), fuzzBackend(t), o); err == nil || !strings.Contains(err.Error(), "transformer: no pretraining corpus given, and text: default corpus") {
		t.Errorf("without a default corpus: %v", err)
	}
}

// TestGenerate checks that Generate fills the report as Load and Sample
// do: the checkpoint's step, and the text of the same options, with TopK
// nil meaning all runes.
func TestGenerate(t *testing.T) {
	path := filepath.Join("testdata", "transformer-v1.gtc")
	m, err := Load(fuzzBackend(t), path)
	if err != nil {
		t.Fatal(err)
	}
	two := 2
	for _, topK := range []*int{nil, &two} {
		o := SampleOptions{Prompt: "repeat cat:", Length: 12, Temperature: 1, Seed: 7}
		if topK != nil {
			o.TopK = *topK
		}
		want, err := m.Sample(o)
		if err != nil {
			t.Fatal(err)
		}
		r := text.SampleReport{Model: path, Prompt: o.Prompt, Length: o.Length, Temperature: o.Temperature, TopK: topK, Seed: o.Seed}
		if err := Generate(fuzzBackend(t), &r); err != nil {
			t.Fatal(err)
		}
		if r.Text != want || r.Step != m.Step {
			t.Errorf("top-k %v: step %d, text %q; want step %d, %q", topK, r.Step, r.Text, m.Step, want)
		}
	}
	r := text.SampleReport{Model: filepath.Join(t.TempDir(), "none.gtc"), Prompt: "a", Length: 1}
	if err := Generate(fuzzBackend(t), &r); err == nil || !strings.Contains(err.Error(), "none.gtc") {
		t.Errorf("a missing checkpoint: %v", err)
	}
}
