package impair

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

const fullRecipe = `{
  "cfo": {"probability": 1, "offset_hz": {"min": -2000, "max": 2000}, "drift_hz_per_s": {"min": 0, "max": 50}},
  "phase_noise": {"probability": 1, "linewidth_hz": {"min": 10, "max": 100}},
  "fading": {"probability": 1, "k": {"min": 0, "max": 10}, "doppler_hz": {"min": 1, "max": 50}},
  "multipath": {"probability": 1, "taps": [{"delay": 0, "power_db": 0}, {"delay": 2, "power_db": -6}], "doppler_hz": {"min": 0, "max": 10}},
  "sample_rate_offset": {"probability": 1, "ppm": {"min": -20, "max": 20}},
  "interference": {"probability": 1, "sir_db": {"min": 10, "max": 20}, "offset_hz": {"min": 40000, "max": 40000}},
  "quantize": {"probability": 1, "bits": 8, "full_scale": 2}
}`

func writeRecipe(t *testing.T, s string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "recipe.json")
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRecipeDrawAndApply checks that draws are a function of (seed,
// index) within the declared ranges, that Apply runs every impairment the
// draw holds, and that a recipe of zero probabilities changes nothing.
func TestRecipeDrawAndApply(t *testing.T) {
	r, err := LoadRecipe(writeRecipe(t, fullRecipe))
	if err != nil {
		t.Fatal(err)
	}
	a, b := r.Draw(1, 5), r.Draw(1, 5)
	if !reflect.DeepEqual(a, b) || reflect.DeepEqual(a, r.Draw(1, 6)) || reflect.DeepEqual(a, r.Draw(2, 5)) {
		t.Fatal("draws are not a function of (seed, index)")
	}
	for i := uint64(0); i < 50; i++ {
		p := r.Draw(3, i)
		if p.CFO == nil || p.CFO.OffsetHz < -2000 || p.CFO.OffsetHz > 2000 || p.Fading.K < 0 || p.Fading.K > 10 ||
			p.Interference.OffsetHz != 40000 || p.Quantize.Bits != 8 || p.SampleRateOffset.PPM < -20 || p.SampleRateOffset.PPM > 20 {
			t.Fatalf("draw %d out of its ranges: %+v", i, p)
		}
	}
	x := make([]complex64, 4000)
	for i := range x {
		x[i] = complex(0.5, 0)
	}
	called := 0
	y, err := a.Apply(slices.Clone(x), 200e3, func(n int) ([]complex64, error) {
		called++
		v := make([]complex64, n)
		for i := range v {
			v[i] = 0.3
		}
		return v, nil
	})
	if err != nil || called != 1 || slices.Equal(y, x[:len(y)]) {
		t.Fatalf("Apply: %v, interferer called %d times", err, called)
	}
	if _, err := a.Apply(slices.Clone(x), 200e3, nil); err == nil || !strings.Contains(err.Error(), "no interferer") {
		t.Fatalf("Apply without an interferer: %v", err)
	}
	none, err := LoadRecipe(writeRecipe(t, `{}`))
	if err != nil {
		t.Fatal(err)
	}
	p := none.Draw(1, 1)
	if !reflect.DeepEqual(p, Params{}) {
		t.Fatalf("an empty recipe drew %+v", p)
	}
	if y, err := p.Apply(slices.Clone(x), 200e3, nil); err != nil || !slices.Equal(y, x) {
		t.Fatalf("an empty draw changed the record: %v", err)
	}
}

// TestRecipeErrors checks that a recipe's errors name the file and field.
func TestRecipeErrors(t *testing.T) {
	for _, c := range []struct{ json, want string }{
		{`{"cfo": {"probability": 2}}`, "cfo.probability 2: want 0 to 1"},
		{`{"fading": {"probability": 1, "k": {"min": 5, "max": 1}}}`, "fading.k 5..1"},
		{`{"phase_noise": {"probability": 1, "linewidth_hz": {"min": -1, "max": 1}}}`, "phase_noise.linewidth_hz"},
		{`{"multipath": {"probability": 0.5}}`, "multipath.taps: at least one tap"},
		{`{"multipath": {"taps": [{"delay": -2, "power_db": 0}]}}`, "multipath.taps[0]"},
		{`{"quantize": {"probability": 1, "bits": 0, "full_scale": 1}}`, "quantize: bits 0"},
		{`{"cfo": {"probabilty": 1}}`, `unknown field "probabilty"`},
		{`{"cfo": `, "unexpected EOF"},
		{`{"cfo": {"probability": 0}}` + strings.Repeat(" ", 1<<20), "recipe.json"},
	} {
		p := writeRecipe(t, c.json)
		if _, err := LoadRecipe(p); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "recipe.json") {
			t.Errorf("%s: %v, want an error naming recipe.json and containing %q", c.json, err, c.want)
		}
	}
}

// The built-in recipe parses, validates, and turns on every impairment
// with the probabilities docs/SIGNAL.md states; each call is a new copy.
func TestDefaultRecipe(t *testing.T) {
	r := DefaultRecipe()
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]float64{"cfo": r.CFO.Probability, "phase_noise": r.PhaseNoise.Probability,
		"fading": r.Fading.Probability, "multipath": r.Multipath.Probability, "sample_rate_offset": r.SampleRateOffset.Probability,
		"interference": r.Interference.Probability, "quantize": r.Quantize.Probability} {
		want := map[string]float64{"cfo": 1, "phase_noise": 0.5, "fading": 0.5, "multipath": 0.3, "sample_rate_offset": 0.5,
			"interference": 0.2, "quantize": 1}[name]
		if p != want {
			t.Errorf("%s.probability %v, want %v", name, p, want)
		}
	}
	if r.CFO.OffsetHz != (Range{-2000, 2000}) || r.Quantize.Bits != 12 || len(r.Multipath.Taps) != 2 {
		t.Errorf("default recipe %+v", r)
	}
	r.CFO.Probability = 0
	if DefaultRecipe().CFO.Probability != 1 {
		t.Error("DefaultRecipe returned a shared recipe")
	}
}
