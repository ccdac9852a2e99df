package transformer

import (
	"errors"
	"fmt"
)

// Both holds settings given for both phases at once, as gotrain's
// --batch-size, --epochs, --accumulate and --steps are; zero fields set
// nothing.
type Both struct {
	// BatchSize, Epochs and Accumulate replace a phase's own setting
	// unless that was given explicitly (see Given).
	BatchSize, Epochs, Accumulate int
	// Steps caps a phase whose own Steps is 0.
	Steps int
}

// Given tells which settings of a phase were given for it explicitly:
// those that Both does not replace.
type Given struct{ BatchSize, Epochs, Accumulate bool }

// SetPhases sets o.Pretrain and o.Instruct to pre and inst with both
// applied to the settings not given for each (preGiven, instGiven), and
// checks them before anything is loaded. With o.AutoBatchSize a batch
// size not given is 0: Train picks it. A phase of 0 epochs is skipped
// (the zero Phase, whatever its Steps), and so is instruction tuning
// without instructions (InstructionPath or Instructions); the path of a
// skipped phase's data is cleared. Errors name the fields (Both.Steps,
// Pretrain.BatchSize, ...) without the package's prefix, for callers to
// spell them their way. The architecture is validated too, but
// for its Vocab (which comes from the data).
func (o *Options) SetPhases(pre Phase, preGiven Given, inst Phase, instGiven Given, both Both) error {
	if both.Steps < 0 || pre.Steps < 0 || inst.Steps < 0 || both.Epochs < 0 || both.Accumulate < 0 {
		return errors.New("Both.Steps, Both.Epochs, Both.Accumulate, Pretrain.Steps and Instruct.Steps must be >= 0")
	}
	o.Pretrain, o.Instruct = both.apply(pre, preGiven, o.AutoBatchSize), both.apply(inst, instGiven, o.AutoBatchSize)
	if o.InstructionPath == "" && o.Instructions == nil {
		o.Instruct = Phase{}
	}
	for _, p := range []struct {
		name string
		ph   Phase
	}{{"Pretrain", o.Pretrain}, {"Instruct", o.Instruct}} {
		switch {
		case p.ph.Epochs == 0: // skipped
		case p.ph.BatchSize < 1 && !(o.AutoBatchSize && p.ph.BatchSize == 0):
			return fmt.Errorf("%s.BatchSize %d: want >= 1", p.name, p.ph.BatchSize)
		case p.ph.Accumulate < 1:
			return fmt.Errorf("%s.Accumulate %d: want >= 1", p.name, p.ph.Accumulate)
		}
	}
	if o.Pretrain.Epochs == 0 {
		o.PretrainPath = ""
	}
	if o.Instruct.Epochs == 0 {
		o.InstructionPath = ""
		if o.Pretrain.Epochs == 0 {
			return errors.New("nothing to train: Pretrain.Epochs is 0 and there is no InstructionPath (with Instruct.Epochs > 0)")
		}
	}
	probe := o.Arch
	probe.Vocab, probe.Context = 1, max(probe.Context, 1)
	return probe.Validate()
}

// apply returns p with b's settings in place of those not given, and the
// zero Phase when p has no epochs.
func (b Both) apply(p Phase, given Given, auto bool) Phase {
	switch {
	case given.BatchSize:
	case auto:
		p.BatchSize = 0 // picked by Train
	case b.BatchSize > 0:
		p.BatchSize = b.BatchSize
	}
	if b.Epochs > 0 && !given.Epochs {
		p.Epochs = b.Epochs
	}
	if b.Accumulate > 0 && !given.Accumulate {
		p.Accumulate = b.Accumulate
	}
	if p.Steps == 0 {
		p.Steps = b.Steps
	}
	if p.Epochs == 0 {
		return Phase{}
	}
	return p
}
