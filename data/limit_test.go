package data

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// rowsReader yields a CSV header then the row "1,2" n times (n < 0: for
// ever).
type rowsReader struct {
	head bool
	n    int
	buf  []byte
}

func (r *rowsReader) Read(p []byte) (int, error) {
	if len(r.buf) == 0 {
		switch {
		case !r.head:
			r.head, r.buf = true, []byte("a,y\n")
		case r.n == 0:
			return 0, io.EOF
		default:
			r.buf = bytes.Repeat([]byte("1,2\n"), 1024)
			if r.n > 0 {
				r.n--
			}
		}
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// TestReadCSVRefusesInputBeyondMaxBytes checks that an input longer than
// MaxBytes is an error naming it, the cap and the option (wrapping
// ErrTooLarge), that one within it reads, and that a negative cap is an
// error naming the option.
func TestReadCSVRefusesInputBeyondMaxBytes(t *testing.T) {
	// 16 MiB of rows under a 1 MiB cap.
	_, err := ReadCSV(&rowsReader{n: 4096}, "big.csv", CSVOptions{MaxBytes: 1 << 20})
	if !errors.Is(err, ErrTooLarge) || err.Error() != "data: big.csv is larger than the 1 MiB limit; raise it with CSVOptions.MaxBytes" {
		t.Errorf("16 MiB under 1 MiB: %v", err)
	}
	d, err := ReadCSV(&rowsReader{n: 4}, "small.csv", CSVOptions{MaxBytes: 1 << 20})
	if err != nil || d.Rows != 4*1024 {
		t.Errorf("16 KiB under 1 MiB: %v", err)
	}
	if _, err := ReadCSV(&rowsReader{n: 1}, "x.csv", CSVOptions{MaxBytes: -1}); err == nil || !strings.Contains(err.Error(), "CSVOptions.MaxBytes -1") {
		t.Errorf("negative MaxBytes: %v", err)
	}
}

// TestLoadCSVRefusesLargeFileBeforeReading checks that a regular file
// larger than the cap (the 1 GiB default here, a sparse file) is refused
// by its size, without reading it.
func TestLoadCSVRefusesLargeFileBeforeReading(t *testing.T) {
	p := filepath.Join(t.TempDir(), "huge.csv")
	if err := os.WriteFile(p, []byte("a,y\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, DefaultMaxBytes+1); err != nil {
		t.Skipf("no sparse file: %v", err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := LoadCSV(p, CSVOptions{})
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), p+" is larger than the 1 GiB limit") {
		t.Errorf("1 GiB + 1 byte: %v", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Errorf("%d bytes allocated to refuse it", n)
	}
	if _, err := LoadCSV(p, CSVOptions{MaxBytes: 10}); !strings.Contains(err.Error(), "larger than the 10 bytes limit") {
		t.Errorf("MaxBytes 10: %v", err)
	}
	if _, err := LoadCSV(filepath.Dir(p), CSVOptions{}); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("a directory: %v", err)
	}
}

// gzipBomb returns a gzip stream (concatenated members, which gzip readers
// read as one) of an IDX file whose header declares n images of 28×28 and
// whose data, all zeros, is as long as declared: a few MB that inflate to
// n·784 bytes.
func gzipBomb(t *testing.T, n int) []byte {
	t.Helper()
	const chunk = 1 << 20
	total := n * 28 * 28
	var out bytes.Buffer
	out.Write(gzipBytes(t, idxFile(idxImagesMagic, []uint32{uint32(n), 28, 28}, make([]byte, total%chunk))))
	member := gzipBytes(t, make([]byte, chunk))
	for range total / chunk {
		out.Write(member)
	}
	return out.Bytes()
}

// TestReadIDXRefusesGzipBombByItsHeader checks that a gzip'd IDX file of a
// few MB declaring more images than the 1 GiB cap holds is refused from
// its header, before it is inflated.
func TestReadIDXRefusesGzipBombByItsHeader(t *testing.T) {
	bomb := gzipBomb(t, 1_400_000) // 1.02 GiB of pixels
	if len(bomb) > 4<<20 {
		t.Fatalf("the bomb is %d bytes", len(bomb))
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, _, _, err := ReadIDXImages(bytes.NewReader(bomb), "bomb.gz")
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "bomb.gz declares 1400000 images of 28×28") {
		t.Errorf("bomb: %v", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20 {
		t.Errorf("%d bytes allocated to refuse it", n)
	}
}

// TestReadIDXMaxBytes checks a smaller cap: a file declaring more is
// refused, one within it reads, a stream longer than declared is refused,
// and a negative cap is an error.
func TestReadIDXMaxBytes(t *testing.T) {
	img := idxFile(idxImagesMagic, []uint32{10, 28, 28}, make([]byte, 10*28*28)) // 7856 bytes
	lbl := idxFile(idxLabelsMagic, []uint32{5000}, make([]byte, 5000))
	for _, gz := range []bool{false, true} {
		in, lin := img, lbl
		if gz {
			in, lin = gzipBytes(t, img), gzipBytes(t, lbl)
		}
		if _, _, _, _, err := ReadIDXImagesMax(bytes.NewReader(in), "x", 7856); err != nil {
			t.Errorf("gzip %v: at the cap: %v", gz, err)
		}
		if _, _, _, _, err := ReadIDXImagesMax(bytes.NewReader(in), "x", 7855); !errors.Is(err, ErrTooLarge) {
			t.Errorf("gzip %v: one byte over the cap: %v", gz, err)
		}
		if _, err := ReadIDXLabelsMax(bytes.NewReader(lin), "y", 4096); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "y declares 5000 labels") {
			t.Errorf("gzip %v: labels over the cap: %v", gz, err)
		}
	}
	// More data than declared: the trailing data is refused, not read on.
	long := gzipBytes(t, append(slices.Clone(img), make([]byte, 1<<20)...))
	if _, _, _, _, err := ReadIDXImagesMax(bytes.NewReader(long), "x", 1<<30); err == nil || !strings.Contains(err.Error(), "trailing data") {
		t.Errorf("trailing data: %v", err)
	}
	if _, _, _, _, err := ReadIDXImagesMax(bytes.NewReader(img), "x", -1); err == nil || !strings.Contains(err.Error(), "maxBytes -1") {
		t.Errorf("negative cap: %v", err)
	}
}
