package modclass

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gotrain/gotrain/internal/readlimit"
)

// Data is a loaded feature data set: one row per record.
type Data struct {
	// Name is the file the rows came from.
	Name string
	// Info is the folder's dataset.json; nil when the folder has none.
	Info *Info
	// Columns names the numeric feature columns (the CSV columns after
	// label and snr_db_true).
	Columns []string
	// X is the Rows × len(Columns) feature matrix, row-major.
	X []float64
	// Labels and SNR are each row's class name and true SNR in dB.
	Labels []string
	SNR    []float64
	// Rows is the number of records.
	Rows int
	// iqIndex is each row's index among the rows of its label (IQPath).
	iqIndex []int
}

// DefaultMaxCSVBytes is the cap on the feature file of [Load]: 2 GiB.
const DefaultMaxCSVBytes = 1 << 31

// MaxClasses bounds the classes of a data set: the evaluation's confusion
// matrix holds their square.
const MaxClasses = 1024

// maxInfoBytes bounds the dataset.json read into memory.
const maxInfoBytes = 16 << 20

// Load reads a data set written by [Generate]: path is its folder (holding
// features.csv and, optionally, dataset.json) or the CSV file itself. The
// CSV file may hold at most DefaultMaxCSVBytes ([LoadMax]).
func Load(path string) (*Data, error) {
	return LoadMax(path, 0)
}

// LoadMax is [Load] with a cap of maxBytes on the CSV file (0:
// DefaultMaxCSVBytes): a larger regular file is refused by its size, a
// FIFO or device read up to the cap, with an error naming the file and the
// cap, never a data set silently cut at the cap.
func LoadMax(path string, maxBytes int64) (*Data, error) {
	limit, err := readlimit.Check(maxBytes, DefaultMaxCSVBytes, "maxBytes")
	if err != nil {
		return nil, fmt.Errorf("modclass: %s: %w", path, err)
	}
	csvPath, dir := path, filepath.Dir(path)
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		csvPath, dir = filepath.Join(path, FeaturesFile), path
	}
	fh, err := os.Open(csvPath)
	if err != nil {
		return nil, fmt.Errorf("modclass: %w", err)
	}
	defer fh.Close()
	if st, err := fh.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > limit {
		return nil, fmt.Errorf("modclass: %w", &readlimit.Error{Name: csvPath, Limit: limit, Option: "maxBytes"})
	}
	d, err := ReadCSV(readlimit.NewReader(fh, limit, csvPath, "maxBytes"), csvPath)
	if err != nil {
		return nil, err
	}
	b, err := readlimit.ReadFile(filepath.Join(dir, InfoFile), maxInfoBytes, "")
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("modclass: %w", err)
	default:
		var info Info
		if err := json.Unmarshal(b, &info); err != nil {
			return nil, fmt.Errorf("modclass: %s: %w", filepath.Join(dir, InfoFile), err)
		}
		if info.Format != infoFormat {
			return nil, fmt.Errorf("modclass: %s: format %q, want %q", filepath.Join(dir, InfoFile), info.Format, infoFormat)
		}
		d.Info = &info
	}
	if n := len(d.Classes()); n > MaxClasses {
		return nil, fmt.Errorf("modclass: %s: %d classes: at most %d (MaxClasses)", path, n, MaxClasses)
	}
	return d, nil
}

// ReadCSV reads feature rows: a header starting with label and snr_db_true,
// then numeric columns. Errors name the file, line and column.
func ReadCSV(r io.Reader, name string) (*Data, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("modclass: %s: empty file", name)
	}
	if err != nil {
		return nil, fmt.Errorf("modclass: %s: %w", name, err)
	}
	if len(head) < 3 || strings.TrimSpace(head[0]) != "label" || strings.TrimSpace(head[1]) != "snr_db_true" {
		return nil, fmt.Errorf("modclass: %s: the header must start with label,snr_db_true and name at least one feature", name)
	}
	d := &Data{Name: name}
	seen := map[string]bool{}
	for _, h := range head[2:] {
		h = strings.TrimSpace(h)
		if seen[h] || h == "" {
			return nil, fmt.Errorf("modclass: %s: column %q is empty or repeated", name, h)
		}
		seen[h] = true
		d.Columns = append(d.Columns, h)
	}
	p := len(d.Columns)
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("modclass: %s: %w", name, err)
		}
		if len(rec) != p+2 {
			return nil, fmt.Errorf("modclass: %s line %d: %d fields, want %d", name, line, len(rec), p+2)
		}
		label := strings.TrimSpace(rec[0])
		if label == "" {
			return nil, fmt.Errorf("modclass: %s line %d: empty label", name, line)
		}
		snr, err := strconv.ParseFloat(strings.TrimSpace(rec[1]), 64)
		if err != nil || !finite(snr) {
			return nil, fmt.Errorf("modclass: %s line %d: snr_db_true %q is not a finite number", name, line, rec[1])
		}
		for j, s := range rec[2:] {
			v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil {
				return nil, fmt.Errorf("modclass: %s line %d, column %q: %q is not a number", name, line, d.Columns[j], s)
			}
			d.X = append(d.X, v)
		}
		d.Labels = append(d.Labels, label)
		d.SNR = append(d.SNR, snr)
		d.Rows++
	}
	if d.Rows == 0 {
		return nil, fmt.Errorf("modclass: %s: no data rows", name)
	}
	if n := len(d.Classes()); n > MaxClasses {
		return nil, fmt.Errorf("modclass: %s: %d classes: at most %d (MaxClasses)", name, n, MaxClasses)
	}
	return d, nil
}

// Classes returns the class names: dataset.json's order when present, else
// the order of first appearance.
func (d *Data) Classes() []string {
	if d.Info != nil && len(d.Info.Classes) > 0 {
		return d.Info.Classes
	}
	var cls []string
	seen := map[string]bool{}
	for _, l := range d.Labels {
		if !seen[l] {
			seen[l] = true
			cls = append(cls, l)
		}
	}
	return cls
}

// Subset returns the rows idx of d (copied).
func (d *Data) Subset(idx []int) *Data {
	p := len(d.Columns)
	s := &Data{Name: d.Name, Info: d.Info, Columns: d.Columns, Rows: len(idx), iqIndex: make([]int, 0, len(idx))}
	s.X = make([]float64, 0, len(idx)*p)
	iq := d.iqIndexes()
	for _, i := range idx {
		s.iqIndex = append(s.iqIndex, iq[i])
		s.X = append(s.X, d.X[i*p:(i+1)*p]...)
		s.Labels = append(s.Labels, d.Labels[i])
		s.SNR = append(s.SNR, d.SNR[i])
	}
	return s
}
