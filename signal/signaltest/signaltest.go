// Package signaltest checks extracted signal features against an
// independent reference: the numpy/scipy values of
// signal/testdata/reference/features.json, computed by
// scripts/signal_reference.py on the short cf32 records beside it
// (docs/SIGNAL.md, "Reference test"). The tests of package signal (the
// CPU path) and of signal/sigraph (the graph path) share it.
//
// It computes no feature: the expected values are only read from the
// file, so a change to gotrain's definitions (the mel scale, the SNR
// estimate, the roll-off search) that the CPU and graph paths share is
// caught here, where their parity tests cannot see it.
package signaltest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gotrain/gotrain/signal"
)

// File is the reference's file name inside its folder.
const File = "features.json"

// Reference is the content of features.json.
type Reference struct {
	Header  Header   `json:"header"`
	Records []Record `json:"records"`
}

// Header says how the reference was generated and with which parameters.
type Header struct {
	Description  string `json:"description"`
	GeneratedBy  string `json:"generated_by"` // the command, run from the repository root
	Python       string `json:"python"`
	Numpy        string `json:"numpy"`
	Scipy        string `json:"scipy"`
	Peer         string `json:"peer"`          // bench_signal.py and its checksum
	PeerFeatures string `json:"peer_features"` // the features computed by the peer's functions
	OwnFeatures  string `json:"own_features"`  // the features computed by the script itself
	Config       struct {
		RolloffFraction float64 `json:"rolloff_fraction"`
		OBWFraction     float64 `json:"obw_fraction"`
		Impedance       float64 `json:"impedance_ohm"`
		WelchSegment    int     `json:"welch_segment"`
		MelBands        int     `json:"mel_bands"`
		MFCCFrame       int     `json:"mfcc_frame"`
		MFCCHop         int     `json:"mfcc_hop"`
		MFCCs           int     `json:"mfccs"`
		SNRThresholdDB  float64 `json:"snr_threshold_db"`
	} `json:"config"`
}

// Record is one reference record: its sample file and its features.
type Record struct {
	Name       string  `json:"name"`
	File       string  `json:"file"`   // beside features.json
	Format     string  `json:"format"` // a signal.Format
	SampleRate float64 `json:"sample_rate"`
	Samples    int     `json:"samples"`
	SHA256     string  `json:"sha256"` // of File
	Synth      string  `json:"synth"`  // the `gotrain signal synth` command that wrote File
	// Features maps a feature's JSON key (docs/SIGNAL.md) to its value: a
	// number, the 13 MFCC means for "mfcc", [re, im] for "c*_complex".
	Features map[string]json.RawMessage `json:"features"`
}

// Load reads dir/features.json.
func Load(dir string) (*Reference, error) {
	path := filepath.Join(dir, File)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("signaltest: %w", err)
	}
	var r Reference
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("signaltest: %s: %w", path, err)
	}
	if len(r.Records) == 0 {
		return nil, fmt.Errorf("signaltest: %s: no records", path)
	}
	return &r, nil
}

// CheckConfig returns an error when cfg (with its defaults filled in, as
// an extractor's Config method gives it) differs from the parameters the
// reference was computed with.
func (h *Header) CheckConfig(cfg signal.Config) error {
	c := h.Config
	var diffs []string
	diff := func(name string, got, want float64) {
		if got != want {
			diffs = append(diffs, fmt.Sprintf("%s %v, reference %v", name, got, want))
		}
	}
	diff("RolloffFraction", cfg.RolloffFraction, c.RolloffFraction)
	diff("OBWFraction", cfg.OBWFraction, c.OBWFraction)
	diff("Impedance", cfg.Impedance, c.Impedance)
	diff("WelchSegment", float64(cfg.WelchSegment), float64(c.WelchSegment))
	diff("MelBands", float64(cfg.MelBands), float64(c.MelBands))
	diff("MFCCFrame", float64(cfg.MFCCFrame), float64(c.MFCCFrame))
	diff("MFCCHop", float64(cfg.MFCCHop), float64(c.MFCCHop))
	diff("MFCCs", float64(cfg.MFCCs), float64(c.MFCCs))
	diff("SNRThresholdDB", cfg.SNRThresholdDB, c.SNRThresholdDB)
	if len(diffs) > 0 {
		return fmt.Errorf("signaltest: the extractor's configuration is not the reference's: %s", strings.Join(diffs, "; "))
	}
	return nil
}

