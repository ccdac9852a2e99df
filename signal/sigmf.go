package signal

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/gotrain/gotrain/internal/atomicfile"
)

// Meta is the part of a SigMF recording's metadata that gotrain uses.
type Meta struct {
	Datatype    Format
	SampleRate  float64 // Hz; 0 when the file does not say
	Frequency   float64 // centre frequency of the first capture, Hz (0 if absent)
	Description string
	Author      string
	Label       string // label of the first annotation
	// Synth records the options of a synthesized record (the
	// "gotrain:synth" extension field); nil for other recordings.
	Synth *SynthOptions
	// Captures are the recording's capture segments, in increasing
	// SampleStart order (Frequency is the first one's); nil when the file
	// has none. WriteSigMF writes one capture at sample 0 with Frequency
	// when Captures is empty.
	Captures []Capture
	// Annotations are the recording's annotations (Label is the first
	// one's); WriteSigMF writes one over the whole recording with Label
	// when Annotations is empty and Label is not.
	Annotations []Annotation
}

// Capture is a SigMF capture segment: from SampleStart on, the samples
// were taken at Frequency (Hz, 0 when not said) from the time DateTime
// (ISO 8601 as SigMF writes it, "" when not said).
type Capture struct {
	SampleStart int64   `json:"core:sample_start"`
	Frequency   float64 `json:"core:frequency,omitempty"`
	DateTime    string  `json:"core:datetime,omitempty"`
}

// Annotation is a SigMF annotation: SampleCount samples from SampleStart
// (0: to the end), optionally between the frequency edges
// FreqLowerEdge and FreqUpperEdge (Hz; both 0 when not said), with a
// Label and a Comment.
type Annotation struct {
	SampleStart   int64   `json:"core:sample_start"`
	SampleCount   int64   `json:"core:sample_count,omitempty"`
	FreqLowerEdge float64 `json:"core:freq_lower_edge,omitempty"`
	FreqUpperEdge float64 `json:"core:freq_upper_edge,omitempty"`
	Label         string  `json:"core:label,omitempty"`
	Comment       string  `json:"core:comment,omitempty"`
}

// Recording is one record of IQ samples with its metadata.
type Recording struct {
	Meta    Meta
	Samples []complex64
}

// SigMF file name extensions.
const (
	MetaExt = ".sigmf-meta"
	DataExt = ".sigmf-data"
)

// SigMFPaths returns the metadata and data file names of the SigMF
// recording named by path, which may be either file or their common base.
func SigMFPaths(path string) (meta, data string) {
	base := strings.TrimSuffix(strings.TrimSuffix(path, MetaExt), DataExt)
	return base + MetaExt, base + DataExt
}

// IsSigMF reports whether path names a SigMF file by its extension.
func IsSigMF(path string) bool {
	return strings.HasSuffix(path, MetaExt) || strings.HasSuffix(path, DataExt)
}

// maxMetaBytes bounds the metadata file read into memory.
const maxMetaBytes = 16 << 20

// ReadSigMF reads a SigMF recording (a .sigmf-meta and .sigmf-data pair).
// Errors name the file at fault.
func ReadSigMF(path string) (*Recording, error) {
	metaPath, dataPath := SigMFPaths(path)
	mb, err := readLimited(metaPath, maxMetaBytes)
	if err != nil {
		return nil, err
	}
	m, err := ParseMeta(mb, metaPath)
	if err != nil {
		return nil, err
	}
	db, err := readLimited(dataPath, int64(MaxSamples)*int64(m.Datatype.SampleSize()))
	if err != nil {
		return nil, err
	}
	x, err := decodeData(db, m.Datatype, dataPath)
	if err != nil {
		return nil, err
	}
	return &Recording{Meta: m, Samples: x}, nil
}

// decodeData decodes a whole data file.
func decodeData(b []byte, f Format, name string) ([]complex64, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("signal: %s: no samples (empty file)", name)
	}
	x, err := Decode(nil, b, f)
	if err != nil {
		return nil, fmt.Errorf("%w in %s (truncated file?)", err, name)
	}
	return x, nil
}

// readLimited reads a whole file of at most limit bytes.
func readLimited(path string, limit int64) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("signal: %w", err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, fmt.Errorf("signal: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("signal: %s is not a regular file", path)
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("signal: %s is %d bytes, more than the %d this reader accepts", path, st.Size(), limit)
	}
	b, err := io.ReadAll(io.LimitReader(fh, limit+1))
	if err != nil {
		return nil, fmt.Errorf("signal: reading %s: %w", path, err)
	}
	return b, nil
}

