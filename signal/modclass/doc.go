// Package modclass builds labelled feature data sets of synthetic IQ records
// and trains a random-forest modulation classifier on them.
//
// [Generate] synthesizes records of several modulations over a range of SNRs
// (deterministically per seed, whatever the worker count), extracts the CPU
// features of package signal, and writes features.csv and dataset.json (and
// optionally one SigMF pair per record). [Load] reads such a folder back;
// [Train] fits a forest on the columns named by [FeatureSet] (the extracted
// features plus derived ones, see [DerivedNames]); [Evaluate] reports the
// overall accuracy, the accuracy per SNR and the confusion matrix; and
// [WriteConfusionPNG] and [WriteSNRPNG] draw them. The definitions and the
// measured accuracy are in docs/SIGNAL.md ("Modulation classifier").
package modclass
