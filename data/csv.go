package data

import (
	"bufio"
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gotrain/gotrain/internal/readlimit"
)

// CSVOptions controls how [ReadCSV] and [LoadCSV] interpret a CSV file.
// The zero value reads a comma-separated regression data set whose target
// is the last column.
type CSVOptions struct {
	// Target names the target column. Empty means the last column.
	Target string

	// Classification marks the target as class labels. If every label is
	// a non-negative integer below 65536 (such as "0".."9", or "3.0"), Y
	// holds the label values and Classes stays nil. Otherwise the distinct
	// labels are sorted (numerically if all are numbers, else bytewise),
	// stored in Classes, and Y holds each row's index into Classes.
	Classification bool

	// Comma is the field delimiter. Zero means ','.
	Comma rune

	// MaxRows, when positive, stops reading after that many data rows.
	// Zero means no limit.
	MaxRows int

	// NoTarget reads every column as a feature (for prediction inputs):
	// Y stays nil and Target must be empty.
	NoTarget bool

	// Weight names a column of sample weights, read into
	// Dataset.Weights instead of being a feature: every value must be a
	// finite number >= 0. Empty means none (Weights stays nil).
	Weight string

	// Categorical names feature columns to read as categories
	// (Dataset.Categories), even when every value is a number. A column
	// with a value that is not a number (nor missing) is categorical
	// without being named. Category keys follow CategoryKey.
	Categorical []string

	// MaxBytes caps the bytes read: a larger input (a huge file, an
	// endless FIFO or device) is an error naming it, the cap and this
	// option, wrapping ErrTooLarge. 0 means DefaultMaxBytes (1 GiB).
	MaxBytes int64
}

// DefaultMaxBytes is the size cap of the CSV and IDX readers when their
// MaxBytes is 0: 1 GiB.
const DefaultMaxBytes = 1 << 30

// ErrTooLarge is wrapped by the error of an input larger than its reader's
// size cap (CSVOptions.MaxBytes, the maxBytes of the IDX readers).
var ErrTooLarge = readlimit.ErrTooLarge

// maxIntLabel bounds the labels that are kept as their own class index, so
// that a label such as "1000000" cannot make a model allocate a million
// classes; larger labels are mapped through Classes instead.
const maxIntLabel = 1 << 16

