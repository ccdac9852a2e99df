package data

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// LoadArrow reads the Arrow IPC file at path, in the file format
// (".arrow", ".feather" version 2) or the stream format, into a data set by
// the rules of [LoadParquet]: integer, floating-point and decimal columns
// are numbers, booleans 0 and 1, string and binary columns categorical
// text, dictionary-encoded columns their values, nulls missing; other
// types (nested, dates, times, durations) are refused with an error naming
// the column. MaxBytes, MaxRows and the other options of opts (Comma
// aside) apply as there.
//
// The file is read one column at a time, one record batch at a time, so
// that reading takes the memory of one batch besides the data set; each
// column reads the file again.
func LoadArrow(path string, opts CSVOptions) (d *Dataset, err error) {
	defer recoverMalformed(&err, path, "Arrow")
	t, err := openArrow(path, opts)
	if err != nil {
		return nil, err
	}
	return t.dataset()
}

// arrowFileMagic starts and ends an Arrow IPC file (the file format).
const arrowFileMagic = "ARROW1"

// arrowStreamStart is how an Arrow IPC stream starts: the continuation
// marker of its first message.
const arrowStreamStart = "\xff\xff\xff\xff"

// openArrow opens the Arrow IPC file at path as a table. It reads the file
// through once, to count its rows.
func openArrow(path string, opts CSVOptions) (t *table, err error) {
	defer recoverMalformed(&err, path, "Arrow")
	f, size, limit, err := openRegular(path, opts, "Arrow")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var magic [len(arrowFileMagic)]byte
	_, err = io.ReadFull(f, magic[:])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("data: %w", err)
	}
	stream := string(magic[:]) != arrowFileMagic
	if _, err = f.Seek(0, io.SeekStart); err == nil {
		err = checkArrowSchema(f, size, stream)
	}
	var nested *nestedColumnError
	switch {
	case errors.As(err, &nested):
		return nil, fmt.Errorf("data: %s: %w", path, err)
	case err != nil:
		return nil, fmt.Errorf("data: %s: not a readable Arrow IPC file: %v", path, err)
	}
	src := &arrowSource{path: path, size: size, limit: limit, stream: stream}
	var rows int64
	var sc *arrow.Schema
	err = src.batches(func(s *arrow.Schema) { sc = s }, func(rec arrow.RecordBatch) bool {
		n := rec.NumRows()
		if n < 0 || n > math.MaxInt64-rows {
			rows = -1
			return true
		}
		rows += n
		return false
	})
	if err != nil {
		return nil, err
	}
	if rows < 0 {
		return nil, fmt.Errorf("data: %s: a record batch declares an impossible number of rows", path)
	}
	names := make([]string, sc.NumFields())
	text := make([]bool, len(names))
	for j, fd := range sc.Fields() {
		names[j] = fd.Name
		txt, err := arrowKindOf(fd.Type)
		if err != nil {
			return nil, fmt.Errorf("data: %s: column %q (%d) %v", path, fd.Name, j+1, err)
		}
		text[j] = txt
	}
	return newTable(path, "Arrow", names, text, rows, limit, opts, src)
}

// arrowKindOf tells whether values of type dt are text, or returns an
// error (that follows the column's name) for a type gotrain does not read.
func arrowKindOf(dt arrow.DataType) (text bool, err error) {
	switch dt.ID() {
	case arrow.NULL, arrow.BOOL,
		arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT32, arrow.FLOAT64,
		arrow.DECIMAL32, arrow.DECIMAL64, arrow.DECIMAL128, arrow.DECIMAL256:
		return false, nil
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW,
		arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW:
		return true, nil
	case arrow.DICTIONARY:
		if vt := dt.(*arrow.DictionaryType).ValueType; vt.ID() != arrow.DICTIONARY {
			return arrowKindOf(vt)
		}
	}
	return false, fmt.Errorf("has type %s, which gotrain does not read (numbers, booleans and text only)", dt)
}

// arrowSource feeds the columns of an Arrow IPC file, reading the file
// anew for each column.
type arrowSource struct {
	path        string
	size, limit int64 // the file's size when opened; the byte cap
	stream      bool  // the stream format (else the file format)
}

