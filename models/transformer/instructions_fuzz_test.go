package transformer

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/models/text"
)

// FuzzLoadInstructions writes fuzzed instruction data (JSONL) to a file
// and reads it as `lm transformer train --instructions` does: nothing may
// panic; LoadInstructions and ReadInstructions agree; an error names the
// file; accepted data holds at least one example, each with a response,
// at most one per non-blank line, and reads back the same when written
// again as JSONL; and the training rows InstructionRows makes of it (with
// the vocabulary of its text) have the documented shape and ids.
func FuzzLoadInstructions(f *testing.F) {
	good, err := os.ReadFile(filepath.Join("testdata", "instructions.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good, uint8(16))
	f.Add(good[:len(good)/2], uint8(3))
	f.Add([]byte(`{"prompt": "say a", "response": "a"}`+"\r\n\n"+`{"response": "東京 🚂", "prompt": ""}`), uint8(1))
	f.Add([]byte(`{"prompt": "\ud800", "response": "\xff"}`), uint8(2))
	f.Add([]byte(`{"prompt": "a", "response": "b", "prompt": "c"}`), uint8(4))
	f.Add([]byte(`{"prompt": null, "response": "b"}`), uint8(4))
	f.Add([]byte(`{"prompt": "a", "response": ""}`), uint8(4))
	f.Add([]byte(`[]`), uint8(4))
	f.Add([]byte("\n\n"), uint8(4))
	f.Fuzz(func(t *testing.T, b []byte, ctx uint8) {
		path := filepath.Join(t.TempDir(), "instructions.jsonl")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		exs, err := LoadInstructions(path)
		exs2, err2 := ReadInstructions(bytes.NewReader(b), path)
		if (err == nil) != (err2 == nil) || !slices.Equal(exs, exs2) {
			t.Fatalf("LoadInstructions and ReadInstructions disagree: %v / %v", err, err2)
		}
		if err != nil {
			if exs != nil {
				t.Fatal("examples with an error")
			}
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		lines := 0
		for l := range bytes.Lines(b) {
			if len(bytes.TrimSpace(l)) > 0 {
				lines++
			}
		}
		if len(exs) == 0 || len(exs) > lines {
			t.Fatalf("%d examples from %d non-blank lines", len(exs), lines)
		}
		var again bytes.Buffer
		enc := json.NewEncoder(&again)
		for i, ex := range exs {
			if ex.Response == "" {
				t.Fatalf("example %d: empty response", i+1)
			}
			if err := enc.Encode(ex); err != nil {
				t.Fatal(err)
			}
		}
		back, err := ReadInstructions(&again, "again")
		if err != nil || !slices.Equal(back, exs) {
			t.Fatalf("accepted examples do not read back the same when written again: %v", err)
		}
		v, err := text.NewVocab(instructionText(exs))
		if err != nil {
			t.Fatalf("no vocabulary of accepted examples: %v", err)
		}
		c := int(ctx%64) + 1
		x, y, n, err := InstructionRows(v, exs, c)
		if err != nil {
			t.Fatalf("InstructionRows with the examples' own vocabulary: %v", err)
		}
		if n != len(exs) || len(x) != n*c || len(y) != n*c {
			t.Fatalf("%d rows (len x %d, y %d) of context %d for %d examples", n, len(x), len(y), c, len(exs))
		}
		for i := range x {
			if x[i] < 0 || int(x[i]) >= v.Size() || y[i] < -1 || int(y[i]) >= v.Size() || x[i] != float32(int(x[i])) || y[i] != float32(int(y[i])) {
				t.Fatalf("position %d: x %v, y %v outside the vocabulary of %d", i, x[i], y[i], v.Size())
			}
		}
	})
}
