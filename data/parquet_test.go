package data

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/gotrain/gotrain/internal/readlimit"
)

// testColumn is a column of a test table: its Arrow type and its values,
// nil for a null; the Go type of a value follows the column's type
// (int32, int64, uint16, uint64, float32, float64, bool, string,
// decimal128.Num).
type testColumn struct {
	name string
	typ  arrow.DataType
	vals []any
}

var stringDict = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}

// mixedColumns returns a table of rows rows holding a column of each type
// the readers take, with nulls, NaN, -0, spaces around text, missing-value
// markers and numbers written differently in text columns; "label" is a
// text class label, "w" a weight, "code" an integer column to name
// categorical, "y" a numeric target.
func mixedColumns(rows int) []testColumn {
	r := rand.New(rand.NewPCG(1, 2))
	cols := []testColumn{
		{name: "i32", typ: arrow.PrimitiveTypes.Int32},
		{name: "i64", typ: arrow.PrimitiveTypes.Int64},
		{name: "u16", typ: arrow.PrimitiveTypes.Uint16},
		{name: "u64", typ: arrow.PrimitiveTypes.Uint64},
		{name: "f32", typ: arrow.PrimitiveTypes.Float32},
		{name: " f64 ", typ: arrow.PrimitiveTypes.Float64},
		{name: "flag", typ: arrow.FixedWidthTypes.Boolean},
		{name: "color", typ: arrow.BinaryTypes.String},
		{name: "shape", typ: stringDict},
		{name: "big", typ: arrow.BinaryTypes.LargeString},
		{name: "dec", typ: &arrow.Decimal128Type{Precision: 10, Scale: 3}},
		{name: "code", typ: arrow.PrimitiveTypes.Int64},
		{name: "w", typ: arrow.PrimitiveTypes.Float64},
		{name: "y", typ: arrow.PrimitiveTypes.Float64},
		{name: "label", typ: arrow.BinaryTypes.String},
	}
	colors := []string{" red", "blue ", "green", "NA", "", "1.0", "1", "2.50", "nan", " NaN "}
	shapes := []string{"circle", "square", "tri angle", " square"}
	labels := []string{"cat", " dog", "bird ", "dog"}
	for i := range rows {
		null := func(every int) bool { return i%every == every-1 }
		add := func(k int, v any) { cols[k].vals = append(cols[k].vals, v) }
		switch {
		case null(7):
			add(0, nil)
		default:
			add(0, int32(r.IntN(101)-50))
		}
		switch i % 5 {
		case 0:
			add(1, int64(1)<<53+1) // rounds to 2^53 either way
		case 1:
			add(1, int64(-1)<<62-3)
		default:
			add(1, r.Int64N(1000)-500)
		}
		add(2, uint16(r.IntN(65536)))
		add(3, uint64(math.MaxUint64-uint64(r.IntN(1000))))
		switch {
		case null(6):
			add(4, nil)
		case i%9 == 2:
			add(4, float32(math.NaN()))
		case i%19 == 7:
			add(4, math.Float32frombits(0xffc0_0bad)) // a NaN of another sign and payload
		case i%4 == 1:
			add(4, float32(0.1))
		default:
			add(4, float32(r.NormFloat64()*1e3))
		}
		switch {
		case null(5):
			add(5, nil)
		case i%11 == 3:
			add(5, math.NaN())
		case i%17 == 5:
			add(5, math.Float64frombits(0xfff8_dead_0000_0001)) // a NaN of another sign and payload
		case i%13 == 4:
			add(5, math.Copysign(0, -1))
		default:
			add(5, r.NormFloat64())
		}
		switch {
		case null(8):
			add(6, nil)
		default:
			add(6, r.IntN(2) == 1)
		}
		switch {
		case null(9):
			add(7, nil)
		default:
			add(7, colors[r.IntN(len(colors))])
		}
		switch {
		case null(4):
			add(8, nil)
		default:
			add(8, shapes[r.IntN(len(shapes))])
		}
		add(9, fmt.Sprintf("id%03d", r.IntN(40)))
		switch {
		case null(10):
			add(10, nil)
		default:
			add(10, decimal128.FromI64(r.Int64N(2_000_000)-1_000_000))
		}
		add(11, []int64{3, 10, 200, -7}[r.IntN(4)])
		add(12, float64(r.IntN(5))/2)
		add(13, r.Float64()*100)
		add(14, labels[r.IntN(len(labels))])
	}
	return cols
}

