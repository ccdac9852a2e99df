package data

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gotrain/gotrain/internal/readlimit"
)

// Columnar files.
//
// Parquet and Arrow IPC files hold typed columns. Their readers turn each
// column into float64 values by the CSV reader's rules, one column at a
// time, so that the same table read from CSV and from either format gives
// the same Dataset: numbers are numbers (a float32 as the float64 its
// shortest decimal form names, as a CSV file written from it would give);
// booleans are 0 and 1; text columns are categorical (trimmed, "", "NA",
// "NaN" and "nan" missing, keys by CategoryKey); nulls are missing.

// table is a columnar file opened for reading: its column names and kinds,
// the rows to read, and the source that feeds a column's values. Its
// methods read one column at a time (feature, target, weights), so a
// caller may bin a column before reading the next one, instead of holding
// the whole feature matrix.
type table struct {
	name   string   // the file, for errors
	format string   // "Parquet" or "Arrow", for errors
	header []string // column names, trimmed
	text   []bool   // text[j]: column j holds text (categorical as a feature)
	rows   int      // the rows to read: the file's, at most MaxRows
	roles  *columnRoles
	opts   CSVOptions
	src    columnSource
}

// columnSource feeds the values of one column of a columnar file.
type columnSource interface {
	// scan feeds column j's values to c, in row order, from the first,
	// until c is full (c.full) or the column ends.
	scan(j int, c *columnSink) error
}

// newTable checks the column names (of a file of the named format) (trimmed: none empty, no two alike),
// picks the columns' roles from opts and bounds the table's size: rows is
// the row count the file declares, cut to opts.MaxRows. limit is the byte
// cap: the table may hold no more values (rows × columns) than a CSV file
// of limit bytes could, limit/2.
func newTable(name, format string, names []string, text []bool, rows int64, limit int64, opts CSVOptions, src columnSource) (*table, error) {
	t := &table{name: name, format: format, text: text, opts: opts, src: src}
	if len(names) == 0 {
		return nil, fmt.Errorf("data: %s: no columns", name)
	}
	t.header = make([]string, len(names))
	seen := make(map[string]int, len(names))
	for j, s := range names {
		s = strings.TrimSpace(s)
		if s == "" {
			return nil, fmt.Errorf("data: %s: column %d has an empty name", name, j+1)
		}
		if k, dup := seen[s]; dup {
			return nil, fmt.Errorf("data: %s: duplicate column name %q (columns %d and %d)", name, s, k+1, j+1)
		}
		seen[s] = j
		t.header[j] = s
	}
	roles, err := chooseColumns(name, name, t.header, opts)
	if err != nil {
		return nil, err
	}
	t.roles = roles
	if rows < 0 {
		return nil, fmt.Errorf("data: %s: the file declares %d rows", name, rows)
	}
	if opts.MaxRows > 0 && rows > int64(opts.MaxRows) {
		rows = int64(opts.MaxRows)
	}
	if rows == 0 {
		return nil, fmt.Errorf("data: %s: no data rows", name)
	}
	if rows > limit/2/int64(len(names)) {
		// The error names the option that raises the cap, as a file too
		// large does, so that callers may rename it (readlimit.Rename).
		return nil, fmt.Errorf("data: %w", &readlimit.Error{
			Name:   fmt.Sprintf("%s (%d rows × %d columns, at 2 bytes a value as in CSV)", name, rows, len(names)),
			Limit:  limit,
			Option: "CSVOptions.MaxBytes",
		})
	}
	t.rows = int(rows)
	return t, nil
}

// feature reads feature k (roles.features[k]) into dst, grown to t.rows
// values, and returns it; for a categorical column also its dictionary
// (sorted, as ReadCSV gives it) and categorical true. A text column with
// no value that is not missing is numeric (all NaN), as in a CSV file,
// unless CSVOptions.Categorical names it.
func (t *table) feature(k int, dst []float64) (vals []float64, dict []string, categorical bool, err error) {
	j := t.roles.features[k]
	role := sinkNumber
	if t.roles.categorical[k] || t.text[j] {
		role = sinkCategory
	}
	c, err := t.read(j, role, dst)
	if err != nil {
		return nil, nil, false, err
	}
	if role == sinkNumber || (len(c.cat.seen) == 0 && !t.roles.categorical[k]) {
		return c.dst, nil, false, nil
	}
	return c.dst, sortDictionary(c.cat.seen, c.dst, t.rows, 1, 0), true, nil
}

