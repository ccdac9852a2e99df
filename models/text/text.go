// Package text holds what gotrain's character-level language models
// (models/charlstm, models/transformer) share: a vocabulary of the UTF-8
// runes of a corpus (Vocab, with the serialisation stored in checkpoints:
// Vocab.Codes and VocabFromCodes), reading a corpus (LoadText, with a
// default corpus under GOROOT: DefaultCorpusPath) and cutting a text's ids
// into training windows (Windows, Split), and the report of a generated
// text (SampleReport).
package text

import (
	"bytes"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/gotrain/gotrain/internal/readlimit"
)

// Vocab maps the distinct runes of a corpus to ids 0..Size()-1, in rune order.
type Vocab struct {
	runes []rune
	index map[rune]int
}

// NewVocab returns the vocabulary of the runes of text.
func NewVocab(text string) (*Vocab, error) {
	if text == "" {
		return nil, errors.New("text: vocabulary of an empty text")
	}
	seen := map[rune]bool{}
	var rs []rune
	for _, r := range text {
		if !seen[r] {
			seen[r] = true
			rs = append(rs, r)
		}
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i] < rs[j] })
	return VocabFromRunes(rs)
}

// VocabFromRunes returns the vocabulary whose id i is runes[i] (as stored
// with a model). The runes must be distinct Unicode characters.
func VocabFromRunes(runes []rune) (*Vocab, error) {
	if len(runes) == 0 {
		return nil, errors.New("text: empty vocabulary")
	}
	v := &Vocab{runes: append([]rune(nil), runes...), index: make(map[rune]int, len(runes))}
	for i, r := range v.runes {
		if !utf8.ValidRune(r) {
			// Text could not hold it: it would decode as U+FFFD, which
			// does not encode back to it.
			return nil, fmt.Errorf("text: vocabulary: id %d is %#x, not a Unicode character", i, r)
		}
		if _, dup := v.index[r]; dup {
			return nil, fmt.Errorf("text: vocabulary: rune %q appears twice", r)
		}
		v.index[r] = i
	}
	return v, nil
}

// Size is the number of runes in the vocabulary.
func (v *Vocab) Size() int { return len(v.runes) }

// Runes returns the runes of the vocabulary, indexed by id.
func (v *Vocab) Runes() []rune { return append([]rune(nil), v.runes...) }

// Codes returns the vocabulary as checkpoints store it: the rune of id i,
// as an int32, at index i. VocabFromCodes reads it back.
func (v *Vocab) Codes() []int32 {
	out := make([]int32, len(v.runes))
	for i, r := range v.runes {
		out[i] = r
	}
	return out
}

// VocabFromCodes returns the vocabulary stored as Codes returns it.
func VocabFromCodes(codes []int32) (*Vocab, error) {
	rs := make([]rune, len(codes))
	copy(rs, codes)
	return VocabFromRunes(rs)
}

// Equal tells whether v and w map the same runes to the same ids.
func (v *Vocab) Equal(w *Vocab) bool {
	if v == nil || w == nil || len(v.runes) != len(w.runes) {
		return false
	}
	for i, r := range v.runes {
		if w.runes[i] != r {
			return false
		}
	}
	return true
}

// Encode returns the ids of the runes of s. Runes outside the vocabulary are
// an error that lists them all.
func (v *Vocab) Encode(s string) ([]int, error) {
	ids := make([]int, 0, len(s))
	var unknown []rune
	seen := map[rune]bool{}
	for _, r := range s {
		id, ok := v.index[r]
		if !ok {
			if !seen[r] {
				seen[r] = true
				unknown = append(unknown, r)
			}
			continue
		}
		ids = append(ids, id)
	}
	if len(unknown) > 0 {
		return nil, &UnknownRunesError{Runes: unknown}
	}
	return ids, nil
}

// UnknownRunesError is returned by Encode for characters outside the
// vocabulary; it lists each once, in order of appearance.
type UnknownRunesError struct {
	// Runes are the unknown characters.
	Runes []rune
}

// Error implements error.
func (e *UnknownRunesError) Error() string {
	q := make([]string, len(e.Runes))
	for i, r := range e.Runes {
		q[i] = fmt.Sprintf("%q", r)
	}
	return fmt.Sprintf("%d character(s) not in the model's vocabulary: %s", len(e.Runes), strings.Join(q, ", "))
}

// Decode returns the text of ids; an id outside the vocabulary is an error.
func (v *Vocab) Decode(ids []int) (string, error) {
	var b strings.Builder
	for i, id := range ids {
		if id < 0 || id >= len(v.runes) {
			return "", fmt.Errorf("text: id %d at position %d is outside the vocabulary of %d", id, i, len(v.runes))
		}
		b.WriteRune(v.runes[id])
	}
	return b.String(), nil
}

// DefaultMaxBytes is the corpus size cap of LoadText: 1 GiB.
const DefaultMaxBytes = 1 << 30

// ErrTooLarge is wrapped by the error of a corpus larger than its cap.
var ErrTooLarge = readlimit.ErrTooLarge

