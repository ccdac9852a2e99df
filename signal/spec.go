package signal

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/gotrain/gotrain/internal/atomicfile"
)

// SynthSpec describes a record the way `gotrain signal synth` and `gotrain
// signal bench` take it on their command lines: [SynthOptions] with the
// modulation, the record length in seconds and the multipath taps given as
// text. [SynthSpec.SynthOptions] turns it into the options; its errors name
// the SynthSpec field at fault (SynthSpec.Seconds), and [Synthesize]'s
// validation names the SynthOptions fields.
type SynthSpec struct {
	// Options are the synthesis options. SynthOptions sets their Mod, their
	// Multipath (when the Multipath text is set) and their Samples (when 0)
	// from the fields below.
	Options SynthOptions
	// Mod is the modulation's name ([ParseModulation]).
	Mod string
	// Seconds is the record length in seconds at Options.SampleRate
	// ([SamplesFor]); it is used only when Options.Samples is 0.
	Seconds float64
	// Multipath is the tapped delay line, one complex tap per sample,
	// comma-separated ([ParseTaps]); "" keeps Options.Multipath.
	Multipath string
}

// SynthOptions returns the synthesis options s describes. It does not
// validate them beyond parsing; [Synthesize] does.
func (s SynthSpec) SynthOptions() (SynthOptions, error) {
	o := s.Options
	var err error
	if o.Mod, err = ParseModulation(s.Mod); err != nil {
		return o, err
	}
	if o.Samples == 0 {
		if o.Samples, err = SamplesFor(s.Seconds, o.SampleRate); err != nil {
			return o, fmt.Errorf("SynthSpec.Seconds: %w", err)
		}
	}
	if s.Multipath != "" {
		if o.Multipath, err = ParseTaps(s.Multipath); err != nil {
			return o, fmt.Errorf("SynthSpec.Multipath: %w", err)
		}
	}
	return o, nil
}

// SynthFileSpec describes one synthesized record file the way `gotrain
// signal synth` takes it: the record ([SynthSpec]), the file and its sample
// formats as text. [SynthFileSpec.Synthesize] writes it.
type SynthFileSpec struct {
	SynthSpec
	// Out is the output file: a SigMF pair (Out.sigmf-meta and
	// Out.sigmf-data) or a raw file, as [Save] decides with Format.
	Out string
	// Format is "sigmf" or a raw format; "" decides by Out's extension
	// ([Save]).
	Format string
	// Datatype is the sample format of a SigMF pair ([ParseFormat]), such
	// as "cf32_le" (the command's default). It is parsed whatever the
	// output, so it must be set for a raw file too.
	Datatype string
}

// Synthesize synthesizes the record s describes and writes it with
// [SynthesizeFile]. Errors in the text fields name them
// (SynthFileSpec.Datatype, SynthSpec.Seconds).
func (s SynthFileSpec) Synthesize() (*SynthReport, error) {
	o, err := s.SynthOptions()
	if err != nil {
		return nil, err
	}
	dt, err := ParseFormat(s.Datatype)
	if err != nil {
		return nil, fmt.Errorf("SynthFileSpec.Datatype: %w", err)
	}
	return SynthesizeFile(s.Out, s.Format, dt, o)
}

// BenchSpec describes a benchmark the way `gotrain signal bench` takes it
// on its command line: [BenchOptions] with the record given as a
// [SynthSpec]. [BenchSpec.BenchOptions] turns it into the options.
type BenchSpec struct {
	// Synth is the record synthesized and extracted.
	Synth SynthSpec
	// Options are the benchmark's options; BenchOptions sets their Synth.
	Options BenchOptions
}

// BenchOptions returns the benchmark options s describes: s.Options with
// the record of s.Synth ([SynthSpec.SynthOptions], whose errors it
// returns). [Benchmark] validates the result.
func (s BenchSpec) BenchOptions() (BenchOptions, error) {
	o := s.Options
	var err error
	if o.Synth, err = s.Synth.SynthOptions(); err != nil {
		return o, err
	}
	return o, nil
}

// FeaturesSpec describes what `gotrain signal features` does with one
// record file: read it ([FeaturesSpec.Load]), extract its features with an
// extractor for the record's configuration and write the optional files
// ([FeaturesSpec.Extract]), which reports.
type FeaturesSpec struct {
	// In is the record file, Format its format ("" decides by the
	// extension) and Rate its sample rate in Hz (required for raw files;
	// it overrides SigMF's), as [Load] takes them.
	In, Format string
	Rate       float64
	// Impedance is the extractor's Config.Impedance, in ohms.
	Impedance float64
	// Arrays includes the array features in the report's JSON
	// ([NewFeaturesJSON]).
	Arrays bool
	// Spectrogram and CSV, when set, receive the spectrogram
	// ([WriteSpectrogram]) and the scalar features ([WriteFeaturesCSV]).
	Spectrogram, CSV string
	// Annotations also extracts the features of each annotated segment of
	// a SigMF recording (FeaturesReport.Segments); CSV then holds one row
	// per segment ([WriteSegmentsCSV]) instead of the record's.
	Annotations bool
}

