// Package charlstm is a character-level LSTM language model trained with
// gotrain's harness (package train): a vocabulary of the UTF-8 runes of a
// corpus, windows of seq-length+1 runes taken with a stride, a stack of LSTM
// layers with fused gate weights, and a sampler.
//
// The cell is written for GoMLX's simplego backend: every time step is
// unrolled, the gate weights of a layer are one [in+hidden, 4·hidden] matrix,
// and the four gates are separated with masked reductions rather than Slice,
// whose gradient needs the Pad op that simplego lacks.
package charlstm
