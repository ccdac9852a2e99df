package impair

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/gotrain/gotrain/internal/readlimit"
	"github.com/gotrain/gotrain/rng"
)

// Range is a uniform range [Min, Max] of a parameter (Min = Max: a fixed
// value).
type Range struct {
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

// Recipe declares how a data set's records are impaired: each impairment
// applies to a record with its Probability (0, the zero value, means
// never; 1 always) and draws its parameters uniformly from its ranges,
// per record ([Recipe.Draw]). It is read from a JSON file ([LoadRecipe]);
// docs/SIGNAL.md gives an example.
type Recipe struct {
	CFO struct {
		Probability float64 `json:"probability"`
		OffsetHz    Range   `json:"offset_hz"`
		DriftHzPerS Range   `json:"drift_hz_per_s"`
	} `json:"cfo"`
	PhaseNoise struct {
		Probability float64 `json:"probability"`
		LinewidthHz Range   `json:"linewidth_hz"`
	} `json:"phase_noise"`
	Fading struct {
		Probability float64 `json:"probability"`
		K           Range   `json:"k"`
		DopplerHz   Range   `json:"doppler_hz"`
	} `json:"fading"`
	Multipath struct {
		Probability float64 `json:"probability"`
		Taps        []Tap   `json:"taps"`
		DopplerHz   Range   `json:"doppler_hz"`
	} `json:"multipath"`
	SampleRateOffset struct {
		Probability float64 `json:"probability"`
		PPM         Range   `json:"ppm"`
	} `json:"sample_rate_offset"`
	Interference struct {
		Probability float64 `json:"probability"`
		SIRdB       Range   `json:"sir_db"`
		OffsetHz    Range   `json:"offset_hz"`
	} `json:"interference"`
	Quantize struct {
		Probability float64 `json:"probability"`
		Bits        int     `json:"bits"`
		FullScale   float64 `json:"full_scale"`
	} `json:"quantize"`
}

// Params are the impairments drawn for one record; a nil field is an
// impairment not applied. Their JSON is what a data set records per
// record.
type Params struct {
	CFO              *CFOParams              `json:"cfo,omitempty"`
	PhaseNoise       *PhaseNoiseParams       `json:"phase_noise,omitempty"`
	Fading           *FadingParams           `json:"fading,omitempty"`
	Multipath        *MultipathParams        `json:"multipath,omitempty"`
	SampleRateOffset *SampleRateOffsetParams `json:"sample_rate_offset,omitempty"`
	Interference     *InterferenceParams     `json:"interference,omitempty"`
	Quantize         *QuantizeParams         `json:"quantize,omitempty"`
}

// CFOParams are CFO's.
type CFOParams struct {
	OffsetHz    float64 `json:"offset_hz"`
	DriftHzPerS float64 `json:"drift_hz_per_s"`
}

// PhaseNoiseParams are PhaseNoise's.
type PhaseNoiseParams struct {
	LinewidthHz float64 `json:"linewidth_hz"`
	Seed        uint64  `json:"seed"`
}

// FadingParams are Fading's.
type FadingParams struct {
	K         float64 `json:"k"`
	DopplerHz float64 `json:"doppler_hz"`
	Seed      uint64  `json:"seed"`
}

// MultipathParams are Multipath's.
type MultipathParams struct {
	Taps      []Tap   `json:"taps"`
	DopplerHz float64 `json:"doppler_hz"`
	Seed      uint64  `json:"seed"`
}

// SampleRateOffsetParams are SampleRateOffset's.
type SampleRateOffsetParams struct {
	PPM float64 `json:"ppm"`
}

// InterferenceParams are Interference's; Seed is for the caller's
// interferer.
type InterferenceParams struct {
	SIRdB    float64 `json:"sir_db"`
	OffsetHz float64 `json:"offset_hz"`
	Seed     uint64  `json:"seed"`
}

// QuantizeParams are Quantize's.
type QuantizeParams struct {
	Bits      int     `json:"bits"`
	FullScale float64 `json:"full_scale"`
}

// maxRecipeBytes bounds a recipe file, read before it is parsed.
const maxRecipeBytes = 1 << 20

// LoadRecipe reads a recipe from a JSON file of at most 1 MiB (a larger
// file or an endless FIFO is refused before it is held), refusing unknown
// fields and invalid values with errors that name the file and the field.
func LoadRecipe(path string) (*Recipe, error) {
	b, err := readlimit.ReadFile(path, maxRecipeBytes, "a recipe's size")
	if err != nil {
		return nil, fmt.Errorf("impair: %w", err)
	}
	return parseRecipe(b, path)
}

// defaultRecipe is the JSON of DefaultRecipe.
//
//go:embed default_recipe.json
var defaultRecipe []byte

// DefaultRecipeName is what `signal dataset --impairments` calls
// DefaultRecipe (the flag's default; "none" turns impairments off).
const DefaultRecipeName = "default"

// DefaultRecipe returns the recipe `signal dataset` impairs its records
// with unless told otherwise (default_recipe.json, in docs/SIGNAL.md): a
// carrier offset of up to ±2 kHz drifting up to 100 Hz/s on every record;
// phase noise of 1-100 Hz linewidth, Rician/Rayleigh flat fading (K 0-10,
// Doppler 1-50 Hz) and a sample-rate offset of up to ±20 ppm on half of
// them; two-tap multipath on 30 %, an interferer 10-25 dB down within
// ±50 kHz on 20 %; 12-bit quantization of every record. Each call returns
// a new copy.
func DefaultRecipe() *Recipe {
	r, err := parseRecipe(defaultRecipe, "default_recipe.json")
	if err != nil {
		panic(err) // the embedded file is checked by TestDefaultRecipe
	}
	return r
}

// parseRecipe decodes and validates the recipe b read from name.
func parseRecipe(b []byte, path string) (*Recipe, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var r Recipe
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("impair: %s: %w", path, err)
	}
	if err := r.Validate(); err != nil {
		return nil, fmt.Errorf("impair: %s: %w", path, err)
	}
	return &r, nil
}