// ReadColumn reads feature column j as feature does, making a table a
// Dataset.Source: a caller may open a file (openParquet, openArrow), read
// its target and weights, and leave X to a learner that bins one column
// at a time.
func (t *table) ReadColumn(j int, dst []float64) (vals []float64, dict []string, err error) {
	vals, dict, _, err = t.feature(j, dst)
	return vals, dict, err
}

var _ ColumnSource = (*table)(nil)

// target reads the target column into dst, grown to t.rows values: class
// values and Classes (encodeLabels) with CSVOptions.Classification, else
// numbers.
func (t *table) target(dst []float64) (y []float64, classes []string, err error) {
	if !t.opts.Classification {
		c, err := t.read(t.roles.target, sinkTarget, dst)
		if err != nil {
			return nil, nil, err
		}
		return c.dst, nil, nil
	}
	c, err := t.read(t.roles.target, sinkLabel, dst)
	if err != nil {
		return nil, nil, err
	}
	return c.dst, encodeLabels(c.cat.seen, c.dst), nil
}

// weights reads the weight column into dst, grown to t.rows values.
func (t *table) weights(dst []float64) ([]float64, error) {
	c, err := t.read(t.roles.weight, sinkWeight, dst)
	if err != nil {
		return nil, err
	}
	return c.dst, nil
}

// read feeds column j to a sink of the given role writing into dst.
// A panic of the format library, reading a damaged file, is an error.
func (t *table) read(j int, role sinkRole, dst []float64) (c *columnSink, err error) {
	defer recoverMalformed(&err, t.name, t.format)
	if cap(dst) < t.rows {
		dst = make([]float64, t.rows)
	}
	sink := &columnSink{t: t, j: j, role: role, dst: dst[:t.rows]}
	if err := t.src.scan(j, sink); err != nil {
		return nil, err
	}
	if sink.n < t.rows {
		return nil, fmt.Errorf("data: %s: column %q (%d) holds %d values, but the file has %d rows", t.name, t.header[j], j+1, sink.n, t.rows)
	}
	return sink, nil
}