// record builds an Arrow record batch of cols.
func record(t testing.TB, cols []testColumn) arrow.RecordBatch {
	t.Helper()
	mem := memory.NewGoAllocator()
	fields := make([]arrow.Field, len(cols))
	arrays := make([]arrow.Array, len(cols))
	for k, c := range cols {
		fields[k] = arrow.Field{Name: c.name, Type: c.typ, Nullable: true}
		b := array.NewBuilder(mem, c.typ)
		for _, v := range c.vals {
			if v == nil {
				b.AppendNull()
				continue
			}
			switch b := b.(type) {
			case *array.Int32Builder:
				b.Append(v.(int32))
			case *array.Int64Builder:
				b.Append(v.(int64))
			case *array.Uint16Builder:
				b.Append(v.(uint16))
			case *array.Uint64Builder:
				b.Append(v.(uint64))
			case *array.Float32Builder:
				b.Append(v.(float32))
			case *array.Float64Builder:
				b.Append(v.(float64))
			case *array.BooleanBuilder:
				b.Append(v.(bool))
			case *array.StringBuilder:
				b.Append(v.(string))
			case *array.LargeStringBuilder:
				b.Append(v.(string))
			case *array.BinaryDictionaryBuilder:
				if err := b.AppendString(v.(string)); err != nil {
					t.Fatal(err)
				}
			case *array.Decimal128Builder:
				b.Append(v.(decimal128.Num))
			default:
				t.Fatalf("column %s: no case for builder %T", c.name, b)
			}
		}
		arrays[k] = b.NewArray()
	}
	rows := int64(0)
	if len(cols) > 0 {
		rows = int64(len(cols[0].vals))
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), arrays, rows)
}

// csvCell writes a value the way a CSV writer writes that column's type:
// a null as an empty field, a float32 in its shortest float32 form, a
// boolean as 1 or 0.
func csvCell(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case int32:
		return strconv.FormatInt(int64(v), 10)
	case int64:
		return strconv.FormatInt(v, 10)
	case uint16:
		return strconv.FormatUint(uint64(v), 10)
	case uint64:
		return strconv.FormatUint(v, 10)
	case float32:
		return strconv.FormatFloat(float64(v), 'g', -1, 32)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case bool:
		if v {
			return "1"
		}
		return "0"
	case string:
		return v
	case decimal128.Num:
		return v.ToString(3)
	}
	panic(fmt.Sprintf("csvCell: %T", v))
}

