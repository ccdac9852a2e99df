package charlstm

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/gotrain/gotrain/train"
)

// TestReportWriteText checks the text of `gotrain lm lstm train`: a
// resumed run that stopped early, with validation, and a fresh one
// without validation or checkpoint; and the JSON's validation keys.
func TestReportWriteText(t *testing.T) {
	r := &Result{Data: "opticks.txt", Vocab: 37, TrainChars: 200, ValChars: 22, Windows: 64, SeqLength: 8,
		Arch: Arch{Vocab: 37, Hidden: 16, Layers: 2}, FirstLoss: 3.61273, ValLoss: 2.5, ValPerplexity: math.Exp(2.5),
		ResumedFrom: "ck/ckpt-3.gtc", BatchSize: 16, Config: train.Config{BatchSize: 16},
		Train: train.Result{Steps: 5, Loss: 3.60971, Resumed: 3, Stopped: "no better val_loss", Checkpoint: "ck/ckpt-5.gtc"},
		Perf:  train.Perf{First: 7 * time.Millisecond}}
	rep := r.Report("go", "")
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := `device:      go
data:        opticks.txt (200 train / 22 validation characters, vocabulary 37, 64 windows)
model:       LSTM 2 x 16, seq-length 8, batch 16
resumed:     ck/ckpt-3.gtc (step 3)
steps:       5 (first step 0.007s, median step 0.007s)
train loss:  3.6097 nats/char (first step 3.6127)
val loss:    2.5000 nats/char, perplexity 12.182
stopped:     no better val_loss
checkpoint:  ck/ckpt-5.gtc
`
	if got := b.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}

	r.ValLoss, r.ValPerplexity, r.ResumedFrom = math.NaN(), math.NaN(), ""
	r.Train = train.Result{Steps: 2, Loss: 3.5}
	rep = r.Report("cpu", "warning: fell back")
	b.Reset()
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want = `device:      cpu
data:        opticks.txt (200 train / 22 validation characters, vocabulary 37, 64 windows)
model:       LSTM 2 x 16, seq-length 8, batch 16
steps:       2 (first step 0.007s, median step 0.007s)
train loss:  3.5000 nats/char (first step 3.6127)
val loss:    none (no validation text)
`
	if got := b.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	js, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(js); strings.Contains(s, "val_loss_nats_per_char") || !strings.Contains(s, `"fallback":"warning: fell back"`) {
		t.Errorf("JSON without validation: %s", s)
	}
}
