package data

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// idxFile builds an IDX file with the given magic, dimensions and data.
func idxFile(magic uint32, dims []uint32, data []byte) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.BigEndian, magic)
	binary.Write(&b, binary.BigEndian, dims)
	b.Write(data)
	return b.Bytes()
}

func gzipBytes(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestIDXRoundTrip(t *testing.T) {
	const n, rows, cols = 3, 2, 4
	pixels := make([]byte, n*rows*cols)
	for i := range pixels {
		pixels[i] = byte(i * 10)
	}
	labels := []byte{7, 0, 9}
	imgFile := idxFile(idxImagesMagic, []uint32{n, rows, cols}, pixels)
	lblFile := idxFile(idxLabelsMagic, []uint32{n}, labels)

	for _, gz := range []bool{false, true} {
		img, lbl := imgFile, lblFile
		if gz {
			img, lbl = gzipBytes(t, img), gzipBytes(t, lbl)
		}
		gotPix, gn, gr, gc, err := ReadIDXImages(bytes.NewReader(img), "img")
		if err != nil {
			t.Fatalf("gzip %v: %v", gz, err)
		}
		if gn != n || gr != rows || gc != cols || !bytes.Equal(gotPix, pixels) {
			t.Errorf("gzip %v: got %d×%d×%d %v, want %d×%d×%d %v", gz, gn, gr, gc, gotPix, n, rows, cols, pixels)
		}
		gotLbl, err := ReadIDXLabels(bytes.NewReader(lbl), "lbl")
		if err != nil {
			t.Fatalf("gzip %v: %v", gz, err)
		}
		if !bytes.Equal(gotLbl, labels) {
			t.Errorf("gzip %v: labels %v, want %v", gz, gotLbl, labels)
		}
	}

	// Zero images is a valid file.
	p, gn, _, _, err := ReadIDXImages(bytes.NewReader(idxFile(idxImagesMagic, []uint32{0, 28, 28}, nil)), "empty")
	if err != nil || gn != 0 || len(p) != 0 {
		t.Errorf("zero images: %v, n=%d, len %d", err, gn, len(p))
	}
}

func TestIDXErrors(t *testing.T) {
	okPixels := make([]byte, 2*3*3)
	goodImg := idxFile(idxImagesMagic, []uint32{2, 3, 3}, okPixels)
	corruptGzip := gzipBytes(t, goodImg)
	corruptGzip[len(corruptGzip)-6] ^= 0xff // damage the CRC-32

	tests := []struct {
		name   string
		labels bool
		input  []byte
		want   string
	}{
		{"empty", false, nil, "empty or truncated"},
		{"one byte", true, []byte{0}, "empty or truncated"},
		{"short header", false, idxFile(idxImagesMagic, []uint32{2}, nil), "truncated IDX header"},
		{"labels magic for images", false, idxFile(idxLabelsMagic, []uint32{2, 3, 3}, okPixels), "bad magic number 0x00000801, want 0x00000803"},
		{"images magic for labels", true, idxFile(idxImagesMagic, []uint32{2}, []byte{1, 2}), "bad magic number 0x00000803, want 0x00000801"},
		{"text file", false, []byte("hello, world, this is text"), "bad magic number"},
		{"too many images", false, idxFile(idxImagesMagic, []uint32{10_000_001, 1, 1}, nil), "exceeds the limit"},
		{"too many labels", true, idxFile(idxLabelsMagic, []uint32{0xffffffff}, nil), "exceeds the limit"},
		{"huge rows", false, idxFile(idxImagesMagic, []uint32{1, 5000, 1}, nil), "out of range"},
		{"zero cols", false, idxFile(idxImagesMagic, []uint32{1, 28, 0}, nil), "out of range"},
		{"too many pixels", false, idxFile(idxImagesMagic, []uint32{10_000_000, 28, 28}, nil), "over the limit"},
		{"truncated images", false, goodImg[:len(goodImg)-1], "truncated: header promises 2 images of 3×3 (18 bytes of data), file has 17"},
		{"declared beyond the size cap", false, idxFile(idxImagesMagic, []uint32{2048, 1024, 1024}, []byte{1, 2, 3}), "is larger than the 1 GiB limit"},
		{"truncated labels", true, idxFile(idxLabelsMagic, []uint32{5}, []byte{1, 2}), "truncated"},
		{"trailing data", true, idxFile(idxLabelsMagic, []uint32{1}, []byte{1, 2}), "trailing data"},
		{"truncated gzip", false, gzipBytes(t, goodImg)[:20], "nm"},
		{"corrupt gzip", false, corruptGzip, "checksum"},
		{"bad gzip header", false, []byte{0x1f, 0x8b, 0, 0}, "nm"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.labels {
				_, err = ReadIDXLabels(bytes.NewReader(tc.input), "nm")
			} else {
				_, _, _, _, err = ReadIDXImages(bytes.NewReader(tc.input), "nm")
			}
			if err == nil {
				t.Fatal("no error")
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "data: ") || !strings.Contains(msg, "nm") || !strings.Contains(msg, tc.want) {
				t.Errorf("error %q, want one starting \"data: \" and naming nm and %q", msg, tc.want)
			}
		})
	}
}

