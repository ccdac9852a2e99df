// Package cpufeat is the one place where gotrain's kernel packages (gemm,
// signal, signal/fft, forest, cpubackend) learn which vector instruction
// sets they may use: the CPU's own features, capped by the GOTRAIN_CPU
// environment variable, read once when the program starts.
//
// GOTRAIN_CPU is a ceiling, never a request: it can switch kernels off but
// never turns on an instruction set the CPU lacks. Its values:
//
//	(unset), auto   every kernel the CPU supports (the default)
//	avx512          the same as auto: AVX-512 is the highest level there is
//	avx2            no AVX-512 kernel: AVX2+FMA kernels, else pure Go
//	generic         pure-Go code only, as on a CPU without vector extensions
//
// Any other value counts as generic (the kernels every CPU runs) and is
// reported by Err; gotrain's command line refuses to start with it. CI runs
// the tests with avx2 and with generic so that the paths of other CPUs run
// on its AVX-512 machine (docs/CPU.md, "Kernel paths").
package cpufeat

import (
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/cpu"
)

// EnvVar is the environment variable that caps the kernels.
const EnvVar = "GOTRAIN_CPU"

// Level is a ceiling on the instruction sets kernels use.
type Level int

// The levels, lowest first.
const (
	// Generic allows pure-Go kernels only.
	Generic Level = iota
	// AVX2 allows AVX2+FMA kernels at most.
	AVX2
	// AVX512 allows every kernel: it is the default ceiling.
	AVX512
)

// String returns the level's GOTRAIN_CPU value.
func (l Level) String() string {
	switch l {
	case Generic:
		return "generic"
	case AVX2:
		return "avx2"
	case AVX512:
		return "avx512"
	}
	return fmt.Sprintf("Level(%d)", int(l))
}

// ParseLevel reads a GOTRAIN_CPU value (case and surrounding blanks do not
// matter): "" and "auto" are AVX512, the absence of a ceiling. An unknown
// value is an error, returned with Generic.
func ParseLevel(s string) (Level, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "auto", "avx512":
		return AVX512, nil
	case "avx2":
		return AVX2, nil
	case "generic":
		return Generic, nil
	}
	return Generic, fmt.Errorf("%s=%q: unknown value, want auto, avx512, avx2 or generic", EnvVar, s)
}

var ceiling, envErr = ParseLevel(os.Getenv(EnvVar))

// The features kernels may use: what the CPU reports, capped by GOTRAIN_CPU.
// They are false on every architecture other than amd64.
var (
	// HasAVX2FMA allows the AVX2 kernels, which all use FMA too.
	HasAVX2FMA = ceiling >= AVX2 && cpu.X86.HasAVX2 && cpu.X86.HasFMA
	// HasAVX512F allows AVX-512 Foundation kernels.
	HasAVX512F = ceiling >= AVX512 && cpu.X86.HasAVX512F
	// HasAVX512DQ allows kernels that also need AVX-512 DQ.
	HasAVX512DQ = ceiling >= AVX512 && cpu.X86.HasAVX512DQ
	// HasAVX512BF16 allows the bfloat16 kernels (VDPBF16PS), which also
	// need AVX-512 F and BW (every CPU with BF16 has them).
	HasAVX512BF16 = ceiling >= AVX512 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512BF16
	// HasAVX512VBMI2 allows the byte-compress kernels (VPCOMPRESSB with
	// masked byte stores), which also need AVX-512 F and BW, POPCNT and
	// BMI2.
	HasAVX512VBMI2 = ceiling >= AVX512 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VBMI2 && cpu.X86.HasPOPCNT && cpu.X86.HasBMI2
)

// Ceiling returns the ceiling GOTRAIN_CPU set when the program started
// (AVX512 when unset).
func Ceiling() Level { return ceiling }

// Err returns the error of an unknown GOTRAIN_CPU value (the kernels then
// run as under generic), or nil.
func Err() error { return envErr }
