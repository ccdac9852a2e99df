package data

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"embed"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
)

// The data files come from scikit-learn 1.2.1 (BSD-3-Clause); see
// embedded/README.md and embedded/LICENSE.scikit-learn.
//
//go:embed embedded/diabetes_data_raw.csv.gz embedded/diabetes_target.csv.gz embedded/digits.csv.gz
var embedded embed.FS

// embeddedNames lists the names Embedded accepts, in order.
var embeddedNames = []string{"diabetes", "digits"}

var (
	diabetesOnce = sync.OnceValues(loadDiabetes)
	digitsOnce   = sync.OnceValues(loadDigits)
)

// Diabetes returns scikit-learn's diabetes regression data set: 442 patients,
// 10 raw (unscaled) baseline features named age, sex, bmi, bp and s1..s6, and
// the target "progression", a measure of disease progression one year after
// baseline. Unlike scikit-learn's default load_diabetes, the features are not
// centred or scaled. The data are parsed once; each call returns a fresh copy
// that the caller may change.
func Diabetes() (*Dataset, error) {
	d, err := diabetesOnce()
	if err != nil {
		return nil, err
	}
	return d.Clone(), nil
}

// Digits returns scikit-learn's handwritten digits classification data set:
// 1797 8×8 images with pixel values 0..16, as 64 features named
// pixel_R_C (row R, column C, as in scikit-learn), and the target "digit"
// holding the class 0..9 (Classes is nil). The data are parsed once; each
// call returns a fresh copy that the caller may change.
func Digits() (*Dataset, error) {
	d, err := digitsOnce()
	if err != nil {
		return nil, err
	}
	return d.Clone(), nil
}

// Embedded returns the embedded data set with the given name: "diabetes"
// ([Diabetes]) or "digits" ([Digits]). Case is ignored.
func Embedded(name string) (*Dataset, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "diabetes":
		return Diabetes()
	case "digits":
		return Digits()
	}
	return nil, fmt.Errorf("data: unknown embedded data set %q; valid names: %s", name, strings.Join(embeddedNames, ", "))
}

// EmbeddedNames returns the names that [Embedded] accepts.
func EmbeddedNames() []string {
	return append([]string(nil), embeddedNames...)
}

// openEmbedded returns a reader for the decompressed embedded file.
func openEmbedded(file string) (io.Reader, error) {
	b, err := embedded.ReadFile("embedded/" + file)
	if err != nil {
		return nil, fmt.Errorf("data: reading embedded %s: %w", file, err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("data: reading embedded %s: %w", file, err)
	}
	return zr, nil
}

func loadDiabetes() (*Dataset, error) {
	const rows, cols = 442, 10
	r, err := openEmbedded("diabetes_data_raw.csv.gz")
	if err != nil {
		return nil, err
	}
	x, err := readSpaceTable(r, "diabetes_data_raw.csv.gz", cols)
	if err != nil {
		return nil, err
	}
	r, err = openEmbedded("diabetes_target.csv.gz")
	if err != nil {
		return nil, err
	}
	y, err := readSpaceTable(r, "diabetes_target.csv.gz", 1)
	if err != nil {
		return nil, err
	}
	if len(x) != rows*cols || len(y) != rows {
		return nil, fmt.Errorf("data: embedded diabetes: got %d feature rows and %d targets, want %d", len(x)/cols, len(y), rows)
	}
	return &Dataset{
		Name:         "diabetes",
		FeatureNames: []string{"age", "sex", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6"},
		TargetName:   "progression",
		X:            x,
		Y:            y,
		Rows:         rows,
		Cols:         cols,
	}, nil
}

// readSpaceTable reads a headerless table of numbers separated by white
// space with cols numbers per non-empty line.
func readSpaceTable(r io.Reader, name string, cols int) ([]float64, error) {
	var out []float64
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if len(fields) != cols {
			return nil, fmt.Errorf("data: embedded %s line %d: %d fields, want %d", name, line, len(fields), cols)
		}
		for j, f := range fields {
			v, err := strconv.ParseFloat(f, 64)
			if err != nil {
				return nil, fmt.Errorf("data: embedded %s line %d, column %d: %q is not a number", name, line, j+1, f)
			}
			out = append(out, v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("data: reading embedded %s: %w", name, err)
	}
	return out, nil
}

func loadDigits() (*Dataset, error) {
	const file = "digits.csv.gz"
	r, err := openEmbedded(file)
	if err != nil {
		return nil, err
	}
	// The file has no header; supply one so that ReadCSV names the columns.
	var h strings.Builder
	for i := range 8 {
		for j := range 8 {
			fmt.Fprintf(&h, "pixel_%d_%d,", i, j)
		}
	}
	h.WriteString("digit\n")
	d, err := ReadCSV(io.MultiReader(strings.NewReader(h.String()), r), "embedded "+file, CSVOptions{Classification: true})
	if err != nil {
		return nil, err
	}
	if d.Rows != 1797 || d.Cols != 64 || d.Classes != nil {
		return nil, fmt.Errorf("data: embedded %s: got %d×%d (classes %q), want 1797×64 with labels 0..9", file, d.Rows, d.Cols, d.Classes)
	}
	d.Name = "digits"
	return d, nil
}