// batches reads the file's record batches in order, calling schema with
// its schema first, then each with every batch (valid during the call)
// until it returns true.
func (s *arrowSource) batches(schema func(*arrow.Schema), each func(arrow.RecordBatch) (stop bool)) error {
	f, err := os.Open(s.path)
	if err != nil {
		return fmt.Errorf("data: %w", err)
	}
	defer f.Close()
	opts := []ipc.Option{
		ipc.WithAllocator(newCappedAllocator(s.limit)),
		ipc.WithMetadataSizeLimit(s.size),
		ipc.WithBodySizeLimit(s.size),
	}
	if !s.stream {
		r, err := ipc.NewFileReader(f, opts...)
		if err != nil {
			return fmt.Errorf("data: %s: not a readable Arrow IPC file: %v", s.path, err)
		}
		defer r.Close()
		if schema != nil {
			schema(r.Schema())
		}
		for i := range r.NumRecords() {
			rec, err := r.RecordBatch(i)
			if err != nil {
				return fmt.Errorf("data: %s: record batch %d: %v", s.path, i+1, err)
			}
			if each(rec) {
				break
			}
		}
		return nil
	}
	r, err := ipc.NewReaderFromMessageReader(ipc.NewMessageReader(f, opts...), opts...)
	if err != nil {
		return fmt.Errorf("data: %s: not a readable Arrow IPC file or stream: %v", s.path, err)
	}
	defer r.Release()
	if schema != nil {
		schema(r.Schema())
	}
	for r.Next() {
		if each(r.RecordBatch()) {
			return nil
		}
	}
	if err := r.Err(); err != nil {
		return fmt.Errorf("data: %s: %v", s.path, err)
	}
	return nil
}

func (s *arrowSource) scan(j int, c *columnSink) error {
	var err error
	berr := s.batches(nil, func(rec arrow.RecordBatch) bool {
		if j >= int(rec.NumCols()) {
			err = fmt.Errorf("data: %s: a record batch has %d columns, fewer than the schema's", s.path, rec.NumCols())
			return true
		}
		col := rec.Column(j)
		for i := 0; i < col.Len() && !c.full(); i++ {
			if err = feedArrow(col, i, c); err != nil {
				return true
			}
		}
		return c.full()
	})
	if berr != nil {
		return berr
	}
	return err
}

// feedArrow hands value i of a to c.
func feedArrow(a arrow.Array, i int, c *columnSink) error {
	if a.IsNull(i) {
		return c.null()
	}
	switch a := a.(type) {
	case *array.Boolean:
		if a.Value(i) {
			return c.number(1)
		}
		return c.number(0)
	case *array.Int8:
		return c.number(float64(a.Value(i)))
	case *array.Int16:
		return c.number(float64(a.Value(i)))
	case *array.Int32:
		return c.number(float64(a.Value(i)))
	case *array.Int64:
		return c.number(float64(a.Value(i)))
	case *array.Uint8:
		return c.number(float64(a.Value(i)))
	case *array.Uint16:
		return c.number(float64(a.Value(i)))
	case *array.Uint32:
		return c.number(float64(a.Value(i)))
	case *array.Uint64:
		return c.number(float64(a.Value(i)))
	case *array.Float32:
		return c.number(float32Value(a.Value(i)))
	case *array.Float64:
		return c.number(a.Value(i))
	case *array.Decimal32:
		return c.decimal(a.Value(i).ToString(a.DataType().(arrow.DecimalType).GetScale()))
	case *array.Decimal64:
		return c.decimal(a.Value(i).ToString(a.DataType().(arrow.DecimalType).GetScale()))
	case *array.Decimal128:
		return c.decimal(a.Value(i).ToString(a.DataType().(arrow.DecimalType).GetScale()))
	case *array.Decimal256:
		return c.decimal(a.Value(i).ToString(a.DataType().(arrow.DecimalType).GetScale()))
	case *array.String:
		return c.text(a.Value(i))
	case *array.LargeString:
		return c.text(a.Value(i))
	case *array.StringView:
		return c.text(a.Value(i))
	case *array.Binary:
		return c.bytes(a.Value(i))
	case *array.LargeBinary:
		return c.bytes(a.Value(i))
	case *array.BinaryView:
		return c.bytes(a.Value(i))
	case *array.Dictionary:
		return feedArrow(a.Dictionary(), a.GetValueIndex(i), c)
	}
	return c.errorf("unexpected Arrow array %T", a)
}