// writeCSVTable writes cols as CSV text.
func writeCSVTable(t testing.TB, cols []testColumn) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	rec := make([]string, len(cols))
	for k, c := range cols {
		rec[k] = c.name
	}
	w.Write(rec)
	for i := range cols[0].vals {
		for k, c := range cols {
			rec[k] = csvCell(c.vals[i])
		}
		w.Write(rec)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// writeParquet writes rec as Parquet with the given writer properties.
func writeParquet(t testing.TB, rec arrow.RecordBatch, props ...parquet.WriterProperty) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(rec.Schema(), &buf, parquet.NewWriterProperties(props...), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// writeArrow writes rec as an Arrow IPC file (or stream) in batches of at
// most batch rows.
func writeArrow(t testing.TB, rec arrow.RecordBatch, stream bool, batch int64, opts ...ipc.Option) []byte {
	t.Helper()
	var buf bytes.Buffer
	opts = append(opts, ipc.WithSchema(rec.Schema()))
	var w interface {
		Write(arrow.RecordBatch) error
		Close() error
	}
	if stream {
		w = ipc.NewWriter(&buf, opts...)
	} else {
		fw, err := ipc.NewFileWriter(&buf, opts...)
		if err != nil {
			t.Fatal(err)
		}
		w = fw
	}
	for i := int64(0); i < rec.NumRows(); i += batch {
		part := rec.NewSlice(i, min(i+batch, rec.NumRows()))
		if err := w.Write(part); err != nil {
			t.Fatal(err)
		}
		part.Release()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// writeTemp writes b to a file named name in dir and returns its path.
func writeTemp(t testing.TB, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// sameFloats reports whether a and b hold the same bits (a missing value
// is math.NaN() itself, whatever NaN the file held), else describes the
// first difference.
func sameFloats(a, b []float64) (bool, string) {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false, fmt.Sprintf("lengths %d and %d (nil: %v, %v)", len(a), len(b), a == nil, b == nil)
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false, fmt.Sprintf("at %d: %v (%#x) and %v (%#x)", i, a[i], math.Float64bits(a[i]), b[i], math.Float64bits(b[i]))
		}
	}
	return true, ""
}

// diffDatasets describes how a and b differ, Name aside; "" when they
// do not.
func diffDatasets(a, b *Dataset) string {
	var d []string
	if a.Rows != b.Rows || a.Cols != b.Cols {
		d = append(d, fmt.Sprintf("shape %dx%d vs %dx%d", a.Rows, a.Cols, b.Rows, b.Cols))
	}
	if !slices.Equal(a.FeatureNames, b.FeatureNames) {
		d = append(d, fmt.Sprintf("FeatureNames %q vs %q", a.FeatureNames, b.FeatureNames))
	}
	if a.TargetName != b.TargetName {
		d = append(d, fmt.Sprintf("TargetName %q vs %q", a.TargetName, b.TargetName))
	}
	if ok, why := sameFloats(a.X, b.X); !ok {
		if a.Cols > 0 {
			for j := 0; j < a.Cols && j < b.Cols; j++ {
				if ok, why := sameFloats(a.Column(j, nil), b.Column(j, nil)); !ok {
					why = fmt.Sprintf("column %q: %s", a.FeatureNames[j], why)
					d = append(d, "X "+why)
				}
			}
		} else {
			d = append(d, "X "+why)
		}
	}
	if ok, why := sameFloats(a.Y, b.Y); !ok {
		d = append(d, "Y "+why)
	}
	if ok, why := sameFloats(a.Weights, b.Weights); !ok {
		d = append(d, "Weights "+why)
	}
	if !slices.Equal(a.Classes, b.Classes) || (a.Classes == nil) != (b.Classes == nil) {
		d = append(d, fmt.Sprintf("Classes %q vs %q", a.Classes, b.Classes))
	}
	if len(a.Categories) != len(b.Categories) || (a.Categories == nil) != (b.Categories == nil) {
		d = append(d, fmt.Sprintf("Categories %q vs %q", a.Categories, b.Categories))
	} else {
		for j := range a.Categories {
			if !slices.Equal(a.Categories[j], b.Categories[j]) || (a.Categories[j] == nil) != (b.Categories[j] == nil) {
				d = append(d, fmt.Sprintf("Categories[%d] %q vs %q", j, a.Categories[j], b.Categories[j]))
			}
		}
	}
	return strings.Join(d, "; ")
}

// TestColumnarMatchesCSV writes one table as CSV, as Parquet (plain,
// dictionary-encoded, compressed, in small row groups and pages) and as
// Arrow IPC (file and stream, in several record batches, compressed),
// and requires LoadFile to give the same Dataset from each, bit for bit.
func TestColumnarMatchesCSV(t *testing.T) {
	cols := mixedColumns(150)
	rec := record(t, cols)
	defer rec.Release()
	dir := t.TempDir()
	csvPath := writeTemp(t, dir, "t.csv", writeCSVTable(t, cols))
	files := map[string][]byte{
		"default.parquet": writeParquet(t, rec),
		"plain.parquet":   writeParquet(t, rec, parquet.WithDictionaryDefault(false)),
		"small.parquet": writeParquet(t, rec, parquet.WithMaxRowGroupLength(16), parquet.WithDataPageSize(64),
			parquet.WithBatchSize(8), parquet.WithCompression(compress.Codecs.Snappy)),
		"v2zstd.parquet": writeParquet(t, rec, parquet.WithDataPageVersion(parquet.DataPageV2),
			parquet.WithCompression(compress.Codecs.Zstd), parquet.WithMaxRowGroupLength(50)),
		"one.arrow":     writeArrow(t, rec, false, 1000),
		"batches.arrow": writeArrow(t, rec, false, 17),
		"lz4.arrow":     writeArrow(t, rec, false, 40, ipc.WithLZ4()),
		"stream.arrows": writeArrow(t, rec, true, 33),
		"zstd.arrows":   writeArrow(t, rec, true, 64, ipc.WithZstd()),
	}
	paths := map[string]string{}
	for name, b := range files {
		paths[name] = writeTemp(t, dir, name, b)
	}
	tests := []struct {
		name string
		opts CSVOptions
	}{
		{"text labels, weight, categorical", CSVOptions{Target: "label", Classification: true, Weight: "w", Categorical: []string{"code", "u16"}}},
		{"regression", CSVOptions{Target: "y"}},
		{"regression, last column text parsed", CSVOptions{Target: "code"}},
		{"numeric labels", CSVOptions{Target: "code", Classification: true}},
		{"float labels", CSVOptions{Target: "y", Classification: true, MaxRows: 20}},
		{"no target", CSVOptions{NoTarget: true, Categorical: []string{"f64", "flag", "i32"}}},
		{"max rows", CSVOptions{Target: "label", Classification: true, MaxRows: 37}},
	}
	for _, tt := range tests {
		want, err := LoadCSV(csvPath, tt.opts)
		if err != nil {
			t.Fatalf("%s: CSV: %v", tt.name, err)
		}
		if err := want.CheckCategories(); err != nil {
			t.Fatalf("%s: CSV: %v", tt.name, err)
		}
		for name, p := range paths {
			got, err := LoadFile(p, tt.opts)
			if err != nil {
				t.Errorf("%s: %s: %v", tt.name, name, err)
				continue
			}
			if got.Name != name {
				t.Errorf("%s: %s: Name %q", tt.name, name, got.Name)
			}
			if diff := diffDatasets(want, got); diff != "" {
				t.Errorf("%s: %s differs from the CSV: %s", tt.name, name, diff)
			}
		}
	}
}

// TestColumnarFeatures checks what the kinds of column read as, against
// values written out.
func TestColumnarFeatures(t *testing.T) {
	cols := []testColumn{
		{"f32", arrow.PrimitiveTypes.Float32, []any{float32(0.1), float32(3), nil, float32(1e-8)}},
		{"flag", arrow.FixedWidthTypes.Boolean, []any{true, false, nil, true}},
		{"s", arrow.BinaryTypes.String, []any{" b ", "a", "NA", "1.50"}},
		{"allmissing", arrow.BinaryTypes.String, []any{nil, "", " NA", "nan"}},
		{"d", stringDict, []any{"x", nil, "x", "w"}},
		{"u64", arrow.PrimitiveTypes.Uint64, []any{uint64(math.MaxUint64), uint64(0), uint64(7), nil}},
		{"y", arrow.PrimitiveTypes.Int64, []any{int64(1), int64(2), int64(3), int64(4)}},
	}
	rec := record(t, cols)
	defer rec.Release()
	dir := t.TempDir()
	for _, p := range []string{
		writeTemp(t, dir, "f.parquet", writeParquet(t, rec)),
		writeTemp(t, dir, "f.arrow", writeArrow(t, rec, false, 3)),
	} {
		d, err := LoadFile(p, CSVOptions{})
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		nan := math.NaN()
		want := [][]float64{
			{0.1, 3, nan, 1e-8},
			{1, 0, nan, 1},
			{2, 1, nan, 0}, // "1.5", "a", "b"
			{nan, nan, nan, nan},
			{1, nan, 1, 0},
			{math.MaxUint64, 0, 7, nan},
		}
		wantCats := [][]string{nil, nil, {"1.5", "a", "b"}, nil, {"w", "x"}, nil}
		for j, w := range want {
			if ok, why := sameFloats(d.Column(j, nil), w); !ok {
				t.Errorf("%s: column %q: %s", p, d.FeatureNames[j], why)
			}
			if !slices.Equal(d.Categories[j], wantCats[j]) || (d.Categories[j] == nil) != (wantCats[j] == nil) {
				t.Errorf("%s: column %q: categories %q, want %q", p, d.FeatureNames[j], d.Categories[j], wantCats[j])
			}
		}
		if ok, why := sameFloats(d.Y, []float64{1, 2, 3, 4}); !ok {
			t.Errorf("%s: Y: %s", p, why)
		}
	}

	// A text column with nothing but missing values is numeric, as in
	// CSV: no Categories at all, unless named categorical.
	only := record(t, []testColumn{cols[3], cols[6]})
	defer only.Release()
	p := writeTemp(t, dir, "only.parquet", writeParquet(t, only))
	d, err := LoadFile(p, CSVOptions{})
	if err != nil || d.Categories != nil {
		t.Errorf("all-missing text column: %v, Categories %q, want nil", err, d.Categories)
	}
	d, err = LoadFile(p, CSVOptions{Categorical: []string{"allmissing"}})
	if err != nil || len(d.Categories) != 1 || d.Categories[0] != nil {
		t.Errorf("all-missing text column named categorical: %v, Categories %q, want [nil]", err, d.Categories)
	}
}

// TestColumnarErrors checks the errors of the Parquet and Arrow readers.
func TestColumnarErrors(t *testing.T) {
	good := []testColumn{
		{"a", arrow.PrimitiveTypes.Float64, []any{1.0, 2.0, 3.0}},
		{"b", arrow.BinaryTypes.String, []any{"x", "y", "x"}},
		{"w", arrow.PrimitiveTypes.Float64, []any{1.0, 0.5, 2.0}},
		{"label", arrow.BinaryTypes.String, []any{"p", "q", "p"}},
	}
	with := func(k int, c testColumn) []testColumn {
		cols := slices.Clone(good)
		if k == len(cols) {
			return append(cols, c)
		}
		cols[k] = c
		return cols
	}
	tsType := &arrow.TimestampType{Unit: arrow.Millisecond}
	listType := arrow.ListOf(arrow.PrimitiveTypes.Int32)
	dir := t.TempDir()
	tests := []struct {
		name string
		cols []testColumn
		opts CSVOptions
		err  string // the error holds it (after the file name)
	}{
		{"missing target", good, CSVOptions{Target: "nope"}, `target column "nope" not found; available columns: "a", "b", "w", "label"`},
		{"null target", with(3, testColumn{"label", arrow.BinaryTypes.String, []any{"p", nil, "q"}}), CSVOptions{Classification: true}, `row 2, column "label" (4): target value is missing`},
		{"missing-marker target", with(3, testColumn{"label", arrow.BinaryTypes.String, []any{"p", "q", " NA "}}), CSVOptions{Classification: true}, `row 3, column "label" (4): target value is missing`},
		{"NaN target", with(0, testColumn{"a", arrow.PrimitiveTypes.Float64, []any{1.0, math.NaN(), 3.0}}), CSVOptions{Target: "a"}, `row 2, column "a" (1): target value is missing`},
		{"text regression target", good, CSVOptions{}, `row 1, column "label" (4): target "p" is not a number`},
		{"infinite feature", with(0, testColumn{"a", arrow.PrimitiveTypes.Float64, []any{1.0, 2.0, math.Inf(-1)}}), CSVOptions{Classification: true}, `row 3, column "a" (1): "-Inf" is not a finite number`},
		{"negative weight", with(2, testColumn{"w", arrow.PrimitiveTypes.Float64, []any{1.0, -0.5, 2.0}}), CSVOptions{Weight: "w", Classification: true}, `row 2, column "w" (3): sample weight "-0.5" is not a finite number >= 0`},
		{"null weight", with(2, testColumn{"w", arrow.PrimitiveTypes.Float64, []any{1.0, 2.0, nil}}), CSVOptions{Weight: "w", Classification: true}, `row 3, column "w" (3): sample weight is missing`},
		{"missing weight column", good, CSVOptions{Weight: "v"}, `weight column "v" not found`},
		{"timestamp", with(4, testColumn{"ts", tsType, nil}), CSVOptions{Target: "label"}, `column "ts" (5) has type`},
		{"list", with(4, testColumn{"l", listType, nil}), CSVOptions{Target: "label"}, `column "l" (5)`},
		{"duplicate names", with(1, testColumn{"a", arrow.BinaryTypes.String, []any{"x", "y", "x"}}), CSVOptions{}, `duplicate column name "a" (columns 1 and 2)`},
		{"empty name", with(1, testColumn{" ", arrow.BinaryTypes.String, []any{"x", "y", "x"}}), CSVOptions{}, `column 2 has an empty name`},
		{"NoTarget with a target", good, CSVOptions{NoTarget: true, Target: "a"}, `NoTarget excludes Target`},
		{"negative MaxRows", good, CSVOptions{MaxRows: -1}, `negative MaxRows`},
	}
	for _, tt := range tests {
		cols := tt.cols
		for k := range cols {
			if cols[k].vals == nil && (cols[k].typ == tsType || cols[k].typ == listType) {
				cols[k] = testColumn{cols[k].name, cols[k].typ, nil}
			}
		}
		rec := nestedRecord(t, cols)
		for _, f := range []struct {
			name string
			b    []byte
		}{
			{"e.parquet", writeParquet(t, rec)},
			{"e.arrow", writeArrow(t, rec, false, 2)},
		} {
			p := writeTemp(t, dir, f.name, f.b)
			_, err := LoadFile(p, tt.opts)
			if err == nil || !strings.HasPrefix(err.Error(), "data: "+p) || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: %s: err = %v, want data: %s...%s", tt.name, f.name, err, p, tt.err)
			}
		}
		rec.Release()
	}
}

// nestedRecord is record, but fills a timestamp or list column without
// values with three rows of them.
func nestedRecord(t testing.TB, cols []testColumn) arrow.RecordBatch {
	t.Helper()
	var plain []testColumn
	var extra []int
	for k, c := range cols {
		switch c.typ.(type) {
		case *arrow.TimestampType, *arrow.ListType:
			extra = append(extra, k)
			plain = append(plain, testColumn{c.name, arrow.PrimitiveTypes.Float64, []any{1.0, 2.0, 3.0}})
		default:
			plain = append(plain, c)
		}
	}
	rec := record(t, plain)
	if len(extra) == 0 {
		return rec
	}
	defer rec.Release()
	mem := memory.NewGoAllocator()
	fields := slices.Clone(rec.Schema().Fields())
	arrays := slices.Clone(rec.Columns())
	for _, k := range extra {
		b := array.NewBuilder(mem, cols[k].typ)
		switch b := b.(type) {
		case *array.TimestampBuilder:
			b.AppendValues([]arrow.Timestamp{1, 2, 3}, nil)
		case *array.ListBuilder:
			for range 3 {
				b.Append(true)
				b.ValueBuilder().(*array.Int32Builder).Append(1)
			}
		}
		fields[k] = arrow.Field{Name: cols[k].name, Type: cols[k].typ, Nullable: true}
		arrays[k] = b.NewArray()
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), arrays, rec.NumRows())
}

// TestColumnarLimits checks the byte cap, the cap on the values a file
// declares, and damaged files.
func TestColumnarLimits(t *testing.T) {
	cols := mixedColumns(40)
	rec := record(t, cols)
	defer rec.Release()
	dir := t.TempDir()
	pq := writeParquet(t, rec)
	ar := writeArrow(t, rec, false, 10)
	st := writeArrow(t, rec, true, 10)
	for _, f := range []struct {
		name string
		b    []byte
	}{{"l.parquet", pq}, {"l.arrow", ar}, {"l.arrows", st}} {
		p := writeTemp(t, dir, f.name, f.b)
		opts := CSVOptions{Target: "label", Classification: true}

		opts.MaxBytes = int64(len(f.b)) - 1
		_, err := LoadFile(p, opts)
		if !errors.Is(err, ErrTooLarge) || !strings.HasPrefix(err.Error(), "data: "+p) || !strings.Contains(err.Error(), "CSVOptions.MaxBytes") {
			t.Errorf("%s over MaxBytes: err = %v", f.name, err)
		}
		opts.MaxBytes = int64(len(f.b))
		if _, err := LoadFile(p, opts); err != nil {
			t.Errorf("%s at MaxBytes: %v", f.name, err)
		}

		for _, cut := range []int{len(f.b) - 1, len(f.b) / 2, 12, 7, 4} {
			q := writeTemp(t, dir, "cut-"+f.name, f.b[:cut])
			_, err := LoadFile(q, CSVOptions{Target: "label", Classification: true})
			if err == nil || !strings.HasPrefix(err.Error(), "data: ") {
				t.Errorf("%s cut to %d bytes: err = %v", f.name, cut, err)
			}
		}
	}

	// A constant column compresses well: 5000 rows of 2 columns in a small
	// Parquet file are more values than a CSV file of its size could hold.
	many := []testColumn{{"a", arrow.PrimitiveTypes.Float64, nil}, {"b", arrow.PrimitiveTypes.Float64, nil}}
	for range 5000 {
		many[0].vals = append(many[0].vals, 1.0)
		many[1].vals = append(many[1].vals, 2.0)
	}
	mrec := record(t, many)
	defer mrec.Release()
	b := writeParquet(t, mrec)
	if len(b) >= 5000 {
		t.Fatalf("the constant Parquet file takes %d bytes", len(b))
	}
	p := writeTemp(t, dir, "many.parquet", b)
	_, err := LoadFile(p, CSVOptions{MaxBytes: int64(len(b))})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "many.parquet (5000 rows × 2 columns, at 2 bytes a value as in CSV) is larger than the") {
		t.Errorf("many values: err = %v", err)
	} else if r := readlimit.Rename(err, "--max-input-mib").Error(); !strings.HasSuffix(r, "limit; raise it with --max-input-mib") {
		t.Errorf("many values, renamed: %s", r)
	}
	if d, err := LoadFile(p, CSVOptions{MaxBytes: 20000}); err != nil || d.Rows != 5000 {
		t.Errorf("many values within the cap: %v", err)
	}
}

