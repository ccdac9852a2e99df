package transformer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"strings"

	"github.com/gotrain/gotrain/internal/readlimit"
	"github.com/gotrain/gotrain/models/text"
)

// Example is one instruction-tuning example: the model reads Prompt and
// learns to continue it with Response.
type Example struct {
	// Prompt is the text the model is given.
	Prompt string `json:"prompt"`
	// Response is the text it should produce; the loss counts only its tokens.
	Response string `json:"response"`
}

// LoadInstructions reads a JSONL file of {"prompt": ..., "response": ...}
// objects, one per line (blank lines are skipped). A malformed line, a
// missing or non-string field, an unknown field or an empty response is an
// error naming the file, the line and the field. The file may hold at most
// text.DefaultMaxBytes (1 GiB; see [LoadInstructionsMax]).
func LoadInstructions(path string) ([]Example, error) {
	return LoadInstructionsMax(path, 0)
}

// LoadInstructionsMax is [LoadInstructions] with a size cap of maxBytes
// (0: text.DefaultMaxBytes): a larger regular file is refused by its size
// before it is read, a FIFO or a device is read up to the cap, and the
// error names the file and the cap and wraps text.ErrTooLarge.
func LoadInstructionsMax(path string, maxBytes int64) ([]Example, error) {
	limit, err := readlimit.Check(maxBytes, text.DefaultMaxBytes, "maxBytes")
	if err != nil {
		return nil, fmt.Errorf("transformer: instruction data %s: %w", path, err)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("transformer: instruction data: %w", err)
	}
	defer func() { _ = f.Close() }()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > limit {
		return nil, fmt.Errorf("transformer: instruction data %w", &readlimit.Error{Name: path, Limit: limit, Option: "maxBytes"})
	}
	return readInstructions(f, path, limit)
}

// ReadInstructions is LoadInstructions on a reader; name identifies it in
// errors. At most text.DefaultMaxBytes are read.
func ReadInstructions(r io.Reader, name string) ([]Example, error) {
	return readInstructions(r, name, text.DefaultMaxBytes)
}

// readInstructions is ReadInstructions with a cap of limit bytes.
func readInstructions(r io.Reader, name string, limit int64) ([]Example, error) {
	sc := bufio.NewScanner(readlimit.NewReader(r, limit, name, "maxBytes"))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	var out []Example
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		ex, err := parseExample(b)
		if err != nil {
			if le := capError(sc.Err()); le != nil {
				return nil, le // the line was cut by the cap
			}
			return nil, fmt.Errorf("transformer: instruction data %s:%d: %w", name, line, err)
		}
		out = append(out, ex)
	}
	if err := sc.Err(); err != nil {
		if le := capError(err); le != nil {
			return nil, le
		}
		return nil, fmt.Errorf("transformer: instruction data %s: line %d: %w", name, line+1, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("transformer: instruction data %s: no examples", name)
	}
	return out, nil
}

// capError returns the error of instruction data over its cap when err is
// the cap's, else nil.
func capError(err error) error {
	var le *readlimit.Error
	if errors.As(err, &le) {
		return fmt.Errorf("transformer: instruction data %w", err)
	}
	return nil
}

// parseExample decodes one JSONL line.
func parseExample(b []byte) (Example, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return Example{}, fmt.Errorf("not a JSON object: %w", err)
	}
	var ex Example
	for _, field := range []string{"prompt", "response"} {
		v, ok := raw[field]
		if !ok {
			return Example{}, fmt.Errorf("field %q is missing", field)
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return Example{}, fmt.Errorf("field %q: want a string, got %s", field, strings.TrimSpace(string(v)))
		}
		if field == "prompt" {
			ex.Prompt = s
		} else {
			ex.Response = s
		}
	}
	for k := range raw {
		if k != "prompt" && k != "response" {
			return Example{}, fmt.Errorf("field %q is unknown (want only \"prompt\" and \"response\")", k)
		}
	}
	if ex.Response == "" {
		return Example{}, errors.New(`field "response" is empty`)
	}
	return ex, nil
}

// InstructionRows encodes examples as training rows of context ids: x holds
// the ids of prompt+response (the last context+1 of them when longer),
// padded with id 0; y holds the next id at each position where that id is
// a response token, and −1 elsewhere (prompt, padding), so that Loss counts
// the response only. It returns the number of rows.
func InstructionRows(v *text.Vocab, examples []Example, context int) (x, y []float32, n int, err error) {
	if hi, lo := bits.Mul64(uint64(len(examples)), uint64(max(context, 0))); hi != 0 || lo > text.MaxWindowValues {
		return nil, nil, 0, fmt.Errorf("transformer: %d instruction examples of a context of %d make more than %d values (text.MaxWindowValues)",
			len(examples), context, text.MaxWindowValues)
	}
	for i, ex := range examples {
		p, err := v.Encode(ex.Prompt)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("transformer: instruction example %d: prompt: %w", i+1, err)
		}
		r, err := v.Encode(ex.Response)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("transformer: instruction example %d: response: %w", i+1, err)
		}
		seq := append(append([]int(nil), p...), r...)
		first := len(p) // index in seq of the first response token
		if len(seq) > context+1 {
			cut := len(seq) - (context + 1)
			seq, first = seq[cut:], max(0, first-cut)
		}
		for t := range context {
			xv, yv := float32(0), float32(-1)
			if t < len(seq) {
				xv = float32(seq[t])
			}
			if t+1 < len(seq) && t+1 >= first {
				yv = float32(seq[t+1])
			}
			x, y = append(x, xv), append(y, yv)
		}
	}
	return x, y, len(examples), nil
}

// instructionText is the text of every example, for the vocabulary.
func instructionText(examples []Example) string {
	var b strings.Builder
	for _, ex := range examples {
		b.WriteString(ex.Prompt)
		b.WriteString(ex.Response)
	}
	return b.String()
}
