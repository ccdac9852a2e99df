package iqresnet

import "math"

// NumWindows is the number of windows of length samples, hop samples
// apart from the first sample on, that fit in a record of n samples.
func NumWindows(n, length, hop int) int {
	if length < 1 || hop < 1 || n < length {
		return 0
	}
	return (n-length)/hop + 1
}

// AppendWindows appends to dst the NumWindows(len(x), length, hop)
// windows of x, window j starting at sample j·hop, each as 2·length
// float32 values, I and Q interleaved (the network's input layout), scaled
// to unit mean power (|I|² + |Q|² averaging 1; an all-zero window stays
// zero), and returns dst and the number of windows.
func AppendWindows(dst []float32, x []complex64, length, hop int) ([]float32, int) {
	n := NumWindows(len(x), length, hop)
	for j := range n {
		w := x[j*hop : j*hop+length]
		var p float64
		for _, v := range w {
			re, im := float64(real(v)), float64(imag(v))
			p += re*re + im*im
		}
		scale := 0.0
		if p > 0 {
			scale = 1 / math.Sqrt(p/float64(length))
		}
		for _, v := range w {
			dst = append(dst, float32(float64(real(v))*scale), float32(float64(imag(v))*scale))
		}
	}
	return dst, n
}
