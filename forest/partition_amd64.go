//go:build amd64 && !purego

package forest

// partitionEnts moves the n entries of src into dst stably: those whose
// row's mark is 1 to dst[0:nl], the others to dst[nl:n] (builder.partition
// on the sorted lists). mark must have 3 readable bytes past the highest
// row (the kernel gathers dwords). It needs AVX-512 F (useAVX512).
//
//go:noescape
func partitionEnts(dst, src *uint32, n int, mark *uint8, nl int)
