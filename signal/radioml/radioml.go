// Package radioml reads DeepSig's RadioML 2018.01A data set
// (GOLD_XYZ_OSC.0001_1024.hdf5), so that a classifier can be trained and
// evaluated on the real recordings as well as on package signal's
// synthetic ones.
//
// The file is HDF5 with three datasets in its root group: X (float32,
// N×1024×2: the I and Q of each 1024-sample frame), Y (int64, N×24: the
// class, one-hot, in the order of [Classes]) and Z (int64, N×1: the SNR in
// dB). [Open] checks that layout and [File.Read] returns records [lo, hi)
// as complex IQ, class index and SNR. The HDF5 reader is this package's
// own, in pure Go, and reads what h5py writes for such arrays (contiguous
// or chunked, with gzip and shuffle); docs/SIGNAL.md lists what it
// refuses.
package radioml

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/gotrain/gotrain/signal"
)

// Classes are the 24 RadioML 2018.01A classes in the order of the
// one-hot labels Y (the data set's classes-fixed.json; the classes.txt
// shipped with it lists another order, which does not match the labels).
var Classes = [24]string{"OOK", "4ASK", "8ASK", "BPSK", "QPSK", "8PSK", "16PSK", "32PSK",
	"16APSK", "32APSK", "64APSK", "128APSK", "16QAM", "32QAM", "64QAM", "128QAM", "256QAM",
	"AM-SSB-WC", "AM-SSB-SC", "AM-DSB-WC", "AM-DSB-SC", "FM", "GMSK", "OQPSK"}

// Modulation returns the package signal modulation of class index c (the
// class name in lower case: "AM-SSB-WC" is signal.AMSSBWC), or "" for an
// index outside 0..23.
func Modulation(c int) signal.Modulation {
	if c < 0 || c >= len(Classes) {
		return ""
	}
	return signal.Modulation(strings.ToLower(Classes[c]))
}

// File is an open RadioML 2018.01A file.
type File struct {
	// N is the number of records; FrameLen the samples per record (1024).
	N, FrameLen int

	path    string
	closer  io.Closer
	h5      *h5file
	x, y, z *h5dataset
}

// Batch holds records [lo, hi) of a file.
type Batch struct {
	// IQ holds the records one after another, FrameLen samples each:
	// record i is IQ[i·FrameLen : (i+1)·FrameLen].
	IQ       []complex64
	FrameLen int
	// Class is each record's class index (into Classes) and SNR its SNR in
	// dB (Z).
	Class []int
	SNR   []int
}

// Record returns the samples of record i of the batch.
func (b *Batch) Record(i int) []complex64 { return b.IQ[i*b.FrameLen : (i+1)*b.FrameLen] }

// Open opens a RadioML 2018.01A file and checks its layout: X of shape
// N×L×2 and floating point, Y of N×24 and Z of N×1 (or N) and numeric.
// Errors name the file and, where one is at fault, the dataset.
func Open(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("radioml: %w", err)
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, fmt.Errorf("radioml: %w", err)
	}
	f, err := open(fh, st.Size(), path)
	if err != nil {
		fh.Close()
		return nil, err
	}
	f.closer = fh
	return f, nil
}

// Close closes the file.
func (f *File) Close() error {
	if f.closer == nil {
		return nil
	}
	return f.closer.Close()
}

// open reads the layout of the file r of size bytes; name is used in
// errors.
func open(r io.ReaderAt, size int64, name string) (f *File, err error) {
	h, err := openH5(r, size)
	if err != nil {
		return nil, fmt.Errorf("radioml: %s: %w", name, err)
	}
	links, err := h.rootLinks()
	if err != nil {
		return nil, fmt.Errorf("radioml: %s: %w", name, err)
	}
	f = &File{path: name, h5: h}
	for _, ds := range []struct {
		name string
		dst  **h5dataset
	}{{"X", &f.x}, {"Y", &f.y}, {"Z", &f.z}} {
		a, ok := links[ds.name]
		if !ok {
			return nil, fmt.Errorf("radioml: %s: no dataset %s in the root group (want X, Y and Z)", name, ds.name)
		}
		d, err := h.dataset(ds.name, a)
		if err == nil {
			err = d.checkSize(size)
		}
		if err != nil {
			return nil, fmt.Errorf("radioml: %s: dataset %s: %w", name, ds.name, err)
		}
		*ds.dst = d
	}
	bad := func(ds, format string, a ...any) error {
		return fmt.Errorf("radioml: %s: dataset %s: %s", name, ds, fmt.Sprintf(format, a...))
	}
	x, y, z := f.x, f.y, f.z
	if len(x.dims) != 3 || x.dims[2] != 2 || x.dims[1] == 0 || x.dims[1] > signal.MaxSamples {
		return nil, bad("X", "shape %v: want N×L×2 (I and Q of frames of L samples, 1 ≤ L ≤ %d)", x.dims, signal.MaxSamples)
	}
	if !x.elem.float {
		return nil, bad("X", "elements are %s: want floating point", x.elem)
	}
	n := x.dims[0]
	if n > math.MaxInt32 {
		return nil, bad("X", "%d records (at most %d)", n, math.MaxInt32)
	}
	if len(y.dims) != 2 || y.dims[0] != n || y.dims[1] != uint64(len(Classes)) {
		return nil, bad("Y", "shape %v: want %d×%d (one-hot classes of X's records)", y.dims, n, len(Classes))
	}
	if !(len(z.dims) == 2 && z.dims[1] == 1 || len(z.dims) == 1) || z.dims[0] != n {
		return nil, bad("Z", "shape %v: want %d×1 (the SNR of X's records)", z.dims, n)
	}
	f.N, f.FrameLen = int(n), int(x.dims[1])
	return f, nil
}