// TestLoadFileSniffs checks that LoadFile goes by content, not by name.
func TestLoadFileSniffs(t *testing.T) {
	cols := []testColumn{{"a", arrow.PrimitiveTypes.Float64, []any{1.0, 2.0}}, {"y", arrow.PrimitiveTypes.Float64, []any{3.0, 4.0}}}
	rec := record(t, cols)
	defer rec.Release()
	dir := t.TempDir()
	for _, f := range []struct {
		name string
		b    []byte
	}{
		{"parquet.csv", writeParquet(t, rec)},
		{"arrow.csv", writeArrow(t, rec, false, 1)},
		{"stream.csv", writeArrow(t, rec, true, 1)},
		{"text.parquet", writeCSVTable(t, cols)},
	} {
		d, err := LoadFile(writeTemp(t, dir, f.name, f.b), CSVOptions{})
		if err != nil || d.Rows != 2 || d.X[1] != 2 || d.Y[1] != 4 {
			t.Errorf("%s: %v, %+v", f.name, err, d)
		}
	}
	if _, err := LoadFile(filepath.Join(dir, "none"), CSVOptions{}); err == nil || !strings.HasPrefix(err.Error(), "data: ") {
		t.Errorf("missing file: %v", err)
	}
}

// panicSource is a columnSource whose library panics.
type panicSource struct{}

