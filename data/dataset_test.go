package data

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

func testDataset() *Dataset {
	return &Dataset{
		Name:         "t",
		FeatureNames: []string{"a", "b"},
		TargetName:   "y",
		X:            []float64{1, 2, 3, 4, 5, 6},
		Y:            []float64{0, 1, 0},
		Rows:         3,
		Cols:         2,
		Classes:      []string{"no", "yes"},
	}
}

func TestDatasetRowColumn(t *testing.T) {
	d := testDataset()
	r := d.Row(1)
	if !slices.Equal(r, []float64{3, 4}) || cap(r) != 2 {
		t.Errorf("Row(1) = %v (cap %d), want [3 4] (cap 2)", r, cap(r))
	}
	r[0] = 30
	if d.X[2] != 30 {
		t.Errorf("Row is not a view: X[2] = %v after setting Row(1)[0]", d.X[2])
	}
	_ = append(r, 99)
	if d.X[4] != 5 {
		t.Errorf("appending to Row(1) overwrote row 2")
	}

	tests := []struct {
		j   int
		dst []float64
	}{
		{0, nil},
		{1, make([]float64, 0, 10)},
		{1, make([]float64, 1)},
	}
	for _, tc := range tests {
		got := d.Column(tc.j, tc.dst)
		want := []float64{d.X[tc.j], d.X[2+tc.j], d.X[4+tc.j]}
		if !slices.Equal(got, want) {
			t.Errorf("Column(%d) = %v, want %v", tc.j, got, want)
		}
		if cap(tc.dst) >= 3 && &got[0] != &tc.dst[:1][0] {
			t.Errorf("Column(%d) did not reuse dst", tc.j)
		}
	}
}

func TestDatasetSubsetClone(t *testing.T) {
	d := testDataset()
	s := d.Subset([]int{2, 0, 2})
	if s.Rows != 3 || s.Cols != 2 || !slices.Equal(s.X, []float64{5, 6, 1, 2, 5, 6}) || !slices.Equal(s.Y, []float64{0, 0, 0}) {
		t.Errorf("Subset = %+v", s)
	}
	s.X[0], s.FeatureNames[0], s.Classes[0] = -1, "z", "z"
	if d.X[4] != 5 || d.FeatureNames[0] != "a" || d.Classes[0] != "no" {
		t.Errorf("Subset shares memory with the original")
	}
	if e := d.Subset(nil); e.Rows != 0 || len(e.X) != 0 {
		t.Errorf("Subset(nil) = %+v", e)
	}

	c := d.Clone()
	c.X[0], c.Y[0], c.FeatureNames[1], c.Classes[1] = -1, -1, "z", "z"
	if d.X[0] != 1 || d.Y[0] != 0 || d.FeatureNames[1] != "b" || d.Classes[1] != "yes" {
		t.Errorf("Clone shares memory with the original")
	}
}

func TestNumClasses(t *testing.T) {
	tests := []struct {
		name    string
		y       []float64
		classes []string
		want    int
	}{
		{"classes set", []float64{0, 0}, []string{"a", "b", "c"}, 3},
		{"empty classes", nil, []string{}, 0},
		{"integer labels", []float64{0, 3, 1}, nil, 4},
		{"all zero", []float64{0, 0}, nil, 1},
		{"fractional", []float64{0, 1.5}, nil, 0},
		{"negative", []float64{-1, 1}, nil, 0},
		{"NaN", []float64{1, math.NaN()}, nil, 0},
		{"infinite", []float64{1, math.Inf(1)}, nil, 0},
		{"no rows", nil, nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := &Dataset{Y: tc.y, Rows: len(tc.y), Classes: tc.classes}
			if got := d.NumClasses(); got != tc.want {
				t.Errorf("NumClasses() = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestMNISTDir(t *testing.T) {
	if got, err := MNISTDir("/x/mnist"); err != nil || got != "/x/mnist" {
		t.Errorf("MNISTDir(flag) = %q, %v", got, err)
	}
	t.Setenv(DataDirEnv, "/data/gt")
	if got, err := MNISTDir(""); err != nil || got != "/data/gt/mnist" {
		t.Errorf("MNISTDir with $%s = %q, %v", DataDirEnv, got, err)
	}
	t.Setenv(DataDirEnv, "")
	t.Setenv("XDG_DATA_HOME", "/xdg")
	if got, err := MNISTDir(""); err != nil || got != "/xdg/gotrain/mnist" {
		t.Errorf("MNISTDir with XDG_DATA_HOME = %q, %v", got, err)
	}
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("HOME", "/home/u")
	if got, err := MNISTDir(""); err != nil || got != "/home/u/.local/share/gotrain/mnist" {
		t.Errorf("MNISTDir default = %q, %v", got, err)
	}
	if err := MNISTMissingError("/d"); !errors.Is(err, ErrMNISTMissing) || !strings.Contains(err.Error(), "--download") {
		t.Errorf("MNISTMissingError = %v", err)
	}
}

// TestTakeColumn checks that TakeColumn removes a feature column, rows
// intact, and returns its values; a missing name changes nothing.
func TestTakeColumn(t *testing.T) {
	d := &Dataset{FeatureNames: []string{"a", "b", "c"}, X: []float64{1, 2, 3, 4, 5, 6}, Y: []float64{0, 1}, Rows: 2, Cols: 3}
	names := d.FeatureNames
	v, ok := d.TakeColumn("b")
	if !ok || !slices.Equal(v, []float64{2, 5}) || !slices.Equal(d.X, []float64{1, 3, 4, 6}) || d.Cols != 2 ||
		!slices.Equal(d.FeatureNames, []string{"a", "c"}) || names[1] != "b" {
		t.Fatalf("got %v %v: X %v, %d columns, names %v (the old slice %v)", v, ok, d.X, d.Cols, d.FeatureNames, names)
	}
	if _, ok := d.TakeColumn("z"); ok || d.Cols != 2 {
		t.Fatal("a missing column was taken")
	}
	if v, _ := d.TakeColumn("a"); !slices.Equal(v, []float64{1, 4}) || !slices.Equal(d.X, []float64{3, 6}) {
		t.Fatalf("first column: %v, X %v", v, d.X)
	}
}
