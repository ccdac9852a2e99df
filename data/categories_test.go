package data

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestCategoryKey(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"1", "1"}, {"1.0", "1"}, {"1e0", "1"}, {"-0", "0"}, {"0.50", "0.5"},
		{"red", "red"}, {"1,5", "1,5"}, {"inf", "inf"}, {"1e400", "1e400"},
	} {
		if got := CategoryKey(c.in); got != c.want {
			t.Errorf("CategoryKey(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestReadCSVCategorical(t *testing.T) {
	const text = "zip,color,x,y\n" +
		"75001,red,1,1\n" +
		"10115,blue,2,2\n" +
		"75001.0,,3,3\n" +
		"NA,green,4,4\n" +
		"10115,red,5,5\n"
	t.Run("declared and detected", func(t *testing.T) {
		d, err := ReadCSV(strings.NewReader(text), "c.csv", CSVOptions{Categorical: []string{"zip"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := d.CheckCategories(); err != nil {
			t.Fatal(err)
		}
		want := [][]string{{"10115", "75001"}, {"blue", "green", "red"}, nil}
		if len(d.Categories) != 3 {
			t.Fatalf("Categories = %q, want %q", d.Categories, want)
		}
		for j := range want {
			if !slices.Equal(d.Categories[j], want[j]) || (want[j] == nil) != (d.Categories[j] == nil) {
				t.Errorf("column %d: dictionary %q, want %q", j, d.Categories[j], want[j])
			}
		}
		nan := math.NaN()
		wantX := []float64{1, 2, 1, 0, 0, 2, 1, nan, 3, nan, 1, 4, 0, 2, 5}
		if !equalNaN(d.X, wantX) {
			t.Errorf("X = %v, want %v", d.X, wantX)
		}
	})
	t.Run("detected after numbers", func(t *testing.T) {
		// The column turns categorical at line 4: the numbers before it
		// become the categories of their shortest form.
		d, err := ReadCSV(strings.NewReader("a,y\n2.0,1\n10,2\nb,3\n2,4\n"), "c.csv", CSVOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"10", "2", "b"}; !slices.Equal(d.Categories[0], want) {
			t.Errorf("dictionary %q, want %q", d.Categories[0], want)
		}
		if want := []float64{1, 0, 2, 1}; !slices.Equal(d.X, want) {
			t.Errorf("X = %v, want %v", d.X, want)
		}
	})
	t.Run("numeric stays nil", func(t *testing.T) {
		d, err := ReadCSV(strings.NewReader("a,y\n1,1\n"), "c.csv", CSVOptions{})
		if err != nil || d.Categories != nil {
			t.Errorf("Categories = %q, err %v; want nil", d.Categories, err)
		}
	})
}

func TestRecode(t *testing.T) {
	nan := math.NaN()
	d := &Dataset{Name: "t", Rows: 4, Cols: 2, X: []float64{0, 1, 1, 2, 2, nan, nan, 5},
		Categories: [][]string{{"a", "b", "c"}, nil}}
	d.Recode(0, []string{"b", "c", "d"})
	d.Recode(1, []string{"1", "2", "3"})
	want := []float64{Unseen, 0, 0, 1, 1, nan, nan, Unseen}
	if !equalNaN(d.X, want) {
		t.Errorf("X = %v, want %v", d.X, want)
	}
	if err := d.CheckCategories(); err != nil {
		t.Error(err)
	}
	d.X[0] = 7
	if err := d.CheckCategories(); err == nil || !strings.Contains(err.Error(), "row 1") {
		t.Errorf("CheckCategories = %v, want an error naming row 1", err)
	}
	d.Categories[1] = []string{"b", "a"}
	d.X[0] = 0
	if err := d.CheckCategories(); err == nil || !strings.Contains(err.Error(), "increasing") {
		t.Errorf("CheckCategories = %v, want an order error", err)
	}
}

func TestSubsetKeepsCategories(t *testing.T) {
	d := &Dataset{Rows: 2, Cols: 2, X: []float64{0, 1, 1, 2}, Y: []float64{1, 2}, FeatureNames: []string{"c", "x"},
		Categories: [][]string{{"a", "b"}, nil}}
	s := d.Subset([]int{1})
	if !slices.Equal(s.Categories[0], []string{"a", "b"}) || s.Categories[1] != nil {
		t.Errorf("Subset categories %q", s.Categories)
	}
	v, ok := d.TakeColumn("c")
	if !ok || !slices.Equal(v, []float64{0, 1}) || len(d.Categories) != 1 || d.Categories[0] != nil {
		t.Errorf("TakeColumn: %v %v, categories %q", v, ok, d.Categories)
	}
}

// TestReadCSVCategoricalOrderFree: whether a column is categorical or an
// error does not depend on the order of its rows: infinities are refused
// and every spelling of NaN is missing, before and after the value that
// makes the column categorical; a column found categorical with too many
// values is an error naming that value; text that is not UTF-8 is refused.
func TestReadCSVCategoricalOrderFree(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"inf after", "x,y\na,1\ninf,2\n", `line 3, column "x" (1): "inf" is not a finite number`},
		{"inf before", "x,y\ninf,1\na,2\n", `line 2, column "x" (1): "inf" is not a finite number`},
		{"overflow after", "x,y\na,1\n1e999,2\n", `"1e999" is not a finite number`},
		{"latin-1", "x,y\ncaf\xe9,1\n", `is not valid UTF-8 text`},
		{"latin-1 declared", "x,y\n1,1\ncaf\xe9,1\n", `line 3, column "x" (1)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadCSV(strings.NewReader(c.text), "o.csv", CSVOptions{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want one containing %q", err, c.want)
			}
		})
	}
	for _, text := range []string{"x,y\nNAN,1\na,2\nNAN,3\n", "x,y\na,1\nNAN,2\nnan,3\n"} {
		d, err := ReadCSV(strings.NewReader(text), "o.csv", CSVOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(d.Categories[0], []string{"a"}) {
			t.Errorf("%q: dictionary %q, want [a] (NAN is missing)", text, d.Categories[0])
		}
	}
	var b strings.Builder
	b.WriteString("x,y\n")
	for i := range 300 {
		fmt.Fprintf(&b, "%d,1\n", i)
		if i == 150 {
			b.WriteString("12;5,1\n")
		}
	}
	_, err := ReadCSV(strings.NewReader(b.String()), "o.csv", CSVOptions{})
	if err == nil || !strings.Contains(err.Error(), `o.csv line 153, column "x" (1): "12;5" is not a number, which makes the column categorical, but it then holds 301 distinct values`) {
		t.Errorf("err = %v, want the first text value and its line", err)
	}
	if _, err := ReadCSV(strings.NewReader(b.String()), "o.csv", CSVOptions{Categorical: []string{"x"}}); err != nil {
		t.Errorf("a named column has no such limit: %v", err)
	}
}

// TestRecodeBadValues: values that are no category index become Unseen.
func TestRecodeBadValues(t *testing.T) {
	d := &Dataset{Rows: 4, Cols: 1, X: []float64{math.Inf(1), 1e300, 2.5, -1}, Categories: [][]string{{"a", "b", "c"}}}
	d.Recode(0, []string{"a", "b", "c"})
	for i, v := range d.X {
		if v != Unseen {
			t.Errorf("row %d: %v, want Unseen", i, v)
		}
	}
}