// Validate checks every probability (0 to 1), range (finite, Min <= Max)
// and value of r, each error naming the field.
func (r *Recipe) Validate() error {
	prob := func(name string, p float64) error {
		if !(p >= 0 && p <= 1) {
			return fmt.Errorf("%s.probability %v: want 0 to 1", name, p)
		}
		return nil
	}
	inRange := func(name string, x Range, lo float64) error {
		if math.IsNaN(x.Min) || math.IsNaN(x.Max) || math.IsInf(x.Min, 0) || math.IsInf(x.Max, 0) || x.Min > x.Max || x.Min < lo {
			return fmt.Errorf("%s %v..%v: want finite numbers, min <= max, min >= %v", name, x.Min, x.Max, lo)
		}
		return nil
	}
	inf := math.Inf(-1)
	checks := []error{
		prob("cfo", r.CFO.Probability), inRange("cfo.offset_hz", r.CFO.OffsetHz, inf), inRange("cfo.drift_hz_per_s", r.CFO.DriftHzPerS, inf),
		prob("phase_noise", r.PhaseNoise.Probability), inRange("phase_noise.linewidth_hz", r.PhaseNoise.LinewidthHz, 0),
		prob("fading", r.Fading.Probability), inRange("fading.k", r.Fading.K, 0), inRange("fading.doppler_hz", r.Fading.DopplerHz, 0),
		prob("multipath", r.Multipath.Probability), inRange("multipath.doppler_hz", r.Multipath.DopplerHz, 0),
		prob("sample_rate_offset", r.SampleRateOffset.Probability), inRange("sample_rate_offset.ppm", r.SampleRateOffset.PPM, -1e5),
		prob("interference", r.Interference.Probability), inRange("interference.sir_db", r.Interference.SIRdB, inf), inRange("interference.offset_hz", r.Interference.OffsetHz, inf),
		prob("quantize", r.Quantize.Probability),
	}
	if err := errors.Join(checks...); err != nil {
		return err
	}
	if r.Multipath.Probability > 0 && len(r.Multipath.Taps) == 0 {
		return errors.New("multipath.taps: at least one tap when multipath.probability > 0")
	}
	for i, t := range r.Multipath.Taps {
		if t.Delay < 0 || t.Delay > 1<<16 || math.IsNaN(t.PowerDB) || math.IsInf(t.PowerDB, 0) {
			return fmt.Errorf("multipath.taps[%d]: delay %d, power %v dB: want a delay 0 to 65536 and a finite power", i, t.Delay, t.PowerDB)
		}
	}
	if r.Quantize.Probability > 0 && (r.Quantize.Bits < 1 || r.Quantize.Bits > 24 || !(r.Quantize.FullScale > 0) || math.IsInf(r.Quantize.FullScale, 0)) {
		return fmt.Errorf("quantize: bits %d, full_scale %v: want 1 to 24 bits and a positive full scale", r.Quantize.Bits, r.Quantize.FullScale)
	}
	return nil
}

