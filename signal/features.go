package signal

import (
	"fmt"
	"math"
)

// Config sets what an [Extractor] computes. Zero fields take the defaults
// shown, which are the peer benchmark's (bench_signal.py) parameters.
type Config struct {
	SampleRate float64 // Hz; required
	Impedance  float64 // ohms for RSSI in dBm (default 50)

	WelchSegment       int     // Welch segment length, a power of two ≥ 16 (default 1024; Hann, 50% overlap)
	SpectrogramSegment int     // spectrogram segment, a power of two ≥ 8 (default 256)
	SpectrogramOverlap int     // spectrogram overlap (default segment/8)
	MFCCFrame          int     // MFCC frame, a power of two ≥ 16 (default 2048)
	MFCCHop            int     // MFCC hop (default 512)
	MelBands           int     // mel bands (default 40)
	MFCCs              int     // cepstral coefficients kept (default 13, at most MelBands)
	AutocorrLags       int     // autocorrelation lags 0..AutocorrLags (default 1000)
	SNRThresholdDB     float64 // occupied-bin threshold above the noise floor (default 3)
	RolloffFraction    float64 // spectral roll-off fraction (default 0.85)
	OBWFraction        float64 // power fraction of the occupied bandwidth obw_hz (default 0.99)

	// Threads is how many goroutines one Extract call uses: 1 (the
	// default) runs every stage on the caller's goroutine; 2 or more run
	// the Welch PSD, autocorrelation, spectral features and spectrogram
	// on a second goroutine beside the time-domain statistics and the
	// MFCCs. The features are the same for any value. Batches of records
	// are better spread over records ([ExtractBatch]) than within them.
	Threads int
}

// withDefaults validates c and fills in the defaults.
func (c Config) withDefaults() (Config, error) {
	if !(c.SampleRate > 0) || math.IsInf(c.SampleRate, 0) {
		return c, fmt.Errorf("signal: sample rate %v must be positive", c.SampleRate)
	}
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	if c.Impedance == 0 {
		c.Impedance = 50
	}
	def(&c.WelchSegment, 1024)
	def(&c.SpectrogramSegment, 256)
	def(&c.SpectrogramOverlap, c.SpectrogramSegment/8)
	def(&c.MFCCFrame, 2048)
	def(&c.MFCCHop, 512)
	def(&c.MelBands, 40)
	def(&c.MFCCs, 13)
	def(&c.AutocorrLags, 1000)
	def(&c.Threads, 1)
	if c.SNRThresholdDB == 0 {
		c.SNRThresholdDB = 3
	}
	if c.RolloffFraction == 0 {
		c.RolloffFraction = 0.85
	}
	if c.OBWFraction == 0 {
		c.OBWFraction = 0.99
	}
	pow2 := func(name string, v, lo int) error {
		if v < lo || v > 1<<20 || v&(v-1) != 0 {
			return fmt.Errorf("signal: %s %d must be a power of two in [%d, %d]", name, v, lo, 1<<20)
		}
		return nil
	}
	for _, e := range []error{
		pow2("Welch segment", c.WelchSegment, 16),
		pow2("spectrogram segment", c.SpectrogramSegment, 8),
		pow2("MFCC frame", c.MFCCFrame, 16),
	} {
		if e != nil {
			return c, e
		}
	}
	switch {
	case !(c.Impedance > 0) || math.IsInf(c.Impedance, 0):
		return c, fmt.Errorf("signal: impedance %v must be positive", c.Impedance)
	case c.SpectrogramOverlap < 0 || c.SpectrogramOverlap >= c.SpectrogramSegment:
		return c, fmt.Errorf("signal: spectrogram overlap %d must be in [0, %d)", c.SpectrogramOverlap, c.SpectrogramSegment)
	case c.MFCCHop < 1 || c.MFCCHop > c.MFCCFrame:
		return c, fmt.Errorf("signal: MFCC hop %d must be in [1, %d]", c.MFCCHop, c.MFCCFrame)
	case c.MelBands < 1 || c.MelBands > c.MFCCFrame/2:
		return c, fmt.Errorf("signal: %d mel bands must be in [1, %d]", c.MelBands, c.MFCCFrame/2)
	case c.MFCCs < 1 || c.MFCCs > c.MelBands:
		return c, fmt.Errorf("signal: %d MFCCs must be in [1, %d]", c.MFCCs, c.MelBands)
	case c.AutocorrLags < 0 || c.AutocorrLags > 1<<20:
		return c, fmt.Errorf("signal: %d autocorrelation lags must be in [0, %d]", c.AutocorrLags, 1<<20)
	case !(c.RolloffFraction > 0 && c.RolloffFraction < 1):
		return c, fmt.Errorf("signal: roll-off fraction %v must be in (0, 1)", c.RolloffFraction)
	case !(c.OBWFraction > 0 && c.OBWFraction < 1):
		return c, fmt.Errorf("signal: occupied-bandwidth fraction %v must be in (0, 1)", c.OBWFraction)
	case math.IsNaN(c.SNRThresholdDB) || math.IsInf(c.SNRThresholdDB, 0):
		return c, fmt.Errorf("signal: SNR threshold %v must be finite", c.SNRThresholdDB)
	}
	return c, nil
}

// MinSamples returns the shortest record c can describe: one Welch
// segment, one spectrogram segment and one MFCC frame.
func (c Config) MinSamples() int {
	c, _ = c.withDefaults()
	return max(c.WelchSegment, c.SpectrogramSegment, c.MFCCFrame)
}

