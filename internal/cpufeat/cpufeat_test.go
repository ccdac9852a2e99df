package cpufeat

import (
	"strings"
	"testing"

	"github.com/gotrain/gotrain/internal/cpufeat/cpufeattest"
)

func TestParseLevel(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Level
		ok   bool
	}{
		{"", AVX512, true}, {"auto", AVX512, true}, {" AVX512 ", AVX512, true},
		{"avx2", AVX2, true}, {"Avx2", AVX2, true}, {"generic", Generic, true},
		{"avx", Generic, false}, {"sse4", Generic, false}, {"go", Generic, false},
	} {
		got, err := ParseLevel(c.in)
		if got != c.want || (err == nil) != c.ok {
			t.Errorf("ParseLevel(%q) = %v, %v; want %v, ok %v", c.in, got, err, c.want, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), EnvVar) {
			t.Errorf("ParseLevel(%q): error %q does not name %s", c.in, err, EnvVar)
		}
	}
	for _, l := range []Level{Generic, AVX2, AVX512} {
		if back, err := ParseLevel(l.String()); back != l || err != nil {
			t.Errorf("ParseLevel(%v.String()) = %v, %v", l, back, err)
		}
	}
}

// TestFeaturesFollowGOTRAIN_CPU checks the features this process allows
// against GOTRAIN_CPU and the CPU, here and under every setting.
func TestFeaturesFollowGOTRAIN_CPU(t *testing.T) {
	w := cpufeattest.Current()
	if HasAVX512BF16 != w.AVX512BF16 {
		t.Errorf("GOTRAIN_CPU=%q: HasAVX512BF16 %v, want %v", w.Setting, HasAVX512BF16, w.AVX512BF16)
	}
	if HasAVX512VBMI2 != w.AVX512VBMI2 {
		t.Errorf("GOTRAIN_CPU=%q: HasAVX512VBMI2 %v, want %v", w.Setting, HasAVX512VBMI2, w.AVX512VBMI2)
	}
	if HasAVX2FMA != w.AVX2FMA || HasAVX512F != w.AVX512F || (HasAVX512F && HasAVX512DQ) != w.AVX512DQ {
		t.Errorf("%s=%q: AVX2+FMA %v, AVX-512F %v, AVX-512F+DQ %v; want %v, %v, %v", EnvVar, w.Setting,
			HasAVX2FMA, HasAVX512F, HasAVX512F && HasAVX512DQ, w.AVX2FMA, w.AVX512F, w.AVX512DQ)
	}
	if _, err := ParseLevel(w.Setting); (err != nil) != (Err() != nil) {
		t.Errorf("%s=%q: Err() = %v, want the parse error %v", EnvVar, w.Setting, Err(), err)
	}
	if want, _ := ParseLevel(w.Setting); Ceiling() != want {
		t.Errorf("%s=%q: Ceiling() = %v, want %v", EnvVar, w.Setting, Ceiling(), want)
	}
	cpufeattest.EachSetting(t)
}