// ReadCSV reads a data set from CSV text with a header row. The name is used
// as the data set's Name and in error messages (typically the file name).
//
// The first line must be a header naming every column, without duplicates.
// A first line made only of numbers is taken for a missing header and
// rejected, unless the numbers are distinct non-negative integers written
// in digits only (the names pandas gives unnamed columns).
//
// Every column other than the target is a feature: numeric, or categorical
// when opts.Categorical names it or when one of its values is not a number
// (see Dataset.Categories: its dictionary is sorted, its values keyed by
// CategoryKey). An empty field, "NA", "NaN" or "nan" in a feature is a
// missing value and is stored as NaN; infinities are rejected. The target must not be missing. Spaces around
// fields and names are ignored. A leading UTF-8 byte order mark and CRLF line
// endings are accepted; quoted fields follow RFC 4180 as in [encoding/csv].
//
// Errors about a value name the file, the line (the header is line 1) and the
// column by name and 1-based number, for example:
//
//	data: diabetes.csv line 17, column "bmi" (3): "abc" is not a number
func ReadCSV(r io.Reader, name string, opts CSVOptions) (*Dataset, error) {
	if opts.MaxRows < 0 {
		return nil, fmt.Errorf("data: %s: negative MaxRows %d", name, opts.MaxRows)
	}
	limit, err := readlimit.Check(opts.MaxBytes, DefaultMaxBytes, "CSVOptions.MaxBytes")
	if err != nil {
		return nil, fmt.Errorf("data: %s: %w", name, err)
	}
	r = readlimit.NewReader(r, limit, name, "CSVOptions.MaxBytes")
	comma := opts.Comma
	if comma == 0 {
		comma = ','
	}
	if !validDelim(comma) {
		return nil, fmt.Errorf("data: %s: invalid field delimiter %q", name, comma)
	}

	br := bufio.NewReaderSize(r, 64<<10)
	if bom, err := br.Peek(3); err == nil && string(bom) == "\uFEFF" {
		br.Discard(3)
	}
	cr := csv.NewReader(br)
	cr.Comma = comma
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true

	p := &csvParser{name: name, cr: cr, noTarget: opts.NoTarget, weight: -1}
	if err := checkTargetOptions(name, opts); err != nil {
		return nil, err
	}
	if err := p.readHeader(opts); err != nil {
		return nil, err
	}
	if err := p.readRows(opts); err != nil {
		return nil, err
	}
	if p.rows == 0 {
		return nil, fmt.Errorf("data: %s: no data rows after the header", name)
	}

	targetName := ""
	if !p.noTarget {
		targetName = p.header[p.target]
	}
	d := &Dataset{
		Name:       name,
		TargetName: targetName,
		X:          slices.Clip(p.x),
		Y:          p.y,
		Rows:       p.rows,
		Cols:       len(p.features),
		Weights:    p.w,
	}
	d.FeatureNames = make([]string, len(p.features))
	for k, j := range p.features {
		d.FeatureNames[k] = p.header[j]
	}
	if opts.Classification {
		d.Classes = encodeLabels(p.labels, p.y)
	}
	for k, c := range p.cats {
		if c != nil && c.why != "" && len(c.seen) > MaxDetectedCategories {
			return nil, fmt.Errorf("%s, but it then holds %d distinct values, more than the %d a column found categorical may have: correct the value, or name the column with CSVOptions.Categorical (--categorical)", c.why, len(c.seen), MaxDetectedCategories)
		}
		if c != nil {
			if d.Categories == nil {
				d.Categories = make([][]string, d.Cols)
			}
			d.Categories[k] = sortDictionary(c.seen, d.X, d.Rows, d.Cols, k)
		}
	}
	return d, nil
}

// LoadCSV reads the CSV file at path with [ReadCSV]. The data set is named
// after the file's base name, and errors name the path. A regular file
// larger than opts.MaxBytes is refused before it is read; a FIFO or a
// device is read up to the cap.
func LoadCSV(path string, opts CSVOptions) (*Dataset, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil {
		limit, cerr := readlimit.Check(opts.MaxBytes, DefaultMaxBytes, "CSVOptions.MaxBytes")
		switch {
		case st.IsDir():
			return nil, fmt.Errorf("data: %s is a directory, not a CSV file", path)
		case cerr == nil && st.Mode().IsRegular() && st.Size() > limit:
			return nil, fmt.Errorf("data: %w", &readlimit.Error{Name: path, Limit: limit, Option: "CSVOptions.MaxBytes"})
		}
	}
	d, err := ReadCSV(f, path, opts)
	if err != nil {
		return nil, err
	}
	d.Name = filepath.Base(path)
	return d, nil
}

