package data

import (
	"fmt"
	"math"
	"math/big"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// LoadParquet reads the Parquet file at path into a data set by the rules
// of [ReadCSV] and the options of opts (Comma aside), so that a table
// written as CSV and as Parquet gives the same Dataset:
//
//   - integer, floating-point and decimal columns are numbers (a float32 is
//     read as the float64 its shortest decimal form names, as in a CSV file
//     written from it); infinities are refused, NaN is missing;
//   - boolean columns are 0 (false) and 1 (true);
//   - string columns (and enum and plain binary ones, taken as text) are
//     categorical features: values trimmed of spaces, "", "NA", "NaN" and
//     "nan" missing, keys by CategoryKey; a string column with no value
//     that is not missing is numeric, all NaN, as in CSV. A numeric column
//     that opts.Categorical names is categorical, keyed by NumberKey;
//   - a null is a missing value; a missing target or weight is an error;
//   - a class label is the text of a string target (trimmed) or the
//     shortest form of a number, encoded as CSVOptions.Classification says.
//
// Dictionary-encoded columns read as their values. Nested, repeated,
// date, time and timestamp columns are refused with an error naming the
// column. Column names are trimmed, must not be empty and must be distinct.
//
// A file larger than opts.MaxBytes (0: DefaultMaxBytes) is refused before
// it is read, and so is one that declares more values (rows × columns)
// than a CSV file of that size could hold, MaxBytes/2. The data set is
// named after the file's base name; errors start with "data: " and name
// the file, and the column and the row (counted from 1) where they apply.
// The file is read one column at a time, a few thousand values at a time,
// so that reading takes little memory besides the data set.
func LoadParquet(path string, opts CSVOptions) (d *Dataset, err error) {
	defer recoverMalformed(&err, path, "Parquet")
	t, closer, err := openParquet(path, opts)
	if err != nil {
		return nil, err
	}
	defer closer()
	return t.dataset()
}

// parquetMagic starts and ends every Parquet file.
const parquetMagic = "PAR1"

// openParquet opens the Parquet file at path as a table, which the caller
// reads (table.feature, target, weights: one column at a time) and then
// closes with closer.
func openParquet(path string, opts CSVOptions) (t *table, closer func(), err error) {
	f, size, limit, err := openRegular(path, opts, "Parquet")
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	defer recoverMalformed(&err, path, "Parquet") // before the deferred Close
	if size < 2*int64(len(parquetMagic)) {
		return nil, nil, fmt.Errorf("data: %s: not a Parquet file: only %d bytes", path, size)
	}
	props := parquet.NewReaderProperties(newCappedAllocator(limit))
	props.BufferedStreamEnabled = true // read a page at a time, not whole column chunks
	r, err := file.NewParquetReader(f, file.WithReadProps(props))
	if err != nil {
		return nil, nil, fmt.Errorf("data: %s: not a readable Parquet file: %v", path, err)
	}
	src := &parquetSource{path: path, r: r}
	sc := r.MetaData().Schema
	root := sc.Root()
	names := make([]string, root.NumFields())
	text := make([]bool, len(names))
	src.kinds = make([]parquetKind, len(names))
	for j := range names {
		n := root.Field(j)
		names[j] = n.Name()
		if n.Type() != schema.Primitive || n.RepetitionType() == parquet.Repetitions.Repeated {
			return nil, nil, fmt.Errorf("data: %s: column %q (%d) is nested or repeated; gotrain reads flat columns of numbers, booleans and text", path, n.Name(), j+1)
		}
	}
	if sc.NumColumns() != len(names) {
		return nil, nil, fmt.Errorf("data: %s: %d columns but %d top-level fields", path, sc.NumColumns(), len(names))
	}
	for j := range names {
		col := sc.Column(j)
		k, err := parquetKindOf(col)
		if err != nil {
			return nil, nil, fmt.Errorf("data: %s: column %q (%d) %v", path, col.Name(), j+1, err)
		}
		src.kinds[j] = k
		text[j] = k.conv == pqText
	}
	var rows int64
	for g := range r.NumRowGroups() {
		n := r.RowGroup(g).NumRows()
		if n < 0 || n > math.MaxInt64-rows {
			return nil, nil, fmt.Errorf("data: %s: row group %d declares %d rows", path, g+1, n)
		}
		rows += n
	}
	t, err = newTable(path, "Parquet", names, text, rows, limit, opts, src)
	if err != nil {
		return nil, nil, err
	}
	return t, func() { r.Close() }, nil
}

// parquetConv is how a Parquet column's values become numbers or text.
type parquetConv uint8

const (
	pqBool parquetConv = iota
	pqInt32
	pqUint32
	pqInt64
	pqUint64
	pqFloat32
	pqFloat64
	pqText
	pqDecimal // INT32, INT64, BYTE_ARRAY or FIXED_LEN_BYTE_ARRAY scaled by 10^-scale
)

type parquetKind struct {
	conv  parquetConv
	scale int // pqDecimal
}

// parquetKindOf returns how column col reads, or an error (that follows
// the column's name) for a type gotrain does not read.
func parquetKindOf(col *schema.Column) (parquetKind, error) {
	lt := col.LogicalType()
	if col.MaxRepetitionLevel() > 0 {
		return parquetKind{}, fmt.Errorf("is repeated; gotrain reads flat columns")
	}
	if dec, ok := lt.(schema.DecimalLogicalType); ok {
		return parquetKind{conv: pqDecimal, scale: int(dec.Scale())}, nil
	}
	plain := lt == nil
	switch lt.(type) {
	case schema.NoLogicalType, schema.NullLogicalType:
		plain = true
	}
	var it *schema.IntLogicalType
	if l, ok := lt.(schema.IntLogicalType); ok {
		it = &l
	}
	switch col.PhysicalType() {
	case parquet.Types.Boolean:
		if plain {
			return parquetKind{conv: pqBool}, nil
		}
	case parquet.Types.Int32:
		switch {
		case plain || it != nil && it.IsSigned():
			return parquetKind{conv: pqInt32}, nil
		case it != nil:
			return parquetKind{conv: pqUint32}, nil
		}
	case parquet.Types.Int64:
		switch {
		case plain || it != nil && it.IsSigned():
			return parquetKind{conv: pqInt64}, nil
		case it != nil:
			return parquetKind{conv: pqUint64}, nil
		}
	case parquet.Types.Float:
		if plain {
			return parquetKind{conv: pqFloat32}, nil
		}
	case parquet.Types.Double:
		if plain {
			return parquetKind{conv: pqFloat64}, nil
		}
	case parquet.Types.ByteArray:
		switch lt.(type) {
		case schema.StringLogicalType, schema.EnumLogicalType:
			return parquetKind{conv: pqText}, nil
		}
		if plain {
			return parquetKind{conv: pqText}, nil
		}
	}
	what := col.PhysicalType().String()
	if lt != nil && !plain {
		what = lt.String() + " (" + what + ")"
	}
	return parquetKind{}, fmt.Errorf("has type %s, which gotrain does not read (numbers, booleans and text only)", what)
}

// parquetSource feeds a Parquet file's columns, row group by row group,
// a batch of values at a time.
type parquetSource struct {
	path  string
	r     *file.Reader
	kinds []parquetKind
}

// parquetBatch is the number of values read at once.
const parquetBatch = 4096

func (s *parquetSource) scan(j int, c *columnSink) error {
	batch := min(parquetBatch, len(c.dst))
	defs := make([]int16, batch)
	kind := s.kinds[j]
	for g := 0; g < s.r.NumRowGroups() && !c.full(); g++ {
		rg := s.r.RowGroup(g)
		want := int(min(rg.NumRows(), int64(len(c.dst)-c.n)))
		cr, err := rg.Column(j)
		if err != nil {
			return fmt.Errorf("data: %s: column %q (%d), row group %d: %v", s.path, c.t.header[j], j+1, g+1, err)
		}
		maxDef := cr.Descriptor().MaxDefinitionLevel()
		if maxDef > 1 {
			return fmt.Errorf("data: %s: column %q (%d) is nested; gotrain reads flat columns", s.path, c.t.header[j], j+1)
		}
		chunk := chunkReader{path: s.path, c: c, g: g, want: want, maxDef: maxDef, defs: defs}
		switch cr := cr.(type) {
		case *file.BooleanColumnChunkReader:
			err = readChunk(&chunk, make([]bool, batch), cr.ReadBatch, func(v bool) error {
				if v {
					return c.number(1)
				}
				return c.number(0)
			})
		case *file.Int32ColumnChunkReader:
			put := func(v int32) error { return c.number(float64(v)) }
			switch kind.conv {
			case pqUint32:
				put = func(v int32) error { return c.number(float64(uint32(v))) }
			case pqDecimal:
				put = func(v int32) error { return c.decimal(decimalText(strconv.FormatInt(int64(v), 10), kind.scale)) }
			}
			err = readChunk(&chunk, make([]int32, batch), cr.ReadBatch, put)
		case *file.Int64ColumnChunkReader:
			put := func(v int64) error { return c.number(float64(v)) }
			switch kind.conv {
			case pqUint64:
				put = func(v int64) error { return c.number(float64(uint64(v))) }
			case pqDecimal:
				put = func(v int64) error { return c.decimal(decimalText(strconv.FormatInt(v, 10), kind.scale)) }
			}
			err = readChunk(&chunk, make([]int64, batch), cr.ReadBatch, put)
		case *file.Float32ColumnChunkReader:
			err = readChunk(&chunk, make([]float32, batch), cr.ReadBatch, func(v float32) error { return c.number(float32Value(v)) })
		case *file.Float64ColumnChunkReader:
			err = readChunk(&chunk, make([]float64, batch), cr.ReadBatch, c.number)
		case *file.ByteArrayColumnChunkReader:
			put := func(v parquet.ByteArray) error { return c.bytes(v) }
			if kind.conv == pqDecimal {
				put = func(v parquet.ByteArray) error { return c.decimal(bigDecimalText(v, kind.scale)) }
			}
			err = readChunk(&chunk, make([]parquet.ByteArray, batch), cr.ReadBatch, put)
		case *file.FixedLenByteArrayColumnChunkReader:
			err = readChunk(&chunk, make([]parquet.FixedLenByteArray, batch), cr.ReadBatch, func(v parquet.FixedLenByteArray) error {
				return c.decimal(bigDecimalText(v, kind.scale))
			})
		default:
			err = fmt.Errorf("data: %s: column %q (%d): unexpected column reader %T", s.path, c.t.header[j], j+1, cr)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// chunkReader reads the values of one column chunk (a column in a row
// group) into a sink.
type chunkReader struct {
	path   string
	c      *columnSink
	g      int   // row group index
	want   int   // values to read from the chunk
	maxDef int16 // 0: required; 1: optional (a level below 1 is a null)
	defs   []int16
}

// readChunk reads ch.want values of a column chunk with read (a typed
// ReadBatch), handing each to put, each null to the sink.
func readChunk[T any](ch *chunkReader, vals []T, read func(int64, []T, []int16, []int16) (int64, int, error), put func(T) error) error {
	c := ch.c
	for ch.want > 0 {
		batch := min(ch.want, len(vals))
		total, n, err := read(int64(batch), vals, ch.defs, nil)
		if err != nil {
			return c.errorf("reading row group %d: %v", ch.g+1, err)
		}
		if total <= 0 || total > int64(batch) || n < 0 || int64(n) > total {
			return fmt.Errorf("data: %s: column %q (%d): row group %d ends after %d of its values", ch.path, c.t.header[c.j], c.j+1, ch.g+1, c.n)
		}
		if ch.maxDef == 0 {
			if int64(n) != total {
				return c.errorf("row group %d: %d values for %d rows", ch.g+1, n, total)
			}
			for _, v := range vals[:n] {
				if err := put(v); err != nil {
					return err
				}
			}
		} else {
			k := 0
			for _, d := range ch.defs[:total] {
				if d < ch.maxDef {
					if err := c.null(); err != nil {
						return err
					}
					continue
				}
				if k >= n {
					return c.errorf("row group %d: more definition levels than values", ch.g+1)
				}
				if err := put(vals[k]); err != nil {
					return err
				}
				k++
			}
		}
		ch.want -= int(total)
	}
	return nil
}

// bigDecimalText writes the big-endian two's complement integer b, scaled
// down by 10^scale, as decimal text.
func bigDecimalText(b []byte, scale int) string {
	var n big.Int
	n.SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		n.Sub(&n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return decimalText(n.String(), scale)
}

// cappedAllocator allocates with Go's allocator, but panics (recovered
// into an error naming the file) rather than allocate more than limit
// bytes at once, as a hostile file's declared sizes could ask.
type cappedAllocator struct {
	limit int
}

// newCappedAllocator returns a cappedAllocator for a file within the byte
// cap limit: no buffer larger than limit, or than 64 MiB when limit is
// smaller (the readers' own buffers are a few KiB to a few MiB).
func newCappedAllocator(limit int64) cappedAllocator {
	return cappedAllocator{limit: int(min(max(limit, 64<<20), math.MaxInt))}
}

var goAllocator = memory.NewGoAllocator()

func (a cappedAllocator) Allocate(size int) []byte {
	if size < 0 || size > a.limit {
		panic(fmt.Sprintf("a buffer of %d bytes is larger than the %d-byte limit", size, a.limit))
	}
	return goAllocator.Allocate(size)
}

func (a cappedAllocator) Reallocate(size int, b []byte) []byte {
	if cap(b) >= size {
		return b[:size]
	}
	nb := a.Allocate(size)
	copy(nb, b)
	return nb
}

func (cappedAllocator) Free([]byte) {}
