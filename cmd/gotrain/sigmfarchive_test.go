package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/signal"
)

// TestSignalSynthArchive writes a record as a SigMF archive (.sigmf) and
// reads it back with signal features and the library.
func TestSignalSynthArchive(t *testing.T) {
	p := filepath.Join(t.TempDir(), "burst.sigmf")
	if out, _, err := run(t, "signal", "synth", "--mod", "bpsk", "--seconds", "0.05", "--out", p); err != nil {
		t.Fatalf("signal synth: %v\n%s", err, out)
	}
	recs, err := signal.ReadArchive(p)
	if err != nil || len(recs) != 1 || recs[0].Name != "burst" || recs[0].Recording.Meta.Label != "bpsk" {
		t.Fatalf("archive: %v %+v", err, recs)
	}
	out, _, err := run(t, "signal", "features", "--in", p)
	if err != nil || !strings.Contains(out, "10000 samples at 200000 Hz") {
		t.Fatalf("signal features: %v\n%s", err, out)
	}
}
