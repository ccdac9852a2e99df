package charlstm

import (
	stdcontext "context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/models/text"
	"github.com/gotrain/gotrain/train"
)

var (
	backendOnce sync.Once
	backend     backends.Backend
	backendErr  error
)

// testBackend returns the simplego backend shared by the tests (tensors
// cannot move between backend instances).
func testBackend(t testing.TB) backends.Backend {
	t.Helper()
	backendOnce.Do(func() {
		_, backend, backendErr = device.Open("go")
	})
	if backendErr != nil {
		t.Fatal(backendErr)
	}
	return backend
}

// quickConfig is a harness configuration for short test runs.
func quickConfig(steps, batch int) train.Config {
	cfg := train.DefaultConfig()
	cfg.Optimizer = train.OptimizerAdam
	cfg.LearningRate = 0.01
	cfg.ClipNorm = 5
	cfg.Steps = steps
	cfg.BatchSize = batch
	cfg.NoCheckpoint = true
	return cfg
}

// alphabet is a text in which each character determines the next one.
const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789 "

func TestBadDataFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, path, want string
	}{
		{"empty", write("empty.txt", nil), "is empty"},
		{"binary", write("bin.txt", []byte("ab\x00cd")), "looks binary"},
		{"invalid utf-8", write("latin1.txt", []byte("caf\xe9 au lait")), "not valid UTF-8 (invalid byte 0xe9 at offset 3)"},
		{"missing", filepath.Join(dir, "missing.txt"), "no such file"},
		{"too short", write("short.txt", []byte("abc")), "too short for one window"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Train(stdcontext.Background(), testBackend(t), Options{Path: tc.path, Hidden: 4, Layers: 1, SeqLength: 8, Step: 1, Train: quickConfig(1, 1)})
			if err == nil || !strings.Contains(err.Error(), tc.path) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Train(%s) = %v; want an error naming the file and saying %q", tc.path, err, tc.want)
			}
		})
	}
}

var (
	tinyOnce sync.Once
	tinyRes  *Result
	tinyErr  error
)

// tinyModel trains, once per test binary, an LSTM with hidden size 16 on
// windows of 8 characters of the alphabet text.
func tinyModel(t *testing.T) *Result {
	t.Helper()
	tinyOnce.Do(func() {
		opts := Options{Path: "alphabet", Text: strings.Repeat(alphabet, 3), Hidden: 16, Layers: 1, SeqLength: 8, Step: 1,
			ValFraction: -1, Train: quickConfig(200, 16)}
		tinyRes, tinyErr = Train(stdcontext.Background(), testBackend(t), opts)
	})
	if tinyErr != nil {
		t.Fatal(tinyErr)
	}
	return tinyRes
}

func TestOverfitTinyText(t *testing.T) {
	res := tinyModel(t)
	t.Logf("loss %.3f -> %.4f in %d steps (median step %v)", res.FirstLoss, res.Train.Loss, res.Train.Steps, res.Perf.SteadyMedian())
	if res.Train.Loss > 0.1 || res.FirstLoss < 3 {
		t.Errorf("loss %.4f -> %.4f after %d steps; want from about ln(37) = 3.6 to below 0.1", res.FirstLoss, res.Train.Loss, res.Train.Steps)
	}
}

func TestSample(t *testing.T) {
	res := tinyModel(t)
	m, err := NewModel(testBackend(t), res.Context)
	if err != nil {
		t.Fatal(err)
	}
	greedy, err := m.Sample(SampleOptions{Prompt: "abc", Length: 12, Temperature: 0})
	if err != nil {
		t.Fatal(err)
	}
	if greedy != "defghijklmno" {
		t.Errorf("greedy sample after \"abc\" = %q, want the alphabet continued", greedy)
	}
	for _, tc := range []struct {
		temp float64
		seed uint64
	}{{1, 1}, {2, 7}, {0.5, 3}} {
		a, err1 := m.Sample(SampleOptions{Prompt: "xyz", Length: 30, Temperature: tc.temp, Seed: tc.seed})
		b, err2 := m.Sample(SampleOptions{Prompt: "xyz", Length: 30, Temperature: tc.temp, Seed: tc.seed})
		if err1 != nil || err2 != nil || a != b || len([]rune(a)) != 30 {
			t.Errorf("temperature %g seed %d: %q, %q (%v, %v); want the same 30 characters twice", tc.temp, tc.seed, a, b, err1, err2)
		}
	}
	_, err = m.Sample(SampleOptions{Prompt: "abcÄQ", Length: 3, Temperature: 1})
	if err == nil || !strings.Contains(err.Error(), `'Ä', 'Q'`) {
		t.Errorf("prompt with unknown characters: %v, want them listed", err)
	}
	if _, err := m.Sample(SampleOptions{Prompt: "", Length: 3}); err == nil {
		t.Error("empty prompt: no error")
	}
}

