package data

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestEmbedded(t *testing.T) {
	tests := []struct {
		name       string
		rows, cols int
		features   []string // first and last feature names
		target     string
		row0       []float64
		y0         float64
		numClasses int
	}{
		{
			name: "diabetes", rows: 442, cols: 10,
			features: []string{"age", "s6"}, target: "progression",
			row0: []float64{59, 2, 32.1, 101, 157, 93.2, 38, 4, 4.8598, 87}, y0: 151,
		},
		{
			name: "digits", rows: 1797, cols: 64,
			features: []string{"pixel_0_0", "pixel_7_7"}, target: "digit",
			row0: []float64{0, 0, 5, 13, 9, 1, 0, 0, 0, 0, 13, 15, 10, 15, 5, 0, 0, 3, 15, 2, 0, 11, 8, 0, 0, 4, 12, 0, 0, 8, 8, 0,
				0, 5, 8, 0, 0, 9, 8, 0, 0, 4, 11, 0, 1, 12, 7, 0, 0, 2, 14, 5, 10, 12, 0, 0, 0, 0, 6, 13, 10, 0, 0, 0},
			y0: 0, numClasses: 10,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Embedded(tc.name)
			if err != nil {
				t.Fatal(err)
			}
			if d.Name != tc.name || d.Rows != tc.rows || d.Cols != tc.cols || len(d.X) != tc.rows*tc.cols || len(d.Y) != tc.rows {
				t.Fatalf("%s: %d×%d (len X %d, len Y %d), want %d×%d", d.Name, d.Rows, d.Cols, len(d.X), len(d.Y), tc.rows, tc.cols)
			}
			if len(d.FeatureNames) != tc.cols || d.FeatureNames[0] != tc.features[0] || d.FeatureNames[tc.cols-1] != tc.features[1] {
				t.Errorf("feature names %q", d.FeatureNames)
			}
			if d.TargetName != tc.target || d.Classes != nil {
				t.Errorf("target %q, classes %q; want %q, nil", d.TargetName, d.Classes, tc.target)
			}
			if !slices.Equal(d.Row(0), tc.row0) || d.Y[0] != tc.y0 {
				t.Errorf("row 0 = %v, %v; want %v, %v", d.Row(0), d.Y[0], tc.row0, tc.y0)
			}
			if got := d.NumClasses(); tc.numClasses != 0 && got != tc.numClasses {
				t.Errorf("NumClasses = %d, want %d", got, tc.numClasses)
			}

			// Each call returns a fresh copy.
			d.X[0], d.Y[0], d.FeatureNames[0] = -99, -99, "changed"
			again, err := Embedded(strings.ToUpper(tc.name))
			if err != nil {
				t.Fatal(err)
			}
			if again.X[0] != tc.row0[0] || again.Y[0] != tc.y0 || again.FeatureNames[0] != tc.features[0] {
				t.Errorf("a change to one copy showed in the next")
			}
		})
	}
}

func TestDigitsLabels(t *testing.T) {
	d, err := Digits()
	if err != nil {
		t.Fatal(err)
	}
	var counts [10]int
	for i, y := range d.Y {
		if y < 0 || y > 9 || y != float64(int(y)) {
			t.Fatalf("Y[%d] = %v, not a digit", i, y)
		}
		counts[int(y)]++
	}
	if counts[0] != 178 || counts[9] != 180 {
		t.Errorf("class counts %v, want 178 zeros and 180 nines", counts)
	}
	for i, v := range d.X {
		if v < 0 || v > 16 {
			t.Fatalf("X[%d] = %v, outside 0..16", i, v)
		}
	}
	want := make([]string, 0, 64)
	for r := range 8 {
		for c := range 8 {
			want = append(want, fmt.Sprintf("pixel_%d_%d", r, c))
		}
	}
	if !slices.Equal(d.FeatureNames, want) {
		t.Errorf("feature names %q", d.FeatureNames)
	}
}

func TestEmbeddedUnknown(t *testing.T) {
	_, err := Embedded("iris")
	if err == nil || !strings.Contains(err.Error(), `"iris"`) || !strings.Contains(err.Error(), "diabetes, digits") {
		t.Errorf("Embedded(iris) error = %v, want one naming iris and listing diabetes, digits", err)
	}
	if got := EmbeddedNames(); !slices.Equal(got, []string{"diabetes", "digits"}) {
		t.Errorf("EmbeddedNames() = %q", got)
	}
}
