package charlstm

import "testing"

// TestDefaultOptionsValid checks that the options the CLI starts from are
// a valid configuration once the data fixes the vocabulary.
func TestDefaultOptionsValid(t *testing.T) {
	o := DefaultOptions()
	if err := o.Train.Validate(); err != nil {
		t.Errorf("DefaultOptions().Train: %v", err)
	}
	if err := (Arch{Vocab: 80, Hidden: o.Hidden, Layers: o.Layers}).Validate(); err != nil {
		t.Errorf("DefaultOptions() architecture: %v", err)
	}
	if o.SeqLength < 1 || o.Step < 1 || o.ValFraction <= 0 || o.ValFraction >= 1 || o.Train.EarlyStopMonitor != "val_loss" {
		t.Errorf("DefaultOptions() = %+v", o)
	}
}
