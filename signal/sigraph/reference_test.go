package sigraph

import (
	"path/filepath"
	"testing"

	"github.com/gotrain/gotrain/signal"
	"github.com/gotrain/gotrain/signal/signaltest"
)

// TestGraphReferenceFeatures checks the graph extractor on simplego
// against the independent numpy/scipy reference of package signal
// (signal/testdata/reference, scripts/signal_reference.py) with the
// tolerances of signaltest.Graph. The parity tests compare the graph with
// the CPU path, which shares the mel bank, the DCT and signal.PSDLevels
// with it; this one compares both with values computed elsewhere. The
// records of one sample rate go through one ExtractBatch (one compiled
// graph).
func TestGraphReferenceFeatures(t *testing.T) {
	dir := filepath.Join("..", "testdata", "reference")
	ref, err := signaltest.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	byRate := map[float64][]signaltest.Record{}
	var rates []float64
	for _, rec := range ref.Records {
		if byRate[rec.SampleRate] == nil {
			rates = append(rates, rec.SampleRate)
		}
		byRate[rec.SampleRate] = append(byRate[rec.SampleRate], rec)
	}
	b := graphBackend(t)
	for _, rate := range rates {
		recs := byRate[rate]
		xs := make([][]complex64, len(recs))
		for i := range recs {
			if xs[i], err = recs[i].Read(dir); err != nil {
				t.Fatal(err)
			}
		}
		e, err := New(b, signal.Config{SampleRate: rate}, len(recs))
		if err != nil {
			t.Fatal(err)
		}
		if err := ref.Header.CheckConfig(e.Config()); err != nil {
			e.Close()
			t.Fatal(err)
		}
		out := make([]signal.Features, len(recs))
		err = e.ExtractBatch(xs, out)
		e.Close()
		if err != nil {
			t.Fatal(err)
		}
		for i := range recs {
			t.Run(recs[i].Name, func(t *testing.T) {
				ms, err := signaltest.Compare(&out[i], &recs[i], signaltest.Graph)
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range ms {
					t.Error(m)
				}
			})
		}
	}
}