func (panicSource) scan(int, *columnSink) error { panic("index out of range [7] with length 3") }

// TestTableRecoversPanics checks that reading a column turns a panic of
// the format library into an error naming the file, for a caller that
// reads columns itself (table.feature) as well as for LoadParquet.
func TestTableRecoversPanics(t *testing.T) {
	tb, err := newTable("bad.parquet", "Parquet", []string{"a", "y"}, []bool{false, false}, 3, 1<<20, CSVOptions{}, panicSource{})
	if err != nil {
		t.Fatal(err)
	}
	_, _, _, err = tb.feature(0, nil)
	if err == nil || err.Error() != "data: bad.parquet: malformed Parquet file: index out of range [7] with length 3" {
		t.Errorf("feature: err = %v", err)
	}
	if _, err := tb.dataset(); err == nil || !strings.HasPrefix(err.Error(), "data: bad.parquet: malformed Parquet file") {
		t.Errorf("dataset: err = %v", err)
	}
}

// TestTableIsColumnSource reads a Parquet and an Arrow file as a
// Dataset.Source and requires Materialize to give LoadFile's X.
func TestTableIsColumnSource(t *testing.T) {
	cols := mixedColumns(50)
	rec := record(t, cols)
	defer rec.Release()
	dir := t.TempDir()
	opts := CSVOptions{Target: "label", Classification: true}
	for _, p := range []string{
		writeTemp(t, dir, "s.parquet", writeParquet(t, rec, parquet.WithMaxRowGroupLength(7))),
		writeTemp(t, dir, "s.arrow", writeArrow(t, rec, false, 9)),
	} {
		want, err := LoadFile(p, opts)
		if err != nil {
			t.Fatal(err)
		}
		var tb *table
		if strings.HasSuffix(p, ".parquet") {
			var closer func()
			tb, closer, err = openParquet(p, opts)
			if err == nil {
				defer closer()
			}
		} else {
			tb, err = openArrow(p, opts)
		}
		if err != nil {
			t.Fatal(err)
		}
		d := &Dataset{Rows: want.Rows, Cols: want.Cols, Source: tb}
		if err := d.Materialize(); err != nil {
			t.Fatal(err)
		}
		if ok, why := sameFloats(d.X, want.X); !ok {
			t.Errorf("%s: X %s", p, why)
		}
		if fmt.Sprint(d.Categories) != fmt.Sprint(want.Categories) {
			t.Errorf("%s: Categories %q, want %q", p, d.Categories, want.Categories)
		}
	}
}

