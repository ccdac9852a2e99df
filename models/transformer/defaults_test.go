package transformer

import "testing"

// TestDefaultOptionsValid checks that the options the CLI starts from set
// valid phases and architecture (with instruction data named).
func TestDefaultOptionsValid(t *testing.T) {
	o := DefaultOptions()
	o.InstructionPath = "instructions.jsonl"
	if err := o.Train.Validate(); err != nil {
		t.Errorf("DefaultOptions().Train: %v", err)
	}
	if err := o.SetPhases(o.Pretrain, Given{}, o.Instruct, Given{}, Both{}); err != nil {
		t.Errorf("DefaultOptions() phases or architecture: %v", err)
	}
	if o.Pretrain.Epochs != 1 || o.Instruct.Epochs != 3 || o.Stride < 1 {
		t.Errorf("DefaultOptions() = %+v", o)
	}
}
