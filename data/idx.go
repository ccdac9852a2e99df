package data

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/gotrain/gotrain/internal/readlimit"
)

// Magic numbers of the IDX files used by MNIST: unsigned bytes, with three
// dimensions (images) or one (labels).
const (
	idxImagesMagic = 0x00000803
	idxLabelsMagic = 0x00000801
)

// Limits checked before any allocation sized by an IDX header.
const (
	maxIDXItems  = 10_000_000
	maxIDXDim    = 4096
	maxIDXPixels = 1 << 31
)

// idxOption is the option that raises the IDX readers' cap, for errors.
const idxOption = "the maxBytes of LoadMNISTMax"

// openIDX returns a buffered reader for r that transparently gunzips the
// stream if it starts with the gzip magic bytes. At most limit bytes are
// read from the (decompressed) stream: a gzip bomb stops there.
func openIDX(r io.Reader, name string, limit int64) (io.Reader, error) {
	br := bufio.NewReader(r)
	magic, err := br.Peek(2)
	if err != nil && len(magic) < 2 {
		if err == io.EOF {
			return nil, fmt.Errorf("data: %s: empty or truncated IDX file", name)
		}
		return nil, fmt.Errorf("data: reading %s: %w", name, err)
	}
	if magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("data: %s: %w", name, err)
		}
		return bufio.NewReader(readlimit.NewReader(zr, limit, name, idxOption)), nil
	}
	return readlimit.NewReader(br, limit, name, idxOption), nil
}

// checkIDXSize refuses a header that declares a file of more than limit
// bytes (total: the header and the data) before anything is read or
// allocated.
func checkIDXSize(name string, total, limit int64, what string) error {
	if total > limit {
		return fmt.Errorf("data: %s declares %s (%s): %w", name, what, readlimit.Bytes(total),
			&readlimit.Error{Name: name, Limit: limit, Option: idxOption})
	}
	return nil
}

// readIDXHeader reads the magic number and the n dimensions that follow it.
func readIDXHeader(r io.Reader, name string, wantMagic uint32, what string, dims []uint32) error {
	var hdr [4 * 4]byte
	size := 4 * (1 + len(dims))
	if _, err := io.ReadFull(r, hdr[:size]); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return fmt.Errorf("data: %s: truncated IDX header (want %d bytes)", name, size)
		}
		return fmt.Errorf("data: reading %s: %w", name, err)
	}
	if m := binary.BigEndian.Uint32(hdr[:4]); m != wantMagic {
		return fmt.Errorf("data: %s: bad magic number 0x%08x, want 0x%08x (IDX %s)", name, m, wantMagic, what)
	}
	for i := range dims {
		dims[i] = binary.BigEndian.Uint32(hdr[4*(i+1):])
	}
	return nil
}

// readIDXData reads exactly size bytes of data and checks that the stream
// ends there. Memory grows with the data actually read, so a header that
// claims more than the file holds cannot cause a large allocation.
func readIDXData(r io.Reader, name string, size int, what string) ([]byte, error) {
	buf := make([]byte, 0, min(size, 64<<10))
	for len(buf) < size {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(size-len(buf), len(buf)))
		}
		n, err := io.ReadFull(r, buf[len(buf):min(cap(buf), size)])
		buf = buf[:len(buf)+n]
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, fmt.Errorf("data: %s: truncated: header promises %s (%d bytes of data), file has %d", name, what, size, len(buf))
		}
		if err != nil {
			return nil, idxReadError(name, err)
		}
	}
	var one [1]byte
	n, err := io.ReadFull(r, one[:])
	if n > 0 {
		return nil, fmt.Errorf("data: %s: trailing data after %s (%d bytes)", name, what, size)
	}
	if err != io.EOF {
		return nil, idxReadError(name, err)
	}
	return buf[:size:size], nil
}

// idxReadError wraps a read error, keeping a cap's error as it is.
func idxReadError(name string, err error) error {
	var le *readlimit.Error
	if errors.As(err, &le) {
		return fmt.Errorf("data: %w", err)
	}
	return fmt.Errorf("data: reading %s: %w", name, err)
}

