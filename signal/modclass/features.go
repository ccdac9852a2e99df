package modclass

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// A derived feature is a function of extracted ones (so it needs no change
// to the extractor and is computed from features.csv at train and predict
// time, by name).
type derived struct {
	name  string
	needs []string
	fn    func(v []float64) float64 // v holds the needed columns in order
	doc   string
}

// minSignalFraction bounds the estimated signal share of the power from
// below, so that the noise-corrected cumulants stay finite at low SNR.
const minSignalFraction = 0.05

// sigFrac is the signal share of the power, ρ/(1+ρ) with ρ = 10^(snr_db/10)
// the PSD-based full-band SNR estimate, at least minSignalFraction.
func sigFrac(snrDB float64) float64 {
	r := math.Pow(10, snrDB/10)
	return max(r/(1+r), minSignalFraction)
}

var derivedFeatures = []derived{
	{"amp_cv", []string{"inst_amp_std", "inst_amp_mean"}, func(v []float64) float64 { return v[0] / max(v[1], 1e-300) },
		"inst_amp_std / inst_amp_mean (coefficient of variation of the envelope)"},
	{"c20_clean", []string{"c20", "snr_db"}, func(v []float64) float64 { return v[0] / sigFrac(v[1]) },
		"c20 / s, s = max(ρ/(1+ρ), 0.05), ρ = 10^(snr_db/10): |C20| normalised by the estimated signal power instead of the total"},
	{"c40_clean", []string{"c40", "snr_db"}, func(v []float64) float64 { return v[0] / (sigFrac(v[1]) * sigFrac(v[1])) },
		"c40 / s² (white Gaussian noise adds nothing to C40, only to C21)"},
	{"c41_clean", []string{"c41", "snr_db"}, func(v []float64) float64 { return v[0] / (sigFrac(v[1]) * sigFrac(v[1])) },
		"c41 / s²"},
	{"c42_clean", []string{"c42", "snr_db"}, func(v []float64) float64 { return v[0] / (sigFrac(v[1]) * sigFrac(v[1])) },
		"c42 / s²"},
	{"c40_over_c42", []string{"c40", "c42"}, func(v []float64) float64 { return v[0] / max(math.Abs(v[1]), 1e-3) },
		"c40 / max(|c42|, 1e-3) (independent of the noise power)"},
}

// DerivedNames returns the names of the derived features.
func DerivedNames() []string {
	names := make([]string, len(derivedFeatures))
	for i, d := range derivedFeatures {
		names[i] = d.name
	}
	return names
}

// DerivedDoc returns the definition of each derived feature, by name.
func DerivedDoc() map[string]string {
	m := map[string]string{}
	for _, d := range derivedFeatures {
		m[d.name] = d.doc
	}
	return m
}

// Excluded are the extracted features the default set leaves out: the
// records have unit power, so the RSSI and C21 carry no class information
// (only the noise's share of them), and the noise floor repeats the SNR.
var Excluded = []string{"rssi_dbfs", "rssi_dbm", "c21", "noise_psd"}

// FeatureSet resolves a feature set name against the columns of a data
// set: "default" (the extracted features less [Excluded], plus the derived
// ones), "all" (every column plus the derived ones), "base" (every column),
// "cumulants" (the cumulant and instantaneous statistics only, with the
// derived ones) or a comma-separated list of column and derived names.
func FeatureSet(spec string, columns []string) ([]string, error) {
	switch strings.ToLower(strings.TrimSpace(spec)) {
	case "", "default":
		var out []string
		for _, c := range columns {
			if !slices.Contains(Excluded, c) {
				out = append(out, c)
			}
		}
		return append(out, DerivedNames()...), nil
	case "all":
		return append(slices.Clone(columns), DerivedNames()...), nil
	case "base":
		return slices.Clone(columns), nil
	case "cumulants":
		var out []string
		for _, c := range columns {
			if strings.HasPrefix(c, "c") && len(c) == 3 || strings.HasPrefix(c, "inst_") {
				out = append(out, c)
			}
		}
		return append(out, DerivedNames()...), nil
	}
	var out []string
	for _, n := range strings.Split(spec, ",") {
		n = strings.TrimSpace(n)
		if !slices.Contains(columns, n) && !slices.Contains(DerivedNames(), n) {
			return nil, fmt.Errorf("modclass: unknown feature %q (the data has %s; derived: %s)", n, strings.Join(columns, ", "), strings.Join(DerivedNames(), ", "))
		}
		if slices.Contains(out, n) {
			return nil, fmt.Errorf("modclass: feature %q is listed twice", n)
		}
		out = append(out, n)
	}
	return out, nil
}

// Matrix returns the rows of d as a row-major matrix of the named
// features: columns of d, or derived features computed from them.
func (d *Data) Matrix(names []string) ([]float64, error) {
	p := len(d.Columns)
	col := map[string]int{}
	for j, c := range d.Columns {
		col[c] = j
	}
	type source struct {
		j   int // column, or −1 for a derived feature
		der *derived
		idx []int
	}
	src := make([]source, len(names))
	for k, n := range names {
		if j, ok := col[n]; ok {
			src[k] = source{j: j}
			continue
		}
		i := slices.IndexFunc(derivedFeatures, func(f derived) bool { return f.name == n })
		if i < 0 {
			return nil, fmt.Errorf("modclass: %s has no feature %q", d.Name, n)
		}
		s := source{j: -1, der: &derivedFeatures[i]}
		for _, need := range s.der.needs {
			j, ok := col[need]
			if !ok {
				return nil, fmt.Errorf("modclass: %s: derived feature %q needs column %q", d.Name, n, need)
			}
			s.idx = append(s.idx, j)
		}
		src[k] = s
	}
	q := len(names)
	x := make([]float64, d.Rows*q)
	var v []float64
	for i := 0; i < d.Rows; i++ {
		row := d.X[i*p : (i+1)*p]
		for k, s := range src {
			if s.j >= 0 {
				x[i*q+k] = row[s.j]
				continue
			}
			v = v[:0]
			for _, j := range s.idx {
				v = append(v, row[j])
			}
			x[i*q+k] = s.der.fn(v)
		}
	}
	return x, nil
}
