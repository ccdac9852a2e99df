//go:build amd64 && !purego

package forest

// compressPair appends to dstA the bytes of col's first 64·words whose
// bits are set in maskA (bit b of maskA[w] for col[64w+b]), in order, and
// likewise to dstB from maskB (nil: none). It needs AVX-512 BW and VBMI2
// (useCompress).
//
//go:noescape
func compressPair(dstA, dstB, col *uint8, maskA, maskB *uint64, words int)
