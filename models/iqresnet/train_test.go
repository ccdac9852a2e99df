package iqresnet

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/gotrain/gotrain/signal"
	"github.com/gotrain/gotrain/signal/modclass"
)

// tinyOptions trains tinyArch for steps steps of batch 8 with Adam.
func tinyOptions(steps int, ckpt string) Options {
	o := DefaultOptions()
	o.Arch = tinyArch()
	o.Train.Steps, o.Train.BatchSize, o.Train.LearningRate, o.Train.Progress = steps, 8, 0.01, "off"
	o.Train.CheckpointDir, o.Train.NoCheckpoint = ckpt, ckpt == ""
	return o
}

// tinyData returns n windows of tinyArch whose class (i mod 3) sets their
// mean, and the labels.
func tinyData(n int) ([]float32, []int) {
	a := tinyArch()
	x := randomWindows(a, n, 9)
	labels := make([]int, n)
	for i := range labels {
		labels[i] = i % a.Classes
		for j := range 2 * a.Window {
			x[i*2*a.Window+j] += float32(labels[i])
		}
	}
	return x, labels
}

func TestWindows(t *testing.T) {
	for _, c := range []struct{ n, length, hop, want int }{
		{4200, 1024, 1024, 4}, {4096, 1024, 1024, 4}, {4095, 1024, 1024, 3}, {1023, 1024, 1024, 0},
		{4200, 1024, 512, 7}, {10, 4, 3, 3}, {10, 0, 1, 0}, {10, 2, 0, 0},
	} {
		if got := NumWindows(c.n, c.length, c.hop); got != c.want {
			t.Errorf("NumWindows(%d, %d, %d) = %d, want %d", c.n, c.length, c.hop, got, c.want)
		}
	}
	x := []complex64{1 + 1i, 2, 0, 0, 3i, -3, 0, 0, 0, 0}
	got, n := AppendWindows([]float32{7}, x, 2, 4)
	// Windows at 0, 4 and 8: [1+i, 2] (power (2+4)/2 = 3), [3i, -3] (9),
	// [0, 0] (left zero).
	s1 := 1 / math.Sqrt(3)
	want := []float64{7, s1, s1, 2 * s1, 0, 0, 1, -1, 0, 0, 0, 0, 0}
	if n != 3 || len(got) != 13 {
		t.Fatalf("AppendWindows: %d windows, %v", n, got)
	}
	for i := range want {
		if math.Abs(float64(got[i])-want[i]) > 1e-6 {
			t.Fatalf("AppendWindows = %v, want %v", got, want)
		}
	}
	if z, n := AppendWindows(nil, make([]complex64, 4), 4, 4); n != 1 || z[0] != 0 || math.IsNaN(float64(z[7])) {
		t.Errorf("a zero window: %v", z)
	}
}