// Read reads the record's samples from dir and checks their count and
// checksum against the reference.
func (r *Record) Read(dir string) ([]complex64, error) {
	path := filepath.Join(dir, r.File)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("signaltest: %w", err)
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != r.SHA256 {
		return nil, fmt.Errorf("signaltest: %s: sha256 %x, the reference says %s (regenerate with scripts/signal_reference.py)", path, sum, r.SHA256)
	}
	f, err := signal.ParseFormat(r.Format)
	if err != nil {
		return nil, fmt.Errorf("signaltest: %s: %w", path, err)
	}
	x, err := signal.Decode(nil, b, f)
	if err != nil {
		return nil, fmt.Errorf("signaltest: %s: %w", path, err)
	}
	if len(x) != r.Samples {
		return nil, fmt.Errorf("signaltest: %s: %d samples, the reference says %d", path, len(x), r.Samples)
	}
	return x, nil
}

// Want returns the record's reference values flattened by name: the
// names of [signal.FeatureNames] (the MFCC means as mfcc0, mfcc1, ...)
// and the complex cumulants' parts as c20_re, c20_im, c40_re, ... .
func (r *Record) Want() (map[string]float64, error) {
	out := map[string]float64{}
	for key, raw := range r.Features {
		var err error
		switch {
		case key == "mfcc":
			var v []float64
			if err = json.Unmarshal(raw, &v); err == nil {
				for i, c := range v {
					out[fmt.Sprintf("mfcc%d", i)] = c
				}
			}
		case strings.HasSuffix(key, "_complex"):
			var v [2]float64
			if err = json.Unmarshal(raw, &v); err == nil {
				base := strings.TrimSuffix(key, "_complex")
				out[base+"_re"], out[base+"_im"] = v[0], v[1]
			}
		default:
			var v float64
			if err = json.Unmarshal(raw, &v); err == nil {
				out[key] = v
			}
		}
		if err != nil {
			return nil, fmt.Errorf("signaltest: record %s, feature %s: %w", r.Name, key, err)
		}
	}
	return out, nil
}

// Got flattens f as [Record.Want] flattens the reference: the scalar
// vector of [signal.Features.Vector] under [signal.FeatureNames], and the
// parts of the complex cumulants.
func Got(f *signal.Features) map[string]float64 {
	names := signal.FeatureNames(len(f.MFCC))
	vals := f.Vector(nil)
	out := make(map[string]float64, len(names)+6)
	for i, n := range names {
		out[n] = vals[i]
	}
	for name, c := range map[string]complex128{"c20": f.C20, "c40": f.C40, "c41": f.C41} {
		out[name+"_re"], out[name+"_im"] = real(c), imag(c)
	}
	return out
}

// Tol is a feature's tolerance: a value passes when
// |got − want| ≤ max(Abs, Rel·|want|).
type Tol struct {
	Rel, Abs float64
}

// Limit returns the largest error allowed against want.
func (t Tol) Limit(want float64) float64 { return math.Max(t.Abs, t.Rel*math.Abs(want)) }

func (t Tol) String() string {
	switch {
	case t.Abs == 0:
		return fmt.Sprintf("rel %.0e", t.Rel)
	case t.Rel == 0:
		return fmt.Sprintf("abs %.0e", t.Abs)
	}
	return fmt.Sprintf("rel %.0e or abs %.0e", t.Rel, t.Abs)
}

// Tolerances gives each feature's tolerance by name; "mfcc" stands for
// every MFCC mean (mfcc0, mfcc1, ...).
type Tolerances map[string]Tol

// For returns the tolerance of the flattened feature name.
func (ts Tolerances) For(name string) (Tol, bool) {
	if strings.HasPrefix(name, "mfcc") {
		name = "mfcc"
	}
	t, ok := ts[name]
	return t, ok
}

