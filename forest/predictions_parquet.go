package forest

import (
	"fmt"
	"io"
	"strconv"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// parquetRowGroup is the most rows in a row group of WriteParquet: the
// writer holds one row group's column in memory (8 MiB of float64).
const parquetRowGroup = 1 << 20

// WriteParquet writes the predictions as a Parquet file with the columns
// of WriteCSV: "prediction" (a string column of class labels for
// classification, else float64), or with Proba one float64 column
// "proba_CLASS" per class, or with Quantiles one float64 column
// "quantile_Q" per quantile. Every column is required (no nulls); pages
// are Snappy-compressed, in row groups of at most 2^20 rows.
// data.LoadParquet reads the file back.
func (p *Predictions) WriteParquet(w io.Writer) error {
	if err := p.writeParquet(w); err != nil {
		return fmt.Errorf("forest: writing predictions as Parquet: %w", err)
	}
	return nil
}

// writeParquet is WriteParquet with unwrapped errors.
func (p *Predictions) writeParquet(w io.Writer) (err error) {
	defer func() {
		if r := recover(); r != nil { // the Parquet writer panics on some errors
			err = fmt.Errorf("%v", r)
		}
	}()
	f := p.Forest
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	// names and the row-major values: width columns per row.
	var names []string
	labels := false
	switch {
	case len(p.Quantiles) > 0:
		for _, q := range p.Quantiles {
			names = append(names, "quantile_"+num(q))
		}
	case p.Proba:
		for _, c := range f.Classes {
			names = append(names, "proba_"+c)
		}
		if d := f.Outputs(); len(names) != d {
			return fmt.Errorf("%w: %d classes named for %d outputs", ErrShape, len(names), d)
		}
	default:
		names = []string{"prediction"}
		labels = f.Options.Task == Classification
	}
	width := len(names)
	if len(p.Values) != p.Rows*width {
		return fmt.Errorf("%w: %d values for %d rows of %d columns", ErrShape, len(p.Values), p.Rows, width)
	}
	if labels {
		for _, v := range p.Values {
			if v < 0 || int(v) >= len(f.Classes) || v != float64(int(v)) {
				return fmt.Errorf("prediction %v is not a class index (%d classes)", v, len(f.Classes))
			}
		}
	}

	fields := make(schema.FieldList, width)
	for k, name := range names {
		var err error
		if labels {
			fields[k], err = schema.NewPrimitiveNodeLogical(name, parquet.Repetitions.Required, schema.StringLogicalType{}, parquet.Types.ByteArray, -1, -1)
		} else {
			fields[k], err = schema.NewPrimitiveNode(name, parquet.Repetitions.Required, parquet.Types.Double, -1, -1)
		}
		if err != nil {
			return err
		}
	}
	root, err := schema.NewGroupNode("schema", parquet.Repetitions.Required, fields, -1)
	if err != nil {
		return err
	}
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy), parquet.WithCreatedBy("gotrain"))
	pw, err := file.NewParquetWriterWithError(w, root, file.WithWriterProps(props))
	if err != nil {
		return err
	}
	col := make([]float64, min(p.Rows, parquetRowGroup))
	var text []parquet.ByteArray
	if labels {
		text = make([]parquet.ByteArray, len(col))
	}
	for start := 0; start < p.Rows; start += parquetRowGroup {
		end := min(start+parquetRowGroup, p.Rows)
		rg, err := pw.AppendRowGroupChecked()
		if err != nil {
			return err
		}
		for k := range width {
			cw, err := rg.NextColumn()
			if err != nil {
				return err
			}
			n := end - start
			if labels {
				for i := range n {
					text[i] = parquet.ByteArray(f.Classes[int(p.Values[start+i])])
				}
				_, err = cw.(*file.ByteArrayColumnChunkWriter).WriteBatch(text[:n], nil, nil)
			} else {
				for i := range n {
					col[i] = p.Values[(start+i)*width+k]
				}
				_, err = cw.(*file.Float64ColumnChunkWriter).WriteBatch(col[:n], nil, nil)
			}
			if err != nil {
				return err
			}
			if err := cw.Close(); err != nil {
				return err
			}
		}
		if err := rg.Close(); err != nil {
			return err
		}
	}
	return pw.Close()
}