// TestTrainLoadPredict trains a few steps with checkpoints, loads the last
// one and checks that it predicts what the trained model predicts, with
// its architecture and classes.
func TestTrainLoadPredict(t *testing.T) {
	be := cpuBackend(t)
	dir := t.TempDir()
	x, labels := tinyData(48)
	classes := []string{"a", "b", "c"}
	o := tinyOptions(6, dir)
	o.Arch.Dropout = 0.3 // prediction must not drop
	res, err := Train(t.Context(), be, x, labels, classes, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Train.Steps != 6 || res.Windows != 48 || res.Epochs != 1 || res.Train.Checkpoint == "" || res.FirstLoss == 0 {
		t.Errorf("result %+v", res)
	}
	lp, err := res.Model.LogProbs(x)
	if err != nil {
		t.Fatal(err)
	}
	if len(lp) != 48*3 {
		t.Fatalf("%d log-probabilities", len(lp))
	}
	for i := range 48 {
		var s float64
		for _, v := range lp[i*3 : i*3+3] {
			s += math.Exp(float64(v))
		}
		if math.Abs(s-1) > 1e-4 {
			t.Fatalf("window %d: probabilities sum to %v", i, s)
		}
	}
	for _, path := range []string{res.Train.Checkpoint, dir} {
		m, err := Load(be, path, 5) // another batch size: the same values
		if err != nil {
			t.Fatal(err)
		}
		if m.Arch != res.Model.Arch || strings.Join(m.Classes, ",") != "a,b,c" || m.Step != 6 {
			t.Errorf("%s: loaded %+v %v step %d", path, m.Arch, m.Classes, m.Step)
		}
		lp2, err := m.LogProbs(x)
		if err != nil {
			t.Fatal(err)
		}
		for i := range lp {
			if math.Abs(float64(lp[i]-lp2[i])) > 1e-5 {
				t.Fatalf("%s: log-probability %d: %v loaded, %v trained", path, i, lp2[i], lp[i])
			}
		}
	}
	if _, err := Load(be, filepath.Join(dir, "none"), 0); err == nil {
		t.Error("Load of a missing file: no error")
	}
	if _, err := res.Model.LogProbs(x[:10]); err == nil {
		t.Error("LogProbs of a partial window: no error")
	}
}

// TestResume continues a run: the network must be the same one, and the
// resumed run goes on from the checkpoint's step.
func TestResume(t *testing.T) {
	be := cpuBackend(t)
	dir := t.TempDir()
	x, labels := tinyData(48)
	classes := []string{"a", "b", "c"}
	if _, err := Train(t.Context(), be, x, labels, classes, tinyOptions(3, dir)); err != nil {
		t.Fatal(err)
	}
	o := tinyOptions(5, dir)
	o.Train.Resume = true
	res, err := Train(t.Context(), be, x, labels, classes, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.ResumedFrom == "" || res.Train.Steps != 5 || res.Model.Step != 5 {
		t.Errorf("resumed %q to step %d (model %d), want from step 3 to 5", res.ResumedFrom, res.Train.Steps, res.Model.Step)
	}
	o.Arch.Filters = 5
	if _, err := Train(t.Context(), be, x, labels, classes, o); err == nil {
		t.Error("resume with another architecture: no error")
	}
}

func TestTrainRefusals(t *testing.T) {
	be := cpuBackend(t)
	x, labels := tinyData(16)
	classes := []string{"a", "b", "c"}
	o := tinyOptions(1, "")
	for name, c := range map[string]func() error{
		"label out of range": func() error {
			return errOf(Train(t.Context(), be, x, append(labels[:15:15], 3), classes, o))
		},
		"labels count":   func() error { return errOf(Train(t.Context(), be, x, labels[:15], classes, o)) },
		"partial window": func() error { return errOf(Train(t.Context(), be, x[:len(x)-1], labels, classes, o)) },
		"bad arch": func() error {
			oo := o
			oo.Arch.Kernel = 4
			return errOf(Train(t.Context(), be, x, labels, classes, oo))
		},
		"negative budget": func() error {
			oo := o
			oo.TimeBudget = -time.Second
			return errOf(Train(t.Context(), be, x, labels, classes, oo))
		},
	} {
		if err := c(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func errOf[T any](_ T, err error) error { return err }

// TestTimeBudget: a budget that runs out before the first step is an
// error; one that runs out during training ends it early, without error,
// saying why.
func TestTimeBudget(t *testing.T) {
	be := cpuBackend(t)
	x, labels := tinyData(48)
	classes := []string{"a", "b", "c"}
	o := tinyOptions(1_000_000, "")
	o.TimeBudget = time.Nanosecond
	if _, err := Train(t.Context(), be, x, labels, classes, o); err == nil || !strings.Contains(err.Error(), "time budget") {
		t.Errorf("a budget of 1 ns: %v", err)
	}
	o.TimeBudget = 500 * time.Millisecond
	t0 := time.Now()
	res, err := Train(t.Context(), be, x, labels, classes, o)
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(t0); el > 30*time.Second || res.Train.Steps < 1 || res.Train.Steps >= 1_000_000 || !strings.Contains(res.Stopped, "time budget") || res.Train.Interrupted {
		t.Errorf("after %v: %d steps, stopped %q, interrupted %v", el, res.Train.Steps, res.Stopped, res.Train.Interrupted)
	}
}

// TestSpecRefusals: a checkpoint whose spec disagrees with its weights, or
// has none, is refused by name.
func TestSpecRefusals(t *testing.T) {
	be := cpuBackend(t)
	x, labels := tinyData(16)
	res, err := Train(t.Context(), be, x, labels, []string{"a", "b", "c"}, tinyOptions(1, ""))
	if err != nil {
		t.Fatal(err)
	}
	ctx := res.Model.ctx
	for _, c := range []struct {
		sp   spec
		want string
	}{
		{spec{Arch: func() Arch { a := tinyArch(); a.Filters = 5; return a }(), Classes: []string{"a", "b", "c"}}, "shape"},
		{spec{Arch: tinyArch(), Classes: []string{"a", "b"}}, "2 class names for 3 classes"},
		{spec{Arch: Arch{}, Classes: nil}, "Window"},
	} {
		b, _ := json.Marshal(c.sp)
		v := make([]int32, len(b))
		for i, x := range b {
			v[i] = int32(x)
		}
		if err := ctx.GetVariableByScopeAndName(MetaScope, "spec").SetValue(tensors.FromValue(v)); err != nil {
			t.Fatal(err)
		}
		if _, err := NewModel(be, ctx, 0); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error with %q", c.sp, err, c.want)
		}
	}
}

// generate writes a small data set with its IQ records to dir.
func generate(t testing.TB, dir string, seed uint64, perClass int) *modclass.Data {
	t.Helper()
	o := modclass.DatasetOptions{Mods: []signal.Modulation{signal.BPSK, signal.FM, signal.AMDSBSC}, PerClass: perClass,
		SNRMinDB: 10, SNRMaxDB: 20, SNRStepDB: 10, SampleRate: 200000, Samples: 2100, Seed: seed, IQ: true, Workers: 2}
	if _, err := modclass.Generate(dir, o, false); err != nil {
		t.Fatal(err)
	}
	d, err := modclass.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// runArch is a network for records of 2100 samples cut into 8 windows of
// 256.
func runArch() Arch { return Arch{Window: 256, Stacks: 3, Filters: 4, Kernel: 3, Dense: 8} }

// TestRunOnDataSets trains on a generated data set and evaluates on
// another: the report scores every test record, classified by the sum of
// its windows' log-probabilities, per SNR bin, with the forest report's
// keys and the network's.
func TestRunOnDataSets(t *testing.T) {
	be := cpuBackend(t)
	dir := t.TempDir()
	tr, te := generate(t, filepath.Join(dir, "train"), 1, 6), generate(t, filepath.Join(dir, "test"), 2, 4)
	o := tinyOptions(4, filepath.Join(dir, "runs"))
	o.Arch = runArch()
	snrPNG := filepath.Join(dir, "snr.png")
	rep, err := Run(t.Context(), be, RunOptions{Train: tr, Test: te, Net: o, BandDB: [2]float64{10, 20}, SNRPNG: snrPNG, Device: "cpu"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.TrainWindows != 18*8 || rep.TestWindows != 12*8 || rep.TrainRows != 18 || rep.TestRows != 12 || rep.Eval.Rows != 12 {
		t.Errorf("windows %d/%d, rows %d/%d/%d", rep.TrainWindows, rep.TestWindows, rep.TrainRows, rep.TestRows, rep.Eval.Rows)
	}
	if len(rep.Eval.PerSNR) != 2 || rep.Eval.PerSNR[0].SNRdB != 10 || rep.Eval.PerSNR[1].SNRdB != 20 || rep.BandAcc == nil {
		t.Errorf("SNR bins %+v", rep.Eval.PerSNR)
	}
	if _, err := os.Stat(snrPNG); err != nil || len(rep.PNGs) != 1 {
		t.Errorf("SNR PNG: %v %v", err, rep.PNGs)
	}
	// The records' classes, recomputed from the windows.
	x, rows, err := DataWindows(te, 256, 256)
	if err != nil {
		t.Fatal(err)
	}
	lp, err := rep.Training.Model.LogProbs(x)
	if err != nil {
		t.Fatal(err)
	}
	sums := make([][3]float64, te.Rows)
	right := 0
	for w, r := range rows {
		for c := range 3 {
			sums[r][c] += float64(lp[w*3+c])
		}
		if argmax32(lp[w*3:w*3+3]) == rep.Eval.ClassIndex(te.Labels[r]) {
			right++
		}
	}
	for r := range sums {
		if want := argmax64(sums[r][:]); rep.Eval.Pred[r] != want {
			t.Errorf("record %d: predicted %d, the sum of its windows' log-probabilities gives %d", r, rep.Eval.Pred[r], want)
		}
	}
	if want := float64(right) / float64(len(rows)); *rep.WindowAccuracy != want {
		t.Errorf("window accuracy %v, want %v", *rep.WindowAccuracy, want)
	}
	// The checkpoint evaluated, with the default options (another window):
	// the network's own window, the same predictions.
	rep2, err := Run(t.Context(), be, RunOptions{Test: te, Checkpoint: rep.Model, Net: DefaultOptions(), BandDB: [2]float64{10, 20}})
	if err != nil {
		t.Fatal(err)
	}
	if rep2.TestWindows != rep.TestWindows || rep2.Hop != 256 || rep2.Step != 4 || rep2.Training != nil || !reflect.DeepEqual(rep2.Eval.Pred, rep.Eval.Pred) {
		t.Errorf("checkpoint evaluated on %d windows (hop %d, step %d): %v, trained %v", rep2.TestWindows, rep2.Hop, rep2.Step, rep2.Eval.Pred, rep.Eval.Pred)
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]any
	_ = json.Unmarshal(b, &keys)
	for _, k := range []string{"classifier", "train", "train_rows", "test", "test_rows", "seed", "fit_seconds", "accuracy", "band_db", "band_accuracy", "band_confusion", "eval", "arch", "params", "window", "hop", "window_accuracy", "training", "device"} {
		if _, ok := keys[k]; !ok {
			t.Errorf("report JSON lacks %q", k)
		}
	}
	for _, k := range []string{"trees", "features", "oob_accuracy"} {
		if _, ok := keys[k]; ok {
			t.Errorf("report JSON has the forest's %q", k)
		}
	}
	var text strings.Builder
	if err := rep.WriteText(&text); err != nil || !strings.Contains(text.String(), "SNR dB") || !strings.Contains(text.String(), "trained resnet") {
		t.Errorf("text: %v\n%s", err, text.String())
	}
}

func TestRunRefusals(t *testing.T) {
	be := cpuBackend(t)
	dir := t.TempDir()
	tr := generate(t, filepath.Join(dir, "train"), 1, 2)
	o := tinyOptions(1, "")
	o.Arch = runArch()
	other := generate(t, filepath.Join(dir, "other"), 2, 2)
	other.Labels[0] = "qpsk"
	for name, ro := range map[string]RunOptions{
		"nothing":             {Net: o},
		"checkpoint, no test": {Checkpoint: "x", Net: o},
		"test and fraction":   {Train: tr, Test: tr, TestFraction: 0.5, Net: o},
		"fraction 1":          {Train: tr, TestFraction: 1, Net: o},
		"negative hop":        {Train: tr, Net: o, Hop: -1},
		"unknown test label":  {Train: tr, Test: other, Net: o},
		"window too long":     {Train: tr, Net: func() Options { oo := o; oo.Arch.Window = 4096; return oo }()},
	} {
		if _, err := Run(t.Context(), be, ro); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestDeterministicAcrossThreads trains the same network with one and with
// two threads (GOMAXPROCS, read by the backend at start-up, so in child
// processes): the weights are the same bits.
func TestDeterministicAcrossThreads(t *testing.T) {
	if os.Getenv("IQRESNET_WEIGHTS_CHILD") != "" {
		return
	}
	hashes := map[string]string{}
	for _, procs := range []string{"1", "2"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestWeightsChild$", "-test.v")
		cmd.Env = append(os.Environ(), "GOMAXPROCS="+procs, "IQRESNET_WEIGHTS_CHILD=1")
		out, err := cmd.CombinedOutput()
		if errors.Is(err, syscall.ENOEXEC) {
			// Under user-mode emulation (the arm64 tests run by
			// qemu-aarch64-static) the test binary cannot start itself.
			t.Skipf("cannot run the test binary as a child here: %v", err)
		}
		if err != nil {
			t.Fatalf("GOMAXPROCS=%s: %v\n%s", procs, err, out)
		}
		_, h, ok := strings.Cut(string(out), "weights sha256 ")
		if !ok {
			t.Fatalf("GOMAXPROCS=%s: no hash in\n%s", procs, out)
		}
		hashes[procs] = strings.Fields(h)[0]
	}
	if hashes["1"] != hashes["2"] {
		t.Errorf("weights differ: %v", hashes)
	}
}

// TestWeightsChild trains a small network (records of 1024 samples, 8
// filters) and prints the hash of its weights; it runs only as
// TestDeterministicAcrossThreads' child.
func TestWeightsChild(t *testing.T) {
	if os.Getenv("IQRESNET_WEIGHTS_CHILD") == "" {
		t.Skip("a child of TestDeterministicAcrossThreads")
	}
	be := cpuBackend(t)
	a := Arch{Window: 512, Classes: 3, Stacks: 4, Filters: 8, Kernel: 3, Dense: 16, Dropout: 0.3}
	x := randomWindows(a, 64, 3)
	labels := make([]int, 64)
	for i := range labels {
		labels[i] = i % 3
	}
	o := tinyOptions(3, "")
	o.Arch, o.Train.BatchSize = a, 32
	res, err := Train(t.Context(), be, x, labels, []string{"a", "b", "c"}, o)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	for _, w := range a.weightShapes() {
		v, err := res.Model.ctx.GetVariableByScopeAndName(w.scope, w.name).Value()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprint(h, tensors.MustCopyFlatData[float32](v))
	}
	fmt.Printf("weights sha256 %s\n", hex.EncodeToString(h.Sum(nil)))
}
