package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/gotrain/gotrain/device"
)

var (
	gpuOnce sync.Once
	gpuName string
)

// gpuHere returns the name of the first usable GPU of this machine (a CUDA
// PJRT plugin that loads and sees a device), or "". Tests that assert
// "no GPU here" take their other branch on a GPU host, with assertions of
// its own, instead of failing there.
func gpuHere(t *testing.T) string {
	t.Helper()
	gpuOnce.Do(func() {
		for _, e := range device.List(device.Discover(device.DiscoverOptions{Probe: true})) {
			if e.Class == "gpu" && e.Available {
				gpuName = e.Name
				return
			}
		}
	})
	return gpuName
}

// The plugin search path the test process started with, before run hid
// the plugins.
var pjrtPath, pjrtPathSet = os.LookupEnv("PJRT_PLUGIN_LIBRARY_PATH")

// runGPU is run without hiding the machine's PJRT plugins: the GPU-present
// branches use it to reach the GPU gpuHere found. It restores the search
// path the process started with (a run earlier in the test replaced it),
// until the test ends.
func runGPU(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	t.Setenv("PJRT_PLUGIN_LIBRARY_PATH", pjrtPath) // restored after the test
	if !pjrtPathSet {
		os.Unsetenv("PJRT_PLUGIN_LIBRARY_PATH")
	}
	return execArgs(args)
}

// TestRunGPUSeesMachinePlugins checks that runGPU undoes run's hiding of
// the plugins, which would make every GPU-present branch fail on a GPU.
func TestRunGPUSeesMachinePlugins(t *testing.T) {
	if _, _, err := run(t, "devices"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runGPU(t, "devices"); err != nil {
		t.Fatal(err)
	}
	if v, set := os.LookupEnv("PJRT_PLUGIN_LIBRARY_PATH"); v != pjrtPath || set != pjrtPathSet {
		t.Errorf("runGPU ran with PJRT_PLUGIN_LIBRARY_PATH=%q (set %v), the process started with %q (set %v)", v, set, pjrtPath, pjrtPathSet)
	}
}

// TestGPUVerifyRunsEveryGPUBranch checks that scripts/gpu-verify.sh, which
// runs this package's test binary on a GPU host with -test.run
// $GOTRAIN_GPU_TESTS, selects every test of this package that calls
// gpuHere: a new GPU-present branch left out of that list would never run
// on a GPU.
func TestGPUVerifyRunsEveryGPUBranch(t *testing.T) {
	script, err := os.ReadFile(filepath.Join("..", "..", "scripts", "gpu-verify.sh"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^GOTRAIN_GPU_TESTS='([^']*)'$`).FindSubmatch(script)
	if m == nil {
		t.Fatal("scripts/gpu-verify.sh: no GOTRAIN_GPU_TESTS='...' line")
	}
	sel, err := regexp.Compile(string(m[1]))
	if err != nil {
		t.Fatalf("scripts/gpu-verify.sh: GOTRAIN_GPU_TESTS: %v", err)
	}
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var branches []string
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "Test") {
				continue
			}
			calls := false
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok && id.Name == "gpuHere" {
					calls = true
				}
				return !calls
			})
			if calls {
				branches = append(branches, fn.Name.Name)
			}
		}
	}
	if len(branches) == 0 {
		t.Fatal("no test calls gpuHere: the search is broken")
	}
	for _, b := range branches {
		if !sel.MatchString(b) {
			t.Errorf("%s calls gpuHere but scripts/gpu-verify.sh's GOTRAIN_GPU_TESTS does not select it", b)
		}
	}
}