// Load reads the record s.In names ([Load]) and returns it with the
// extractor configuration for it (its sample rate, s.Impedance).
func (s FeaturesSpec) Load() (*Recording, Config, error) {
	rec, err := Load(s.In, s.Format, s.Rate)
	if err != nil {
		return nil, Config{}, err
	}
	return rec, Config{SampleRate: rec.Meta.SampleRate, Impedance: s.Impedance}, nil
}

// Extract extracts the features of rec (as [FeaturesSpec.Load] returns
// it) with e, timed by [ExtractTimed], writes the Spectrogram and CSV
// files s names and returns the report of `gotrain signal features`; its
// Device is the caller's to fill in. Errors start with s.In.
func (s FeaturesSpec) Extract(e FeatureExtractor, rec *Recording) (*FeaturesReport, error) {
	var f Features
	ms, compileMS, err := ExtractTimed(e, rec.Samples, &f)
	var segs []SegmentFeatures
	if err == nil && s.Annotations {
		segs, err = s.segments(e, rec)
	}
	if err == nil && s.Spectrogram != "" {
		err = WriteSpectrogram(s.Spectrogram, &f)
	}
	if err == nil && s.CSV != "" {
		if s.Annotations {
			err = WriteSegmentsCSV(s.CSV, segs)
		} else {
			err = WriteFeaturesCSV(s.CSV, &f)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.In, err)
	}
	return &FeaturesReport{File: s.In, Format: string(rec.Meta.Datatype), ExtractMS: ms, CompileMS: compileMS, Label: rec.Meta.Label,
		FeaturesJSON: NewFeaturesJSON(&f, s.Arrays), Spectrogram: s.Spectrogram, Segments: segs}, nil
}

// SegmentFeatures are the features of one annotated segment of a
// recording (FeaturesSpec.Annotations): samples SampleStart to
// SampleStart+SampleCount, with the annotation's label.
type SegmentFeatures struct {
	SampleStart int64  `json:"sample_start"`
	SampleCount int64  `json:"sample_count"`
	Label       string `json:"label,omitempty"`
	FeaturesJSON
	features Features
}

// segments extracts the features of each annotation of rec with e. An
// annotation's SampleCount of 0 runs to the end of the recording. An
// annotation that reaches past the samples, or a recording without
// annotations, is an error naming it.
func (s FeaturesSpec) segments(e FeatureExtractor, rec *Recording) ([]SegmentFeatures, error) {
	if len(rec.Meta.Annotations) == 0 {
		return nil, errors.New("the recording has no annotations (SigMF core annotations)")
	}
	n := int64(len(rec.Samples))
	out := make([]SegmentFeatures, 0, len(rec.Meta.Annotations))
	for i, a := range rec.Meta.Annotations {
		count := a.SampleCount
		if count == 0 {
			count = n - a.SampleStart
		}
		if a.SampleStart >= n || count > n-a.SampleStart {
			return nil, fmt.Errorf("annotation %d (samples %d+%d) reaches past the recording's %d samples", i, a.SampleStart, count, n)
		}
		sf := SegmentFeatures{SampleStart: a.SampleStart, SampleCount: count, Label: a.Label}
		if _, _, err := ExtractTimed(e, rec.Samples[a.SampleStart:a.SampleStart+count], &sf.features); err != nil {
			return nil, fmt.Errorf("annotation %d (samples %d+%d): %w", i, a.SampleStart, count, err)
		}
		sf.FeaturesJSON = NewFeaturesJSON(&sf.features, s.Arrays)
		out = append(out, sf)
	}
	return out, nil
}

// WriteSegmentsCSV writes the scalar features of segs as CSV,
// atomically: one row per segment, its sample_start, sample_count and
// label first, then FeatureNames' columns (an infinite or missing value
// as NaN).
func WriteSegmentsCSV(path string, segs []SegmentFeatures) error {
	if len(segs) == 0 {
		return fmt.Errorf("signal: %s: no segment to write", path)
	}
	var b bytes.Buffer
	cw := csv.NewWriter(&b)
	header := append([]string{"sample_start", "sample_count", "label"}, FeatureNames(len(segs[0].features.MFCC))...)
	if err := cw.Write(header); err != nil {
		return fmt.Errorf("signal: %s: %w", path, err)
	}
	for _, sg := range segs {
		rec := []string{strconv.FormatInt(sg.SampleStart, 10), strconv.FormatInt(sg.SampleCount, 10), sg.Label}
		for _, v := range sg.features.Vector(nil) {
			if math.IsInf(v, 0) || math.IsNaN(v) {
				rec = append(rec, "NaN") // a missing cell, as WriteFeaturesCSV writes it
				continue
			}
			rec = append(rec, strconv.FormatFloat(v, 'g', -1, 64))
		}
		if err := cw.Write(rec); err != nil {
			return fmt.Errorf("signal: %s: %w", path, err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("signal: %s: %w", path, err)
	}
	if err := atomicfile.WriteFile(path, b.Bytes()); err != nil {
		return fmt.Errorf("signal: %w", err)
	}
	return nil
}
