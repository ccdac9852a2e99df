package data

import (
	"fmt"
	"path/filepath"
	"slices"
)

// OpenFile opens the data file at path as [LoadFile] reads it, except that
// a Parquet or Arrow file's feature columns are not read: OpenFile reads
// the target and the weights, and leaves X nil with a Source that reads
// one feature column at a time (each read opens the file again), so that a
// learner that bins one column at a time (forest.Fit) never holds the whole
// feature matrix. Dataset.Materialize reads them all, for the uses that
// need X. A CSV file is read whole, as LoadCSV does.
func OpenFile(path string, opts CSVOptions) (*Dataset, error) {
	format := sniffFormat(path)
	if format == "" {
		return LoadCSV(path, opts)
	}
	src := &fileColumns{path: path, opts: opts, format: format}
	t, closer, err := src.open()
	if err != nil {
		return nil, err
	}
	defer closer()
	src.header, src.rows = t.header, t.rows
	nfeat := len(t.roles.features)
	d := &Dataset{
		Name:         filepath.Base(path),
		FeatureNames: make([]string, nfeat),
		Rows:         t.rows,
		Cols:         nfeat,
		Source:       src,
	}
	for k, j := range t.roles.features {
		d.FeatureNames[k] = t.header[j]
	}
	if t.roles.target >= 0 {
		d.TargetName = t.header[t.roles.target]
		if d.Y, d.Classes, err = t.target(nil); err != nil {
			return nil, err
		}
	}
	if t.roles.weight >= 0 {
		if d.Weights, err = t.weights(nil); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// fileColumns reads the feature columns of a Parquet or Arrow file, one
// at a time (a Dataset.Source from OpenFile).
type fileColumns struct {
	path   string
	opts   CSVOptions
	format string // "parquet" or "arrow"
	// What OpenFile saw, which each read checks: the file must not have
	// been replaced since.
	header []string
	rows   int
}

// open opens the file as a table; closer closes it.
func (s *fileColumns) open() (t *table, closer func(), err error) {
	if s.format == "parquet" {
		return openParquet(s.path, s.opts)
	}
	t, err = openArrow(s.path, s.opts)
	return t, func() {}, err
}

// ReadColumn reads feature column j (table.ReadColumn) of the file, opened
// for this read.
func (s *fileColumns) ReadColumn(j int, dst []float64) (vals []float64, dict []string, err error) {
	t, closer, err := s.open()
	if err != nil {
		return nil, nil, err
	}
	defer closer()
	if t.rows != s.rows || !slices.Equal(t.header, s.header) {
		return nil, nil, fmt.Errorf("data: %s changed while its columns were being read (its columns or rows differ from when it was opened)", s.path)
	}
	return t.ReadColumn(j, dst)
}