// sigmfMeta is the JSON layout of a .sigmf-meta file.
type sigmfMeta struct {
	Global      map[string]json.RawMessage   `json:"global"`
	Captures    []map[string]json.RawMessage `json:"captures"`
	Annotations []map[string]json.RawMessage `json:"annotations"`
}

// ParseMeta parses SigMF metadata. name (the file name) is used in errors.
// It requires a complex datatype that [Decode] supports and one channel;
// core:sample_rate, when present, must be a positive number.
func ParseMeta(b []byte, name string) (Meta, error) {
	var raw sigmfMeta
	if err := json.Unmarshal(b, &raw); err != nil {
		return Meta{}, fmt.Errorf("signal: %s: not SigMF metadata: %w", name, err)
	}
	if raw.Global == nil {
		return Meta{}, fmt.Errorf("signal: %s: no \"global\" object", name)
	}
	var m Meta
	var dt string
	if err := field(raw.Global, "core:datatype", &dt, true); err != nil {
		return Meta{}, fmt.Errorf("signal: %s: %w", name, err)
	}
	f, err := parseDatatype(dt)
	if err != nil {
		return Meta{}, fmt.Errorf("signal: %s: %w", name, err)
	}
	m.Datatype = f
	if err := field(raw.Global, "core:sample_rate", &m.SampleRate, false); err != nil {
		return Meta{}, fmt.Errorf("signal: %s: %w", name, err)
	}
	if m.SampleRate < 0 || math.IsNaN(m.SampleRate) || math.IsInf(m.SampleRate, 0) {
		return Meta{}, fmt.Errorf("signal: %s: core:sample_rate %v is not a positive number", name, m.SampleRate)
	}
	var channels float64 = 1
	if err := field(raw.Global, "core:num_channels", &channels, false); err != nil {
		return Meta{}, fmt.Errorf("signal: %s: %w", name, err)
	}
	if channels != 1 {
		return Meta{}, fmt.Errorf("signal: %s: core:num_channels is %v; only single-channel recordings are supported", name, channels)
	}
	for _, kv := range []struct {
		key string
		dst *string
	}{{"core:description", &m.Description}, {"core:author", &m.Author}} {
		if err := field(raw.Global, kv.key, kv.dst, false); err != nil {
			return Meta{}, fmt.Errorf("signal: %s: %w", name, err)
		}
	}
	if s, ok := raw.Global["gotrain:synth"]; ok {
		var o SynthOptions
		if err := json.Unmarshal(s, &o); err != nil {
			return Meta{}, fmt.Errorf("signal: %s: gotrain:synth: %w", name, err)
		}
		m.Synth = &o
	}
	for i, c := range raw.Captures {
		var cp Capture
		for _, kv := range []struct {
			key string
			dst any
		}{{"core:sample_start", &cp.SampleStart}, {"core:frequency", &cp.Frequency}, {"core:datetime", &cp.DateTime}} {
			if err := field(c, kv.key, kv.dst, false); err != nil {
				return Meta{}, fmt.Errorf("signal: %s: captures[%d]: %w", name, i, err)
			}
		}
		switch {
		case cp.SampleStart < 0:
			return Meta{}, fmt.Errorf("signal: %s: captures[%d]: core:sample_start %d is negative", name, i, cp.SampleStart)
		case i > 0 && cp.SampleStart <= m.Captures[i-1].SampleStart:
			return Meta{}, fmt.Errorf("signal: %s: captures[%d]: core:sample_start %d does not follow the previous capture's %d", name, i, cp.SampleStart, m.Captures[i-1].SampleStart)
		case math.IsNaN(cp.Frequency) || math.IsInf(cp.Frequency, 0):
			return Meta{}, fmt.Errorf("signal: %s: captures[%d]: core:frequency %v is not a number", name, i, cp.Frequency)
		}
		m.Captures = append(m.Captures, cp)
	}
	if len(m.Captures) > 0 {
		m.Frequency = m.Captures[0].Frequency
	}
	for i, a := range raw.Annotations {
		var an Annotation
		for _, kv := range []struct {
			key string
			dst any
		}{{"core:sample_start", &an.SampleStart}, {"core:sample_count", &an.SampleCount},
			{"core:freq_lower_edge", &an.FreqLowerEdge}, {"core:freq_upper_edge", &an.FreqUpperEdge},
			{"core:label", &an.Label}, {"core:comment", &an.Comment}} {
			if err := field(a, kv.key, kv.dst, false); err != nil {
				return Meta{}, fmt.Errorf("signal: %s: annotations[%d]: %w", name, i, err)
			}
		}
		switch {
		case an.SampleStart < 0 || an.SampleCount < 0:
			return Meta{}, fmt.Errorf("signal: %s: annotations[%d]: core:sample_start %d and core:sample_count %d must not be negative", name, i, an.SampleStart, an.SampleCount)
		case math.IsNaN(an.FreqLowerEdge) || math.IsNaN(an.FreqUpperEdge) || math.IsInf(an.FreqLowerEdge, 0) || math.IsInf(an.FreqUpperEdge, 0) || an.FreqLowerEdge > an.FreqUpperEdge:
			return Meta{}, fmt.Errorf("signal: %s: annotations[%d]: frequency edges %v..%v are not an interval", name, i, an.FreqLowerEdge, an.FreqUpperEdge)
		}
		m.Annotations = append(m.Annotations, an)
	}
	if len(m.Annotations) > 0 {
		m.Label = m.Annotations[0].Label
	}
	return m, nil
}

