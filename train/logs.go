package train

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gotrain/gotrain/internal/atomicfile"
)

// The logs of a run: the JSON-lines metrics log (Config.MetricsLog), its
// CSV twin beside it (CSVLogPath) and the TensorBoard event file
// (Config.TensorBoardDir) get the same records, each when it is written.

// CSVLogPath is the CSV log written beside the JSON-lines metrics log
// jsonPath: its name with the extension .jsonl, .ndjson or .json replaced
// by .csv (metrics.jsonl: metrics.csv), else with .csv added.
func CSVLogPath(jsonPath string) string {
	ext := filepath.Ext(jsonPath)
	switch strings.ToLower(ext) {
	case ".jsonl", ".ndjson", ".json":
		return strings.TrimSuffix(jsonPath, ext) + ".csv"
	}
	return jsonPath + ".csv"
}

// csvLeading are the columns a CSV log starts with, in this order, when a
// record has them; other fields follow in the order they first appear
// (sorted within a record).
var csvLeading = []string{"step", "epoch", "loss", "lr", "grad_norm", "step_ms", "samples_per_s", "elapsed", "wall"}

// csvLog is the CSV twin of the metrics log: a header naming the columns,
// then one row per record. A row is appended with one write of the whole
// line, as the JSON log's are. A record with a field the header lacks
// adds a column: the whole file is then rewritten atomically (through
// internal/atomicfile) with the new header and the earlier rows padded
// with empty cells, and appending goes on in the new file.
type csvLog struct {
	path string
	cols []string
	f    *os.File
}

// openCSVLog opens the CSV log at path, continuing it when it exists
// (its header gives the columns). after > 0 is the step a resumed run
// continues from: the log is first trimmed to it (trimLog).
func openCSVLog(path string, after int64) (*csvLog, error) {
	c := &csvLog{path: path}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("train: CSV log: %w", err)
	default:
		if after > 0 {
			step := csvStep(b)
			if b, err = trimLog(path, b, after, step); err != nil {
				return nil, fmt.Errorf("train: CSV log: %w", err)
			}
		}
		if header, _, ok := bytes.Cut(b, []byte("\n")); ok {
			row, err := csv.NewReader(bytes.NewReader(header)).Read()
			if err != nil {
				return nil, fmt.Errorf("train: CSV log %s: header: %w", path, err)
			}
			c.cols = row
		}
	}
	if c.f, err = atomicfile.OpenAppend(path); err != nil {
		return nil, fmt.Errorf("train: CSV log: %w", err)
	}
	return c, nil
}

// csvStep returns the function that reads the step of a row of the CSV
// log b (its header gives the column; the header itself has none).
func csvStep(b []byte) func(line []byte) (int64, bool) {
	header, _, _ := bytes.Cut(b, []byte("\n"))
	cols, err := csv.NewReader(bytes.NewReader(header)).Read()
	col := slices.Index(cols, "step")
	return func(line []byte) (int64, bool) {
		if err != nil || col < 0 {
			return 0, false
		}
		row, err := csv.NewReader(bytes.NewReader(line)).Read()
		if err != nil || col >= len(row) {
			return 0, false
		}
		s, err := strconv.ParseInt(row[col], 10, 64)
		return s, err == nil
	}
}

// Write appends rec as a row.
func (c *csvLog) Write(rec map[string]any) error {
	var added []string
	for _, k := range recordKeys(rec) {
		if !slices.Contains(c.cols, k) {
			added = append(added, k)
		}
	}
	if len(added) > 0 || len(c.cols) == 0 {
		return c.rewrite(append(slices.Clone(c.cols), added...), rec)
	}
	line, err := csvLine(c.cols, rec)
	if err != nil {
		return err
	}
	if _, err := c.f.Write(line); err != nil {
		return fmt.Errorf("train: writing CSV log: %w", err)
	}
	return nil
}