// WriteCSV writes a header row and then the rows of numbers as CSV with
// comma delimiters and LF line endings. Each row must have len(header)
// values. Numbers are written in the shortest form that reads back exactly;
// NaN is written as "NaN", which [ReadCSV] reads as missing. Infinite values
// are rejected because ReadCSV does not accept them.
func WriteCSV(w io.Writer, header []string, rows [][]float64) error {
	bw := bufio.NewWriter(w)
	cw := csv.NewWriter(bw)
	if err := cw.Write(header); err != nil {
		return fmt.Errorf("data: writing CSV header: %w", err)
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("data: writing CSV header: %w", err)
	}
	var buf []byte
	for i, row := range rows {
		if len(row) != len(header) {
			return fmt.Errorf("data: writing CSV: row %d has %d values, want %d (one per header column)", i, len(row), len(header))
		}
		buf = buf[:0]
		for j, v := range row {
			if j > 0 {
				buf = append(buf, ',')
			}
			switch {
			case math.IsNaN(v):
				buf = append(buf, "NaN"...)
			case math.IsInf(v, 0):
				return fmt.Errorf("data: writing CSV: row %d, column %q (%d): value is infinite", i, header[j], j+1)
			default:
				buf = strconv.AppendFloat(buf, v, 'g', -1, 64)
			}
		}
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return fmt.Errorf("data: writing CSV: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("data: writing CSV: %w", err)
	}
	return nil
}

// validDelim reports whether encoding/csv accepts r as a field delimiter.
func validDelim(r rune) bool {
	return r != 0 && r != '"' && r != '\r' && r != '\n' && utf8.ValidRune(r) && r != utf8.RuneError
}

// csvParser holds the state of one ReadCSV call.
type csvParser struct {
	name     string
	cr       *csv.Reader
	header   []string
	target   int // header index of the target column (-1 with noTarget)
	noTarget bool
	features []int // header indices of the feature columns, in order

	x    []float64
	y    []float64
	rows int

	weight int       // header index of the weight column, -1 for none
	w      []float64 // the weights read

	// Classification labels: labelID maps each distinct label to the order
	// in which it was first seen; labels lists them in that order. y holds
	// first-seen ids until encodeLabels rewrites it.
	labelID map[string]int
	labels  []string

	// cats[k] is the state of feature k when it is categorical, else nil.
	cats []*catColumn
}

// catColumn is a categorical column being read: x holds first-seen ids
// into seen until ReadCSV sorts the dictionary.
type catColumn struct {
	id   map[string]int
	seen []string
	// why, for a column found categorical (not named so), is where: the
	// first value that is not a number, as an error prefix naming it.
	why string
}

// code returns the first-seen id of category key s, adding it when new.
func (c *catColumn) code(s string) float64 {
	id, ok := c.id[s]
	if !ok {
		id = len(c.seen)
		s = strings.Clone(s) // s may point into the whole line
		c.id[s] = id
		c.seen = append(c.seen, s)
	}
	return float64(id)
}

// toCategorical makes numeric feature k categorical after rows rows, its
// numbers keyed by NumberKey.
func (p *csvParser) toCategorical(k int, why string) {
	c := &catColumn{id: map[string]int{}, why: why}
	nfeat := len(p.features)
	for i := 0; i < p.rows; i++ {
		if v := &p.x[i*nfeat+k]; !math.IsNaN(*v) {
			*v = c.code(NumberKey(*v))
		}
	}
	p.cats[k] = c
}

// read returns the next record, turning csv parse errors into errors that
// name the file and line.
func (p *csvParser) read() ([]string, error) {
	rec, err := p.cr.Read()
	if err == nil || err == io.EOF {
		return rec, err
	}
	var le *readlimit.Error
	if errors.As(err, &le) {
		return nil, fmt.Errorf("data: %w", le)
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return nil, fmt.Errorf("data: %s line %d, byte %d: %w", p.name, pe.Line, pe.Column, pe.Err)
	}
	return nil, fmt.Errorf("data: reading %s: %w", p.name, err)
}

// readHeader reads and checks the header row and picks the target, the
// weight, the features and those declared categorical (chooseColumns).
func (p *csvParser) readHeader(opts CSVOptions) error {
	rec, err := p.read()
	if err == io.EOF {
		return fmt.Errorf("data: %s: empty file (a header row is required)", p.name)
	}
	if err != nil {
		return err
	}
	p.header = make([]string, len(rec))
	for j, s := range rec {
		p.header[j] = strings.TrimSpace(s)
	}
	seen := make(map[string]int, len(p.header))
	for j, h := range p.header {
		if h == "" {
			return fmt.Errorf("data: %s line 1: column %d has an empty name (a header row naming every column is required)", p.name, j+1)
		}
		if k, dup := seen[h]; dup {
			if looksLikeData(p.header) {
				return missingHeader(p.name)
			}
			return fmt.Errorf("data: %s line 1: duplicate column name %q (columns %d and %d)", p.name, h, k+1, j+1)
		}
		seen[h] = j
	}
	if looksLikeData(p.header) && !allDistinctInts(p.header) {
		return missingHeader(p.name)
	}

	roles, err := chooseColumns(p.name, p.name+" line 1", p.header, opts)
	if err != nil {
		return err
	}
	p.target, p.weight, p.features = roles.target, roles.weight, roles.features
	p.cats = make([]*catColumn, len(p.features))
	for k, c := range roles.categorical {
		if c {
			p.cats[k] = &catColumn{id: map[string]int{}}
		}
	}
	return nil
}

func missingHeader(name string) error {
	return fmt.Errorf("data: %s line 1: missing header: the first line holds only numbers, but a header row naming the columns is required", name)
}

// looksLikeData reports whether every field parses as a number.
func looksLikeData(rec []string) bool {
	for _, s := range rec {
		if _, err := strconv.ParseFloat(s, 64); err != nil {
			return false
		}
	}
	return true
}

// allDistinctInts reports whether every name is a non-negative integer
// written in digits only, such as the "0,1,2,..." header that pandas writes
// for unnamed columns; such a header is accepted as names.
func allDistinctInts(names []string) bool {
	for _, s := range names {
		if strings.Trim(s, "0123456789") != "" {
			return false
		}
	}
	return true // duplicates were rejected before
}

// listNames quotes up to 50 names for an error message.
func listNames(names []string) string {
	const maxList = 50
	var b strings.Builder
	for j, n := range names {
		if j == maxList {
			fmt.Fprintf(&b, ", ... (%d more)", len(names)-maxList)
			break
		}
		if j > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(n))
	}
	return b.String()
}

