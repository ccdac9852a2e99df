package data

import (
	"math"
	"reflect"
	"testing"
)

func TestMakeRegression(t *testing.T) {
	a := MakeRegression(500, 12, 3)
	if a.Rows != 500 || a.Cols != 12 || len(a.X) != 6000 || len(a.Y) != 500 || a.FeatureNames[11] != "x11" {
		t.Fatalf("shape %dx%d, names %v", a.Rows, a.Cols, a.FeatureNames)
	}
	if b := MakeRegression(500, 12, 3); !reflect.DeepEqual(a, b) {
		t.Error("same seed, different data")
	}
	if c := MakeRegression(500, 12, 4); reflect.DeepEqual(a.Y, c.Y) {
		t.Error("different seeds, same targets")
	}
	var m, v float64
	for _, x := range a.X {
		m += x
		v += x * x
		if x != float64(float32(x)) {
			t.Fatalf("feature %v is not a float32 value", x)
		}
	}
	m /= float64(len(a.X))
	v = v/float64(len(a.X)) - m*m
	if math.Abs(m) > 0.1 || math.Abs(v-1) > 0.1 {
		t.Errorf("features mean %v variance %v, want about 0 and 1", m, v)
	}
}