// LoadText reads a UTF-8 text corpus of at most DefaultMaxBytes (see
// [LoadTextMax]). An unreadable, empty, binary (NUL bytes) or invalid
// UTF-8 file is an error naming it.
func LoadText(path string) (string, error) {
	return LoadTextMax(path, 0)
}

// LoadTextMax is [LoadText] with a size cap of maxBytes (0:
// DefaultMaxBytes). A larger regular file is refused by its size before it
// is read; a FIFO or a device is read up to the cap. The error of a corpus
// over the cap names it and the cap, and wraps ErrTooLarge.
func LoadTextMax(path string, maxBytes int64) (string, error) {
	limit, err := readlimit.Check(maxBytes, DefaultMaxBytes, "maxBytes")
	if err != nil {
		return "", fmt.Errorf("text: corpus %s: %w", path, err)
	}
	b, err := readlimit.ReadFile(path, limit, "maxBytes")
	if err != nil {
		var le *readlimit.Error
		if errors.As(err, &le) {
			return "", fmt.Errorf("text: corpus %w", err)
		}
		return "", fmt.Errorf("text: reading the corpus: %w", err)
	}
	if len(b) == 0 {
		return "", fmt.Errorf("text: corpus %s is empty", path)
	}
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return "", fmt.Errorf("text: corpus %s looks binary (NUL byte at offset %d): want UTF-8 text", path, i)
	}
	if !utf8.Valid(b) {
		off := 0
		for off < len(b) {
			r, size := utf8.DecodeRune(b[off:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			off += size
		}
		return "", fmt.Errorf("text: corpus %s is not valid UTF-8 (invalid byte 0x%02x at offset %d)", path, b[off], off)
	}
	return string(b), nil
}

// DefaultCorpusName is the default corpus, relative to GOROOT: Newton's
// Opticks, shipped with the Go source tree.
const DefaultCorpusName = "src/testdata/Isaac.Newton-Opticks.txt"

// DefaultCorpusPath returns the path of the default corpus, under the Go
// installation's GOROOT ($GOROOT, else the toolchain's, else `go env GOROOT`).
// It is an error naming the path if the file is absent.
func DefaultCorpusPath() (string, error) {
	root := os.Getenv("GOROOT")
	if root == "" {
		root = runtime.GOROOT() //nolint:staticcheck // the toolchain's GOROOT is the best guess here.
	}
	if root == "" {
		if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
			root = strings.TrimSpace(string(out))
		}
	}
	if root == "" {
		return "", fmt.Errorf("text: default corpus: GOROOT is unknown (set GOROOT, or name a corpus file); looked for $GOROOT/%s", DefaultCorpusName)
	}
	p := filepath.Join(root, filepath.FromSlash(DefaultCorpusName))
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("text: default corpus %s is absent (%v): name a corpus file", p, err)
	}
	return p, nil
}

// MaxWindowValues bounds the ids Windows returns in each of x and y
// (2^30, 4 GiB as float32): overlapping windows repeat the text
// length/step times, so a long length with a small step is refused before
// it is allocated.
const MaxWindowValues = 1 << 30

// Windows cuts ids into the windows of seqLen+1 ids that start every step
// ids, and returns them as a Dataset's rows: x[i] holds the first seqLen ids
// of window i and y[i] the last seqLen (the next character at each
// position), both row-major with seqLen columns. It returns the number of
// windows, and an error if ids hold none or more than MaxWindowValues.
func Windows(ids []int, seqLen, step int) (x, y []float32, n int, err error) {
	if seqLen < 1 || step < 1 {
		return nil, nil, 0, fmt.Errorf("text: windows: length %d and step %d must be >= 1", seqLen, step)
	}
	if len(ids) < seqLen+1 {
		return nil, nil, 0, fmt.Errorf("text: windows: %d characters are too short for one window of length+1 = %d", len(ids), seqLen+1)
	}
	n = (len(ids)-(seqLen+1))/step + 1
	if hi, lo := bits.Mul64(uint64(n), uint64(seqLen)); hi != 0 || lo > MaxWindowValues {
		return nil, nil, 0, fmt.Errorf("text: windows: %d windows of length %d (every %d characters) make more than %d values (MaxWindowValues): raise the step or shorten the windows",
			n, seqLen, step, MaxWindowValues)
	}
	x = make([]float32, 0, n*seqLen)
	y = make([]float32, 0, n*seqLen)
	for i := range n {
		w := ids[i*step : i*step+seqLen+1]
		for _, id := range w[:seqLen] {
			x = append(x, float32(id))
		}
		for _, id := range w[1:] {
			y = append(y, float32(id))
		}
	}
	return x, y, n, nil
}

// Split splits ids into a training part and a validation part made of the
// last valFraction of them (0 <= valFraction < 1).
func Split(ids []int, valFraction float64) (trainIDs, valIDs []int) {
	nv := int(float64(len(ids)) * valFraction)
	if valFraction <= 0 || nv <= 0 {
		return ids, nil
	}
	return ids[:len(ids)-nv], ids[len(ids)-nv:]
}
