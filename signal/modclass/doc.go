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
// [WriteConfusionPNG] and [WriteSNRPNG] draw them.
//
// [Run] does what `gotrain signal classify train` and `eval` do in one
// call: train (or take a model), hold out test rows if asked, evaluate
// over an SNR band, write the model and the plots, and return a [Report]
// ([Report.WriteText] prints it); [Demo] first generates a small training
// and test set. [DatasetSpec] and [RunSpec] take the options the way the
// commands' flags give them (ranges, lists and folders as text) and turn
// them into [DatasetOptions] and [RunOptions] with their data loaded. The
// definitions and the measured accuracy are in docs/SIGNAL.md
// ("Modulation classifier").
package modclass
