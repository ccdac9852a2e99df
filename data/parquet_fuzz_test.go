package data

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
)

// fuzzTables returns small tables for the seeds of the columnar fuzz
// targets: columns a (numbers), b (text), y (text labels), and one of
// every kind.
func fuzzTables(t testing.TB) []arrow.RecordBatch {
	small := []testColumn{
		{"a", arrow.PrimitiveTypes.Float64, []any{1.5, nil, -2.0, math.NaN()}},
		{"b", arrow.BinaryTypes.String, []any{"x", " y", nil, "NA"}},
		{"y", arrow.BinaryTypes.String, []any{"p", "q", "p", "r"}},
	}
	ints := []testColumn{
		{"a", arrow.PrimitiveTypes.Int32, []any{int32(1), int32(2), nil}},
		{"b", stringDict, []any{"u", nil, "u"}},
		{"y", arrow.PrimitiveTypes.Int64, []any{int64(0), int64(1), int64(1)}},
	}
	return []arrow.RecordBatch{record(t, small), record(t, ints), record(t, mixedColumns(12))}
}

// checkFuzzResult checks what a columnar reader returned on fuzzed bytes.
func checkFuzzResult(t *testing.T, d *Dataset, err error, opts CSVOptions) {
	if err != nil {
		if d != nil {
			t.Fatal("non-nil Dataset with an error")
		}
		if !strings.HasPrefix(err.Error(), "data: ") {
			t.Fatalf("error without the package prefix: %v", err)
		}
		return
	}
	if d.Rows < 1 || d.Cols < 1 || len(d.X) != d.Rows*d.Cols || len(d.FeatureNames) != d.Cols {
		t.Fatalf("inconsistent shape: %d×%d, len X %d, %d names", d.Rows, d.Cols, len(d.X), len(d.FeatureNames))
	}
	if !opts.NoTarget && len(d.Y) != d.Rows || opts.NoTarget && d.Y != nil {
		t.Fatalf("%d targets for %d rows (NoTarget %v)", len(d.Y), d.Rows, opts.NoTarget)
	}
	if opts.MaxRows > 0 && d.Rows > opts.MaxRows {
		t.Fatalf("%d rows, MaxRows %d", d.Rows, opts.MaxRows)
	}
	if int64(len(d.X)) > opts.MaxBytes/2 {
		t.Fatalf("%d values with MaxBytes %d", len(d.X), opts.MaxBytes)
	}
	if err := d.CheckCategories(); err != nil {
		t.Fatal(err)
	}
	for _, v := range d.X {
		if math.IsInf(v, 0) {
			t.Fatal("infinite feature value")
		}
	}
	for _, y := range d.Y {
		if math.IsNaN(y) || math.IsInf(y, 0) {
			t.Fatalf("target %v", y)
		}
	}
	if k := len(d.Classes); k > 0 {
		for _, y := range d.Y {
			if y < 0 || y >= float64(k) || y != math.Trunc(y) {
				t.Fatalf("class %v of %d", y, k)
			}
		}
	}
}

// fuzzOptions makes reading options from a byte.
func fuzzOptions(opt uint8) CSVOptions {
	opts := CSVOptions{MaxBytes: 1 << 20, MaxRows: int(opt >> 5)}
	switch opt % 4 {
	case 1:
		opts.NoTarget = true
	case 2:
		opts.Target, opts.Classification = "y", true
	case 3:
		opts.Target = "a"
	}
	if opt&4 != 0 && !opts.NoTarget {
		opts.Classification = true
	}
	if opt&8 != 0 {
		opts.Categorical = []string{"a"}
	}
	if opt&16 != 0 {
		opts.Weight = "a"
	}
	return opts
}

func FuzzReadParquet(f *testing.F) {
	for i, rec := range fuzzTables(f) {
		for k, b := range [][]byte{
			writeParquet(f, rec),
			writeParquet(f, rec, parquet.WithDictionaryDefault(false), parquet.WithMaxRowGroupLength(2)),
			writeParquet(f, rec, parquet.WithDataPageVersion(parquet.DataPageV2), parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDataPageSize(16)),
		} {
			f.Add(b, uint8(i+k))
			f.Add(b[:len(b)*2/3], uint8(i+k+2))
		}
		rec.Release()
	}
	path := filepath.Join(f.TempDir(), "fuzz.parquet")
	f.Fuzz(func(t *testing.T, in []byte, opt uint8) {
		if err := os.WriteFile(path, in, 0o600); err != nil {
			t.Fatal(err)
		}
		opts := fuzzOptions(opt)
		d, err := LoadParquet(path, opts)
		checkFuzzResult(t, d, err, opts)
	})
}

func FuzzReadArrow(f *testing.F) {
	for i, rec := range fuzzTables(f) {
		for k, b := range [][]byte{
			writeArrow(f, rec, false, 2),
			writeArrow(f, rec, true, 3),
			writeArrow(f, rec, false, 100, ipc.WithLZ4()),
			writeArrow(f, rec, true, 2, ipc.WithZstd()),
		} {
			f.Add(b, uint8(i+k))
			f.Add(b[:len(b)*2/3], uint8(i+k+2))
		}
		rec.Release()
	}
	path := filepath.Join(f.TempDir(), "fuzz.arrow")
	f.Fuzz(func(t *testing.T, in []byte, opt uint8) {
		if err := os.WriteFile(path, in, 0o600); err != nil {
			t.Fatal(err)
		}
		opts := fuzzOptions(opt)
		d, err := LoadArrow(path, opts)
		checkFuzzResult(t, d, err, opts)
	})
}