// MaxBatchBytes bounds the memory one Read may allocate: the records'
// samples and the bytes read from the file (2^31 bytes: about 130,000
// records of 1024 samples).
const MaxBatchBytes = 1 << 31

// Read returns records [lo, hi). A record whose label is not one-hot, or
// whose SNR is not a whole number, is an error naming it.
func (f *File) Read(lo, hi int) (*Batch, error) {
	if lo < 0 || hi < lo || hi > f.N {
		return nil, fmt.Errorf("radioml: %s: records [%d, %d): want 0 ≤ lo ≤ hi ≤ %d", f.path, lo, hi, f.N)
	}
	n := hi - lo
	perRecord := 8*uint64(f.FrameLen) + 16 + f.x.rowBytes() + f.y.rowBytes() + f.z.rowBytes() // result and file bytes
	if uint64(n)*perRecord > MaxBatchBytes {
		return nil, fmt.Errorf("radioml: %s: records [%d, %d) need more than %d bytes: read fewer at a time", f.path, lo, hi, MaxBatchBytes)
	}
	b := &Batch{IQ: make([]complex64, n*f.FrameLen), FrameLen: f.FrameLen, Class: make([]int, n), SNR: make([]int, n)}
	if n == 0 {
		return b, nil
	}
	raw, err := f.rows(f.x, "X", lo, hi)
	if err != nil {
		return nil, err
	}
	for i := range b.IQ {
		b.IQ[i] = complex(float32(f.x.elem.float64At(raw, 2*i)), float32(f.x.elem.float64At(raw, 2*i+1)))
	}
	raw, err = f.rows(f.y, "Y", lo, hi)
	if err != nil {
		return nil, err
	}
	for r := range n {
		b.Class[r] = -1
		for c := range Classes {
			switch v := f.y.elem.float64At(raw, r*len(Classes)+c); v {
			case 0:
			case 1:
				if b.Class[r] >= 0 {
					return nil, fmt.Errorf("radioml: %s: dataset Y: record %d has classes %d and %d: want one-hot", f.path, lo+r, b.Class[r], c)
				}
				b.Class[r] = c
			default:
				return nil, fmt.Errorf("radioml: %s: dataset Y: record %d has %v for class %d: want one-hot 0/1", f.path, lo+r, v, c)
			}
		}
		if b.Class[r] < 0 {
			return nil, fmt.Errorf("radioml: %s: dataset Y: record %d has no class: want one-hot", f.path, lo+r)
		}
	}
	raw, err = f.rows(f.z, "Z", lo, hi)
	if err != nil {
		return nil, err
	}
	for r := range n {
		v := f.z.elem.float64At(raw, r)
		if v != math.Trunc(v) || math.Abs(v) > 1000 {
			return nil, fmt.Errorf("radioml: %s: dataset Z: record %d has SNR %v: want whole dB within ±1000", f.path, lo+r, v)
		}
		b.SNR[r] = int(v)
	}
	return b, nil
}

// rows reads the raw bytes of rows [lo, hi) of d.
func (f *File) rows(d *h5dataset, name string, lo, hi int) ([]byte, error) {
	buf := make([]byte, uint64(hi-lo)*d.rowBytes())
	if err := f.h5.readRows(d, uint64(lo), uint64(hi), buf); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("radioml: %s: dataset %s: %w", f.path, name, err)
	}
	return buf, nil
}
