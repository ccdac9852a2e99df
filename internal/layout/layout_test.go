package layout

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRepository checks gotrain itself: it fails when a change breaks a
// layout rule.
func TestRepository(t *testing.T) {
	vs, err := Check(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		t.Error(v)
	}
}

// TestDetects builds a small module that breaks every rule once and checks
// that each is reported where it is broken, and that allowed uses are not.
func TestDetects(t *testing.T) {
	root := t.TempDir()
	write := func(name, src string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("device/device.go", `package device
import "github.com/gomlx/gomlx/backends"
func open() { backends.NewWithConfig("go") } // allowed here
func ParseSpec(s string) {}
`)
	write("forest/forestgraph/grow.go", `package forestgraph
import gb "github.com/gomlx/gomlx/backends"
func f() { _, _ = gb.NewWithConfig("go") }
func g() { _, _ = gb.NewWithConfig("go") } // layout:allow records ops only
`)
	write("bench/bench.go", `package bench
import "github.com/gotrain/gotrain/device"
func f() { device.ParseSpec("gpu") }
`)
	write("train/flags.go", `package train
import (
	"github.com/spf13/pflag"
	"github.com/gotrain/gotrain/models/util"
)
var _ pflag.FlagSet
var _ = util.X
`)
	write("models/util/util.go", `package util
import "github.com/gotrain/gotrain/device"
var X = device.ParseSpec
`)
	write("cmd/gotrain/main.go", `package main
import "github.com/spf13/cobra"
var _ cobra.Command
const d = "../shared/data/mnist"
`)
	write("data/data.go", `package data
const dev = "../shared/data" // allowed in data
`)
	write("forest/file.go", `package forest
import "os"
func save(b []byte) error { return os.WriteFile("m.model", b, 0o644) }
func scratch() { os.CreateTemp("", "x") } // layout:allow a scratch file, not an output
`)
	write("internal/atomicfile/atomicfile.go", `package atomicfile
import "os"
func rename(a, b string) error { return os.Rename(a, b) } // the one write path
`)
	write("signal/sigraph/x_test.go", `package sigraph
import "github.com/gomlx/gomlx/backends"
func f() { backends.New() } // tests may open backends
`)
	vs, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range vs {
		got = append(got, v.String())
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		"forest/forestgraph/grow.go:3: rule 1: calls gb.NewWithConfig",
		"bench/bench.go:3: rule 1: calls device.ParseSpec",
		"train/flags.go:3: rule 2: imports github.com/spf13/pflag",
		"github.com/gotrain/gotrain/train: rule 3: depends on package device (train -> models/util -> device)",
		"github.com/gotrain/gotrain/models/util: rule 3: depends on package device",
		"cmd/gotrain/main.go:4: rule 4: names the development data folder",
		"forest/file.go:3: rule 5: calls os.WriteFile",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("missing violation %q in:\n%s", want, all)
		}
	}
	if len(vs) != 7 {
		t.Errorf("%d violations, want 7 (allowed uses reported?):\n%s", len(vs), all)
	}
}