// CPU are the tolerances of the CPU extractor against the reference.
// Both compute in float64 from the same complex64 samples; the CPU path
// matches a float64 numpy computation to 1e−13 or better (docs/SIGNAL.md,
// "Parity with numpy/scipy"), so every continuous feature is held to
// about 1e−9, four orders of magnitude above the rounding differences
// (summation order, the vector atan2's 3e−13 rad) and still far below any
// change of definition (a 700 → 350 mel constant moves the MFCCs by
// units, a doubled in-band SNR denominator moves snr_inband_db by 3 dB).
var CPU = Tolerances{
	// Powers and levels: plain relative (all are far from zero).
	"rssi_dbfs": {Rel: 1e-9, Abs: 1e-12}, // dBFS near 0 dB for unit power: the absolute floor
	"rssi_dbm":  {Rel: 1e-9},
	"c21":       {Rel: 1e-9}, // the mean power
	"noise_psd": {Rel: 1e-9}, // the median PSD bin
	// SNR estimates in dB: absolute, 1e−9 dB (a dB value may be near 0).
	"snr_db":        {Abs: 1e-9},
	"snr_inband_db": {Abs: 1e-9},
	// Bin-counted frequencies are multiples of one Welch bin (fs/1024,
	// ≥ 195 Hz here): the same bins give the same value up to the last
	// ulp of the bin frequency, so 1e−6 Hz means "the same bins".
	"occupied_bw_hz": {Abs: 1e-6},
	"obw_hz":         {Abs: 1e-6},
	"rolloff_hz":     {Abs: 1e-6},
	// Spectral shape: relative, with an absolute floor of 1e−6 Hz for a
	// centroid that could sit near 0 Hz.
	"centroid_hz":  {Rel: 1e-9, Abs: 1e-6},
	"bandwidth_hz": {Rel: 1e-9},
	"flatness":     {Rel: 1e-9},
	// Normalised cumulants are of order 1 but can be near 0 (a carrier
	// offset averages C40 and C41 away): absolute 1e−9, relative beyond.
	"c20": {Rel: 1e-9, Abs: 1e-9}, "c40": {Rel: 1e-9, Abs: 1e-9}, "c41": {Rel: 1e-9, Abs: 1e-9}, "c42": {Rel: 1e-9, Abs: 1e-9},
	"c20_re": {Rel: 1e-9, Abs: 1e-9}, "c20_im": {Rel: 1e-9, Abs: 1e-9},
	"c40_re": {Rel: 1e-9, Abs: 1e-9}, "c40_im": {Rel: 1e-9, Abs: 1e-9},
	"c41_re": {Rel: 1e-9, Abs: 1e-9}, "c41_im": {Rel: 1e-9, Abs: 1e-9},
	// Instantaneous statistics. The amplitude ones are relative. The
	// circular mean phase is absolute (rad): near-uniform phases make it
	// ill-conditioned, but |Σu| is still ≫ the rounding of the sum here.
	// The frequency mean (Hz) takes an absolute floor for a mean near 0;
	// its std is computed as sqrt(E[d²] − E[d]²), whose cancellation
	// costs a few digits when the mean step dominates.
	"inst_amp_mean":   {Rel: 1e-9},
	"inst_amp_std":    {Rel: 1e-9},
	"inst_phase_mean": {Abs: 1e-9},
	"inst_phase_std":  {Rel: 1e-9},
	"inst_freq_mean":  {Rel: 1e-9, Abs: 1e-6},
	"inst_freq_std":   {Rel: 1e-9},
	// MFCC means: absolute. The peer's mel bank and window are float32
	// (rounded weights, ~1e−8 relative), which moves the log mel energies
	// and so the coefficients by up to ~1e−7; 1e−5 leaves a margin of
	// 100 and is five orders below a change of the mel scale.
	"mfcc": {Abs: 1e-5},
}

// Graph are the tolerances of the graph extractor (signal/sigraph)
// against the reference: those of [CPU], except the MFCCs, which the
// graph computes in float32 from the framing to the log mel energies
// (within 3e−7 of the CPU path on the means, docs/SIGNAL.md "Precision
// per stage"): absolute 1e−4.
var Graph = func() Tolerances {
	t := Tolerances{}
	for k, v := range CPU {
		t[k] = v
	}
	t["mfcc"] = Tol{Abs: 1e-4}
	return t
}()

// Mismatch is one feature outside its tolerance, or missing.
type Mismatch struct {
	Record, Name string
	Got, Want    float64
	Tol          Tol
	Missing      string // when set, what is missing instead of a value error
}

func (m Mismatch) String() string {
	if m.Missing != "" {
		return fmt.Sprintf("%s: %s: %s", m.Record, m.Name, m.Missing)
	}
	return fmt.Sprintf("%s: %s = %.17g, reference %.17g: error %.3g > %.3g (%v)",
		m.Record, m.Name, m.Got, m.Want, math.Abs(m.Got-m.Want), m.Tol.Limit(m.Want), m.Tol)
}

// Compare checks every feature of f against the record's reference with
// tolerances ts and returns the mismatches, sorted by name: a value
// beyond its tolerance (NaN included), a feature the reference lacks or
// f lacks, a feature without a tolerance.
func Compare(f *signal.Features, r *Record, ts Tolerances) ([]Mismatch, error) {
	want, err := r.Want()
	if err != nil {
		return nil, err
	}
	got := Got(f)
	var out []Mismatch
	for name, w := range want {
		g, ok := got[name]
		if !ok {
			out = append(out, Mismatch{Record: r.Name, Name: name, Missing: "in the reference but not in the features"})
			continue
		}
		tol, ok := ts.For(name)
		if !ok {
			out = append(out, Mismatch{Record: r.Name, Name: name, Missing: "no tolerance given"})
			continue
		}
		if !(math.Abs(g-w) <= tol.Limit(w)) {
			out = append(out, Mismatch{Record: r.Name, Name: name, Got: g, Want: w, Tol: tol})
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			out = append(out, Mismatch{Record: r.Name, Name: name, Missing: "not in the reference"})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
