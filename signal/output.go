package signal

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/internal/atomicfile"
)

// FeaturesJSON is the JSON form of [Features] that `gotrain signal
// features --json` prints: every JSON field of Features, the complex
// cumulants as magnitudes (c20, c40, c41) and as [re, im] pairs, the
// spectrogram's shape and, when made with arrays, the PSD, the
// autocorrelation as [re, im] pairs and the per-frame MFCCs (one row per
// frame).
type FeaturesJSON struct {
	C20        float64    `json:"c20"`
	C40        float64    `json:"c40"`
	C41        float64    `json:"c41"`
	C20Complex [2]float64 `json:"c20_complex"`
	C40Complex [2]float64 `json:"c40_complex"`
	C41Complex [2]float64 `json:"c41_complex"`
	*Features
	PSD        []float64    `json:"psd,omitempty"`
	Autocorr   [][2]float64 `json:"autocorr,omitempty"`
	MFCCFrames [][]float64  `json:"mfcc_frames,omitempty"`
	SpecShape  [2]int       `json:"spectrogram_shape"` // bins, frames
}

// NewFeaturesJSON returns the JSON form of f, with its arrays when arrays
// is set. It shares f's slices.
func NewFeaturesJSON(f *Features, arrays bool) FeaturesJSON {
	pair := func(c complex128) [2]float64 { return [2]float64{real(c), imag(c)} }
	j := FeaturesJSON{C20: abs(f.C20), C40: abs(f.C40), C41: abs(f.C41),
		C20Complex: pair(f.C20), C40Complex: pair(f.C40), C41Complex: pair(f.C41),
		Features: f, SpecShape: [2]int{f.SpecBins, f.SpecFrames}}
	if arrays {
		j.PSD = f.PSD
		for _, v := range f.Autocorr {
			j.Autocorr = append(j.Autocorr, pair(v))
		}
		if nc := len(f.MFCC); nc > 0 {
			for i := 0; i+nc <= len(f.MFCCFrames); i += nc {
				j.MFCCFrames = append(j.MFCCFrames, f.MFCCFrames[i:i+nc])
			}
		}
	}
	return j
}

// WriteFeaturesTable writes f's scalar features as an aligned table, one
// "name value" line each (%.6g) in the order of [FeatureNames], the MFCC
// means on one last line ("mfcc (means)", three decimals).
func WriteFeaturesTable(w io.Writer, f *Features) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	vals := f.Vector(nil)
	for i, n := range FeatureNames(0) {
		fmt.Fprintf(tw, "%s\t%.6g\n", n, vals[i])
	}
	parts := make([]string, len(f.MFCC))
	for i, v := range f.MFCC {
		parts[i] = strconv.FormatFloat(v, 'f', 3, 64)
	}
	fmt.Fprintf(tw, "mfcc (means)\t%s\n", strings.Join(parts, " "))
	return tw.Flush()
}

// WriteSpectrogram writes f's dB spectrogram to path as raw little-endian
// float32, SpecBins × SpecFrames, row-major (atomically: a temporary file
// renamed).
func WriteSpectrogram(path string, f *Features) error {
	b := make([]byte, 0, 4*len(f.Spectrogram))
	for _, x := range f.Spectrogram {
		u := math.Float32bits(x)
		b = append(b, byte(u), byte(u>>8), byte(u>>16), byte(u>>24))
	}
	if err := atomicfile.WriteFile(path, b); err != nil {
		return fmt.Errorf("signal: %w", err)
	}
	return nil
}

// WriteFeaturesCSV writes f's scalar features to path as a CSV file with
// the header [FeatureNames] and one row ([Features.Vector]), written by
// data.WriteCSV (every number in the shortest form that reads back
// exactly), atomically. A value that is not finite (the infinite SNR of a
// noise-free record, a NaN centroid) is written as "NaN", a missing cell,
// as the JSON writes null.
func WriteFeaturesCSV(path string, f *Features) error {
	var b bytes.Buffer
	row := f.Vector(nil)
	for i, v := range row {
		if math.IsInf(v, 0) {
			row[i] = math.NaN() // a missing cell, as the JSON's null (an infinite SNR of a noise-free record)
		}
	}
	if err := data.WriteCSV(&b, FeatureNames(len(f.MFCC)), [][]float64{row}); err != nil {
		return fmt.Errorf("signal: %s: %w", path, err)
	}
	if err := atomicfile.WriteFile(path, b.Bytes()); err != nil {
		return fmt.Errorf("signal: %w", err)
	}
	return nil
}

// Compiler is implemented by extractors that compile code for a batch
// shape before they extract (signal/sigraph's *Extractor).
type Compiler interface {
	Compile(records, samples int) error
}

// ExtractTimed extracts the features of x into f with e and returns the
// milliseconds the extraction took. When e is a [Compiler] and x is long
// enough for the features, it first compiles for one record of x's length
// and returns that time as compileMS (0 otherwise).
func ExtractTimed(e FeatureExtractor, x []complex64, f *Features) (extractMS, compileMS float64, err error) {
	if c, ok := e.(Compiler); ok && len(x) >= minSamples(e) {
		t0 := time.Now()
		if err := c.Compile(1, len(x)); err != nil {
			return 0, 0, err
		}
		compileMS = ms(time.Since(t0))
	}
	t0 := time.Now()
	if err := e.Extract(x, f); err != nil {
		return 0, compileMS, err
	}
	return ms(time.Since(t0)), compileMS, nil
}

// minSamples is the shortest record e extracts: its configuration's, when
// it tells it, else the default configuration's. (Shorter records get
// Extract's error.)
func minSamples(e FeatureExtractor) int {
	if c, ok := e.(interface{ Config() Config }); ok {
		return c.Config().MinSamples()
	}
	return Config{SampleRate: 1}.MinSamples()
}

// Save writes rec to path as [Load] reads it back, and returns the files
// written and the sample format. format is "sigmf", a raw sample format
// ([ParseFormat]) or "" to decide by extension: raw when path has a raw
// extension ([FormatFromExt]), a SigMF archive for a .sigmf path
// ([WriteArchive], the recording named after the archive), else a SigMF
// pair. A SigMF pair ([WriteSigMF]) uses rec.Meta.Datatype (default
// cf32_le); a raw file ([WriteRaw]) keeps only the samples. Files are
// written atomically.
func Save(path, format string, rec *Recording) (files []string, f Format, err error) {
	if rec == nil {
		return nil, "", errors.New("signal: no recording to write")
	}
	if format == "" && !IsSigMF(path) {
		format = string(FormatFromExt(path))
	}
	if format == "" || strings.EqualFold(format, "sigmf") {
		r := *rec
		if r.Meta.Datatype == "" {
			r.Meta.Datatype = CF32
		}
		if IsArchive(path) {
			name := strings.TrimSuffix(pathBase(path), ArchiveExt)
			if err := WriteArchive(path, []ArchiveRecording{{Name: name, Recording: &r}}); err != nil {
				return nil, "", err
			}
			return []string{path}, r.Meta.Datatype, nil
		}
		if err := WriteSigMF(path, &r); err != nil {
			return nil, "", err
		}
		m, d := SigMFPaths(path)
		return []string{m, d}, r.Meta.Datatype, nil
	}
	if f, err = ParseFormat(format); err != nil {
		return nil, "", err
	}
	if err := WriteRaw(path, rec.Samples, f); err != nil {
		return nil, "", err
	}
	return []string{path}, f, nil
}