// Features holds everything extracted from one record. The scalar fields
// are defined in docs/SIGNAL.md; the slices are reused by the next
// extraction into the same Features value (their storage is kept), so
// copy them to keep them.
//
// A Features value is the common output of every extraction path: the CPU
// [Extractor] and the graph extractor of package signal/sigraph fill the
// same fields with the same definitions.
type Features struct {
	Samples    int     `json:"samples"`
	SampleRate float64 `json:"sample_rate"`

	RSSIdBFS float64 `json:"rssi_dbfs"` // 10·log10(mean |x|²)
	RSSIdBm  float64 `json:"rssi_dbm"`  // 10·log10(mean |x|² / Impedance / 1 mW)

	SNRdB        float64 `json:"snr_db"`         // full-band SNR estimate from the Welch PSD
	SNRInbanddB  float64 `json:"snr_inband_db"`  // in-band SNR estimate (over the occupied bins)
	NoiseFloor   float64 `json:"noise_psd"`      // median of the Welch PSD (per Hz)
	OccupiedBWHz float64 `json:"occupied_bw_hz"` // bins above the noise floor + threshold, times Δf
	OBWHz        float64 `json:"obw_hz"`         // bandwidth holding OBWFraction of the power

	CentroidHz  float64 `json:"centroid_hz"`
	BandwidthHz float64 `json:"bandwidth_hz"`
	Flatness    float64 `json:"flatness"`
	RolloffHz   float64 `json:"rolloff_hz"`

	// Normalised cumulants (see docs/SIGNAL.md): C20/C21, C40/C21², C41/C21²
	// are complex; C21 is the mean power; C42/C21² is real.
	C20 complex128 `json:"-"`
	C21 float64    `json:"c21"`
	C40 complex128 `json:"-"`
	C41 complex128 `json:"-"`
	C42 float64    `json:"c42"`

	InstAmpMean   float64 `json:"inst_amp_mean"`
	InstAmpStd    float64 `json:"inst_amp_std"`
	InstPhaseMean float64 `json:"inst_phase_mean"` // circular mean of arg x, rad
	InstPhaseStd  float64 `json:"inst_phase_std"`  // circular std sqrt(−2 ln R), rad
	InstFreqMean  float64 `json:"inst_freq_mean"`  // Hz
	InstFreqStd   float64 `json:"inst_freq_std"`   // Hz

	MFCC []float64 `json:"mfcc"` // mean over frames of each coefficient

	// PSD is the two-sided Welch PSD, fftshifted: PSD[i] is at
	// PSDFreq(i) = (i − len/2)·fs/len. Unit: power per Hz.
	PSD []float64 `json:"-"`
	// Autocorr is the normalised autocorrelation ρ[k] = r[k]/r[0] for
	// k = 0..AutocorrLags.
	Autocorr []complex128 `json:"-"`
	// Spectrogram is the dB spectrogram, row-major SpecBins × SpecFrames,
	// rows in FFT order (not shifted), as scipy.signal.spectrogram returns.
	Spectrogram []float32 `json:"-"`
	SpecBins    int       `json:"-"`
	SpecFrames  int       `json:"-"`
	// MFCCFrames holds the per-frame coefficients, row-major
	// frames × MFCCs.
	MFCCFrames []float64 `json:"-"`
}

// PSDFreq returns the frequency in Hz of PSD bin i.
func (f *Features) PSDFreq(i int) float64 {
	n := len(f.PSD)
	return float64(i-n/2) * f.SampleRate / float64(n)
}

// FeatureNames returns the names of the scalar features in the order of
// [Features.Vector]: the JSON keys, with the complex cumulants as
// magnitudes and the MFCCs as mfcc0, mfcc1, ....
func FeatureNames(nMFCC int) []string {
	names := []string{"rssi_dbfs", "rssi_dbm", "snr_db", "snr_inband_db", "noise_psd", "occupied_bw_hz", "obw_hz",
		"centroid_hz", "bandwidth_hz", "flatness", "rolloff_hz",
		"c20", "c21", "c40", "c41", "c42",
		"inst_amp_mean", "inst_amp_std", "inst_phase_mean", "inst_phase_std", "inst_freq_mean", "inst_freq_std"}
	for i := range nMFCC {
		names = append(names, fmt.Sprintf("mfcc%d", i))
	}
	return names
}

// Vector appends the scalar features to dst in the order of
// [FeatureNames] and returns the extended slice.
func (f *Features) Vector(dst []float64) []float64 {
	dst = append(dst, f.RSSIdBFS, f.RSSIdBm, f.SNRdB, f.SNRInbanddB, f.NoiseFloor, f.OccupiedBWHz, f.OBWHz,
		f.CentroidHz, f.BandwidthHz, f.Flatness, f.RolloffHz,
		abs(f.C20), f.C21, abs(f.C40), abs(f.C41), f.C42,
		f.InstAmpMean, f.InstAmpStd, f.InstPhaseMean, f.InstPhaseStd, f.InstFreqMean, f.InstFreqStd)
	return append(dst, f.MFCC...)
}

func abs(c complex128) float64 { return math.Hypot(real(c), imag(c)) }

// FeatureExtractor is implemented by every extraction path: the CPU
// [Extractor] and signal/sigraph's graph extractor.
type FeatureExtractor interface {
	Extract(x []complex64, f *Features) error
}
