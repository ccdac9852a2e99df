package data

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestReadCSVErrors(t *testing.T) {
	tests := []struct {
		name  string
		input string
		opts  CSVOptions
		want  []string // substrings the error must contain
	}{
		{"empty file", "", CSVOptions{}, []string{"f.csv", "empty file"}},
		{"only BOM", "\uFEFF", CSVOptions{}, []string{"f.csv", "empty file"}},
		{"only blank lines", "\n\r\n\n", CSVOptions{}, []string{"f.csv", "empty file"}},
		{"header looks like data", "59 2 32.1\n1 2 3\n", CSVOptions{Comma: ' '}, []string{"f.csv", "line 1", "missing header"}},
		{"headerless integers with repeats", "0,0,5,1\n1,2,3,4\n", CSVOptions{}, []string{"f.csv", "line 1", "missing header"}},
		{"empty column name", "a,,c\n1,2,3\n", CSVOptions{}, []string{"f.csv", "line 1", "column 2", "empty name"}},
		{"duplicate column", "a,b,a\n1,2,3\n", CSVOptions{}, []string{"f.csv", "line 1", `duplicate column name "a"`, "columns 1 and 3"}},
		{"target not found", "a,b,c\n1,2,3\n", CSVOptions{Target: "y"}, []string{"f.csv", `target column "y" not found`, `"a", "b", "c"`}},
		{"single column", "y\n1\n", CSVOptions{}, []string{"f.csv", "only one column"}},
		{"too few fields", "a,b,c\n1,2,3\n4,5\n", CSVOptions{}, []string{"f.csv", "line 3", "2 fields, want 3"}},
		{"too many fields", "a,b,c\n1,2,3,4\n", CSVOptions{}, []string{"f.csv", "line 2", "4 fields, want 3"}},
		{"not finite", "age,sex,bmi,y\n1,2,3,4\n1,2,-inf,4\n", CSVOptions{}, []string{`data: f.csv line 3, column "bmi" (3): "-inf" is not a finite number`}},
		{"categorical not found", "a,y\n1,2\n", CSVOptions{Categorical: []string{"b"}}, []string{`f.csv: categorical column "b" not found`}},
		{"categorical target", "a,y\n1,2\n", CSVOptions{Categorical: []string{"y"}}, []string{`column "y" is the target or the weight`}},
		{"infinite feature", "a,b\nInf,1\n", CSVOptions{}, []string{"f.csv", "line 2", `column "a" (1)`, "not a finite number"}},
		{"overflowing feature", "a,b\n1e999,1\n", CSVOptions{}, []string{"f.csv", "line 2", `column "a" (1)`, "not a finite number"}},
		{"missing target empty", "a,y\n1,2\n3,\n", CSVOptions{}, []string{"f.csv", "line 3", `column "y" (2)`, "target value is missing"}},
		{"missing target NA", "y,a\nNA,1\n", CSVOptions{Target: "y"}, []string{"f.csv", "line 2", `column "y" (1)`, "missing"}},
		{"missing target NAN", "a,y\n1,NAN\n", CSVOptions{}, []string{"f.csv", "line 2", `column "y" (2)`, "missing"}},
		{"missing class label", "a,y\n1,cat\n2,nan\n", CSVOptions{Classification: true}, []string{"f.csv", "line 3", `column "y" (2)`, "missing"}},
		{"bad target", "a,y\n1,x\n", CSVOptions{}, []string{"f.csv", "line 2", `column "y" (2)`, `target "x" is not a number`}},
		{"no data rows", "a,b\n", CSVOptions{}, []string{"f.csv", "no data rows"}},
		{"no data rows CRLF", "a,b\r\n\r\n", CSVOptions{}, []string{"f.csv", "no data rows"}},
		{"bad quote", "a,b\n1,2\n1,\"2\n", CSVOptions{}, []string{"f.csv", "line 3"}},
		{"bare quote", "a,b\n1,2\"x\n", CSVOptions{}, []string{"f.csv", "line 2", "bare"}},
		{"line after quoted newline", "a,b\n\"1\n\",2\n3,x\n", CSVOptions{}, []string{"f.csv", "line 4", `column "b" (2)`}},
		{"invalid delimiter", "a,b\n1,2\n", CSVOptions{Comma: '"'}, []string{"f.csv", "invalid field delimiter"}},
		{"negative MaxRows", "a,b\n1,2\n", CSVOptions{MaxRows: -1}, []string{"f.csv", "MaxRows"}},
		{"long value shortened", "a,b\n1," + strings.Repeat("x", 100) + "\n", CSVOptions{}, []string{"f.csv", "line 2", `"xxxxxxxxxx`, `"... is not a number`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := ReadCSV(strings.NewReader(tc.input), "f.csv", tc.opts)
			if err == nil {
				t.Fatalf("ReadCSV = %+v, want error", d)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "data: ") {
				t.Errorf("error %q does not start with \"data: \"", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
		})
	}
}

func TestReadCSV(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name      string
		input     string
		opts      CSVOptions
		features  []string
		target    string
		x, y      []float64
		classes   []string
		numClass  int
		rows      int
		wantClass bool
	}{
		{
			name:     "basic",
			input:    "a,b,y\n1,2,3\n4.5,-6,7e1\n",
			features: []string{"a", "b"}, target: "y",
			x: []float64{1, 2, 4.5, -6}, y: []float64{3, 70}, rows: 2, numClass: 71,
		},
		{
			name:     "BOM and CRLF",
			input:    "\uFEFFa,b,y\r\n1,2,3\r\n4,5,6\r\n",
			features: []string{"a", "b"}, target: "y",
			x: []float64{1, 2, 4, 5}, y: []float64{3, 6}, rows: 2, numClass: 7,
		},
		{
			name:     "CRLF without final newline",
			input:    "a,y\r\n1,2\r\n3,4",
			features: []string{"a"}, target: "y",
			x: []float64{1, 3}, y: []float64{2, 4}, rows: 2, numClass: 5,
		},
		{
			name:     "missing values",
			input:    "a,b,c,d,e,y\n,NA,NaN,nan,NAN,1\n1, 2 ,3,4,5,2\n",
			features: []string{"a", "b", "c", "d", "e"}, target: "y",
			x: []float64{nan, nan, nan, nan, nan, 1, 2, 3, 4, 5}, y: []float64{1, 2}, rows: 2, numClass: 3,
		},
		{
			name:     "target in the middle, spaces around names",
			input:    " a , y ,b\n1,2,3\n",
			opts:     CSVOptions{Target: "y"},
			features: []string{"a", "b"}, target: "y",
			x: []float64{1, 3}, y: []float64{2}, rows: 1, numClass: 3,
		},
		{
			name:     "semicolon delimiter and quotes",
			input:    "\"x;1\";y\n\"1.5\";2\n",
			opts:     CSVOptions{Comma: ';'},
			features: []string{"x;1"}, target: "y",
			x: []float64{1.5}, y: []float64{2}, rows: 1, numClass: 3,
		},
		{
			name:     "MaxRows",
			input:    "a,y\n1,2\n3,4\n5,6\nbad,row,here\n",
			opts:     CSVOptions{MaxRows: 2},
			features: []string{"a"}, target: "y",
			x: []float64{1, 3}, y: []float64{2, 4}, rows: 2, numClass: 5,
		},
		{
			name:     "pandas integer column names",
			input:    "0,1,2\n5,6,7\n",
			features: []string{"0", "1"}, target: "2",
			x: []float64{5, 6}, y: []float64{7}, rows: 1, numClass: 8,
		},
		{
			name:     "integer class labels kept",
			input:    "a,y\n1,3\n2,0\n3,3.0\n4,1\n",
			opts:     CSVOptions{Classification: true},
			features: []string{"a"}, target: "y",
			x: []float64{1, 2, 3, 4}, y: []float64{3, 0, 3, 1}, rows: 4, numClass: 4,
		},
		{
			name:     "string class labels sorted",
			input:    "a,species\n1,versicolor\n2,setosa\n3,virginica\n4,setosa\n",
			opts:     CSVOptions{Classification: true},
			features: []string{"a"}, target: "species",
			x: []float64{1, 2, 3, 4}, y: []float64{1, 0, 2, 0}, rows: 4,
			classes: []string{"setosa", "versicolor", "virginica"}, numClass: 3, wantClass: true,
		},
		{
			name:     "negative numeric labels sorted by value",
			input:    "a,y\n1,10\n2,-1\n3,2\n4,-1.0\n",
			opts:     CSVOptions{Classification: true},
			features: []string{"a"}, target: "y",
			x: []float64{1, 2, 3, 4}, y: []float64{2, 0, 1, 0}, rows: 4,
			classes: []string{"-1", "2", "10"}, numClass: 3, wantClass: true,
		},
		{
			name:     "huge integer labels mapped",
			input:    "a,y\n1,1000000\n2,7\n",
			opts:     CSVOptions{Classification: true},
			features: []string{"a"}, target: "y",
			x: []float64{1, 2}, y: []float64{1, 0}, rows: 2,
			classes: []string{"7", "1e+06"}, numClass: 2, wantClass: true,
		},
		{
			name:     "mixed labels sorted bytewise",
			input:    "a,y\n1,b\n2,10\n3,9\n",
			opts:     CSVOptions{Classification: true},
			features: []string{"a"}, target: "y",
			x: []float64{1, 2, 3}, y: []float64{2, 0, 1}, rows: 3,
			classes: []string{"10", "9", "b"}, numClass: 3, wantClass: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := ReadCSV(strings.NewReader(tc.input), "t.csv", tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if d.Name != "t.csv" || d.TargetName != tc.target || !slices.Equal(d.FeatureNames, tc.features) {
				t.Errorf("names: %q, features %q, target %q; want t.csv, %q, %q", d.Name, d.FeatureNames, d.TargetName, tc.features, tc.target)
			}
			if d.Rows != tc.rows || d.Cols != len(tc.features) || len(d.X) != d.Rows*d.Cols || len(d.Y) != d.Rows {
				t.Errorf("shape %d×%d (len X %d, len Y %d), want %d×%d", d.Rows, d.Cols, len(d.X), len(d.Y), tc.rows, len(tc.features))
			}
			if !equalNaN(d.X, tc.x) {
				t.Errorf("X = %v, want %v", d.X, tc.x)
			}
			if !equalNaN(d.Y, tc.y) {
				t.Errorf("Y = %v, want %v", d.Y, tc.y)
			}
			if (d.Classes != nil) != tc.wantClass || !slices.Equal(d.Classes, tc.classes) {
				t.Errorf("Classes = %q (nil %v), want %q", d.Classes, d.Classes == nil, tc.classes)
			}
			if got := d.NumClasses(); got != tc.numClass {
				t.Errorf("NumClasses = %d, want %d", got, tc.numClass)
			}
		})
	}
}

// equalNaN reports whether a and b are equal, treating NaNs as equal.
func equalNaN(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool {
		return x == y || (math.IsNaN(x) && math.IsNaN(y))
	})
}