// ReadIDXImages reads an IDX file of unsigned-byte images (magic 0x00000803),
// such as MNIST's train-images-idx3-ubyte, gunzipping it first if it is
// gzipped. It returns the n×rows×cols pixels in row-major order. The name is
// used in error messages.
//
// The header is checked before anything is allocated: at most 10,000,000
// images of at most 4096×4096 pixels, at most 2³¹ pixels in all, and at
// most DefaultMaxBytes (1 GiB) of file, decompressed ([ReadIDXImagesMax]
// sets another cap). The data must be exactly as long as the header says,
// and memory grows with the data the stream delivers, not with what the
// header declares.
func ReadIDXImages(r io.Reader, name string) (images []uint8, n, rows, cols int, err error) {
	return ReadIDXImagesMax(r, name, 0)
}

// ReadIDXImagesMax is [ReadIDXImages] with a cap of maxBytes on the
// (decompressed) file: a header declaring more, or a stream delivering
// more, is an error wrapping ErrTooLarge. 0 means DefaultMaxBytes.
func ReadIDXImagesMax(r io.Reader, name string, maxBytes int64) (images []uint8, n, rows, cols int, err error) {
	limit, err := readlimit.Check(maxBytes, DefaultMaxBytes, "maxBytes")
	if err != nil {
		return nil, 0, 0, 0, fmt.Errorf("data: %s: %w", name, err)
	}
	r, err = openIDX(r, name, limit)
	if err != nil {
		return nil, 0, 0, 0, err
	}
	var dims [3]uint32
	if err := readIDXHeader(r, name, idxImagesMagic, "images", dims[:]); err != nil {
		return nil, 0, 0, 0, err
	}
	n, rows, cols = int(dims[0]), int(dims[1]), int(dims[2])
	switch {
	case n > maxIDXItems:
		return nil, 0, 0, 0, fmt.Errorf("data: %s: %d images exceeds the limit of %d", name, n, maxIDXItems)
	case rows < 1 || rows > maxIDXDim || cols < 1 || cols > maxIDXDim:
		return nil, 0, 0, 0, fmt.Errorf("data: %s: image size %d×%d out of range (1 to %d per side)", name, rows, cols, maxIDXDim)
	case uint64(n)*uint64(rows)*uint64(cols) > maxIDXPixels || uint64(n)*uint64(rows)*uint64(cols) > math.MaxInt:
		return nil, 0, 0, 0, fmt.Errorf("data: %s: %d images of %d×%d is %d pixels, over the limit of %d", name, n, rows, cols, uint64(n)*uint64(rows)*uint64(cols), uint64(maxIDXPixels))
	}
	what := strconv.Itoa(n) + " images of " + strconv.Itoa(rows) + "×" + strconv.Itoa(cols)
	if err := checkIDXSize(name, 16+int64(n*rows*cols), limit, what); err != nil {
		return nil, 0, 0, 0, err
	}
	images, err = readIDXData(r, name, n*rows*cols, what)
	if err != nil {
		return nil, 0, 0, 0, err
	}
	return images, n, rows, cols, nil
}

// ReadIDXLabels reads an IDX file of unsigned-byte labels (magic
// 0x00000801), such as MNIST's train-labels-idx1-ubyte, gunzipping it first
// if it is gzipped. The name is used in error messages. At most 10,000,000
// labels are accepted, and the data must be exactly as long as the header
// says (and at most DefaultMaxBytes; see [ReadIDXLabelsMax]).
func ReadIDXLabels(r io.Reader, name string) ([]uint8, error) {
	return ReadIDXLabelsMax(r, name, 0)
}