// TestOpenFile opens Parquet and Arrow files without their features
// (Dataset.Source) and requires the target, weights and names LoadFile
// gives, X nil, and Materialize to give LoadFile's X; a CSV file is
// loaded whole.
func TestOpenFile(t *testing.T) {
	cols := mixedColumns(40)
	rec := record(t, cols)
	defer rec.Release()
	dir := t.TempDir()
	opts := CSVOptions{Target: "label", Classification: true}
	for _, p := range []string{
		writeTemp(t, dir, "o.parquet", writeParquet(t, rec, parquet.WithMaxRowGroupLength(7))),
		writeTemp(t, dir, "o.arrow", writeArrow(t, rec, false, 9)),
	} {
		want, err := LoadFile(p, opts)
		if err != nil {
			t.Fatal(err)
		}
		d, err := OpenFile(p, opts)
		if err != nil {
			t.Fatal(err)
		}
		if d.X != nil || d.Source == nil {
			t.Fatalf("%s: X has %d values, Source %v: want no X and a Source", p, len(d.X), d.Source)
		}
		if fmt.Sprint(d.FeatureNames, d.TargetName, d.Classes, d.Rows, d.Cols) != fmt.Sprint(want.FeatureNames, want.TargetName, want.Classes, want.Rows, want.Cols) {
			t.Errorf("%s: names, classes or shape differ: %v %q %q", p, d.FeatureNames, d.TargetName, d.Classes)
		}
		if ok, why := sameFloats(d.Y, want.Y); !ok {
			t.Errorf("%s: Y %s", p, why)
		}
		if err := d.Materialize(); err != nil {
			t.Fatal(err)
		}
		if ok, why := sameFloats(d.X, want.X); !ok {
			t.Errorf("%s: X %s", p, why)
		}
		if fmt.Sprint(d.Categories) != fmt.Sprint(want.Categories) {
			t.Errorf("%s: Categories %q, want %q", p, d.Categories, want.Categories)
		}
	}
	csv := writeTemp(t, dir, "o.csv", []byte("a,b\n1,2\n3,4\n"))
	if d, err := OpenFile(csv, CSVOptions{}); err != nil || d.Source != nil || len(d.X) != 2 {
		t.Errorf("CSV: %+v, %v; want it loaded whole", d, err)
	}
}

// TestOpenFileReplaced: a file replaced by another table between OpenFile
// and a column read is an error, not another table's column.
func TestOpenFileReplaced(t *testing.T) {
	cols := mixedColumns(20)
	rec := record(t, cols)
	defer rec.Release()
	dir := t.TempDir()
	p := writeTemp(t, dir, "r.parquet", writeParquet(t, rec))
	d, err := OpenFile(p, CSVOptions{Target: "label", Classification: true})
	if err != nil {
		t.Fatal(err)
	}
	short := record(t, mixedColumns(10))
	defer short.Release()
	writeTemp(t, dir, "r.parquet", writeParquet(t, short))
	if _, _, err := d.Source.ReadColumn(0, nil); err == nil || !strings.Contains(err.Error(), "changed while its columns were being read") {
		t.Errorf("err = %v, want the file named as changed", err)
	}
}
