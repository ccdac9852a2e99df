package sigraph

import (
	"math"

	"github.com/gotrain/gotrain/signal"
)

// FeatureError is the deviation of one feature (or one array) of a result
// from a reference result.
type FeatureError struct {
	Name string  `json:"name"`
	Err  float64 `json:"error"`
	// Metric says how Err is measured: "rel" is |got − want| / max(|want|,
	// floor) with the floor named in Floor's unit (a feature's natural
	// scale, so that values near zero are not divided by ~0), "abs" is
	// |got − want|.
	Metric string  `json:"metric"`
	Floor  float64 `json:"floor"`
}

// Compare returns the error of every feature of got against want (the CPU
// path's result, normally) in the order of [signal.FeatureNames], then the
// arrays. The floors, which make "relative" meaningful near zero:
//
//   - dB values (rssi, snr): 1 dB;
//   - frequencies and bandwidths (Hz): one Welch bin, fs/M;
//   - noise_psd, c21: 1e−30 (they are positive powers: plain relative);
//   - flatness: 1e−6;
//   - normalised cumulants c20, c40, c41 (complex: |got − want| of the
//     complex value) and c42: 1 (they are O(1) shape numbers);
//   - instantaneous amplitude mean and std: the record's RMS amplitude;
//   - instantaneous phase mean and std: 1 rad;
//   - psd: per bin, 1e−10 × the PSD's maximum;
//   - spectrogram (dB): per cell, 1 dB;
//   - autocorr: absolute (ρ[0] = 1 is its scale);
//   - mfcc (13 means) and mfcc_frames: absolute.
func Compare(got, want *signal.Features) []FeatureError {
	df := want.SampleRate / float64(max(len(want.PSD), 1))
	rms := math.Sqrt(math.Max(want.C21, 0))
	rel := func(name string, g, w, floor float64) FeatureError {
		return FeatureError{Name: name, Err: math.Abs(g-w) / math.Max(math.Abs(w), floor), Metric: "rel", Floor: floor}
	}
	crel := func(name string, g, w complex128) FeatureError {
		d := math.Hypot(real(g)-real(w), imag(g)-imag(w))
		return FeatureError{Name: name, Err: d / math.Max(math.Hypot(real(w), imag(w)), 1), Metric: "rel", Floor: 1}
	}
	errs := []FeatureError{
		rel("rssi_dbfs", got.RSSIdBFS, want.RSSIdBFS, 1),
		rel("rssi_dbm", got.RSSIdBm, want.RSSIdBm, 1),
		rel("snr_db", got.SNRdB, want.SNRdB, 1),
		rel("snr_inband_db", got.SNRInbanddB, want.SNRInbanddB, 1),
		rel("noise_psd", got.NoiseFloor, want.NoiseFloor, 1e-30),
		rel("occupied_bw_hz", got.OccupiedBWHz, want.OccupiedBWHz, df),
		rel("obw_hz", got.OBWHz, want.OBWHz, df),
		rel("centroid_hz", got.CentroidHz, want.CentroidHz, df),
		rel("bandwidth_hz", got.BandwidthHz, want.BandwidthHz, df),
		rel("flatness", got.Flatness, want.Flatness, 1e-6),
		rel("rolloff_hz", got.RolloffHz, want.RolloffHz, df),
		crel("c20", got.C20, want.C20),
		rel("c21", got.C21, want.C21, 1e-30),
		crel("c40", got.C40, want.C40),
		crel("c41", got.C41, want.C41),
		rel("c42", got.C42, want.C42, 1),
		rel("inst_amp_mean", got.InstAmpMean, want.InstAmpMean, rms),
		rel("inst_amp_std", got.InstAmpStd, want.InstAmpStd, rms),
		rel("inst_phase_mean", got.InstPhaseMean, want.InstPhaseMean, 1),
		rel("inst_phase_std", got.InstPhaseStd, want.InstPhaseStd, 1),
		rel("inst_freq_mean", got.InstFreqMean, want.InstFreqMean, df),
		rel("inst_freq_std", got.InstFreqStd, want.InstFreqStd, df),
	}
	arr := func(name, metric string, floor float64, n int, at func(i int) (g, w, scale float64)) FeatureError {
		e := FeatureError{Name: name, Metric: metric, Floor: floor}
		for i := range n {
			g, w, s := at(i)
			d := math.Abs(g - w)
			if metric == "rel" {
				d /= s
			}
			if d > e.Err || math.IsNaN(d) {
				e.Err = d
			}
		}
		return e
	}
	mis := func(name string) FeatureError { return FeatureError{Name: name, Err: math.Inf(1), Metric: "shape"} }
	if len(got.MFCC) == len(want.MFCC) {
		errs = append(errs, arr("mfcc", "abs", 0, len(want.MFCC), func(i int) (float64, float64, float64) { return got.MFCC[i], want.MFCC[i], 1 }))
	} else {
		errs = append(errs, mis("mfcc"))
	}
	if len(got.MFCCFrames) == len(want.MFCCFrames) {
		errs = append(errs, arr("mfcc_frames", "abs", 0, len(want.MFCCFrames), func(i int) (float64, float64, float64) {
			return got.MFCCFrames[i], want.MFCCFrames[i], 1
		}))
	} else {
		errs = append(errs, mis("mfcc_frames"))
	}
	if len(got.PSD) == len(want.PSD) {
		var top float64
		for _, v := range want.PSD {
			top = math.Max(top, v)
		}
		fl := 1e-10 * top
		errs = append(errs, arr("psd", "rel", fl, len(want.PSD), func(i int) (float64, float64, float64) {
			return got.PSD[i], want.PSD[i], math.Max(math.Abs(want.PSD[i]), fl)
		}))
	} else {
		errs = append(errs, mis("psd"))
	}
	if len(got.Autocorr) == len(want.Autocorr) {
		errs = append(errs, arr("autocorr", "abs", 0, len(want.Autocorr), func(i int) (float64, float64, float64) {
			d := got.Autocorr[i] - want.Autocorr[i]
			return math.Hypot(real(d), imag(d)), 0, 1
		}))
	} else {
		errs = append(errs, mis("autocorr"))
	}
	if len(got.Spectrogram) == len(want.Spectrogram) && got.SpecBins == want.SpecBins {
		errs = append(errs, arr("spectrogram", "rel", 1, len(want.Spectrogram), func(i int) (float64, float64, float64) {
			w := float64(want.Spectrogram[i])
			return float64(got.Spectrogram[i]), w, math.Max(math.Abs(w), 1)
		}))
	} else {
		errs = append(errs, mis("spectrogram"))
	}
	return errs
}
