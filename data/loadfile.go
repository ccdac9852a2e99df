package data

import (
	"io"
	"os"
)

// LoadFile reads the data file at path, choosing its reader by what the
// file starts with: [LoadParquet] for a Parquet file ("PAR1"),
// [LoadArrow] for an Arrow IPC file or stream ("ARROW1", or the
// continuation marker 0xFFFFFFFF), else [LoadCSV]. The options apply as
// each reader says; the three give the same Dataset for the same table.
// A file that is not a regular one (a FIFO, a device) is read as CSV.
func LoadFile(path string, opts CSVOptions) (*Dataset, error) {
	switch sniffFormat(path) {
	case "parquet":
		return LoadParquet(path, opts)
	case "arrow":
		return LoadArrow(path, opts)
	}
	return LoadCSV(path, opts)
}

// sniffFormat returns "parquet", "arrow" or "" (CSV, or a file it cannot
// open or that is not regular, which LoadCSV reports on) for the file at
// path, by its first bytes.
func sniffFormat(path string) string {
	// Stat before opening: opening a FIFO to peek would consume its
	// writer's stream (or end it), which LoadCSV must read from the start.
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return ""
	}
	var head [len(arrowFileMagic)]byte
	n, _ := io.ReadFull(f, head[:])
	return formatOf(head[:n])
}

// formatOf names the format a file starting with head is in, "" for CSV.
func formatOf(head []byte) string {
	switch s := string(head); {
	case len(s) >= len(parquetMagic) && s[:len(parquetMagic)] == parquetMagic:
		return "parquet"
	case len(s) >= len(arrowFileMagic) && s[:len(arrowFileMagic)] == arrowFileMagic,
		len(s) >= len(arrowStreamStart) && s[:len(arrowStreamStart)] == arrowStreamStart:
		return "arrow"
	}
	return ""
}
