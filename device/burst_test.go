package device

import (
	"testing"
	"time"
)

func TestBurstReal(t *testing.T) {
	d := Device{Name: "go", Kind: SimpleGo, Class: "cpu"}
	rate, err := Burst(d, time.Millisecond)
	if err != nil || rate <= 0 {
		t.Errorf("Burst on go = %v, %v", rate, err)
	}
}