func TestPick(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	logits := []float32{0.1, 2.5, -1, 2.4}
	for _, tc := range []struct {
		temp float64
		want int
	}{{0, 1}, {1e-4, 1}} {
		for range 20 {
			if got := pick(logits, tc.temp, r); got != tc.want {
				t.Fatalf("pick(temperature %g) = %d, want %d", tc.temp, got, tc.want)
			}
		}
	}
	counts := make([]int, len(logits))
	for range 4000 {
		counts[pick(logits, 1, r)]++
	}
	// softmax(logits) = 0.0424, 0.467, 0.0141, 0.423 (4000 draws: ±~35 for the larger ones).
	if counts[1] < 1700 || counts[1] > 2050 || counts[3] < 1530 || counts[3] > 1860 {
		t.Errorf("pick at temperature 1: counts %v, want about 170, 1870, 56, 1690", counts)
	}
}

// weights returns the values of the model's variables.
func weights(t *testing.T, res *Result) map[string][]float32 {
	t.Helper()
	out := map[string][]float32{}
	for v := range res.Context.IterVariables() {
		if !strings.HasPrefix(v.Scope(), Scope+"/") {
			continue
		}
		val, err := v.Value()
		if err != nil {
			t.Fatal(err)
		}
		out[v.ScopeAndName()] = tensors.MustCopyFlatData[float32](val)
	}
	return out
}

