package data

import (
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
