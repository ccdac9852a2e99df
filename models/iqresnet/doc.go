// Package iqresnet is a modulation classifier on raw IQ: the 1-D
// convolutional residual network of O'Shea, Roy and Clancy ("Over-the-Air
// Deep Learning Based Radio Signal Classification", IEEE JSTSP 2018),
// trained with gotrain's harness (package train) on windows of IQ samples.
//
// The network (Arch, DefaultArch) reads a window of Window complex samples
// as Window × 2 (I and Q as two channels, each window scaled to unit mean
// power, AppendWindows), runs Stacks residual stacks — a 1x1 convolution
// of Filters filters (linear), two residual units (a "same" convolution of
// Kernel taps with ReLU, a second one linear, plus the skip), a max-pool of
// two — then two SELU dense layers of Dense units with alpha dropout
// between them, and a dense layer of one logit per class.
//
// Train trains a network on windows and class labels, with checkpoints,
// resume, a time budget and the harness's progress and metrics; Load reads
// a checkpoint back and Model.LogProbs predicts. Run ties it to the data
// sets of package signal/modclass (generated with their IQ records): it
// cuts each record into windows (DataWindows), trains, classifies each
// test record by the sum of its windows' log-probabilities and scores the
// records per SNR as the forest on features is scored, so that the two
// reports compare (modclass.Comparison). It is what `gotrain signal
// classify train --model resnet` does; docs/SIGNAL.md ("ResNet on raw IQ")
// describes the structure, the defaults and the measured accuracy.
//
// The graphs are written for gotrain's pure-Go CPU backend, which lacks
// Pad and Reverse: a convolution is the product of the kernel's shifted
// copies of its input (concatenated on the channel axis) with the weights,
// one SGEMM; a shift is a Slice and a Concatenate whose gradient, the
// opposite shift, is given as a custom gradient (the Slice would otherwise
// differentiate into Pad); the max-pool is a ReduceMax over pairs.
package iqresnet
