package forest

import (
	"strings"
	"testing"

	"github.com/gotrain/gotrain/data"
)

// TestValidateRefusesExplicitZeros checks that Validate, for options set
// in full from DefaultOptions, refuses a 0 that Fit would read as "the
// default", naming the option and its range.
func TestValidateRefusesExplicitZeros(t *testing.T) {
	if err := DefaultOptions().Validate(); err != nil {
		t.Fatalf("DefaultOptions: %v", err)
	}
	for _, c := range []struct {
		edit func(*Options)
		want string
	}{
		{func(o *Options) { o.MinSamplesLeaf = 0 }, "forest: MinSamplesLeaf 0: want >= 1"},
		{func(o *Options) { o.MinSamplesSplit = 0 }, "forest: MinSamplesSplit 0: want >= 2"},
		{func(o *Options) { o.MinSamplesSplit = 1 }, "forest: MinSamplesSplit 1: want >= 2"},
		{func(o *Options) { o.Trees = 0 }, "forest: Trees 0: want 1 to 1048576"},
		{func(o *Options) { o.Bins = 0 }, "forest: Bins 0: want 2 to 256"},
		{func(o *Options) { o.MaxDepth = -1 }, "forest: MaxDepth -1: want >= 0 (0: unlimited)"},
		{func(o *Options) { o.Threads = -1 }, "forest: Threads -1"},
		{func(o *Options) { o.MaxSamples = -0.5 }, "forest: MaxSamples -0.5"},
		{func(o *Options) { o.Task = Classification; o.Criterion = SquaredError }, "not valid for classification"},
	} {
		o := DefaultOptions()
		c.edit(&o)
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one containing %q", err, c.want)
		}
	}
}

// TestTrainRefusesNegativePermutationRepeats checks that a negative
// PermutationRepeats is an error naming it, not "off".
func TestTrainRefusesNegativePermutationRepeats(t *testing.T) {
	d, err := data.Diabetes()
	if err != nil {
		t.Fatal(err)
	}
	_, err = Train(d, d, Options{Trees: 2, Seed: 1}, TrainConfig{PermutationRepeats: -1})
	if err == nil || !strings.Contains(err.Error(), "PermutationRepeats -1: want >= 0") {
		t.Errorf("PermutationRepeats -1: %v", err)
	}
}