// ReadIDXLabelsMax is [ReadIDXLabels] with a cap of maxBytes on the
// (decompressed) file; 0 means DefaultMaxBytes.
func ReadIDXLabelsMax(r io.Reader, name string, maxBytes int64) ([]uint8, error) {
	limit, err := readlimit.Check(maxBytes, DefaultMaxBytes, "maxBytes")
	if err != nil {
		return nil, fmt.Errorf("data: %s: %w", name, err)
	}
	r, err = openIDX(r, name, limit)
	if err != nil {
		return nil, err
	}
	var dims [1]uint32
	if err := readIDXHeader(r, name, idxLabelsMagic, "labels", dims[:]); err != nil {
		return nil, err
	}
	n := int(dims[0])
	if n > maxIDXItems {
		return nil, fmt.Errorf("data: %s: %d labels exceeds the limit of %d", name, n, maxIDXItems)
	}
	if err := checkIDXSize(name, 8+int64(n), limit, strconv.Itoa(n)+" labels"); err != nil {
		return nil, err
	}
	return readIDXData(r, name, n, strconv.Itoa(n)+" labels")
}

// LoadMNIST reads the MNIST training and test sets from dir, which must hold
// train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte
// and t10k-labels-idx1-ubyte, each possibly gzipped with a ".gz" suffix (the
// variant spelling with ".idx3-ubyte" is also accepted). Pixels are scaled to
// [0, 1] and named px0..px783 in row-major order; the target "label" holds
// the digit 0..9 (Classes is nil). The data sets are named "mnist-train" and
// "mnist-test".
//
// When a file is missing, the error wraps [MNISTMissingError] of dir (test
// with errors.Is(err, ErrMNISTMissing)).
//
// The full training set takes about 376 MB as float64. Each file may hold
// at most DefaultMaxBytes (1 GiB) decompressed ([LoadMNISTMax] sets
// another cap); the data set takes 8 bytes per pixel.
func LoadMNIST(dir string) (train, test *Dataset, err error) {
	return LoadMNISTMax(dir, 0)
}

// LoadMNISTMax is [LoadMNIST] with a cap of maxBytes on each
// (decompressed) file: a larger one is an error naming it, wrapping
// ErrTooLarge. 0 means DefaultMaxBytes.
func LoadMNISTMax(dir string, maxBytes int64) (train, test *Dataset, err error) {
	return loadMNIST(dir, maxBytes, false)
}

// OpenMNIST reads the MNIST training and test sets from dir as
// [LoadMNISTMax] does (maxBytes caps each file; 0 means DefaultMaxBytes),
// but keeps the pixels as bytes, one per pixel instead of 8: each data
// set's X is nil and its Source reads one feature column at a time, the
// values LoadMNIST's X holds (pixel/255), so that a learner that bins one
// column at a time (forest.Fit) never holds the float64 matrix. The full
// training set then takes 47 MB instead of 376 MB. Dataset.Materialize
// gives exactly LoadMNIST's X. The Source may be read from several
// goroutines at once.
func OpenMNIST(dir string, maxBytes int64) (train, test *Dataset, err error) {
	return loadMNIST(dir, maxBytes, true)
}

func loadMNIST(dir string, maxBytes int64, lazy bool) (train, test *Dataset, err error) {
	train, err = loadMNISTPart(dir, "train", "mnist-train", maxBytes, lazy)
	if err != nil {
		return nil, nil, err
	}
	test, err = loadMNISTPart(dir, "t10k", "mnist-test", maxBytes, lazy)
	if err != nil {
		return nil, nil, err
	}
	return train, test, nil
}

