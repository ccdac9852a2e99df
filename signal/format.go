package signal

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
)

// Format is an encoding of complex IQ samples, named as SigMF names its
// datatypes. Samples are interleaved I, Q pairs.
type Format string

// The supported formats. Integer formats map to [−1, 1): ci16 divides by
// 32768, ci8 by 128, and cu8 (RTL-SDR raw, centred at 127.5) computes
// (v − 127.5)/127.5.
const (
	CF32   Format = "cf32_le"
	CF32BE Format = "cf32_be"
	CI16   Format = "ci16_le"
	CI16BE Format = "ci16_be"
	CI8    Format = "ci8"
	CU8    Format = "cu8"
)

// Formats lists every supported format.
var Formats = []Format{CF32, CF32BE, CI16, CI16BE, CI8, CU8}

// ParseFormat returns the format named s: a SigMF datatype ("cf32_le",
// "ci16_le", "cu8", ...) or a short name ("cf32", "ci16", "cs16", "ci8",
// "cs8", "cu8"), case-insensitive.
func ParseFormat(s string) (Format, error) {
	switch v := strings.ToLower(strings.TrimSpace(s)); v {
	case "cf32", "fc32", "cfile", string(CF32):
		return CF32, nil
	case "ci16", "cs16", "sc16", string(CI16):
		return CI16, nil
	case "ci8", "cs8", "sc8", "ci8_le":
		return CI8, nil
	case "cu8", "cu8_le":
		return CU8, nil
	case string(CF32BE), string(CI16BE):
		return Format(v), nil
	}
	return "", fmt.Errorf("signal: unknown sample format %q (want cf32_le, cf32_be, ci16_le, ci16_be, ci8 or cu8)", s)
}

// SampleSize returns the bytes per complex sample.
func (f Format) SampleSize() int {
	switch f {
	case CF32, CF32BE:
		return 8
	case CI16, CI16BE:
		return 4
	case CI8, CU8:
		return 2
	}
	return 0
}

// Decode appends the samples encoded in b to dst. len(b) must be a whole
// number of samples.
func Decode(dst []complex64, b []byte, f Format) ([]complex64, error) {
	size := f.SampleSize()
	if size == 0 {
		return dst, fmt.Errorf("signal: unknown sample format %q", f)
	}
	if len(b)%size != 0 {
		return dst, fmt.Errorf("signal: %d bytes is not a whole number of %d-byte %s samples (%d bytes left over)", len(b), size, f, len(b)%size)
	}
	n := len(b) / size
	start := len(dst)
	dst = grow(dst, start+n)[:start]
	dst = dst[:start+n]
	out := dst[start:]
	switch f {
	case CF32:
		for i := range out {
			out[i] = complex(math.Float32frombits(binary.LittleEndian.Uint32(b[8*i:])), math.Float32frombits(binary.LittleEndian.Uint32(b[8*i+4:])))
		}
	case CF32BE:
		for i := range out {
			out[i] = complex(math.Float32frombits(binary.BigEndian.Uint32(b[8*i:])), math.Float32frombits(binary.BigEndian.Uint32(b[8*i+4:])))
		}
	case CI16:
		for i := range out {
			out[i] = complex(float32(int16(binary.LittleEndian.Uint16(b[4*i:])))/32768, float32(int16(binary.LittleEndian.Uint16(b[4*i+2:])))/32768)
		}
	case CI16BE:
		for i := range out {
			out[i] = complex(float32(int16(binary.BigEndian.Uint16(b[4*i:])))/32768, float32(int16(binary.BigEndian.Uint16(b[4*i+2:])))/32768)
		}
	case CI8:
		for i := range out {
			out[i] = complex(float32(int8(b[2*i]))/128, float32(int8(b[2*i+1]))/128)
		}
	case CU8:
		for i := range out {
			out[i] = complex((float32(b[2*i])-127.5)/127.5, (float32(b[2*i+1])-127.5)/127.5)
		}
	}
	return dst, nil
}

// Encode appends x encoded as f to dst. Integer formats round to the
// nearest level and saturate at the ends of their range; decoding an
// encoded value gives it back exactly when it was itself decoded from f.
func Encode(dst []byte, x []complex64, f Format) ([]byte, error) {
	size := f.SampleSize()
	if size == 0 {
		return dst, fmt.Errorf("signal: unknown sample format %q", f)
	}
	start := len(dst)
	dst = grow(dst, start+size*len(x))
	b := dst[start:]
	q := func(v float32, scale, off, lo, hi float64) float64 {
		r := math.Round(float64(v)*scale + off)
		if r < lo || math.IsNaN(r) {
			if math.IsNaN(r) {
				return math.Round(off)
			}
			return lo
		}
		return math.Min(r, hi)
	}
	for i, v := range x {
		switch f {
		case CF32:
			binary.LittleEndian.PutUint32(b[8*i:], math.Float32bits(real(v)))
			binary.LittleEndian.PutUint32(b[8*i+4:], math.Float32bits(imag(v)))
		case CF32BE:
			binary.BigEndian.PutUint32(b[8*i:], math.Float32bits(real(v)))
			binary.BigEndian.PutUint32(b[8*i+4:], math.Float32bits(imag(v)))
		case CI16:
			binary.LittleEndian.PutUint16(b[4*i:], uint16(int16(q(real(v), 32768, 0, -32768, 32767))))
			binary.LittleEndian.PutUint16(b[4*i+2:], uint16(int16(q(imag(v), 32768, 0, -32768, 32767))))
		case CI16BE:
			binary.BigEndian.PutUint16(b[4*i:], uint16(int16(q(real(v), 32768, 0, -32768, 32767))))
			binary.BigEndian.PutUint16(b[4*i+2:], uint16(int16(q(imag(v), 32768, 0, -32768, 32767))))
		case CI8:
			b[2*i] = byte(int8(q(real(v), 128, 0, -128, 127)))
			b[2*i+1] = byte(int8(q(imag(v), 128, 0, -128, 127)))
		case CU8:
			b[2*i] = byte(q(real(v), 127.5, 127.5, 0, 255))
			b[2*i+1] = byte(q(imag(v), 127.5, 127.5, 0, 255))
		}
	}
	return dst, nil
}
