package signal

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
)

// toneFeatures returns the features of a noise-free tone: its SNR
// estimates are +Inf.
func toneFeatures(t *testing.T) *Features {
	t.Helper()
	x, err := Synthesize(SynthOptions{Mod: Tone, SampleRate: 200e3, Samples: 8192, NoNoise: true, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return extract(t, x, 200e3)
}

// TestFeaturesJSONWritesNonFiniteAsNullWithNote checks that the report of
// a noise-free tone (an infinite SNR) encodes, as `signal features --json`
// writes it, with null for each non-finite value and the note naming it.
func TestFeaturesJSONWritesNonFiniteAsNullWithNote(t *testing.T) {
	f := toneFeatures(t)
	if !math.IsInf(f.SNRdB, 1) {
		t.Fatalf("the tone's SNR is %v, want +Inf (the test needs a non-finite feature)", f.SNRdB)
	}
	for _, arrays := range []bool{false, true} {
		r := &FeaturesReport{File: "tone", Format: "cf32_le", Device: "cpu", ExtractMS: 1, FeaturesJSON: NewFeaturesJSON(f, arrays)}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r); err != nil {
			t.Fatalf("arrays %v: %v", arrays, err)
		}
		var m map[string]any
		if err := json.Unmarshal(b.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		note, _ := m[NonFiniteKey].(map[string]any)
		if note == nil {
			t.Fatalf("arrays %v: no %q in %s", arrays, NonFiniteKey, b.Bytes())
		}
		vals := f.Vector(nil)
		for i, k := range FeatureNames(0) {
			v, ok := m[k]
			if !ok {
				t.Errorf("arrays %v: no key %q", arrays, k)
				continue
			}
			want := vals[i]
			switch {
			case math.IsNaN(want) || math.IsInf(want, 0):
				if v != nil || note[k] != strconvFormat(want) {
					t.Errorf("arrays %v: %s = %v, note %v; want null and %q", arrays, k, v, note[k], strconvFormat(want))
				}
			default:
				if v != want {
					t.Errorf("arrays %v: %s = %v, want %v", arrays, k, v, want)
				}
				if _, ok := note[k]; ok {
					t.Errorf("arrays %v: finite %s has a note %v", arrays, k, note[k])
				}
			}
		}
		if m["file"] != "tone" || m["device"] != "cpu" || m["extract_ms"] != 1.0 {
			t.Errorf("report fields %v %v %v", m["file"], m["device"], m["extract_ms"])
		}
	}
}

func strconvFormat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// Copies of the report types without their MarshalJSON: what
// encoding/json writes for them.
type (
	plainFeaturesJSON FeaturesJSON
	plainReport       struct {
		File      string  `json:"file"`
		Format    string  `json:"format"`
		Device    string  `json:"device"`
		ExtractMS float64 `json:"extract_ms"`
		CompileMS float64 `json:"compile_ms,omitempty"`
		Label     string  `json:"label,omitempty"`
		plainFeaturesJSON
		Spectrogram string `json:"spectrogram_file,omitempty"`
	}
)

// TestFeaturesJSONOfFiniteValuesIsEncodingJSONs checks that with finite
// values the JSON is byte for byte what encoding/json writes (same keys,
// order and numbers), with and without arrays and optional fields.
func TestFeaturesJSONOfFiniteValuesIsEncodingJSONs(t *testing.T) {
	f := testFeatures(t)
	for _, arrays := range []bool{false, true} {
		j := NewFeaturesJSON(f, arrays)
		got, err := json.Marshal(j)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(plainFeaturesJSON(j))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("arrays %v: features JSON\n%s\nwant\n%s", arrays, got, want)
		}
		for _, r := range []FeaturesReport{
			{File: "a", Format: "cf32_le", Device: "cpu", ExtractMS: 2.5, FeaturesJSON: j},
			{File: "b", Format: "ci8", Device: "go", ExtractMS: 2.5, CompileMS: 7, Label: "qpsk", FeaturesJSON: j, Spectrogram: "s.f32"},
		} {
			got, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(plainReport{r.File, r.Format, r.Device, r.ExtractMS, r.CompileMS, r.Label, plainFeaturesJSON(r.FeaturesJSON), r.Spectrogram})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("arrays %v: report JSON\n%s\nwant\n%s", arrays, got, want)
			}
		}
	}
	// A report without features (a nil embedded pointer) encodes too.
	if _, err := json.Marshal(FeaturesReport{File: "x"}); err != nil {
		t.Error(err)
	}
}

// TestFeaturesJSONNotesNonFiniteArrayElements checks the note of arrays:
// how many elements are not finite, of how many, and the first few.
func TestFeaturesJSONNotesNonFiniteArrayElements(t *testing.T) {
	f := testFeatures(t)
	g := *f
	g.PSD = append([]float64(nil), f.PSD...)
	for _, i := range []int{0, 5, 6, 9} {
		g.PSD[i] = math.Inf(-1)
	}
	g.PSD[5] = math.NaN()
	g.MFCCFrames = append([]float64(nil), f.MFCCFrames...)
	g.MFCCFrames[len(f.MFCC)+2] = math.Inf(1)
	g.C40 = complex(math.NaN(), 1)
	b, err := json.Marshal(NewFeaturesJSON(&g, true))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		PSD    []*float64        `json:"psd"`
		C40    *float64          `json:"c40"`
		C40C   []*float64        `json:"c40_complex"`
		Frames [][]*float64      `json:"mfcc_frames"`
		Note   map[string]string `json:"non_finite"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for i, v := range m.PSD {
		if (v == nil) != (i == 0 || i == 5 || i == 6 || i == 9) {
			t.Errorf("psd[%d] = %v", i, v)
		}
	}
	if m.C40 != nil || m.C40C[0] != nil || m.C40C[1] == nil || m.Frames[1][2] != nil {
		t.Errorf("c40 %v, c40_complex %v, mfcc_frames[1][2] %v", m.C40, m.C40C, m.Frames[1][2])
	}
	want := map[string]string{
		"psd":         "4 of " + strconv.Itoa(len(f.PSD)) + " values: [0] -Inf, [5] NaN, [6] -Inf",
		"c40":         "NaN", // |NaN + 1i|
		"c40_complex": "1 of 2 values: [0] NaN",
		"mfcc_frames": "1 of " + strconv.Itoa(len(f.MFCCFrames)) + " values: [1][2] +Inf",
	}
	for k, v := range want {
		if m.Note[k] != v {
			t.Errorf("note %s = %q, want %q", k, m.Note[k], v)
		}
	}
	if len(m.Note) != len(want) {
		t.Errorf("note %v, want the keys of %v", m.Note, want)
	}
	if !strings.Contains(string(b), `"non_finite":{"c40":"NaN","c40_complex"`) {
		t.Errorf("the note is not last, in the order of the keys: %s", b[len(b)-200:])
	}
}
