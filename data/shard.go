package data

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/gotrain/gotrain/internal/readlimit"
)

// ShardRange returns the bytes [start, end) of the CSV file at path that
// hold shard k of n: the data lines (after the header line) that start in
// the k-th of n equal byte ranges of the data. The n shards hold every data
// line once, in the file's order, whatever the line lengths; a shard may
// be empty (start == end). header is the length of the header line, its
// line break included.
func ShardRange(f io.ReaderAt, size int64, k, n int) (header, start, end int64, err error) {
	if n < 1 || k < 0 || k >= n {
		return 0, 0, 0, fmt.Errorf("shard %d of %d", k, n)
	}
	header, err = lineStart(f, size, 0, true)
	if err != nil {
		return 0, 0, 0, err
	}
	at := func(i int) int64 { return header + (size-header)*int64(i)/int64(n) }
	if start, err = lineStart(f, size, at(k), at(k) == header); err != nil {
		return 0, 0, 0, err
	}
	if end, err = lineStart(f, size, at(k+1), at(k+1) == header); err != nil {
		return 0, 0, 0, err
	}
	return header, start, end, nil
}

// lineStart returns the first line start at or after pos (pos itself when
// first, or when the byte before it ends a line), size when none.
func lineStart(f io.ReaderAt, size, pos int64, first bool) (int64, error) {
	switch {
	case pos >= size:
		return size, nil
	case first && pos > 0: // the data's first byte
		return pos, nil
	case !first && pos > 0:
		pos-- // the line break before pos, if any, makes pos a start
	}
	// From pos (0 for the header), the first line break ends a line.
	buf := make([]byte, 64<<10)
	for pos < size {
		n, err := f.ReadAt(buf[:min(int64(len(buf)), size-pos)], pos)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			return pos + int64(i) + 1, nil
		}
		pos += int64(n)
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if n == 0 {
			break
		}
	}
	return size, nil
}

// LoadCSVShard reads shard k of n of the CSV file at path (ShardRange):
// its header and the data lines of the shard, with ReadCSV's options, so
// that n processes each reading one shard read the file's rows once
// between them, in order. A shard holding no line gives a data set of no
// rows with the columns of the header (and of the file's first data
// line, which decides its columns' kinds there). A quoted field that spans
// lines is refused: where a byte range starts inside one, its lines
// cannot be told apart. Errors name the file, the shard and its first
// byte, and the line within the shard (the header is line 1). opts.MaxBytes
// caps the shard's bytes.
func LoadCSVShard(path string, opts CSVOptions, k, n int) (*Dataset, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("data: %s: reading a shard needs a regular file (its size and byte ranges), not %s", path, st.Mode().Type())
	}
	header, start, end, err := ShardRange(f, st.Size(), k, n)
	if err != nil {
		return nil, fmt.Errorf("data: %s: %w", path, err)
	}
	limit, err := readlimit.Check(opts.MaxBytes, DefaultMaxBytes, "CSVOptions.MaxBytes")
	if err != nil {
		return nil, fmt.Errorf("data: %s: %w", path, err)
	}
	if header+end-start > limit {
		return nil, fmt.Errorf("data: %w", &readlimit.Error{Name: fmt.Sprintf("%s (shard %d of %d)", path, k+1, n), Limit: limit, Option: "CSVOptions.MaxBytes"})
	}
	name := fmt.Sprintf("%s (shard %d of %d, from byte %d)", path, k+1, n, start)
	empty := start == end
	if empty {
		// No rows: the header and the first data line decide the columns.
		if start, err = lineStart(f, st.Size(), header+1, false); err != nil {
			return nil, fmt.Errorf("data: %s: %w", path, err)
		}
		start, end = header, start
		if start == end {
			return nil, fmt.Errorf("data: %s: no data rows after the header", path)
		}
	}
	// One pass: the CSV reader's bytes go through the quote check too.
	qc := &quoteCheck{name: name, line: 1}
	r := io.TeeReader(io.MultiReader(io.NewSectionReader(f, 0, header), io.NewSectionReader(f, start, end-start)), qc)
	d, err := ReadCSV(r, name, opts)
	if qc.err != nil {
		return nil, qc.err // a shard that starts inside a quoted field fails either way; this says why
	}
	if err != nil {
		return nil, err
	}
	d.Name = path
	if empty {
		d.X, d.Y, d.Rows = d.X[:0], d.Y[:0], 0
		if d.Weights != nil {
			d.Weights = d.Weights[:0]
		}
	}
	return d, nil
}

// quoteCheck sees the bytes of a shard (the header, line 1, then its
// lines) and records a line break inside double quotes: a quoted field
// that goes on past its line's end. Doubled quotes inside a quoted field
// toggle twice, so counting parity suffices.
type quoteCheck struct {
	name   string
	line   int
	quoted bool
	err    error
}

func (q *quoteCheck) Write(p []byte) (int, error) {
	for _, c := range p {
		if q.err != nil {
			break
		}
		switch c {
		case '"':
			q.quoted = !q.quoted
		case '\n':
			if q.quoted {
				q.err = fmt.Errorf("data: %s line %d: a quoted field spans lines, which a shard read by byte ranges cannot split; read the file whole, or remove the line breaks inside quotes", q.name, q.line)
			}
			q.line++
		}
	}
	return len(p), nil
}

// LoadFileShard reads shard k of n of the data file at path: a CSV file's
// lines by byte ranges (LoadCSVShard), so that each process parses only
// its part; a Parquet or Arrow file is read whole (LoadFile) and its even
// share of the rows kept, rows [rows·k/n, rows·(k+1)/n).
func LoadFileShard(path string, opts CSVOptions, k, n int) (*Dataset, error) {
	if n < 1 || k < 0 || k >= n {
		return nil, fmt.Errorf("data: %s: shard %d of %d", path, k, n)
	}
	if sniffFormat(path) == "" {
		return LoadCSVShard(path, opts, k, n)
	}
	d, err := LoadFile(path, opts)
	if err != nil {
		return nil, err
	}
	return d.RowShare(k, n), nil
}

// RowShare returns share k of n of d's rows, in order: rows
// [Rows·k/n, Rows·(k+1)/n), a copy (Subset). d holds its rows in X (not a
// Source: Materialize it first).
func (d *Dataset) RowShare(k, n int) *Dataset {
	lo, hi := d.Rows*k/n, d.Rows*(k+1)/n
	idx := make([]int, hi-lo)
	for i := range idx {
		idx[i] = lo + i
	}
	return d.Subset(idx)
}
