// Package signal synthesizes complex-baseband IQ records, reads and writes
// them, and extracts RF features from them on the CPU.
//
// Synthesis: [Synthesize] returns one record that [SynthOptions] describes
// (the 24 RadioML 2018.01A classes: ASK, PSK, APSK, QAM, OQPSK, GMSK, the
// AM family and FM; and FSK/GFSK, OFDM, tone or chirp; with white Gaussian
// noise, multipath and IQ imbalance), deterministically for a seed; a
// [Synthesizer] generates many without allocating. [SynthSpec] takes the
// options the way the command line gives them (modulation, length in
// seconds and multipath taps as text), and [SynthFileSpec.Synthesize]
// writes such a record to a file.
//
// Files: [Load] reads a SigMF pair or a raw file (cf32, ci16, ci8, cu8) and
// [Save] writes one; [ReadSigMF], [WriteSigMF], [ReadRaw] and [WriteRaw]
// are the single formats. Every file is written atomically.
//
// Features: an [Extractor] ([NewExtractor], then [Extractor.Extract])
// fills a [Features] value: RSSI, SNR estimates, spectral shape, occupied
// bandwidth, cumulants, instantaneous statistics, MFCCs, the Welch PSD, the
// autocorrelation and the spectrogram. [ExtractBatch] spreads records over
// goroutines. The graph extractor of package signal/sigraph computes the
// same Features with GoMLX on any backend; both satisfy
// [FeatureExtractor]. [Features.Vector] and [FeatureNames] give the flat
// row a classifier uses (package signal/modclass); [NewFeaturesJSON],
// [WriteFeaturesTable], [WriteFeaturesCSV] and [WriteSpectrogram] present
// it; [FeaturesReport] is the report of `gotrain signal features`, and
// [SynthesizeFile] (with its [SynthReport]) is `gotrain signal synth`.
//
// Timing: [Benchmark] measures the latency of synthesis and extraction of
// one record and the throughput of a batch ([BenchResult], whose WriteText
// is the text of `gotrain signal bench`).
//
// Every feature is defined in docs/SIGNAL.md, with its parity against the
// numpy/scipy peer and the measured speed.
package signal
