package core

import (
	"reflect"
	"testing"
)

func TestBootstrapCounts(t *testing.T) {
	counts := make([]int32, 1000)
	BootstrapCounts(42, 3, 1000, counts)
	var sum, zeros int
	for _, c := range counts {
		sum += int(c)
		if c == 0 {
			zeros++
		}
	}
	if sum != 1000 {
		t.Errorf("counts sum to %d, want 1000", sum)
	}
	if zeros < 330 || zeros > 410 { // about 1000/e out of bag
		t.Errorf("%d rows out of bag, want about 368", zeros)
	}
	again := make([]int32, 1000)
	BootstrapCounts(42, 3, 1000, again)
	if !reflect.DeepEqual(counts, again) {
		t.Error("same seed and tree gave different counts")
	}
	BootstrapCounts(42, 4, 1000, again)
	if reflect.DeepEqual(counts, again) {
		t.Error("different trees gave the same counts")
	}
}