func TestIDXTruncatedDoesNotAllocateHeader(t *testing.T) {
	// A header that claims 2 GiB of pixels over a 3-byte body must fail
	// without allocating anything near 2 GiB.
	in := idxFile(idxImagesMagic, []uint32{2048, 1024, 1024}, []byte{1, 2, 3})
	before := memAlloc()
	if _, _, _, _, err := ReadIDXImages(bytes.NewReader(in), "big"); err == nil {
		t.Fatal("no error for a truncated file")
	}
	after := memAlloc()
	if after-before > 16<<20 {
		t.Errorf("reading a truncated 2 GiB header allocated %.0f MB", (after-before)/1e6)
	}
}

func TestLoadMNISTSynthetic(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pix := []byte{0, 255, 51, 102, 0, 0, 0, 0}
	write("train-images-idx3-ubyte.gz", gzipBytes(t, idxFile(idxImagesMagic, []uint32{2, 2, 2}, pix)))
	write("train-labels-idx1-ubyte", idxFile(idxLabelsMagic, []uint32{2}, []byte{3, 8}))
	write("t10k-images.idx3-ubyte", idxFile(idxImagesMagic, []uint32{1, 2, 2}, pix[:4]))
	write("t10k-labels-idx1-ubyte.gz", gzipBytes(t, idxFile(idxLabelsMagic, []uint32{1}, []byte{5})))

	train, test, err := LoadMNIST(dir)
	if err != nil {
		t.Fatal(err)
	}
	if train.Rows != 2 || train.Cols != 4 || !slices.Equal(train.FeatureNames, []string{"px0", "px1", "px2", "px3"}) {
		t.Errorf("train %d×%d %q", train.Rows, train.Cols, train.FeatureNames)
	}
	if !slices.Equal(train.X, []float64{0, 1, 0.2, 0.4, 0, 0, 0, 0}) || !slices.Equal(train.Y, []float64{3, 8}) {
		t.Errorf("train X %v Y %v", train.X, train.Y)
	}
	if test.Rows != 1 || test.Y[0] != 5 || test.Name != "mnist-test" || train.Name != "mnist-train" || test.TargetName != "label" {
		t.Errorf("test %+v", test)
	}

	// A label MNIST does not have is an error naming the file and image.
	write("train-labels-idx1-ubyte", idxFile(idxLabelsMagic, []uint32{2}, []byte{3, 10}))
	if _, _, err := LoadMNIST(dir); err == nil || !strings.Contains(err.Error(), "label 10 of image 1") || !strings.Contains(err.Error(), "train-labels-idx1-ubyte") {
		t.Errorf("label 10: error %v", err)
	}
	write("train-labels-idx1-ubyte", idxFile(idxLabelsMagic, []uint32{2}, []byte{3, 8}))

	// Mismatched counts and a missing file are errors naming the files.
	write("t10k-labels-idx1-ubyte.gz", gzipBytes(t, idxFile(idxLabelsMagic, []uint32{2}, []byte{5, 6})))
	if _, _, err := LoadMNIST(dir); err == nil || !strings.Contains(err.Error(), "t10k-labels-idx1-ubyte.gz has 2 labels") || errors.Is(err, ErrMNISTMissing) {
		t.Errorf("count mismatch: error %v", err)
	}
	os.Remove(filepath.Join(dir, "t10k-labels-idx1-ubyte.gz"))
	if _, _, err := LoadMNIST(dir); err == nil || !strings.Contains(err.Error(), "t10k-labels-idx1-ubyte") || !strings.Contains(err.Error(), dir) || !errors.Is(err, ErrMNISTMissing) {
		t.Errorf("missing file: error %v, want one naming the file and the folder and wrapping ErrMNISTMissing", err)
	}
}