// purposeRecipe is the rng purpose of a record's recipe draws.
const purposeRecipe uint64 = 4

// Draw returns the impairments of record index of a data set of seed: a
// pure function of (seed, index), whatever order records are made in.
func (r *Recipe) Draw(seed, index uint64) Params {
	st := rng.NewStream(rng.Key(seed, index, purposeRecipe))
	u := func() float64 { return rng.Float64(st.Next()) }
	in := func(x Range) float64 { return x.Min + u()*(x.Max-x.Min) }
	on := func(p float64) bool { return u() < p }
	var p Params
	if on(r.CFO.Probability) {
		p.CFO = &CFOParams{in(r.CFO.OffsetHz), in(r.CFO.DriftHzPerS)}
	}
	if on(r.PhaseNoise.Probability) {
		p.PhaseNoise = &PhaseNoiseParams{in(r.PhaseNoise.LinewidthHz), st.Next()}
	}
	if on(r.Fading.Probability) {
		p.Fading = &FadingParams{in(r.Fading.K), in(r.Fading.DopplerHz), st.Next()}
	}
	if on(r.Multipath.Probability) {
		p.Multipath = &MultipathParams{r.Multipath.Taps, in(r.Multipath.DopplerHz), st.Next()}
	}
	if on(r.SampleRateOffset.Probability) {
		p.SampleRateOffset = &SampleRateOffsetParams{in(r.SampleRateOffset.PPM)}
	}
	if on(r.Interference.Probability) {
		p.Interference = &InterferenceParams{in(r.Interference.SIRdB), in(r.Interference.OffsetHz), st.Next()}
	}
	if on(r.Quantize.Probability) {
		p.Quantize = &QuantizeParams{r.Quantize.Bits, r.Quantize.FullScale}
	}
	return p
}

// Apply impairs x (sample rate fs) by p, in a fixed order: multipath,
// fading, sample-rate offset, carrier offset, phase noise, interference
// (with interferer(n), called only then, giving n samples to add), then
// quantization. The record keeps its length (SampleRateOffset); the
// result is x itself or a new slice.
func (p Params) Apply(x []complex64, fs float64, interferer func(n int) ([]complex64, error)) ([]complex64, error) {
	var err error
	if m := p.Multipath; m != nil {
		if err = Multipath(x, fs, m.Taps, m.DopplerHz, m.Seed); err != nil {
			return nil, err
		}
	}
	if f := p.Fading; f != nil {
		if err = Fading(x, fs, f.K, f.DopplerHz, f.Seed); err != nil {
			return nil, err
		}
	}
	if s := p.SampleRateOffset; s != nil {
		if x, err = SampleRateOffset(x, s.PPM); err != nil {
			return nil, err
		}
	}
	if c := p.CFO; c != nil {
		if err = CFO(x, fs, c.OffsetHz, c.DriftHzPerS); err != nil {
			return nil, err
		}
	}
	if n := p.PhaseNoise; n != nil {
		if err = PhaseNoise(x, fs, n.LinewidthHz, n.Seed); err != nil {
			return nil, err
		}
	}
	if i := p.Interference; i != nil {
		if interferer == nil {
			return nil, errors.New("impair: the recipe draws interference but no interferer is given")
		}
		v, err := interferer(len(x))
		if err != nil {
			return nil, err
		}
		if err = Interference(x, v, fs, i.OffsetHz, i.SIRdB); err != nil {
			return nil, err
		}
	}
	if q := p.Quantize; q != nil {
		if err = Quantize(x, q.Bits, q.FullScale); err != nil {
			return nil, err
		}
	}
	return x, nil
}
