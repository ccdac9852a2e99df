package moe

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// fuzzHistory returns n epoch records of a run that resumed at step
// resumed, as Train records them (epoch 2 without validation data).
func fuzzHistory(n int, resumed int64) []EpochRecord {
	var h []EpochRecord
	for i := range n {
		step := resumed + int64(i+1)*10
		r := EpochRecord{Epoch: epochOf(step, 10), Step: step, TrainLoss: 1 / float64(i+1), ValLoss: 0.5, ValAccuracy: 0.9,
			Seconds: 0.25, Load: []float64{0.5, 0.5, 0}, Dropped: 0.01, Experts: 2, ExpertsPerDevice: []int{2}}
		if i%2 == 1 {
			r.ValLoss, r.ValAccuracy = math.NaN(), math.NaN()
		}
		h = append(h, r)
	}
	return h
}

// goodEpochLog is an epochs.jsonl of three epochs as a fresh run writes it.
func goodEpochLog(tb testing.TB) []byte {
	b, _, err := epochLog(filepath.Join(tb.TempDir(), EpochsFile), 0, fuzzHistory(3, 0))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// recordJSON is r as epochs.jsonl holds it, to compare records (NaN
// included).
func recordJSON(t *testing.T, r EpochRecord) string {
	b, err := json.Marshal(sanitize(r))
	if err != nil {
		t.Fatalf("record %+v does not encode: %v", r, err)
	}
	return string(b)
}

// FuzzEpochLog fuzzes the epochs.jsonl a resumed `moe train` reads back
// (epochLog): nothing may panic; reading an existing log never fails; the
// new log keeps every line of the old one but the records of steps after
// the resumed step, ends each line, and adds this run's records; the
// records returned are the kept ones and this run's, and reading the new
// log back gives the same records.
func FuzzEpochLog(f *testing.F) {
	good := goodEpochLog(f)
	f.Add(good, int64(20), uint8(2))
	f.Add(good, int64(30), uint8(0))
	f.Add(good, int64(0), uint8(1))
	f.Add(good[:len(good)-7], int64(25), uint8(1))
	f.Add([]byte("not json\n\n{\"step\":5,\"val_loss\":-1,\"val_accuracy\":-1}\nnull\n[]"), int64(10), uint8(1))
	f.Add([]byte(`{"epoch":9223372036854775807,"step":-9223372036854775808,"load":[1e308,-1e308]}`), int64(1), uint8(1))
	f.Add([]byte{}, int64(5), uint8(3))
	f.Fuzz(func(t *testing.T, old []byte, resumed int64, n uint8) {
		path := filepath.Join(t.TempDir(), EpochsFile)
		if err := os.WriteFile(path, old, 0o644); err != nil {
			t.Fatal(err)
		}
		if resumed > math.MaxInt64/2 || resumed < math.MinInt64/2 {
			resumed /= 2 // room for this run's steps
		}
		history := fuzzHistory(int(n%8), max(resumed, 0))
		log, all, err := epochLog(path, resumed, history)
		if err != nil {
			t.Fatalf("reading a %d-byte log: %v", len(old), err)
		}
		if len(log) > 0 && log[len(log)-1] != '\n' {
			t.Fatal("the new log does not end its last line")
		}
		var want []string
		var kept bytes.Buffer
		if resumed > 0 {
			for line := range bytes.Lines(old) {
				var r EpochRecord
				if json.Unmarshal(line, &r) == nil {
					if r.Step > resumed {
						continue
					}
					want = append(want, recordJSON(t, unsanitize(r)))
				}
				kept.Write(line)
				if line[len(line)-1] != '\n' {
					kept.WriteByte('\n')
				}
			}
		}
		if !bytes.HasPrefix(log, kept.Bytes()) {
			t.Fatal("the new log does not start with the old log's kept lines")
		}
		for _, r := range history {
			want = append(want, recordJSON(t, r))
		}
		if len(all) != len(want) {
			t.Fatalf("%d records, want %d", len(all), len(want))
		}
		for i, r := range all {
			if got := recordJSON(t, r); got != want[i] {
				t.Fatalf("record %d is %s, want %s", i+1, got, want[i])
			}
		}
		// The new log read back (as the next resume does) gives the same records.
		again := filepath.Join(t.TempDir(), EpochsFile)
		if err := os.WriteFile(again, log, 0o644); err != nil {
			t.Fatal(err)
		}
		_, back, err := epochLog(again, math.MaxInt64, nil)
		if err != nil || len(back) != len(all) {
			t.Fatalf("the new log reads back as %d records (%v), want %d", len(back), err, len(all))
		}
		for i := range back {
			if recordJSON(t, back[i]) != want[i] {
				t.Fatalf("record %d reads back as %s, want %s", i+1, recordJSON(t, back[i]), want[i])
			}
		}
	})
}

// plotsDeadline bounds one WritePlots call of FuzzEpochLogPlots; the plots
// of a short history take a fraction of a second.
const plotsDeadline = 20 * time.Second

// FuzzEpochLogPlots reads a fuzzed epochs.jsonl back as a resumed run does
// and draws the plots of every epoch it holds (writeOutputs): nothing may
// panic or hang (WritePlots must return within plotsDeadline), and every
// file it says it wrote is a PNG.
func FuzzEpochLogPlots(f *testing.F) {
	f.Add(goodEpochLog(f), uint8(1))
	f.Add([]byte(`{"epoch":1,"step":10,"train_loss":1e300,"val_loss":-1e300,"load":[0.5,0.5]}`), uint8(0))
	f.Add([]byte(`{"epoch":1,"step":10,"train_loss":1,"epoch_seconds":5e-324,"load":[1e-300]}`+"\n"+`{"epoch":-5,"step":1}`), uint8(1))
	f.Add([]byte(`{"epoch":3,"step":30,"train_loss":1e15,"val_loss":-1,"val_accuracy":-1,"epoch_seconds":1e15,"load":[1e15]}`), uint8(0))
	f.Add([]byte(`{"epoch":1000000000000000,"step":10,"train_loss":2}`), uint8(0))
	f.Fuzz(func(t *testing.T, old []byte, n uint8) {
		dir := t.TempDir()
		path := filepath.Join(dir, EpochsFile)
		if err := os.WriteFile(path, old, 0o644); err != nil {
			t.Fatal(err)
		}
		_, all, err := epochLog(path, math.MaxInt64, nil)
		if err != nil || len(all) == 0 || len(all) > 200 {
			return // no record of the file to plot, or too many for a fast input
		}
		all = append(all, fuzzHistory(int(n%3), 0)...) // this run's epochs 1, 2
		for _, r := range all {
			if len(r.Load) > 64 {
				return // keep each input fast
			}
		}
		type result struct {
			files []string
			err   error
		}
		done := make(chan result, 1)
		go func() {
			files, err := WritePlots(filepath.Join(dir, "plots"), all, []bool{true, true, false}, 1)
			done <- result{files, err}
		}()
		var r result
		select {
		case r = <-done:
		case <-time.After(plotsDeadline):
			t.Fatalf("WritePlots of %d epochs did not return in %v", len(all), plotsDeadline)
		}
		if r.err != nil {
			return
		}
		for _, p := range r.files {
			png, err := os.ReadFile(p)
			if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
				t.Fatalf("%s: not a PNG (%v)", p, err)
			}
		}
	})
}
