// Package device owns the choice of where gotrain's work runs. It discovers
// the compute devices of the machine, parses the --device grammar, resolves
// a request against what was discovered, and opens the GoMLX backend of the
// device chosen; it also checks each device with a small computation
// compared against a float64 reference (Verify, Burst).
//
// Select is the one entry point: it turns a --device value into an Engine,
// which records the resolution (every candidate tried and why each was
// rejected) and is the only thing in gotrain that opens a GoMLX backend,
// with one configuration per kind of device (CPUConfig, SimpleGoConfig, or
// the XLA plugin's path). The learners and models never see a device spec:
// they receive the engine's backend and device number.
//
// The package never falls back silently: Select either returns the device
// that was asked for, or an *UnavailableError that lists every candidate
// tried and why it was rejected. With Request.Fallback it continues on the
// next best device and Engine.Warning says why; callers must print it.
package device

import (
	"fmt"
	"strconv"
	"strings"
)

// SpecKind is the kind of device a user asked for.
type SpecKind int

const (
	// Auto picks the fastest device available: GPU, then XLA CPU, then native CPU.
	Auto SpecKind = iota
	// CPU is gotrain's native Go code (graph workloads run on gotrain's GoMLX
	// backend "cpu", package cpubackend).
	CPU
	// Go is GoMLX's pure-Go simplego backend, requested explicitly.
	Go
	// GPU is an NVIDIA GPU through XLA's CUDA PJRT plugin.
	GPU
	// TPU is a TPU through XLA's TPU PJRT plugin.
	TPU
	// XLA is any named PJRT plugin (for example "cpu" or "cuda").
	XLA
)

func (k SpecKind) String() string {
	switch k {
	case Auto:
		return "auto"
	case CPU:
		return "cpu"
	case Go:
		return "go"
	case GPU:
		return "gpu"
	case TPU:
		return "tpu"
	case XLA:
		return "xla"
	}
	return fmt.Sprintf("SpecKind(%d)", int(k))
}

// AnyIndex means that any device index of the requested kind is acceptable.
const AnyIndex = -1

// Spec is a parsed --device value.
type Spec struct {
	// Kind is the kind of device requested.
	Kind SpecKind
	// Plugin is the PJRT plugin name for XLA (a name such as "cpu", or an
	// absolute path to a plugin .so); "cuda" for GPU and "tpu" for TPU.
	Plugin string
	// Index is the device number, or AnyIndex when none was given.
	Index int
	// Raw is the text the spec was parsed from.
	Raw string
}

// ValidForms lists the accepted --device forms, for help texts and errors.
const ValidForms = "auto, cpu, go, gpu, gpu:N, cuda:N, tpu, tpu:N, xla:<plugin>, xla:<plugin>:N"

// String returns the canonical form of the spec.
func (s Spec) String() string {
	var b strings.Builder
	switch s.Kind {
	case XLA:
		b.WriteString("xla:" + s.Plugin)
	default:
		b.WriteString(s.Kind.String())
	}
	if s.Index != AnyIndex {
		b.WriteString(":" + strconv.Itoa(s.Index))
	}
	return b.String()
}

// ParseSpec parses a --device value. Matching is case-insensitive except for
// plugin paths. An invalid value gets an error that lists the valid forms.
func ParseSpec(text string) (Spec, error) {
	raw := text
	text = strings.TrimSpace(text)
	bad := func(why string) (Spec, error) {
		return Spec{}, fmt.Errorf("device: invalid device %q: %s (valid forms: %s)", raw, why, ValidForms)
	}
	if text == "" {
		return bad("empty")
	}
	head, rest, hasRest := strings.Cut(text, ":")
	spec := Spec{Index: AnyIndex, Raw: raw}
	parseIndex := func(s string) (int, error) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || s != strconv.Itoa(n) {
			return 0, fmt.Errorf("device index %q is not a non-negative integer", s)
		}
		return n, nil
	}
	switch strings.ToLower(head) {
	case "auto", "cpu", "go":
		if hasRest {
			return bad(fmt.Sprintf("%q takes no index", strings.ToLower(head)))
		}
		spec.Kind = map[string]SpecKind{"auto": Auto, "cpu": CPU, "go": Go}[strings.ToLower(head)]
		return spec, nil
	case "gpu", "cuda", "tpu":
		spec.Kind, spec.Plugin = GPU, "cuda"
		if strings.EqualFold(head, "tpu") {
			spec.Kind, spec.Plugin = TPU, "tpu"
		}
		if hasRest {
			n, err := parseIndex(rest)
			if err != nil {
				return bad(err.Error())
			}
			spec.Index = n
		} else if strings.EqualFold(head, "cuda") {
			return bad("cuda needs an index, as in cuda:0 (or use gpu)")
		}
		return spec, nil
	case "xla":
		if !hasRest || rest == "" {
			return bad("xla needs a plugin name, as in xla:cpu or xla:cuda:0")
		}
		plugin := rest
		if i := strings.LastIndex(rest, ":"); i >= 0 {
			n, err := parseIndex(rest[i+1:])
			if err != nil {
				return bad(err.Error())
			}
			plugin, spec.Index = rest[:i], n
		}
		if plugin == "" || strings.ContainsAny(plugin, " \t") {
			return bad("empty or malformed plugin name")
		}
		spec.Kind, spec.Plugin = XLA, plugin
		return spec, nil
	}
	return bad("unknown device kind " + strconv.Quote(head))
}
