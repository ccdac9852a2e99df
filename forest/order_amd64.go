//go:build amd64 && !purego

package forest

// rankSortKeys sorts n distinct keys (0 < n <= 64) into keys, from their
// copy in tmp padded with ^0 to a multiple of 8 (useAVX512).
//
//go:noescape
func rankSortKeys(keys, tmp *uint64, n int)

// featureKeys computes featureOrder's keys of the features j < p not set
// in konst (cand of them) at the node whose feature key is nk: those below
// limit into keys[:lo], the others into keys[lo:cand], in no particular
// order; it returns lo (useAVX512).
//
//go:noescape
func featureKeys(keys, konst *uint64, p int, nk, limit uint64, cand int) int

// scanPackedAsm is scanPackedN's loop over the codes in assembly (see it);
// the node has at most 16 classes.
//
//go:noescape
func scanPackedAsm(h *int64, cs int, codes *uint8, n int, s *packedScan) int

// scanPacked8Asm is scanPackedAsm for nodes of at most eight classes and a
// weight below 2^31 (see it).
//
//go:noescape
func scanPacked8Asm(h *int64, cs int, codes *uint8, n int, s *packedScan) int

// scanBatch8Asm is scanPacked8Asm's scan in batches of eight codes (see
// it): it returns the first index of the batch that holds a score
// reaching s.best, with s and h as before that batch, or n.
//
//go:noescape
func scanBatch8Asm(h *int64, cs int, codes *uint8, n int, s *packedScan) int

// scanBatch16Asm is scanBatch8Asm for nodes of 9 to 16 classes.
//
//go:noescape
func scanBatch16Asm(h *int64, cs int, codes *uint8, n int, s *packedScan) int
