// Package layout checks the rules of gotrain's package layout that the
// compiler does not enforce (docs/ARCHITECTURE.md states them):
//
//  1. Only package device turns a --device string into an engine and opens
//     GoMLX backends: no non-test file outside device/ calls
//     backends.New, backends.NewWithConfig or backends.NewOrErr of GoMLX,
//     a backend package's New function (simplego, xla, cpubackend), or
//     device.ParseSpec.
//  2. Library packages know nothing of flags: no package outside cmd/
//     imports cobra or pflag.
//  3. The learners and models receive a backend; they do not choose one:
//     forest/forestgraph, signal/sigraph, train and every models/...
//     package do not depend on package device, directly or through
//     another package of the module.
//  4. Product code has no development paths: no non-test file outside
//     data/ names the development data folder (shared/ beside the
//     repository, followed by data).
//  5. One write path: no non-test file outside internal/atomicfile (and
//     the cpubackend fork) calls os.Create, os.WriteFile, os.CreateTemp,
//     os.OpenFile or os.Rename; files are written through package
//     internal/atomicfile, which replaces them atomically, writes FIFOs
//     and devices through and refuses other special files.
//
// A call that rule 1 would flag but that chooses no device (for example a
// graph built on simplego only to record which operations a model uses),
// or that rule 5 would flag but writes no output (a scratch file), carries
// the comment "layout:allow" and the reason on its line.
//
// Check reads the source with go/parser; it runs nothing.
package layout

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Module is the module path the rules are written for.
const Module = "github.com/gotrain/gotrain"

// Violation is one broken rule at one place.
type Violation struct {
	// Rule is the rule's number in the package documentation.
	Rule int
	// Pos is "file:line" (or the package path for rule 3).
	Pos string
	// Msg says what is wrong.
	Msg string
}

func (v Violation) String() string { return fmt.Sprintf("%s: rule %d: %s", v.Pos, v.Rule, v.Msg) }

// forbiddenCalls are the functions only package device may call (rule 1),
// by import path and name.
var forbiddenCalls = map[string]map[string]bool{
	"github.com/gomlx/gomlx/backends":          {"New": true, "NewWithConfig": true, "NewOrErr": true},
	"github.com/gomlx/gomlx/backends/simplego": {"New": true, "NewBackend": true},
	"github.com/gomlx/gomlx/backends/xla":      {"New": true, "NewWithOptions": true},
	Module + "/cpubackend":                     {"New": true, "NewBackend": true},
	Module + "/device":                         {"ParseSpec": true},
}

// graphConsumers are the packages that must not depend on device (rule 3);
// a trailing "/..." means the folder and everything below it.
var graphConsumers = []string{"forest/forestgraph", "signal/sigraph", "train", "models/..."}

// Check walks the module rooted at root and returns every violation,
// sorted by position.
func Check(root string) ([]Violation, error) {
	var out []Violation
	imports := map[string][]string{} // package dir (slash, relative) -> module-internal imports
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			base := d.Name()
			if rel != "." && (strings.HasPrefix(base, ".") || base == "testdata" || base == "node_modules" || base == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, p, src, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return fmt.Errorf("layout: %w", err)
		}
		if isIgnored(f) {
			return nil
		}
		f, err = parser.ParseFile(fset, p, src, 0)
		if err != nil {
			return fmt.Errorf("layout: %w", err)
		}
		dir := path.Dir(rel)
		out = append(out, checkFile(fset, rel, dir, f, src)...)
		for _, imp := range f.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(ip, Module+"/") {
				imports[dir] = append(imports[dir], strings.TrimPrefix(ip, Module+"/"))
			}
		}
		if _, ok := imports[dir]; !ok {
			imports[dir] = nil
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out = append(out, checkDeps(imports)...)
	sort.Slice(out, func(i, j int) bool { return out[i].Pos < out[j].Pos })
	return out, nil
}

// isIgnored tells whether a file is a generator program (//go:build ignore).
func isIgnored(f *ast.File) bool {
	for _, cg := range f.Comments {
		if cg.Pos() > f.Package {
			break
		}
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "//go:build") && strings.Contains(c.Text, "ignore") {
				return true
			}
		}
	}
	return false
}