func TestLoadCSV(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "small.csv")
	if err := os.WriteFile(path, []byte("a,b\n1,2\n3,x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadCSV(path, CSVOptions{})
	if err == nil || !strings.Contains(err.Error(), path+" line 3") {
		t.Errorf("LoadCSV error = %v, want one naming %s line 3", err, path)
	}
	if err := os.WriteFile(path, []byte("a,b\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := LoadCSV(path, CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "small.csv" || d.Rows != 1 {
		t.Errorf("LoadCSV: name %q, rows %d; want small.csv, 1", d.Name, d.Rows)
	}
	_, err = LoadCSV(filepath.Join(dir, "absent.csv"), CSVOptions{})
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "absent.csv") {
		t.Errorf("LoadCSV(absent) error = %v, want ErrNotExist naming the file", err)
	}
}

func TestWriteCSVRoundTrip(t *testing.T) {
	header := []string{"a", "b,c", "y"}
	rows := [][]float64{{1, 0.1, 3}, {math.NaN(), -2.5e-300, 1e300}, {0, math.MaxFloat64, math.SmallestNonzeroFloat64}}
	var buf bytes.Buffer
	if err := WriteCSV(&buf, header, rows); err != nil {
		t.Fatal(err)
	}
	d, err := ReadCSV(&buf, "round.csv", CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.FeatureNames, header[:2]) || d.TargetName != "y" {
		t.Errorf("names %q %q", d.FeatureNames, d.TargetName)
	}
	for i, row := range rows {
		if !equalNaN(d.Row(i), row[:2]) || d.Y[i] != row[2] {
			t.Errorf("row %d = %v, %v; want %v", i, d.Row(i), d.Y[i], row)
		}
	}

	tests := []struct {
		name string
		rows [][]float64
		want string
	}{
		{"short row", [][]float64{{1, 2, 3}, {1}}, "row 1 has 1 values, want 3"},
		{"infinite", [][]float64{{1, math.Inf(-1), 3}}, `row 0, column "b,c" (2): value is infinite`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := WriteCSV(&bytes.Buffer{}, header, tc.rows)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("WriteCSV error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// bigCSV returns a CSV text with rows rows of 20 features and a target.
func bigCSV(rows int) []byte {
	var b bytes.Buffer
	for j := range 20 {
		fmt.Fprintf(&b, "f%d,", j)
	}
	b.WriteString("y\n")
	for i := range rows {
		for j := range 20 {
			fmt.Fprintf(&b, "%.6g,", float64(i*j)*0.001+0.5)
		}
		fmt.Fprintf(&b, "%d\n", i%7)
	}
	return b.Bytes()
}

func TestReadCSVSpeed(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping timing test in -short mode")
	}
	in := bigCSV(100_000)
	start := time.Now()
	d, err := ReadCSV(bytes.NewReader(in), "big.csv", CSVOptions{Classification: true})
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if d.Rows != 100_000 || d.Cols != 20 || d.NumClasses() != 7 {
		t.Fatalf("shape %d×%d, %d classes", d.Rows, d.Cols, d.NumClasses())
	}
	t.Logf("ReadCSV 100000×21 (%d bytes): %v", len(in), elapsed)
	// Generous bound: this should take well under a second, but test
	// machines may be slow or busy.
	if elapsed > 5*time.Second {
		t.Errorf("ReadCSV 100000×21 took %v", elapsed)
	}
}

func BenchmarkReadCSV(b *testing.B) {
	in := bigCSV(100_000)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ReadCSV(bytes.NewReader(in), "big.csv", CSVOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func TestReadCSVNoTarget(t *testing.T) {
	d, err := ReadCSV(strings.NewReader("a,b\n1,2\n,4\n"), "in.csv", CSVOptions{NoTarget: true})
	if err != nil {
		t.Fatal(err)
	}
	if d.Cols != 2 || d.Rows != 2 || d.Y != nil || d.TargetName != "" || d.FeatureNames[1] != "b" || !math.IsNaN(d.X[2]) || d.X[3] != 4 {
		t.Errorf("got %+v", d)
	}
	if _, err := ReadCSV(strings.NewReader("a\ninf\n"), "in.csv", CSVOptions{NoTarget: true}); err == nil || !strings.Contains(err.Error(), `line 2, column "a" (1)`) {
		t.Errorf("bad value: err = %v", err)
	}
	if _, err := ReadCSV(strings.NewReader("a\n1\n"), "in.csv", CSVOptions{NoTarget: true, Target: "a"}); err == nil {
		t.Error("NoTarget with Target accepted")
	}
}

// TestReadCSVWeightColumn checks that CSVOptions.Weight reads a column as
// sample weights (not a feature), with errors naming the line and column,
// and that Subset keeps the weights of the rows it takes.
func TestReadCSVWeightColumn(t *testing.T) {
	in := "a,w,b,y\n1,2,3,4\n5,0.5,7,8\n9,0,11,12\n"
	d, err := ReadCSV(strings.NewReader(in), "w.csv", CSVOptions{Weight: "w"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.FeatureNames, []string{"a", "b"}) || !slices.Equal(d.X, []float64{1, 3, 5, 7, 9, 11}) ||
		!slices.Equal(d.Weights, []float64{2, 0.5, 0}) || !slices.Equal(d.Y, []float64{4, 8, 12}) {
		t.Fatalf("got features %v X %v weights %v Y %v", d.FeatureNames, d.X, d.Weights, d.Y)
	}
	if s := d.Subset([]int{2, 0, 0}); !slices.Equal(s.Weights, []float64{0, 2, 2}) {
		t.Fatalf("Subset weights %v", s.Weights)
	}
	if d, err := ReadCSV(strings.NewReader(in), "w.csv", CSVOptions{}); err != nil || d.Weights != nil || d.Cols != 3 {
		t.Fatalf("without Weight: %v, weights %v, %d columns", err, d.Weights, d.Cols)
	}
	for _, c := range []struct{ in, weight, want string }{
		{"a,w,y\n1,-1,2\n", "w", `w.csv line 2, column "w" (2): sample weight "-1" is not a finite number >= 0`},
		{"a,w,y\n1,x,2\n", "w", `line 2, column "w" (2): sample weight "x" is not a number`},
		{"a,w,y\n1,,2\n", "w", `line 2, column "w" (2): sample weight is missing`},
		{"a,w,y\n1,inf,2\n", "w", "not a finite number >= 0"},
		{"a,w,y\n1,1,2\n", "v", `weight column "v" not found`},
		{"a,w,y\n1,1,2\n", "y", "both the target and the weight"},
		{"w,y\n1,2\n", "w", "the only feature column"},
	} {
		if _, err := ReadCSV(strings.NewReader(c.in), "w.csv", CSVOptions{Weight: c.weight}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q with weight %q: %v, want an error containing %q", c.in, c.weight, err, c.want)
		}
	}
}