func TestResumeContinuesRun(t *testing.T) {
	b := testBackend(t)
	opts := func(dir string, steps int, resume bool) Options {
		cfg := quickConfig(steps, 8)
		cfg.NoCheckpoint, cfg.CheckpointDir, cfg.Resume, cfg.CheckpointEvery = false, dir, resume, 100
		return Options{Path: "alphabet", Text: strings.Repeat(alphabet, 2), Hidden: 8, Layers: 2, SeqLength: 6, Step: 2,
			ValFraction: -1, Train: cfg}
	}
	whole, err := Train(stdcontext.Background(), b, opts(t.TempDir(), 12, false))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	first, err := Train(stdcontext.Background(), b, opts(dir, 5, false)) // crosses an epoch (16 windows / 8)
	if err != nil {
		t.Fatal(err)
	}
	if first.Train.Checkpoint == "" {
		t.Fatal("no checkpoint written")
	}
	rest, err := Train(stdcontext.Background(), b, opts(dir, 12, true))
	if err != nil {
		t.Fatal(err)
	}
	if rest.ResumedFrom != first.Train.Checkpoint || rest.Train.Resumed != 5 || rest.Train.Steps != 12 {
		t.Errorf("resumed from %q at step %d to step %d; want %s, 5, 12", rest.ResumedFrom, rest.Train.Resumed, rest.Train.Steps, first.Train.Checkpoint)
	}
	if rest.Train.Loss != whole.Train.Loss {
		t.Errorf("loss at step 12: resumed %v, uninterrupted %v", rest.Train.Loss, whole.Train.Loss)
	}
	if !reflect.DeepEqual(weights(t, rest), weights(t, whole)) {
		t.Error("weights after resuming differ from an uninterrupted run")
	}
	m, err := Load(b, rest.Train.Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Vocab.Equal(rest.VocabRunes) || m.Arch != rest.Arch || m.Step != 12 || m.SeqLength != 6 {
		t.Errorf("Load: vocabulary %d, arch %+v, step %d, seq %d; want %d, %+v, 12, 6", m.Vocab.Size(), m.Arch, m.Step, m.SeqLength, rest.Vocab, rest.Arch)
	}
	// A different corpus cannot resume this run.
	o := opts(dir, 14, true)
	o.Text = strings.Repeat("another text, other vocabulary", 3)
	if _, err := Train(stdcontext.Background(), b, o); err == nil || !strings.Contains(err.Error(), `architecture {"vocab":`) {
		t.Errorf("resume with another vocabulary: %v, want an architecture mismatch error", err)
	}
}

func TestLoadErrors(t *testing.T) {
	b := testBackend(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "model.gtc")
	if err := os.WriteFile(bad, []byte("not a checkpoint"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{bad, filepath.Join(dir, "absent.gtc"), t.TempDir()} {
		if _, err := Load(b, p); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("Load(%s) = %v, want an error naming it", p, err)
		}
	}
}

// TestSeedSize runs the seed's architecture (2 layers of 512) for a few
// steps at a reduced batch and sequence length.
func TestSeedSize(t *testing.T) {
	cfg := quickConfig(3, 2)
	cfg.LearningRate = 0.001
	res, err := Train(stdcontext.Background(), testBackend(t), Options{Path: "alphabet", Text: strings.Repeat(alphabet, 2), Hidden: 512, Layers: 2,
		SeqLength: 10, Step: 3, ValFraction: -1, Train: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("2x512, batch 2, seq 10: loss %.4f -> %.4f, median step %v", res.FirstLoss, res.Train.Loss, res.Perf.SteadyMedian())
	lnV := math.Log(float64(res.Vocab))
	if res.Train.Steps != 3 || math.Abs(res.FirstLoss-lnV) > 0.1 || !(res.Train.Loss > 0 && res.Train.Loss < lnV+0.5) {
		t.Errorf("%d steps, loss %.4f -> %.4f; want 3 steps from about ln(%d) = %.3f, staying finite and near it", res.Train.Steps, res.FirstLoss, res.Train.Loss, res.Vocab, lnV)
	}
	m, err := NewModel(testBackend(t), res.Context)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := m.Sample(SampleOptions{Prompt: "abc", Length: 5, Temperature: 1, Seed: 1}); err != nil || len([]rune(got)) != 5 {
		t.Errorf("sampling the 2x512 model: %q, %v", got, err)
	}
}

// TestOpticksLossFalls trains a small model (hidden 128, seq 64) for a few
// dozen steps on the default corpus and checks that the loss falls.
func TestOpticksLossFalls(t *testing.T) {
	if testing.Short() {
		t.Skip("trains for about half a minute")
	}
	path, err := text.DefaultCorpusPath()
	if err != nil {
		t.Skip(err)
	}
	cfg := quickConfig(30, 16)
	res, err := Train(stdcontext.Background(), testBackend(t), Options{Path: path, Hidden: 128, Layers: 1, SeqLength: 64, Step: 3, ValFraction: -1, Train: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Opticks, 1x128, seq 64, batch 16: loss %.3f -> %.3f in %d steps, median step %v", res.FirstLoss, res.Train.Loss, res.Train.Steps, res.Perf.SteadyMedian())
	if res.Train.Loss > res.FirstLoss-1 {
		t.Errorf("loss %.3f -> %.3f in %d steps; want a fall of at least 1 nat/char", res.FirstLoss, res.Train.Loss, res.Train.Steps)
	}
}

// TestTrainInterrupted checks that a done context stops training with
// train.ErrInterrupted (the CLI cancels it on Ctrl-C).
func TestTrainInterrupted(t *testing.T) {
	ctx, cancel := stdcontext.WithCancel(stdcontext.Background())
	cancel()
	cfg := quickConfig(50, 4)
	_, err := Train(ctx, testBackend(t), Options{Text: strings.Repeat(alphabet, 20), Path: "alphabet", Hidden: 8, Layers: 1,
		SeqLength: 8, Step: 1, ValFraction: -1, Train: cfg})
	if !errors.Is(err, train.ErrInterrupted) {
		t.Fatalf("Train with a cancelled context: %v, want train.ErrInterrupted", err)
	}
}

// TestLoadV1Checkpoint reads a checkpoint written before the vocabulary
// moved to package text (gotrain lm lstm train, hidden 8, 1 layer, 3 steps
// on the alphabet corpus and a newline) and checks that it samples what it sampled then.
func TestLoadV1Checkpoint(t *testing.T) {
	m, err := Load(testBackend(t), filepath.Join("testdata", "lstm-v1.gtc"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Step != 3 || m.Vocab.Size() != 38 || m.Arch.Hidden != 8 || m.Arch.Layers != 1 || m.SeqLength != 8 {
		t.Fatalf("step %d, vocabulary %d, arch %+v, seq %d", m.Step, m.Vocab.Size(), m.Arch, m.SeqLength)
	}
	for _, tc := range []struct {
		temp float64
		seed uint64
		want string
	}{{0, 0, "zgg0332w"}, {1, 5, "7zt5utta"}} {
		got, err := m.Sample(SampleOptions{Prompt: "abc", Length: 8, Temperature: tc.temp, Seed: tc.seed})
		if err != nil || got != tc.want {
			t.Errorf("temperature %g seed %d: %q, %v; want %q (as sampled before the change)", tc.temp, tc.seed, got, err, tc.want)
		}
		r := text.SampleReport{Model: filepath.Join("testdata", "lstm-v1.gtc"), Prompt: "abc", Length: 8, Temperature: tc.temp, Seed: tc.seed}
		if err := Generate(testBackend(t), &r); err != nil || r.Text != tc.want || r.Step != 3 {
			t.Errorf("Generate, temperature %g seed %d: step %d, %q, %v; want step 3, %q", tc.temp, tc.seed, r.Step, r.Text, err, tc.want)
		}
		k := 2
		r.TopK = &k
		if err := Generate(testBackend(t), &r); err == nil || !strings.Contains(err.Error(), "TopK 2") {
			t.Errorf("Generate with TopK 2: %v, want an error (the LSTM has no top-k)", err)
		}
	}
}

func TestTrainAutoBatchSize(t *testing.T) {
	cfg := quickConfig(2, 7)
	res, err := Train(stdcontext.Background(), testBackend(t), Options{Path: "alphabet", Text: strings.Repeat(alphabet, 3), Hidden: 4, Layers: 1,
		SeqLength: 8, Step: 1, ValFraction: -1, Train: cfg, AutoBatchSize: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.BatchSize != 64 || res.Config.BatchSize != 64 {
		t.Errorf("batch size %d (config %d), want 64: the host default of an automatic batch size", res.BatchSize, res.Config.BatchSize)
	}
	res, err = Train(stdcontext.Background(), testBackend(t), Options{Path: "alphabet", Text: strings.Repeat(alphabet, 3), Hidden: 4, Layers: 1,
		SeqLength: 8, Step: 1, ValFraction: -1, Train: cfg})
	if err != nil || res.BatchSize != 7 {
		t.Errorf("batch size %d, %v; want Train.BatchSize 7", res.BatchSize, err)
	}
}
