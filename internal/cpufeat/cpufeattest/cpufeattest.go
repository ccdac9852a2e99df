// Package cpufeattest checks, in the tests of gotrain's kernel packages,
// that a package's choice of kernels follows GOTRAIN_CPU (package
// internal/cpufeat).
//
// A kernel package's path test compares what the package selected with
// Current, then calls EachSetting, which runs that same test again in a
// child process under each value of GOTRAIN_CPU: the variable is read once
// at start-up, so only a new process can show that changing it changes the
// path taken.
package cpufeattest

import (
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/cpu"
)

// envVar is GOTRAIN_CPU, spelled out here rather than taken from cpufeat so
// that this package shares no code with the one it checks.
const envVar = "GOTRAIN_CPU"

// childVar marks a child process started by EachSetting.
const childVar = "GOTRAIN_CPUFEATTEST_CHILD"

// Settings are the GOTRAIN_CPU values EachSetting runs a test under: the
// default, each level, and an unknown value (which counts as generic).
var Settings = []string{"", "auto", "avx512", "avx2", "generic", "bogus"}

// Want is what the kernels may use in this process: the CPU's features
// capped by GOTRAIN_CPU as the process was started with it, worked out
// without package cpufeat, so that a cpufeat that ignored the variable
// fails the tests that compare with Want.
type Want struct {
	// Setting is GOTRAIN_CPU's value ("" when unset).
	Setting string
	// AVX512BF16 tells whether the bfloat16 kernels (AVX-512 F, BW and
	// BF16) may run.
	AVX512BF16 bool
	// AVX512VBMI2 tells whether the byte-compress kernels (AVX-512 F, BW
	// and VBMI2, POPCNT and BMI2) may run.
	AVX512VBMI2 bool
	// AVX2FMA, AVX512F and AVX512DQ tell whether kernels needing AVX2 and
	// FMA, AVX-512 F, and AVX-512 F and DQ may run.
	AVX2FMA, AVX512F, AVX512DQ bool
}

// Current returns the Want of this process.
func Current() Want {
	s := os.Getenv(envVar)
	avx2, avx512 := false, false
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "auto", "avx512":
		avx2, avx512 = true, true
	case "avx2":
		avx2 = true
	}
	return Want{
		Setting:    s,
		AVX2FMA:    avx2 && cpu.X86.HasAVX2 && cpu.X86.HasFMA,
		AVX512F:    avx512 && cpu.X86.HasAVX512F,
		AVX512DQ:   avx512 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ,
		AVX512BF16: avx512 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512BF16,
		AVX512VBMI2: avx512 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VBMI2 &&
			cpu.X86.HasPOPCNT && cpu.X86.HasBMI2,
	}
}

// EachSetting runs the calling top-level test again in a child process
// (the same test binary) under each of Settings, and fails t if a child
// fails or does not run the test. In a child it returns at once: the test
// goes on to make its assertions there. Away from amd64 it runs no child:
// every setting selects the pure-Go kernels there, which the test has
// checked in this process.
func EachSetting(t *testing.T) {
	t.Helper()
	if os.Getenv(childVar) != "" {
		return
	}
	if runtime.GOARCH != "amd64" {
		t.Logf("%s: no vector kernels to switch off; the settings are not run in child processes", runtime.GOARCH)
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("cpufeattest: the test binary: %v", err)
	}
	for _, s := range Settings {
		cmd := exec.Command(exe, "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.count=1", "-test.v")
		cmd.Env = append(withoutVar(os.Environ(), envVar), childVar+"=1")
		if s != "" {
			cmd.Env = append(cmd.Env, envVar+"="+s)
		}
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
			t.Errorf("%s=%q: %s in a child process (err %v):\n%s", envVar, s, t.Name(), err, out)
		}
	}
}

// withoutVar returns env without the entries of name.
func withoutVar(env []string, name string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}