// readRows reads the data rows.
func (p *csvParser) readRows(opts CSVOptions) error {
	ncol := len(p.header)
	nfeat := len(p.features)
	if opts.Classification {
		p.labelID = make(map[string]int)
	}
	for opts.MaxRows == 0 || p.rows < opts.MaxRows {
		rec, err := p.read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if len(rec) != ncol {
			line, _ := p.cr.FieldPos(0)
			return fmt.Errorf("data: %s line %d: %d fields, want %d (one per header column)", p.name, line, len(rec), ncol)
		}

		start := len(p.x)
		p.x = slices.Grow(p.x, nfeat)[:start+nfeat]
		row := p.x[start:]
		for k, j := range p.features {
			s := strings.TrimSpace(rec[j])
			if isMissing(s) {
				row[k] = math.NaN()
				continue
			}
			if c := p.cats[k]; c != nil {
				key, missing, problem := categoryOf(s)
				switch {
				case problem != "":
					return p.fieldErr(j, "%s", problem)
				case missing:
					row[k] = math.NaN()
				default:
					row[k] = c.code(key)
				}
				continue
			}
			v, err := strconv.ParseFloat(s, 64)
			if err != nil && !errors.Is(err, strconv.ErrRange) {
				// A value that is not a number: the column holds categories.
				if _, _, problem := categoryOf(s); problem != "" {
					return p.fieldErr(j, "%s", problem)
				}
				line, _ := p.cr.FieldPos(j)
				p.toCategorical(k, fmt.Sprintf("data: %s line %d, column %q (%d): %s is not a number, which makes the column categorical", p.name, line, p.header[j], j+1, quoteValue(s)))
				row[k] = p.cats[k].code(s)
				continue
			}
			if math.IsInf(v, 0) {
				return p.fieldErr(j, "%s is not a finite number", quoteValue(s))
			}
			row[k] = v // NaN spelled another way ("NAN") is missing too
		}

		if p.weight >= 0 {
			s := strings.TrimSpace(rec[p.weight])
			v, err := strconv.ParseFloat(s, 64)
			switch {
			case isMissing(s):
				return p.fieldErr(p.weight, "sample weight is missing")
			case err != nil && !errors.Is(err, strconv.ErrRange):
				return p.fieldErr(p.weight, "sample weight %s is not a number", quoteValue(s))
			case math.IsInf(v, 0) || math.IsNaN(v) || v < 0:
				return p.fieldErr(p.weight, "sample weight %s is not a finite number >= 0", quoteValue(s))
			}
			p.w = append(p.w, v)
		}
		if p.noTarget {
			p.rows++
			continue
		}
		s := strings.TrimSpace(rec[p.target])
		if isMissing(s) {
			return p.fieldErr(p.target, "target value is missing")
		}
		if opts.Classification {
			id, ok := p.labelID[s]
			if !ok {
				id = len(p.labels)
				s = strings.Clone(s) // s points into the whole line
				p.labelID[s] = id
				p.labels = append(p.labels, s)
			}
			p.y = append(p.y, float64(id))
		} else {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil && !errors.Is(err, strconv.ErrRange) {
				return p.fieldErr(p.target, "target %s is not a number", quoteValue(s))
			}
			if math.IsNaN(v) {
				return p.fieldErr(p.target, "target value is missing")
			}
			if math.IsInf(v, 0) {
				return p.fieldErr(p.target, "target %s is not a finite number", quoteValue(s))
			}
			p.y = append(p.y, v)
		}
		p.rows++
	}
	return nil
}

