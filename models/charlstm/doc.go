// Package charlstm is a character-level LSTM language model trained with
// gotrain's harness (package train): a vocabulary of the UTF-8 runes of a
// corpus and windows of seq-length+1 runes taken with a stride (package
// models/text), a stack of LSTM layers with fused gate weights, and a
// sampler.
//
// Train(ctx, backend, Options) trains a model (with checkpoints, resume and
// early stopping as Options.Train says) and evaluates it; Load reads a
// checkpoint back and Model.Sample generates text.
//
// The cell is written for GoMLX's simplego backend: every time step is
// unrolled, the gate weights of a layer are one [in+hidden, 4·hidden] matrix,
// and the four gates are separated with masked reductions rather than Slice,
// whose gradient needs the Pad op that simplego lacks.
package charlstm
