package signal_test

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/gotrain/gotrain/signal"
	"github.com/gotrain/gotrain/signal/signaltest"
)

// referenceDir holds the independent numpy/scipy reference
// (scripts/signal_reference.py) and its records.
var referenceDir = filepath.Join("testdata", "reference")

// TestReferenceFeatures checks every scalar feature of the CPU extractor
// (and the complex cumulants) against the independent numpy/scipy values
// of testdata/reference/features.json, on each of its records (QPSK,
// 16QAM, FM, AM, GFSK at 200 kHz and BPSK at 1 MHz, all with a carrier
// offset), with the tolerances of signaltest.CPU, on one goroutine and on
// two. Unlike the graph-vs-CPU parity tests, nothing here shares code with
// the extractor: a change to a definition (the mel scale, the SNR
// estimate, the roll-off) fails it.
func TestReferenceFeatures(t *testing.T) {
	ref, err := signaltest.Load(referenceDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, threads := range []int{1, 2} {
		for _, rec := range ref.Records {
			t.Run(rec.Name+map[int]string{1: "", 2: "_threads2"}[threads], func(t *testing.T) {
				x, err := rec.Read(referenceDir)
				if err != nil {
					t.Fatal(err)
				}
				e, err := signal.NewExtractor(signal.Config{SampleRate: rec.SampleRate, Threads: threads})
				if err != nil {
					t.Fatal(err)
				}
				if err := ref.Header.CheckConfig(e.Config()); err != nil {
					t.Fatal(err)
				}
				var f signal.Features
				if err := e.Extract(x, &f); err != nil {
					t.Fatal(err)
				}
				checkReference(t, &f, &rec, signaltest.CPU)
			})
		}
	}
}

// checkReference fails t for every mismatch of f against rec and logs
// the largest error as a share of its tolerance.
func checkReference(t *testing.T, f *signal.Features, rec *signaltest.Record, ts signaltest.Tolerances) {
	t.Helper()
	ms, err := signaltest.Compare(f, rec, ts)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		t.Error(m)
	}
	want, err := rec.Want()
	if err != nil {
		t.Fatal(err)
	}
	got := signaltest.Got(f)
	worst, share := "", 0.0
	for name, w := range want {
		tol, _ := ts.For(name)
		if s := math.Abs(got[name]-w) / tol.Limit(w); s > share {
			worst, share = name, s
		}
	}
	t.Logf("largest error: %s at %.2g of its tolerance", worst, share)
}
