package data

import (
	"fmt"
	"slices"
	"strings"
)

// columnRoles says what each column of a table with a header is: the
// target, the weight, or a feature, numeric or declared categorical. The
// CSV, Parquet and Arrow readers share it, so that the same options pick
// the same columns, with the same errors.
type columnRoles struct {
	target   int   // header index of the target column, -1 with NoTarget
	weight   int   // header index of the weight column, -1 for none
	features []int // header indices of the feature columns, in order
	// categorical[k] tells whether CSVOptions.Categorical names feature k.
	categorical []bool
}

// checkTargetOptions refuses NoTarget with a target or classification.
func checkTargetOptions(name string, opts CSVOptions) error {
	if opts.NoTarget && (opts.Target != "" || opts.Classification) {
		return fmt.Errorf("data: %s: NoTarget excludes Target and Classification", name)
	}
	return nil
}

// chooseColumns picks the target (opts.Target, the last column by
// default, none with NoTarget), the weight (opts.Weight) and the features
// (every other column) of a table whose column names, trimmed, distinct and
// not empty, are header, and marks the features opts.Categorical names.
// Errors name the table name; a header of a single column is an error
// about headerName (the CSV reader's names its line 1).
func chooseColumns(name, headerName string, header []string, opts CSVOptions) (*columnRoles, error) {
	r := &columnRoles{target: -1, weight: -1}
	if opts.NoTarget {
		r.features = make([]int, len(header))
		for j := range r.features {
			r.features[j] = j
		}
	} else {
		if opts.Target == "" {
			r.target = len(header) - 1
		} else {
			r.target = slices.Index(header, strings.TrimSpace(opts.Target))
			if r.target < 0 {
				return nil, fmt.Errorf("data: %s: target column %q not found; available columns: %s", name, opts.Target, listNames(header))
			}
		}
		if len(header) < 2 {
			return nil, fmt.Errorf("data: %s: only one column (%q); need at least one feature column besides the target", headerName, header[0])
		}
		r.features = make([]int, 0, len(header)-1)
		for j := range header {
			if j != r.target {
				r.features = append(r.features, j)
			}
		}
	}

	if opts.Weight != "" {
		w := strings.TrimSpace(opts.Weight)
		j := slices.Index(header, w)
		switch {
		case j < 0:
			return nil, fmt.Errorf("data: %s: weight column %q not found; available columns: %s", name, w, listNames(header))
		case j == r.target:
			return nil, fmt.Errorf("data: %s: column %q cannot be both the target and the weight", name, w)
		case len(r.features) < 2:
			return nil, fmt.Errorf("data: %s: the weight column %q is the only feature column; need at least one feature besides it", name, w)
		}
		r.weight = j
		r.features = slices.DeleteFunc(r.features, func(k int) bool { return k == j })
	}

	r.categorical = make([]bool, len(r.features))
	for _, c := range opts.Categorical {
		c = strings.TrimSpace(c)
		j := slices.Index(header, c)
		k := slices.Index(r.features, j)
		switch {
		case j < 0:
			return nil, fmt.Errorf("data: %s: categorical column %q not found; available columns: %s", name, c, listNames(header))
		case k < 0:
			return nil, fmt.Errorf("data: %s: column %q is the target or the weight, not a feature that can be categorical", name, c)
		}
		r.categorical[k] = true
	}
	return r, nil
}