func under(dir, top string) bool { return dir == top || strings.HasPrefix(dir, top+"/") }

func checkFile(fset *token.FileSet, rel, dir string, f *ast.File, src []byte) []Violation {
	var out []Violation
	pos := func(p token.Pos) string { return fmt.Sprintf("%s:%d", rel, fset.Position(p).Line) }
	names := map[string]string{} // local name -> import path
	for _, imp := range f.Imports {
		ip, _ := strconv.Unquote(imp.Path.Value)
		name := path.Base(ip)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		names[name] = ip
		if !under(dir, "cmd") && (strings.HasPrefix(ip, "github.com/spf13/cobra") || strings.HasPrefix(ip, "github.com/spf13/pflag")) {
			out = append(out, Violation{2, pos(imp.Pos()), "imports " + ip + ": only cmd/ may know about flags"})
		}
	}
	if !under(dir, "device") {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			id, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			if fns, ok := forbiddenCalls[names[id.Name]]; ok && fns[sel.Sel.Name] && !allowed(src, fset.Position(call.Pos()).Offset) {
				out = append(out, Violation{1, pos(call.Pos()), fmt.Sprintf("calls %s.%s: only package device parses --device and opens backends (use device.Select and Engine.Backend)", id.Name, sel.Sel.Name)})
			}
			return true
		})
	}
	if !under(dir, "internal/atomicfile") && !under(dir, "cpubackend") {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && names[id.Name] == "os" && writeCalls[sel.Sel.Name] && !allowed(src, fset.Position(call.Pos()).Offset) {
				out = append(out, Violation{5, pos(call.Pos()), fmt.Sprintf("calls os.%s: write files through internal/atomicfile (Write, WriteFile, Group, ReplaceDir, OpenAppend)", sel.Sel.Name)})
			}
			return true
		})
	}
	if i := strings.Index(string(src), devDataPath); i >= 0 && !under(dir, "data") {
		line := 1 + strings.Count(string(src[:i]), "\n")
		out = append(out, Violation{4, fmt.Sprintf("%s:%d", rel, line), "names the development data folder " + devDataPath + ": find data through package data (MNISTDir)"})
	}
	return out
}

// writeCalls are the functions of package os that only internal/atomicfile
// may call (rule 5).
var writeCalls = map[string]bool{"Create": true, "WriteFile": true, "CreateTemp": true, "OpenFile": true, "Rename": true}

// devDataPath is the development data folder no product code may name.
var devDataPath = "shared" + "/data"

// allowed tells whether the source line holding offset carries "layout:allow".
func allowed(src []byte, offset int) bool {
	start := strings.LastIndexByte(string(src[:offset]), '\n') + 1
	end := strings.IndexByte(string(src[offset:]), '\n')
	if end < 0 {
		end = len(src) - offset
	}
	return strings.Contains(string(src[start:offset+end]), "layout:allow")
}

// checkDeps applies rule 3 over the module-internal import graph.
func checkDeps(imports map[string][]string) []Violation {
	var out []Violation
	for dir := range imports {
		consumer := false
		for _, c := range graphConsumers {
			if top, ok := strings.CutSuffix(c, "/..."); ok {
				consumer = consumer || under(dir, top)
			} else {
				consumer = consumer || dir == c
			}
		}
		if !consumer {
			continue
		}
		if via := reaches(dir, "device", imports); via != nil {
			out = append(out, Violation{3, Module + "/" + dir, "depends on package device (" + strings.Join(via, " -> ") + "): it should receive a backend, not choose one"})
		}
	}
	return out
}

// reaches returns an import chain from dir to target, or nil.
func reaches(dir, target string, imports map[string][]string) []string {
	seen := map[string]bool{}
	var walk func(d string, chain []string) []string
	walk = func(d string, chain []string) []string {
		if seen[d] {
			return nil
		}
		seen[d] = true
		for _, imp := range imports[d] {
			next := append(append([]string(nil), chain...), imp)
			if imp == target {
				return next
			}
			if c := walk(imp, next); c != nil {
				return c
			}
		}
		return nil
	}
	return walk(dir, []string{dir})
}
