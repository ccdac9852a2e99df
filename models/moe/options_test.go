package moe

import (
	stdcontext "context"
	"math"
	"strings"
	"testing"
)

// TestConfigErrorsNameFieldAndRange checks that an option out of range is
// an error naming the field and the allowed range.
func TestConfigErrorsNameFieldAndRange(t *testing.T) {
	ok := Config{Inputs: 4, Classes: 3, Experts: 2, TopK: 2, Hidden: []int{5}}
	for _, c := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.CapacityFactor = -1 }, "CapacityFactor -1: want a finite number >= 0 (0: no limit)"},
		{func(c *Config) { c.CapacityFactor = math.NaN() }, "CapacityFactor NaN: want"},
		{func(c *Config) { c.BalanceAlpha = math.Inf(1) }, "BalanceAlpha +Inf: want a finite number >= 0 (0: off)"},
		{func(c *Config) { c.Experts = 5000 }, "Experts 5000: want 1 to 4096"},
		{func(c *Config) { c.MaxExperts = 1 << 40 }, "MaxExperts 1099511627776: want Experts (2) to 4096"},
		{func(c *Config) { c.Hidden = []int{1 << 21} }, "Hidden size 2097152: want 1 to 1048576"},
		{func(c *Config) { c.GateHidden = -1 }, "GateHidden -1: want 0 (a linear gate) to 1048576"},
		{func(c *Config) { c.Inputs, c.Experts, c.Hidden = 1<<20, 4096, []int{1 << 20} }, "parameters: want at most 2147483648 (MaxParams)"},
	} {
		cfg := ok
		c.edit(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one containing %q", err, c.want)
		}
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Errorf("DefaultConfig: %v", err)
	}
}

// TestTrainRefusesOptionsOutOfRange checks the training options' ranges,
// before anything is built.
func TestTrainRefusesOptionsOutOfRange(t *testing.T) {
	d, err := Digits(0.1, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		edit func(*Options)
		want string
	}{
		{func(o *Options) { o.GrowPatience = -1 }, "GrowPatience -1: want >= 1 epoch"},
		{func(o *Options) { o.GrowMinDelta = math.NaN() }, "GrowMinDelta NaN: want a finite number >= 0"},
		{func(o *Options) { o.GrowEps = -0.5 }, "GrowEps -0.5: want a finite number >= 0"},
		{func(o *Options) { o.EvalBatch = -3 }, "EvalBatch -3: want >= 1"},
	} {
		o := DefaultOptions()
		o.Data = d
		c.edit(&o)
		if _, err := Train(stdcontext.Background(), nil, o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one containing %q", err, c.want)
		}
	}
}

// TestLoadDataRefusesValFractionOutOfRange checks ValFraction's range.
func TestLoadDataRefusesValFractionOutOfRange(t *testing.T) {
	for _, f := range []float64{-0.1, 1, 2, math.NaN(), math.Inf(1)} {
		_, err := LoadData(stdcontext.Background(), DataOptions{Dataset: DatasetDigits, ValFraction: f})
		if err == nil || !strings.Contains(err.Error(), "ValFraction") || !strings.Contains(err.Error(), "want 0 (no validation) to below 1") {
			t.Errorf("ValFraction %v: %v", f, err)
		}
	}
}
