//go:build amd64 && !purego

package forest

// compressCol appends to dst the bytes of col's first 64·words whose bits
// are set in mask (bit b of mask[w] for col[64w+b]), in order. It needs
// AVX-512 BW and VBMI2 (useCompress).
//
//go:noescape
func compressCol(dst, col *uint8, mask *uint64, words int)
