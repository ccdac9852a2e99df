package cpubackend

// sliceContiguous copies a Slice with unit strides as runs of contiguous
// elements (the innermost sliced axis with every full axis after it),
// instead of simplego's element-by-element index walk. It reports false,
// computing nothing, when a stride is not 1 or a shape is empty.
func sliceContiguous(operand, output *Buffer, p *sliceNode) bool {
	in, out := operand.shape.Dimensions, output.shape.Dimensions
	r := len(in)
	if r == 0 || len(out) != r || len(p.starts) != r || output.shape.Size() == 0 {
		return false
	}
	for _, s := range p.strides {
		if s != 1 {
			return false
		}
	}
	elem := operand.shape.DType.Size()
	if elem <= 0 {
		return false
	}
	// Element strides of the operand.
	stride := make([]int, r)
	s := 1
	for j := r - 1; j >= 0; j-- {
		stride[j] = s
		s *= in[j]
	}
	// The run: axis k (partly) and every full axis after it.
	k := r - 1
	run := out[k]
	for k > 0 && out[k] == in[k] {
		k--
		run *= out[k]
	}
	src, dst := operand.mutableBytes(), output.mutableBytes()
	base := 0
	for j := 0; j < r; j++ {
		base += p.starts[j] * stride[j]
	}
	idx := make([]int, k) // position over the outer axes 0..k-1
	runBytes := run * elem
	for o := 0; o < len(dst); o += runBytes {
		off := base
		for j, i := range idx {
			off += i * stride[j]
		}
		copy(dst[o:o+runBytes], src[off*elem:off*elem+runBytes])
		for j := k - 1; j >= 0; j-- {
			idx[j]++
			if idx[j] < out[j] {
				break
			}
			idx[j] = 0
		}
	}
	return true
}