// TestOpenMNIST checks that OpenMNIST's data sets read a column at a time
// the values of the pixels (pixel/255, computed here from the file's bytes),
// for more images than a pass of the transposition takes, and that
// Materialize gives LoadMNIST's X.
func TestOpenMNIST(t *testing.T) {
	dir := t.TempDir()
	const n, h, w = 131, 3, 5 // images; 131 = 2 passes of 64 and 3 more
	pix := make([]byte, n*h*w)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range pix {
		pix[i] = byte(r.IntN(256))
	}
	labels := make([]byte, n)
	for i := range labels {
		labels[i] = byte(i % 10)
	}
	for name, b := range map[string][]byte{
		"train-images-idx3-ubyte":   idxFile(idxImagesMagic, []uint32{n, h, w}, pix),
		"train-labels-idx1-ubyte":   idxFile(idxLabelsMagic, []uint32{n}, labels),
		"t10k-images-idx3-ubyte.gz": gzipBytes(t, idxFile(idxImagesMagic, []uint32{2, h, w}, pix[:2*h*w])),
		"t10k-labels-idx1-ubyte":    idxFile(idxLabelsMagic, []uint32{2}, labels[:2]),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	train, test, err := OpenMNIST(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	if train.X != nil || train.Source == nil || test.X != nil || test.Source == nil {
		t.Fatalf("OpenMNIST: X %v, Source %v; want no X and a Source", train.X != nil, train.Source != nil)
	}
	if train.Rows != n || train.Cols != h*w || test.Rows != 2 || train.FeatureNames[h*w-1] != "px14" || train.Y[13] != 3 {
		t.Errorf("train %d×%d, test %d rows, last name %q, Y[13] %v", train.Rows, train.Cols, test.Rows, train.FeatureNames[h*w-1], train.Y[13])
	}
	// Columns read concurrently (the Source allows it), each against the bytes.
	var wg sync.WaitGroup
	for j := range h * w {
		wg.Go(func() {
			col, dict, err := train.Source.ReadColumn(j, make([]float64, 3))
			if err != nil || dict != nil || len(col) != n {
				t.Errorf("column %d: %d values, dict %v, err %v", j, len(col), dict, err)
				return
			}
			for i, v := range col {
				if want := float64(pix[i*h*w+j]) / 255; v != want {
					t.Errorf("column %d, image %d: %v, want %v", j, i, v, want)
					return
				}
			}
		})
	}
	wg.Wait()
	if _, _, err := train.Source.ReadColumn(h*w, nil); err == nil || !strings.Contains(err.Error(), "column 16") {
		t.Errorf("column past the last: error %v", err)
	}
	eager, eagerTest, err := LoadMNIST(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := train.Materialize(); err != nil {
		t.Fatal(err)
	}
	if err := test.Materialize(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(train.X, eager.X) || !slices.Equal(test.X, eagerTest.X) || !slices.Equal(train.Y, eager.Y) {
		t.Error("OpenMNIST's data sets, materialized, differ from LoadMNIST's")
	}
	// Errors are LoadMNIST's: a missing file names it and wraps ErrMNISTMissing.
	os.Remove(filepath.Join(dir, "t10k-labels-idx1-ubyte"))
	if _, _, err := OpenMNIST(dir, 0); !errors.Is(err, ErrMNISTMissing) || !strings.Contains(err.Error(), "t10k-labels-idx1-ubyte") {
		t.Errorf("missing file: error %v", err)
	}
}

// mnistDir is where the project keeps the MNIST files, relative to this
// package: /work/shared/data/mnist beside the checkout.
const mnistDir = "../../shared/data/mnist"

func TestLoadMNISTShared(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping full MNIST load in -short mode")
	}
	if _, err := os.Stat(filepath.Join(mnistDir, "train-images-idx3-ubyte.gz")); err != nil {
		t.Skipf("MNIST not available (%v); it lives in shared/data/mnist beside the checkout", err)
	}
	train, test, err := LoadMNIST(mnistDir)
	if err != nil {
		t.Fatal(err)
	}
	if train.Rows != 60000 || train.Cols != 784 || test.Rows != 10000 || test.Cols != 784 {
		t.Fatalf("MNIST shapes %d×%d and %d×%d, want 60000×784 and 10000×784", train.Rows, train.Cols, test.Rows, test.Cols)
	}
	if train.NumClasses() != 10 || test.NumClasses() != 10 {
		t.Errorf("NumClasses %d, %d; want 10", train.NumClasses(), test.NumClasses())
	}
	// The first training image is a 5 and the first test image a 7.
	if train.Y[0] != 5 || test.Y[0] != 7 {
		t.Errorf("first labels %v, %v; want 5, 7", train.Y[0], test.Y[0])
	}
	for i, v := range train.X {
		if v < 0 || v > 1 {
			t.Fatalf("train.X[%d] = %v, outside [0, 1]", i, v)
		}
	}
	if train.FeatureNames[783] != "px783" {
		t.Errorf("last feature name %q", train.FeatureNames[783])
	}
}

func memAlloc() float64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.TotalAlloc)
}
