package modclass

import (
	"testing"

	"github.com/gotrain/gotrain/signal"
)

// TestAMClassNuisance checks that every AM class draws its message tone,
// and the classes with a carrier their depth, from the documented ranges
// (the synthesizer's defaults would give every record the same tone).
func TestAMClassNuisance(t *testing.T) {
	o := small(3)
	for _, m := range []signal.Modulation{signal.AM, signal.AMDSBWC, signal.AMSSBWC, signal.AMDSBSC, signal.AMSSBSC} {
		tones := map[float64]bool{}
		for idx := range 20 {
			r := o.Record(m, idx, nil)
			if !(r.ModFreq >= ModFreqMinHz && r.ModFreq <= ModFreqMaxHz) {
				t.Errorf("%s record %d: tone %v Hz, want [%g, %g]", m, idx, r.ModFreq, ModFreqMinHz, ModFreqMaxHz)
			}
			tones[r.ModFreq] = true
			withCarrier := m == signal.AM || m == signal.AMDSBWC || m == signal.AMSSBWC
			if withCarrier && !(r.ModIndex >= AMDepthMin && r.ModIndex <= AMDepthMax) {
				t.Errorf("%s record %d: depth %v, want [%g, %g]", m, idx, r.ModIndex, AMDepthMin, AMDepthMax)
			}
			if _, err := signal.Synthesize(r); err != nil {
				t.Errorf("%s record %d: %v", m, idx, err)
			}
		}
		if len(tones) < 20 {
			t.Errorf("%s: %d distinct tones in 20 records", m, len(tones))
		}
	}
}
