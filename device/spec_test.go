package device

import (
	"strings"
	"testing"
)

func TestParseSpecValid(t *testing.T) {
	tests := []struct {
		in     string
		kind   SpecKind
		plugin string
		index  int
		canon  string
	}{
		{"auto", Auto, "", AnyIndex, "auto"},
		{" AUTO ", Auto, "", AnyIndex, "auto"},
		{"cpu", CPU, "", AnyIndex, "cpu"},
		{"go", Go, "", AnyIndex, "go"},
		{"gpu", GPU, "cuda", AnyIndex, "gpu"},
		{"gpu:0", GPU, "cuda", 0, "gpu:0"},
		{"gpu:3", GPU, "cuda", 3, "gpu:3"},
		{"cuda:1", GPU, "cuda", 1, "gpu:1"},
		{"tpu", TPU, "tpu", AnyIndex, "tpu"},
		{"tpu:2", TPU, "tpu", 2, "tpu:2"},
		{"xla:cpu", XLA, "cpu", AnyIndex, "xla:cpu"},
		{"xla:cuda:0", XLA, "cuda", 0, "xla:cuda:0"},
		{"xla:/opt/pjrt/pjrt_c_api_cpu_plugin.so", XLA, "/opt/pjrt/pjrt_c_api_cpu_plugin.so", AnyIndex, "xla:/opt/pjrt/pjrt_c_api_cpu_plugin.so"},
		{"xla:/opt/p.so:1", XLA, "/opt/p.so", 1, "xla:/opt/p.so:1"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			s, err := ParseSpec(tt.in)
			if err != nil {
				t.Fatalf("ParseSpec(%q): %v", tt.in, err)
			}
			if s.Kind != tt.kind || s.Plugin != tt.plugin || s.Index != tt.index {
				t.Errorf("ParseSpec(%q) = %+v, want kind %v plugin %q index %d", tt.in, s, tt.kind, tt.plugin, tt.index)
			}
			if s.String() != tt.canon {
				t.Errorf("String() = %q, want %q", s.String(), tt.canon)
			}
		})
	}
}

func TestParseSpecInvalid(t *testing.T) {
	tests := []struct{ in, why string }{
		{"", "empty"},
		{"   ", "empty"},
		{"gpux", "unknown device kind"},
		{"metal", "unknown device kind"},
		{"cpu:0", "takes no index"},
		{"auto:1", "takes no index"},
		{"gpu:-1", "not a non-negative integer"},
		{"gpu:a", "not a non-negative integer"},
		{"gpu:01", "not a non-negative integer"},
		{"cuda", "needs an index"},
		{"xla", "needs a plugin"},
		{"xla:", "needs a plugin"},
		{"xla:cuda:x", "not a non-negative integer"},
		{"xla::0", "malformed plugin"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := ParseSpec(tt.in)
			if err == nil {
				t.Fatalf("ParseSpec(%q) succeeded, want error", tt.in)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.why) {
				t.Errorf("error %q does not say %q", msg, tt.why)
			}
			if !strings.Contains(msg, ValidForms) {
				t.Errorf("error %q does not list the valid forms", msg)
			}
		})
	}
}
