package device

import (
	"strings"
	"testing"
)

// FuzzParseSpec fuzzes the --device grammar: nothing may panic; an error
// quotes the value and lists the valid forms; an accepted spec has a known
// kind, an index that is AnyIndex or non-negative, a plugin for GPU, TPU
// and XLA, keeps the text it came from, and its canonical form (String)
// parses back to the same spec.
func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{"auto", "cpu", "go", "gpu", "gpu:1", "cuda:0", "tpu", "TPU:3", "xla:cpu", "xla:cuda:0",
		"xla:/opt/pjrt/libtpu.so:2", " Go ", "cuda", "gpu:-1", "gpu:01", "xla:", "xla::0", "xla:a b", "gpu:9223372036854775808", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s, err := ParseSpec(text)
		if err != nil {
			if !strings.Contains(err.Error(), ValidForms) {
				t.Fatalf("error does not list the valid forms: %v", err)
			}
			return
		}
		if s.Raw != text {
			t.Fatalf("Raw %q, parsed from %q", s.Raw, text)
		}
		if s.Index != AnyIndex && s.Index < 0 {
			t.Fatalf("index %d", s.Index)
		}
		switch s.Kind {
		case Auto, CPU, Go:
			if s.Index != AnyIndex || s.Plugin != "" {
				t.Fatalf("%v with index %d, plugin %q", s.Kind, s.Index, s.Plugin)
			}
		case GPU, TPU, XLA:
			if s.Plugin == "" {
				t.Fatalf("%v without a plugin", s.Kind)
			}
		default:
			t.Fatalf("unknown kind %v", s.Kind)
		}
		back, err := ParseSpec(s.String())
		if err != nil {
			t.Fatalf("canonical form %q of %q does not parse: %v", s.String(), text, err)
		}
		back.Raw = s.Raw
		if back != s {
			t.Fatalf("%q parses as %+v, its canonical form %q as %+v", text, s, s.String(), back)
		}
	})
}