func loadMNISTPart(dir, prefix, name string, maxBytes int64, lazy bool) (*Dataset, error) {
	imgPath, err := findMNISTFile(dir, prefix, "images", "idx3")
	if err != nil {
		return nil, err
	}
	lblPath, err := findMNISTFile(dir, prefix, "labels", "idx1")
	if err != nil {
		return nil, err
	}

	f, err := os.Open(imgPath)
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	pixels, n, rows, cols, err := ReadIDXImagesMax(f, imgPath, maxBytes)
	f.Close()
	if err != nil {
		return nil, err
	}
	f, err = os.Open(lblPath)
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	labels, err := ReadIDXLabelsMax(f, lblPath, maxBytes)
	f.Close()
	if err != nil {
		return nil, err
	}
	if len(labels) != n {
		return nil, fmt.Errorf("data: %s has %d images but %s has %d labels", imgPath, n, lblPath, len(labels))
	}
	if n == 0 {
		return nil, fmt.Errorf("data: %s: no images", imgPath)
	}

	d := &Dataset{
		Name:         name,
		FeatureNames: make([]string, rows*cols),
		TargetName:   "label",
		Y:            make([]float64, n),
		Rows:         n,
		Cols:         rows * cols,
	}
	for j := range d.FeatureNames {
		d.FeatureNames[j] = "px" + strconv.Itoa(j)
	}
	for i, l := range labels {
		if l > 9 {
			return nil, fmt.Errorf("data: %s: label %d of image %d: MNIST labels are 0 to 9", lblPath, l, i)
		}
		d.Y[i] = float64(l)
	}
	if lazy {
		d.Source = newByteColumns(pixels, n, d.Cols)
		return d, nil
	}
	d.X = make([]float64, len(pixels))
	for i, p := range pixels {
		d.X[i] = pixelValue(p)
	}
	return d, nil
}

// pixelValue is an MNIST pixel's feature value.
func pixelValue(p uint8) float64 { return float64(p) / 255 }

// byteColumns is the Source of [OpenMNIST]: the pixels held column-major,
// one byte each, so that a column reads contiguously.
type byteColumns struct {
	cols [][]uint8 // cols[j][i]: pixel j of image i
	rows int
}

// newByteColumns transposes n row-major images of p pixels into columns.
func newByteColumns(pixels []uint8, n, p int) *byteColumns {
	flat := make([]uint8, len(pixels))
	s := &byteColumns{cols: make([][]uint8, p), rows: n}
	for j := range p {
		s.cols[j] = flat[j*n : (j+1)*n : (j+1)*n]
	}
	const block = 64 // images per pass: their rows stay in the cache while each column gets its bytes
	for lo := 0; lo < n; lo += block {
		hi := min(lo+block, n)
		for j, col := range s.cols {
			for i := lo; i < hi; i++ {
				col[i] = pixels[i*p+j]
			}
		}
	}
	return s
}

// ReadColumn returns feature j's values, pixel/255, in dst grown to the
// number of images.
func (s *byteColumns) ReadColumn(j int, dst []float64) ([]float64, []string, error) {
	if j < 0 || j >= len(s.cols) {
		return nil, nil, fmt.Errorf("data: MNIST has %d pixel columns, not column %d", len(s.cols), j+1)
	}
	if cap(dst) < s.rows {
		dst = make([]float64, s.rows)
	}
	dst = dst[:s.rows]
	for i, p := range s.cols[j] {
		dst[i] = pixelValue(p)
	}
	return dst, nil, nil
}

// pixelValues are pixelValue of every byte.
var pixelValues = func() *[256]float64 {
	var v [256]float64
	for b := range v {
		v[b] = pixelValue(uint8(b))
	}
	return &v
}()

// ByteColumn returns feature j's pixels and the value of each byte
// (data.ByteColumnSource).
func (s *byteColumns) ByteColumn(j int) ([]uint8, *[256]float64, error) {
	if j < 0 || j >= len(s.cols) {
		return nil, nil, fmt.Errorf("data: MNIST has %d pixel columns, not column %d", len(s.cols), j+1)
	}
	return s.cols[j], pixelValues, nil
}

// findMNISTFile returns the path of the first of the accepted spellings of
// an MNIST file that exists in dir.
func findMNISTFile(dir, prefix, kind, idx string) (string, error) {
	base := prefix + "-" + kind + "-" + idx + "-ubyte"
	alt := prefix + "-" + kind + "." + idx + "-ubyte"
	for _, f := range []string{base, base + ".gz", alt, alt + ".gz"} {
		p := filepath.Join(dir, f)
		_, err := os.Stat(p)
		if err == nil {
			return p, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("data: %w", err)
		}
	}
	return "", fmt.Errorf("data: %s (or %s.gz) is missing: %w", base, base, MNISTMissingError(dir))
}