// field decodes obj[key] into dst; a missing key is an error only when
// required.
func field(obj map[string]json.RawMessage, key string, dst any, required bool) error {
	v, ok := obj[key]
	if !ok || string(v) == "null" {
		if required {
			return fmt.Errorf("missing %s", key)
		}
		return nil
	}
	if err := json.Unmarshal(v, dst); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

// parseDatatype maps a SigMF datatype to a Format, with clear errors for
// the valid datatypes gotrain does not read.
func parseDatatype(dt string) (Format, error) {
	for _, f := range Formats {
		if dt == string(f) {
			return f, nil
		}
	}
	switch {
	case dt == "ci8_le" || dt == "cu8_le":
		return Format(strings.TrimSuffix(dt, "_le")), nil
	case strings.HasPrefix(dt, "r"):
		return "", fmt.Errorf("core:datatype %q is real-valued; gotrain reads complex IQ only", dt)
	case strings.HasPrefix(dt, "c"):
		return "", fmt.Errorf("core:datatype %q is not supported (want cf32_le, cf32_be, ci16_le, ci16_be, ci8 or cu8)", dt)
	}
	return "", fmt.Errorf("core:datatype %q is not a SigMF datatype", dt)
}

// WriteSigMF writes rec as a SigMF pair named by path (either file or
// their base), as one commit (internal/atomicfile's Group): both files are
// written to temporary names first, then renamed, the .sigmf-data first
// and the .sigmf-meta last, so a reader never sees a half-written file and
// a reader that goes by the meta file never sees it beside another
// record's data. On failure neither file changes. A FIFO or character
// device named by either path is written through, not replaced; a
// directory or other special file is refused.
func WriteSigMF(path string, rec *Recording) error {
	metaPath, dataPath := SigMFPaths(path)
	mb, data, err := encodeSigMF(rec)
	if err != nil {
		return fmt.Errorf("signal: %s: %w", metaPath, err)
	}
	// The pair is one commit: both files are staged, then the data file
	// is renamed first and the meta file, which readers look for, last.
	var g atomicfile.Group
	defer g.Abort()
	if err := g.Stage(dataPath, data); err != nil {
		return fmt.Errorf("signal: %w", err)
	}
	if err := g.Stage(metaPath, mb); err != nil {
		return fmt.Errorf("signal: %w", err)
	}
	if err := g.Commit(); err != nil {
		return fmt.Errorf("signal: %w", err)
	}
	return nil
}

// encodeSigMF returns the .sigmf-meta and .sigmf-data bytes of rec.
func encodeSigMF(rec *Recording) (meta, data []byte, err error) {
	if rec == nil || len(rec.Samples) == 0 {
		return nil, nil, errors.New("no samples to write")
	}
	m := rec.Meta
	if m.Datatype == "" {
		m.Datatype = CF32
	}
	if m.Datatype.SampleSize() == 0 {
		return nil, nil, fmt.Errorf("unknown sample format %q", m.Datatype)
	}
	if data, err = Encode(nil, rec.Samples, m.Datatype); err != nil {
		return nil, nil, err
	}
	if meta, err = metaJSON(m, len(rec.Samples)); err != nil {
		return nil, nil, err
	}
	return meta, data, nil
}

// metaDoc is the SigMF metadata document of m (Datatype set) for a
// recording of n samples.
func metaDoc(m Meta, n int) map[string]any {
	global := map[string]any{
		"core:datatype": string(m.Datatype),
		"core:version":  "1.0.0",
	}
	if m.SampleRate > 0 {
		global["core:sample_rate"] = m.SampleRate
	}
	if m.Description != "" {
		global["core:description"] = m.Description
	}
	if m.Author != "" {
		global["core:author"] = m.Author
	}
	if m.Synth != nil {
		global["gotrain:synth"] = m.Synth
		global["core:extensions"] = []map[string]any{{"name": "gotrain", "version": "1.0.0", "optional": true}}
	}
	captures := m.Captures
	if len(captures) == 0 {
		captures = []Capture{{Frequency: m.Frequency}}
	}
	annotations := m.Annotations
	if len(annotations) == 0 && m.Label != "" {
		annotations = []Annotation{{SampleCount: int64(n), Label: m.Label}}
	}
	if annotations == nil {
		annotations = []Annotation{}
	}
	return map[string]any{"global": global, "captures": captures, "annotations": annotations}
}

// ReadRaw reads a headerless file of samples in format f.
func ReadRaw(path string, f Format) ([]complex64, error) {
	if f.SampleSize() == 0 {
		return nil, fmt.Errorf("signal: %s: unknown sample format %q", path, f)
	}
	b, err := readLimited(path, int64(MaxSamples)*int64(f.SampleSize()))
	if err != nil {
		return nil, err
	}
	return decodeData(b, f, path)
}

// WriteRaw writes x to path as headerless samples in format f, atomically
// (a FIFO or character device is written through; see internal/atomicfile).
func WriteRaw(path string, x []complex64, f Format) error {
	b, err := Encode(nil, x, f)
	if err != nil {
		return fmt.Errorf("signal: %s: %w", path, err)
	}
	if err := atomicfile.WriteFile(path, b); err != nil {
		return fmt.Errorf("signal: %w", err)
	}
	return nil
}

// FormatFromExt guesses a raw file's format from its extension: .cf32,
// .fc32, .cfile → cf32_le; .ci16, .cs16 → ci16_le; .ci8, .cs8 → ci8;
// .cu8 → cu8. It returns "" for other extensions.
func FormatFromExt(path string) Format {
	ext := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	if f, err := ParseFormat(ext); err == nil && ext != "" {
		return f
	}
	return ""
}

// withRate returns rec with its sample rate set to rate when rate is
// positive; a recording left without a rate is an error naming what.
func withRate(rec *Recording, rate float64, what string) (*Recording, error) {
	if rate > 0 {
		rec.Meta.SampleRate = rate
	}
	if rec.Meta.SampleRate == 0 {
		return nil, fmt.Errorf("signal: %s has no core:sample_rate; give the sample rate", what)
	}
	return rec, nil
}

// Load reads a recording from path. format is "sigmf", a sample format
// (see [ParseFormat]) or "" to decide by extension (SigMF for .sigmf-meta
// and .sigmf-data, or for a path without a known extension whose
// path.sigmf-meta exists, as `signal synth --out path` writes; else
// [FormatFromExt]; a SigMF archive, .sigmf, of one recording
// ([ReadArchive])). rate, when positive, sets or overrides the sample
// rate; raw files need it.
func Load(path, format string, rate float64) (*Recording, error) {
	if rate < 0 || math.IsNaN(rate) || math.IsInf(rate, 0) {
		return nil, fmt.Errorf("signal: sample rate %v must be positive", rate)
	}
	if (format == "" || strings.EqualFold(format, "sigmf")) && IsArchive(path) {
		recs, err := ReadArchive(path)
		if err != nil {
			return nil, err
		}
		if len(recs) != 1 {
			names := make([]string, len(recs))
			for i, r := range recs {
				names[i] = r.Name
			}
			return nil, fmt.Errorf("signal: %s holds %d recordings (%s); this command reads one", path, len(recs), strings.Join(names, ", "))
		}
		return withRate(recs[0].Recording, rate, path+": recording "+recs[0].Name)
	}
	if format == "" && !IsSigMF(path) && FormatFromExt(path) == "" {
		if _, err := os.Stat(path + MetaExt); err == nil {
			path += MetaExt
		} else if _, err := os.Stat(path); err != nil {
			// Say what is wrong (no such file) before guessing formats.
			return nil, fmt.Errorf("signal: %w (nor is there a %s)", err, path+MetaExt)
		}
	}
	if strings.EqualFold(format, "sigmf") || format == "" && IsSigMF(path) {
		rec, err := ReadSigMF(path)
		if err != nil {
			return nil, err
		}
		meta, _ := SigMFPaths(path)
		return withRate(rec, rate, meta)
	}
	var f Format
	if format == "" {
		if f = FormatFromExt(path); f == "" {
			return nil, fmt.Errorf("signal: cannot tell the sample format of %s from its extension; give the format (sigmf, cf32, ci16, ci8 or cu8)", path)
		}
	} else {
		var err error
		if f, err = ParseFormat(format); err != nil {
			return nil, err
		}
	}
	if rate == 0 {
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("signal: %w", err)
		}
		return nil, fmt.Errorf("signal: %s is a raw %s file with no sample rate; give the sample rate", path, f)
	}
	x, err := ReadRaw(path, f)
	if err != nil {
		return nil, err
	}
	return &Recording{Meta: Meta{Datatype: f, SampleRate: rate}, Samples: x}, nil
}