// dataset reads the whole table: the features column by column into the
// row-major X, then the target and the weights.
func (t *table) dataset() (*Dataset, error) {
	nfeat := len(t.roles.features)
	d := &Dataset{
		Name:         filepath.Base(t.name),
		FeatureNames: make([]string, nfeat),
		X:            make([]float64, t.rows*nfeat),
		Rows:         t.rows,
		Cols:         nfeat,
	}
	var col []float64
	for k, j := range t.roles.features {
		d.FeatureNames[k] = t.header[j]
		vals, dict, categorical, err := t.feature(k, col)
		if err != nil {
			return nil, err
		}
		for i, v := range vals {
			d.X[i*nfeat+k] = v
		}
		if categorical {
			if d.Categories == nil {
				d.Categories = make([][]string, nfeat)
			}
			d.Categories[k] = dict
		}
		col = vals
	}
	if t.roles.target >= 0 {
		d.TargetName = t.header[t.roles.target]
		var err error
		if d.Y, d.Classes, err = t.target(nil); err != nil {
			return nil, err
		}
	}
	if t.roles.weight >= 0 {
		var err error
		if d.Weights, err = t.weights(nil); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// sinkRole is what a column is read as.
type sinkRole uint8

const (
	sinkNumber   sinkRole = iota // a numeric feature
	sinkCategory                 // a categorical feature: first-seen codes
	sinkTarget                   // a regression target
	sinkLabel                    // a classification target: first-seen label ids
	sinkWeight                   // sample weights
)

// columnSink takes one column's values in row order and stores what the
// CSV reader would make of the same values written as text: dst[n] for
// the n-th value. Categorical features and class labels get first-seen
// ids into cat.seen, which the caller sorts (sortDictionary,
// encodeLabels).
type columnSink struct {
	t    *table
	j    int // header index of the column
	role sinkRole
	dst  []float64
	n    int // values taken
	cat  catColumn

	// What each text and each number (by its bits) gave, so that repeated
	// values cost a map look-up.
	texts map[string]float64
	nums  map[uint64]float64
}

// full reports whether the sink holds all the rows to read.
func (c *columnSink) full() bool { return c.n >= len(c.dst) }

// errorf returns an error about the current value.
func (c *columnSink) errorf(format string, args ...any) error {
	return fmt.Errorf("data: %s row %d, column %q (%d): %s", c.t.name, c.n+1, c.t.header[c.j], c.j+1, fmt.Sprintf(format, args...))
}

// put stores v for the current row.
func (c *columnSink) put(v float64) error {
	c.dst[c.n] = v
	c.n++
	return nil
}

// null takes a missing value (a null).
func (c *columnSink) null() error {
	switch c.role {
	case sinkNumber, sinkCategory:
		return c.put(math.NaN())
	case sinkWeight:
		return c.errorf("sample weight is missing")
	}
	return c.errorf("target value is missing")
}

// number takes a number, as ReadCSV takes the shortest text that names it.
func (c *columnSink) number(v float64) error {
	switch c.role {
	case sinkNumber:
		switch {
		case math.IsNaN(v):
			return c.put(math.NaN()) // missing, whatever its payload, as ReadCSV stores it
		case math.IsInf(v, 0):
			return c.errorf("%s is not a finite number", quoteValue(formatNumber(v)))
		}
		return c.put(v)
	case sinkTarget:
		switch {
		case math.IsNaN(v):
			return c.errorf("target value is missing")
		case math.IsInf(v, 0):
			return c.errorf("target %s is not a finite number", quoteValue(formatNumber(v)))
		}
		return c.put(v)
	case sinkWeight:
		switch {
		case math.IsNaN(v):
			return c.errorf("sample weight is missing")
		case math.IsInf(v, 0) || v < 0:
			return c.errorf("sample weight %s is not a finite number >= 0", quoteValue(formatNumber(v)))
		}
		return c.put(v)
	}
	// A category or a class label, keyed by NumberKey.
	if math.IsNaN(v) {
		return c.null()
	}
	if math.IsInf(v, 0) && c.role == sinkCategory {
		return c.errorf("%s is not a finite number", quoteValue(formatNumber(v)))
	}
	bits := math.Float64bits(v)
	if code, ok := c.nums[bits]; ok {
		return c.put(code)
	}
	if c.nums == nil {
		c.nums = make(map[uint64]float64)
	}
	code := c.code(NumberKey(v))
	c.nums[bits] = code
	return c.put(code)
}

// code returns the first-seen id of category or label key s.
func (c *columnSink) code(s string) float64 {
	if c.cat.id == nil {
		c.cat.id = make(map[string]int)
	}
	return c.cat.code(s)
}

// text takes a text value (not yet trimmed).
func (c *columnSink) text(s string) error {
	if v, ok := c.texts[s]; ok {
		return c.put(v)
	}
	return c.newText(strings.Clone(s))
}

// bytes takes a text value given as bytes, which it does not keep.
func (c *columnSink) bytes(b []byte) error {
	if v, ok := c.texts[string(b)]; ok { // no copy for the look-up
		return c.put(v)
	}
	return c.newText(string(b))
}

// newText takes a text value not seen before, by ReadCSV's rules for a
// field of the column's role, and remembers what it gave.
func (c *columnSink) newText(raw string) error {
	s := strings.TrimSpace(raw)
	var v float64
	switch c.role {
	case sinkNumber, sinkCategory:
		key, missing, problem := categoryOf(s)
		switch {
		case problem != "":
			return c.errorf("%s", problem)
		case missing:
			v = math.NaN()
		default:
			v = c.code(key)
		}
	case sinkLabel:
		if isMissing(s) {
			return c.errorf("target value is missing")
		}
		v = c.code(s)
	case sinkTarget:
		if isMissing(s) {
			return c.errorf("target value is missing")
		}
		var err error
		v, err = strconv.ParseFloat(s, 64)
		switch {
		case err != nil && !errors.Is(err, strconv.ErrRange):
			return c.errorf("target %s is not a number", quoteValue(s))
		case math.IsNaN(v):
			return c.errorf("target value is missing")
		case math.IsInf(v, 0):
			return c.errorf("target %s is not a finite number", quoteValue(s))
		}
	case sinkWeight:
		var err error
		v, err = strconv.ParseFloat(s, 64)
		switch {
		case isMissing(s):
			return c.errorf("sample weight is missing")
		case err != nil && !errors.Is(err, strconv.ErrRange):
			return c.errorf("sample weight %s is not a number", quoteValue(s))
		case math.IsInf(v, 0) || math.IsNaN(v) || v < 0:
			return c.errorf("sample weight %s is not a finite number >= 0", quoteValue(s))
		}
	}
	if c.texts == nil {
		c.texts = make(map[string]float64)
	}
	c.texts[raw] = v
	return c.put(v)
}

// decimal takes a decimal number written as text (digits, a sign, a
// point), as ReadCSV reads it.
func (c *columnSink) decimal(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return c.errorf("decimal %s is not a number", quoteValue(s))
	}
	return c.number(v)
}

// formatNumber writes v in its shortest form, as WriteCSV does.
func formatNumber(v float64) string {
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// float32Value returns the float64 that the shortest decimal form of f
// names: 0.1 for float32(0.1), the value a CSV file written from a float32
// column gives. Integers below 2^24 are exact either way.
func float32Value(f float32) float64 {
	v := float64(f)
	if v == math.Trunc(v) && math.Abs(v) < 1<<24 || math.IsInf(v, 0) || math.IsNaN(v) {
		return v
	}
	var buf [32]byte
	s := strconv.AppendFloat(buf[:0], v, 'g', -1, 32)
	r, err := strconv.ParseFloat(string(s), 64)
	if err != nil {
		return v
	}
	return r
}

// decimalText writes the integer whose decimal digits (with a leading
// '-' when negative) are digits, scaled down by 10^scale, as decimal text:
// "12345" with scale 2 is "123.45".
func decimalText(digits string, scale int) string {
	if scale <= 0 {
		return digits + strings.Repeat("0", -scale)
	}
	neg := strings.HasPrefix(digits, "-")
	digits = strings.TrimPrefix(digits, "-")
	if len(digits) <= scale {
		digits = strings.Repeat("0", scale-len(digits)+1) + digits
	}
	s := digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
	if neg {
		s = "-" + s
	}
	return s
}

// openRegular opens the file at path for a columnar reader: a regular
// file of at most limit bytes (the cap that opts.MaxBytes means), else an
// error naming it; format names the file format for errors.
func openRegular(path string, opts CSVOptions, format string) (f *os.File, size, limit int64, err error) {
	if opts.MaxRows < 0 {
		return nil, 0, 0, fmt.Errorf("data: %s: negative MaxRows %d", path, opts.MaxRows)
	}
	limit, err = readlimit.Check(opts.MaxBytes, DefaultMaxBytes, "CSVOptions.MaxBytes")
	if err != nil {
		return nil, 0, 0, fmt.Errorf("data: %s: %w", path, err)
	}
	if err := checkTargetOptions(path, opts); err != nil {
		return nil, 0, 0, err
	}
	f, err = os.Open(path)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("data: %w", err)
	}
	st, err := f.Stat()
	switch {
	case err != nil:
		f.Close()
		return nil, 0, 0, fmt.Errorf("data: %w", err)
	case !st.Mode().IsRegular():
		f.Close()
		return nil, 0, 0, fmt.Errorf("data: %s is not a regular file; a %s file must be one", path, format)
	case st.Size() > limit:
		f.Close()
		return nil, 0, 0, fmt.Errorf("data: %w", &readlimit.Error{Name: path, Limit: limit, Option: "CSVOptions.MaxBytes"})
	}
	return f, st.Size(), limit, nil
}

// recoverMalformed turns a panic in a file format library, reading a
// hostile or damaged file, into an error naming the file.
func recoverMalformed(err *error, path, format string) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("data: %s: malformed %s file: %v", path, format, r)
	}
}
