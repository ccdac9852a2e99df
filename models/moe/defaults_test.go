package moe

import "testing"

// TestDefaultOptionsValid checks that the options the CLI starts from are
// a valid model and harness configuration.
func TestDefaultOptionsValid(t *testing.T) {
	o := DefaultOptions()
	if err := o.Train.Validate(); err != nil {
		t.Errorf("DefaultOptions().Train: %v", err)
	}
	if err := o.Model.Validate(); err != nil {
		t.Errorf("DefaultOptions().Model: %v", err)
	}
	if o.GrowPatience < 1 || o.Train.BatchSize != 256 {
		t.Errorf("DefaultOptions() = %+v", o)
	}
}
