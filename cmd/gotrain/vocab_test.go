package main

import (
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// concepts lists, for each concept a user sets on several commands, every
// spelling gotrain has used or a user might expect. One spelling may be
// visible across the whole command tree; the others may exist only as
// hidden, deprecated aliases (kept one release for users' scripts).
var concepts = map[string][]string{
	"learning rate":       {"lr", "learning-rate"},
	"resume":              {"resume", "resume-from"},
	"run output folder":   {"out", "checkpoint-dir", "output-dir", "out-dir"},
	"early-stop patience": {"early-stop-patience", "patience"},
	"batch size":          {"batch-size", "batch"},
	"seed":                {"seed", "random-seed"},
	"optimizer steps":     {"steps", "max-steps"},
	"epochs":              {"epochs", "max-epochs"},
	"data folder":         {"data-dir", "datadir"},
}

// flagUse is one flag of one command.
type flagUse struct {
	cmd  string
	flag *pflag.Flag
}

// walkFlags returns every local flag of every command of the tree.
func walkFlags(root *cobra.Command) map[string][]flagUse {
	out := map[string][]flagUse{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			out[f.Name] = append(out[f.Name], flagUse{c.CommandPath(), f})
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return out
}

// typeClass buckets flag types whose values are written the same way.
func typeClass(t string) string {
	switch t {
	case "int", "int64", "uint64", "int32", "uint", "uint32":
		return "integer"
	case "float64", "float32":
		return "number"
	}
	return t
}

// vocabularyProblems returns every place where root's tree spells a
// concept two ways, gives a concept's flag different kinds of values on
// different commands, or keeps a retired spelling visible or silent.
func vocabularyProblems(root *cobra.Command) []string {
	var out []string
	flags := walkFlags(root)
	for concept, spellings := range concepts {
		var visible []string
		names := map[string]bool{}
		for _, name := range spellings {
			for _, u := range flags[name] {
				if !u.flag.Hidden {
					visible = append(visible, "--"+name+" ("+u.cmd+")")
					names[name] = true
				} else if u.flag.Deprecated == "" {
					out = append(out, u.cmd+": --"+name+" is hidden but not deprecated: users of the old spelling get no warning")
				}
			}
		}
		if len(names) > 1 {
			sort.Strings(visible)
			out = append(out, concept+" is spelled several ways: "+strings.Join(visible, ", "))
		}
	}
	for name, uses := range flags {
		if !inConcepts(name) {
			continue // e.g. signal synth's --snr (a value) and signal dataset's (a grid)
		}
		classes := map[string][]string{}
		for _, u := range uses {
			c := typeClass(u.flag.Value.Type())
			classes[c] = append(classes[c], u.cmd)
		}
		if len(classes) > 1 {
			out = append(out, "--"+name+" takes different kinds of values: "+fmtMap(classes))
		}
	}
	sort.Strings(out)
	return out
}

// inConcepts tells whether name is a spelling of one of the concepts.
func inConcepts(name string) bool {
	for _, spellings := range concepts {
		for _, s := range spellings {
			if s == name {
				return true
			}
		}
	}
	return false
}

func fmtMap(m map[string][]string) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, k+": "+strings.Join(v, ", "))
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}

// TestOneVocabularyOfFlags fails when two commands spell the same concept
// differently, when one flag name takes different kinds of values on
// different commands, or when a retired spelling is visible or silent.
func TestOneVocabularyOfFlags(t *testing.T) {
	for _, p := range vocabularyProblems(newRootCmd()) {
		t.Error(p)
	}
}

// TestVocabularyDetects checks the check on a tree that breaks each rule.
func TestVocabularyDetects(t *testing.T) {
	root := &cobra.Command{Use: "x"}
	a := &cobra.Command{Use: "a"}
	a.Flags().Float64("lr", 0, "")
	a.Flags().Int("seed", 0, "")
	a.Flags().Int("patience", 0, "")
	_ = a.Flags().MarkHidden("patience")
	b := &cobra.Command{Use: "b"}
	b.Flags().Float64("learning-rate", 0, "")
	b.Flags().String("seed", "", "")
	b.Flags().Int("max-steps", 0, "")
	_ = b.Flags().MarkDeprecated("max-steps", "use --steps")
	root.AddCommand(a, b)
	got := strings.Join(vocabularyProblems(root), "\n")
	for _, want := range []string{
		"learning rate is spelled several ways: --learning-rate (x b), --lr (x a)",
		"--seed takes different kinds of values: integer: x a; string: x b",
		"x a: --patience is hidden but not deprecated",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "max-steps") {
		t.Errorf("a hidden, deprecated alias was reported:\n%s", got)
	}
}