// fieldErr returns an error about column j of the current record.
func (p *csvParser) fieldErr(j int, format string, args ...any) error {
	line, _ := p.cr.FieldPos(j)
	return fmt.Errorf("data: %s line %d, column %q (%d): %s", p.name, line, p.header[j], j+1, fmt.Sprintf(format, args...))
}

// isMissing reports whether a (trimmed) field denotes a missing value.
func isMissing(s string) bool {
	switch s {
	case "", "NA", "NaN", "nan":
		return true
	}
	return false
}

// quoteValue quotes a field for an error message, shortening long ones.
func quoteValue(s string) string {
	const maxLen = 40
	if len(s) <= maxLen {
		return strconv.Quote(s)
	}
	cut := maxLen
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "..."
}

// encodeLabels turns the first-seen label ids in y (indices into labels,
// the distinct trimmed labels in the order first seen) into final class
// values, in place, and returns Classes (nil when the labels are their own
// indices), following CSVOptions.Classification. The CSV, Parquet and Arrow
// readers share it, so that the same labels give the same classes.
func encodeLabels(labels []string, y []float64) []string {
	type label struct {
		text    string
		value   float64
		numeric bool
	}
	ls := make([]label, len(labels))
	allNumeric, allSmallInts := true, true
	for i, s := range labels {
		v, err := strconv.ParseFloat(s, 64)
		ok := err == nil && !math.IsInf(v, 0) && !math.IsNaN(v)
		ls[i] = label{text: s, value: v, numeric: ok}
		allNumeric = allNumeric && ok
		allSmallInts = allSmallInts && ok && v >= 0 && v < maxIntLabel && v == math.Trunc(v)
	}

	// remap[id] is the final value of the label first seen as id.
	remap := make([]float64, len(ls))
	var classes []string
	switch {
	case allSmallInts:
		for i, l := range ls {
			remap[i] = l.value + 0 // +0 turns -0 into 0
		}
	case allNumeric:
		// Sort by value; labels spelled differently but equal in value
		// ("1", "1.0") are one class, named in canonical form.
		vals := make([]float64, len(ls))
		for i, l := range ls {
			vals[i] = l.value + 0
		}
		slices.Sort(vals)
		vals = slices.Compact(vals)
		classes = make([]string, len(vals))
		for k, v := range vals {
			classes[k] = strconv.FormatFloat(v, 'g', -1, 64)
		}
		for i, l := range ls {
			k, _ := slices.BinarySearch(vals, l.value+0)
			remap[i] = float64(k)
		}
	default:
		order := make([]int, len(ls))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return cmp.Compare(ls[a].text, ls[b].text) })
		classes = make([]string, len(ls))
		for k, i := range order {
			classes[k] = ls[i].text
			remap[i] = float64(k)
		}
	}
	for r, id := range y {
		y[r] = remap[int(id)]
	}
	return classes
}