// rewrite writes the log again with the columns cols (the old ones
// first): the header, the earlier rows padded, and rec.
func (c *csvLog) rewrite(cols []string, rec map[string]any) error {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.Write(cols)
	w.Flush()
	if len(c.cols) > 0 {
		old, err := os.ReadFile(c.path)
		if err != nil {
			return fmt.Errorf("train: CSV log: %w", err)
		}
		r := csv.NewReader(bytes.NewReader(old))
		r.FieldsPerRecord = -1
		rows, err := r.ReadAll()
		if err != nil {
			return fmt.Errorf("train: CSV log %s: %w", c.path, err)
		}
		for _, row := range rows[min(1, len(rows)):] {
			for len(row) < len(cols) {
				row = append(row, "")
			}
			_ = w.Write(row)
		}
		w.Flush()
	}
	line, err := csvLine(cols, rec)
	if err != nil {
		return err
	}
	buf.Write(line)
	if err := c.f.Close(); err != nil {
		return fmt.Errorf("train: CSV log: %w", err)
	}
	if err := atomicfile.WriteFile(c.path, buf.Bytes()); err != nil {
		return fmt.Errorf("train: CSV log: %w", err)
	}
	c.cols = cols
	if c.f, err = atomicfile.OpenAppend(c.path); err != nil {
		return fmt.Errorf("train: CSV log: %w", err)
	}
	return nil
}

// Close closes the log.
func (c *csvLog) Close() error {
	if err := c.f.Close(); err != nil {
		return fmt.Errorf("train: closing CSV log: %w", err)
	}
	return nil
}

// recordKeys are rec's fields in column order: csvLeading first, then
// the others sorted.
func recordKeys(rec map[string]any) []string {
	var keys, rest []string
	for _, k := range csvLeading {
		if _, ok := rec[k]; ok {
			keys = append(keys, k)
		}
	}
	for k := range rec {
		if !slices.Contains(csvLeading, k) {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	return append(keys, rest...)
}

// csvLine is rec's row under the columns cols, with its newline: numbers
// as Go writes them exactly (strconv 'g', shortest), text as it is,
// other values (the per-GPU samples) as JSON; a field rec lacks is empty.
func csvLine(cols []string, rec map[string]any) ([]byte, error) {
	row := make([]string, len(cols))
	for i, k := range cols {
		v, ok := rec[k]
		if !ok {
			continue
		}
		cell, err := csvCell(v)
		if err != nil {
			return nil, fmt.Errorf("train: CSV log: field %s: %w", k, err)
		}
		row[i] = cell
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.Write(row)
	w.Flush()
	return buf.Bytes(), w.Error()
}

func csvCell(v any) (string, error) {
	switch x := v.(type) {
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32), nil
	case int:
		return strconv.Itoa(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	}
	b, err := json.Marshal(v)
	return string(b), err
}

// jsonStep reads the "step" of a line of the JSON-lines metrics log.
func jsonStep(line []byte) (int64, bool) {
	var rec struct {
		Step *float64 `json:"step"`
	}
	if json.Unmarshal(line, &rec) != nil || rec.Step == nil || *rec.Step != math.Trunc(*rec.Step) {
		return 0, false
	}
	return int64(*rec.Step), true
}

// trimLog makes the log b (the content of the file path) fit a run
// resumed after step after: a last line without its newline (a write cut
// short by a crash) is dropped, then the last lines whose step is above
// after (written by the run that stopped, after its last checkpoint; the
// resumed run writes them again). It stops at the first line from the end
// that is not such a record, so the lines of earlier runs stay. When
// something is dropped the file is rewritten atomically; it returns the
// content kept.
func trimLog(path string, b []byte, after int64, step func(line []byte) (int64, bool)) ([]byte, error) {
	keep := len(b)
	if keep > 0 && b[keep-1] != '\n' {
		keep = bytes.LastIndexByte(b, '\n') + 1
	}
	for keep > 0 {
		start := bytes.LastIndexByte(b[:keep-1], '\n') + 1
		s, ok := step(b[start : keep-1])
		if !ok || s <= after {
			break
		}
		keep = start
	}
	if keep == len(b) {
		return b, nil
	}
	if err := atomicfile.WriteFile(path, b[:keep]); err != nil {
		return nil, err
	}
	return b[:keep], nil
}

// trimMetricsLog trims the JSON-lines metrics log at path for a run
// resumed after step after (trimLog); a log that is not a regular file (a
// pipe, standard output) is left alone.
func trimMetricsLog(path string, after int64) error {
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("train: metrics log: %w", err)
	}
	if _, err := trimLog(path, b, after, jsonStep); err != nil {
		return fmt.Errorf("train: metrics log: %w", err)
	}
	return nil
}
