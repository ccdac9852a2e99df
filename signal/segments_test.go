package signal

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFeaturesPerAnnotation extracts the features of each annotated
// segment of a SigMF recording and compares them with the features of
// the same samples extracted directly; the CSV has a row per segment;
// annotations past the end and recordings without any are refused.
func TestFeaturesPerAnnotation(t *testing.T) {
	dir := t.TempDir()
	o := SynthOptions{Mod: QPSK, SampleRate: 200e3, Samples: 12000, SNRdB: 10, Seed: 1}
	x, err := Synthesize(o)
	if err != nil {
		t.Fatal(err)
	}
	rec := &Recording{Meta: Meta{Datatype: CF32, SampleRate: o.SampleRate, Annotations: []Annotation{
		{SampleStart: 0, SampleCount: 5000, Label: "first"},
		{SampleStart: 6000, Label: "rest"},
	}}, Samples: x}
	p := filepath.Join(dir, "seg")
	if err := WriteSigMF(p, rec); err != nil {
		t.Fatal(err)
	}
	csvPath := filepath.Join(dir, "seg.csv")
	spec := FeaturesSpec{In: p, Annotations: true, CSV: csvPath, Impedance: 50}
	r, cfg, err := spec.Load()
	if err != nil {
		t.Fatal(err)
	}
	ex, err := NewExtractor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := spec.Extract(ex, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Segments) != 2 || rep.Segments[1].SampleStart != 6000 || rep.Segments[1].SampleCount != 6000 || rep.Segments[0].Label != "first" {
		t.Fatalf("segments %+v", rep.Segments)
	}
	for i, sg := range rep.Segments {
		var want Features
		direct, err := NewExtractor(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := direct.Extract(x[sg.SampleStart:sg.SampleStart+sg.SampleCount], &want); err != nil {
			t.Fatal(err)
		}
		got, w := sg.features.Vector(nil), want.Vector(nil)
		for k := range w {
			if got[k] != w[k] && !(got[k] != got[k] && w[k] != w[k]) {
				t.Fatalf("segment %d feature %d: %v, directly %v", i, k, got[k], w[k])
			}
		}
	}
	f, err := os.Open(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(rows) != 3 || strings.Join(rows[0][:4], ",") != "sample_start,sample_count,label,rssi_dbfs" || rows[2][2] != "rest" {
		t.Fatalf("CSV %v: %v", rows, err)
	}
	rec.Meta.Annotations = []Annotation{{SampleStart: 11000, SampleCount: 5000}}
	if err := WriteSigMF(p, rec); err != nil {
		t.Fatal(err)
	}
	r, _, _ = spec.Load()
	if _, err := spec.Extract(ex, r); err == nil || !strings.Contains(err.Error(), "annotation 0 (samples 11000+5000) reaches past") {
		t.Fatalf("annotation past the end: %v", err)
	}
	rec.Meta.Annotations = nil
	if err := WriteSigMF(p, rec); err != nil {
		t.Fatal(err)
	}
	r, _, _ = spec.Load()
	if _, err := spec.Extract(ex, r); err == nil || !strings.Contains(err.Error(), "no annotations") {
		t.Fatalf("no annotations: %v", err)
	}
}
