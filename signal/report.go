package signal

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// SynthReport is what [SynthesizeFile] did; its JSON is the report of
// `gotrain signal synth --json` (keys in alphabetical order, as the command
// has always printed them), and WriteText writes its text.
type SynthReport struct {
	EsN0       bool       `json:"esn0"`
	Files      []string   `json:"files"`  // the files written
	Format     string     `json:"format"` // their sample format
	Mod        Modulation `json:"mod"`
	SampleRate float64    `json:"sample_rate"`
	Samples    int        `json:"samples"`
	Seed       uint64     `json:"seed"`
	SNRdB      float64    `json:"snr_db"`
	SynthMS    float64    `json:"synth_ms"` // the synthesis time
	// Synth are the options of the record.
	Synth SynthOptions `json:"-"`
}

// SynthesizeFile synthesizes the record o describes and writes it to path
// with [Save] (format "" decides by extension), as `gotrain signal synth`
// does: a SigMF pair has the sample format datatype (default cf32_le), the
// modulation as its label, o under "gotrain:synth" and a description of
// the record.
func SynthesizeFile(path, format string, datatype Format, o SynthOptions) (*SynthReport, error) {
	t0 := time.Now()
	x, err := Synthesize(o)
	if err != nil {
		return nil, err
	}
	r := &SynthReport{EsN0: o.EsN0, Mod: o.Mod, SampleRate: o.SampleRate, Samples: o.Samples, Seed: o.Seed, SNRdB: o.SNRdB,
		SynthMS: ms(time.Since(t0)), Synth: o}
	files, f, err := Save(path, format, &Recording{Samples: x, Meta: Meta{
		Datatype: datatype, SampleRate: o.SampleRate, Label: string(o.Mod), Synth: &o,
		Description: fmt.Sprintf("gotrain signal synth: %s, %d samples at %g Hz, SNR %g dB, seed %d", o.Mod, o.Samples, o.SampleRate, o.SNRdB, o.Seed),
	}})
	if err != nil {
		return nil, err
	}
	r.Files, r.Format = files, string(f)
	return r, nil
}

// WriteText writes r as `gotrain signal synth` prints it: one line naming
// the files and the record.
func (r *SynthReport) WriteText(w io.Writer) error {
	_, err := fmt.Fprintf(w, "wrote %s: %s, %d samples at %g Hz, %s, seed %d (%.1f ms)\n",
		strings.Join(r.Files, " + "), r.Mod, r.Samples, r.SampleRate, r.Synth.SNRString(), r.Seed, r.SynthMS)
	return err
}

// FeaturesReport is the report of `gotrain signal features`: one record's
// features ([FeaturesJSON]) with the file, the device and the times. Its
// JSON is that of --json, and WriteText writes its text.
type FeaturesReport struct {
	File      string  `json:"file"`
	Format    string  `json:"format"` // the file's sample format
	Device    string  `json:"device"` // the device that extracted
	ExtractMS float64 `json:"extract_ms"`
	CompileMS float64 `json:"compile_ms,omitempty"` // graph path: building and compiling the graph, before extract_ms
	Label     string  `json:"label,omitempty"`      // the recording's label
	FeaturesJSON
	Spectrogram string `json:"spectrogram_file,omitempty"` // the spectrogram file written
	// Segments are the features of each annotated segment, with
	// FeaturesSpec.Annotations.
	Segments []SegmentFeatures `json:"segments,omitempty"`
}

// WriteText writes r as `gotrain signal features` prints it: a line on the
// record and the extraction, then [WriteFeaturesTable].
func (r *FeaturesReport) WriteText(w io.Writer) error {
	f := r.Features
	fmt.Fprintf(w, "%s: %d samples at %g Hz (%s), features in %.1f ms on %s\n", r.File, f.Samples, f.SampleRate, r.Format, r.ExtractMS, r.Device)
	if err := WriteFeaturesTable(w, f); err != nil {
		return err
	}
	for i, sg := range r.Segments {
		fmt.Fprintf(w, "\nannotation %d: samples %d+%d, label %q\n", i, sg.SampleStart, sg.SampleCount, sg.Label)
		if err := WriteFeaturesTable(w, sg.Features); err != nil {
			return err
		}
	}
	return nil
}
