package data

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Categorical columns.
//
// A feature column is categorical when Dataset.Categories has a dictionary
// for it: X then holds each row's category as an index into that
// dictionary (0, 1, ...), NaN for a missing value, and Unseen for a
// category the dictionary lacks (only after [Dataset.Recode] onto another
// data set's dictionaries, as for a test set or a model's inputs).
// Dictionaries are sorted bytewise, so the codes do not depend on the order
// of the rows, and the same values read from CSV or from another format
// give the same codes.

// Unseen is the X value of a categorical value that its column's
// dictionary does not hold.
const Unseen = -1.0

// CategoryKey returns the category that a field's text names: a text that
// reads as a finite number is keyed by that number's shortest form
// (strconv.FormatFloat with 'g' and -1), so that "1", "1.0" and "1e0" are
// one category, whether a column was declared categorical or found so
// because some other value is not a number; any other text is its own key.
// The text should already be trimmed of spaces, and not be a missing value.
func CategoryKey(s string) string {
	if v, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(v, 0) && !math.IsNaN(v) {
		return NumberKey(v)
	}
	return s
}

// MaxDetectedCategories bounds the distinct values of a CSV column that is
// categorical only because a value is not a number (CSVOptions.Categorical
// does not name it): more, and the reader reports that value, most likely a
// typo in a numeric column, instead of making hundreds of categories.
const MaxDetectedCategories = 254

// categoryOf returns the category that the trimmed field s of a
// categorical column names (CategoryKey), or missing for a missing value
// (isMissing, or any spelling of NaN). A field that reads as an infinite
// number is refused as in a numeric column, whatever the column's kind,
// so that the kind a column ends up with does not depend on the order of
// its rows; so is text that is not valid UTF-8 (model files store
// dictionaries as UTF-8). problem is then what is wrong with the value.
func categoryOf(s string) (key string, missing bool, problem string) {
	if isMissing(s) {
		return "", true, ""
	}
	v, err := strconv.ParseFloat(s, 64)
	switch {
	case (err == nil || errors.Is(err, strconv.ErrRange)) && math.IsInf(v, 0):
		return "", false, quoteValue(s) + " is not a finite number"
	case err == nil && math.IsNaN(v):
		return "", true, ""
	case err == nil:
		return NumberKey(v), false, ""
	case !utf8.ValidString(s):
		return "", false, quoteValue(s) + " is not valid UTF-8 text"
	}
	return s, false, ""
}

// NumberKey is the category key of the number v: its shortest form.
func NumberKey(v float64) string {
	if v == 0 {
		v = 0 // −0 and +0 are one category
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// IsCategorical reports whether feature column j is categorical.
func (d *Dataset) IsCategorical(j int) bool {
	return j < len(d.Categories) && d.Categories[j] != nil
}

// HasCategories reports whether any feature column is categorical.
func (d *Dataset) HasCategories() bool {
	for _, c := range d.Categories {
		if c != nil {
			return true
		}
	}
	return false
}

// CheckCategories checks d.Categories against the data: nil or one entry
// per column; each dictionary sorted, without duplicates; and every value
// of a categorical column NaN, Unseen or an index into its dictionary.
// Errors name the data set, the column and the first bad row.
func (d *Dataset) CheckCategories() error {
	if d.Categories == nil {
		return nil
	}
	if d.X == nil && d.Source != nil {
		return fmt.Errorf("data: %s: the features are read a column at a time (Source); Materialize first", d.label())
	}
	if len(d.Categories) != d.Cols {
		return fmt.Errorf("data: %s: %d category dictionaries for %d columns", d.label(), len(d.Categories), d.Cols)
	}
	for j, dict := range d.Categories {
		if dict == nil {
			continue
		}
		for k := 1; k < len(dict); k++ {
			if dict[k] <= dict[k-1] {
				return fmt.Errorf("data: %s: column %s: categories %q and %q are not in increasing bytewise order", d.label(), d.columnName(j), dict[k-1], dict[k])
			}
		}
		for i := 0; i < d.Rows; i++ {
			v := d.X[i*d.Cols+j]
			if math.IsNaN(v) || v == Unseen || (v >= 0 && v < float64(len(dict)) && v == math.Trunc(v)) {
				continue
			}
			return fmt.Errorf("data: %s: row %d, column %s: %v is not a category index (0..%d), NaN or Unseen", d.Name, i+1, d.columnName(j), v, len(dict)-1)
		}
	}
	return nil
}

// label names d in errors: its Name, or "the data set".
func (d *Dataset) label() string {
	if d.Name == "" {
		return "the data set"
	}
	return d.Name
}

// columnName quotes feature column j's name, or gives its number.
func (d *Dataset) columnName(j int) string {
	if j < len(d.FeatureNames) {
		return strconv.Quote(d.FeatureNames[j])
	}
	return fmt.Sprintf("%d", j+1)
}

// Recode maps the categorical values of feature column j of d onto the
// dictionary dict, in place: a value dict holds becomes its index there,
// any other Unseen; missing values stay NaN. A column that is not
// categorical in d is read as numbers (NumberKey). Afterwards the column's
// dictionary is dict.
func (d *Dataset) Recode(j int, dict []string) {
	index := make(map[string]int, len(dict))
	for k, s := range dict {
		index[s] = k
	}
	var from []string
	if d.IsCategorical(j) {
		from = d.Categories[j]
	}
	// The new code of each old one (categorical) or of each number.
	var remap []float64
	if from != nil {
		remap = make([]float64, len(from))
		for k, s := range from {
			remap[k] = Unseen
			if c, ok := index[s]; ok {
				remap[k] = float64(c)
			}
		}
	}
	for i := 0; i < d.Rows; i++ {
		v := &d.X[i*d.Cols+j]
		switch {
		case math.IsNaN(*v):
		case from != nil:
			if *v >= 0 && *v < float64(len(remap)) && *v == math.Trunc(*v) {
				*v = remap[int(*v)]
			} else {
				*v = Unseen // Unseen itself, or a value that is no index
			}
		default:
			if c, ok := index[NumberKey(*v)]; ok {
				*v = float64(c)
			} else {
				*v = Unseen
			}
		}
	}
	if d.Categories == nil {
		d.Categories = make([][]string, d.Cols)
	}
	d.Categories[j] = dict
}

// sortDictionary sorts the first-seen dictionary seen bytewise and
// rewrites column j of x (rows of cols values, first-seen ids) to the
// sorted codes; it returns the sorted dictionary.
func sortDictionary(seen []string, x []float64, rows, cols, j int) []string {
	dict := slices.Clone(seen)
	slices.Sort(dict)
	remap := make([]float64, len(seen))
	for k, s := range seen {
		c, _ := slices.BinarySearch(dict, s)
		remap[k] = float64(c)
	}
	for i := 0; i < rows; i++ {
		if v := &x[i*cols+j]; !math.IsNaN(*v) {
			*v = remap[int(*v)]
		}
	}
	return dict
}
