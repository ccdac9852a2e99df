package text

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// corpusSeed returns the first n bytes of the default corpus (Newton's
// Opticks under GOROOT), cut at a rune boundary, or a small text when it
// is absent.
func corpusSeed(n int) []byte {
	if p, err := DefaultCorpusPath(); err == nil {
		if b, err := os.ReadFile(p); err == nil && len(b) > 0 {
			b = b[:min(n, len(b))]
			for len(b) > 0 && !utf8.Valid(b) {
				b = b[:len(b)-1]
			}
			return b
		}
	}
	return []byte("OPTICKS:\r\nOR, A TREATISE OF THE Reflections, Refractions,\nInflections and Colours of LIGHT.\n")
}

// FuzzLoadText writes fuzzed bytes as a corpus file and goes through what
// the language models do with a corpus: LoadText, the vocabulary, encoding,
// decoding, training windows and the validation split. Nothing may panic;
// an error names the file; a refused corpus is empty, binary or invalid
// UTF-8, and an accepted one is returned as it is, encodes to one id per
// rune and decodes back, and cuts into the windows Windows documents.
func FuzzLoadText(f *testing.F) {
	f.Add(corpusSeed(2048), uint8(8), uint8(3), uint8(25))
	f.Add([]byte("naïve café — 東京 🚂\ttab"), uint8(1), uint8(1), uint8(0))
	f.Add([]byte("\uFEFFa\r\nb"), uint8(2), uint8(200), uint8(128))
	f.Add([]byte("aaaa"), uint8(3), uint8(1), uint8(255))
	f.Add([]byte("ab\xffcd"), uint8(1), uint8(1), uint8(0))
	f.Add([]byte("ab\xed\xa0\x80"), uint8(1), uint8(1), uint8(0)) // a UTF-16 surrogate
	f.Add([]byte("ab\x00cd"), uint8(1), uint8(1), uint8(0))
	f.Add([]byte("\xf4\x90\x80\x80"), uint8(1), uint8(1), uint8(0)) // beyond U+10FFFF
	f.Add([]byte{}, uint8(1), uint8(1), uint8(0))
	f.Fuzz(func(t *testing.T, b []byte, seqLen, step, val uint8) {
		path := filepath.Join(t.TempDir(), "corpus.txt")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := LoadText(path)
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error does not name the file: %v", err)
			}
			if len(b) > 0 && utf8.Valid(b) && bytes.IndexByte(b, 0) < 0 {
				t.Fatalf("a non-empty UTF-8 text without NUL refused: %v", err)
			}
			return
		}
		if s != string(b) {
			t.Fatal("LoadText changed the text")
		}
		if len(b) == 0 || !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0 {
			t.Fatalf("accepted an empty, invalid or binary corpus (%d bytes)", len(b))
		}
		v, err := NewVocab(s)
		if err != nil {
			t.Fatalf("no vocabulary for an accepted corpus: %v", err)
		}
		runes := v.Runes()
		if !slices.IsSorted(runes) || len(slices.Compact(slices.Clone(runes))) != len(runes) {
			t.Fatalf("vocabulary runes not sorted and distinct: %q", runes)
		}
		w, err := VocabFromCodes(v.Codes())
		if err != nil || !w.Equal(v) {
			t.Fatalf("the vocabulary does not survive its checkpoint form: %v", err)
		}
		ids, err := v.Encode(s)
		if err != nil || len(ids) != utf8.RuneCountInString(s) {
			t.Fatalf("%d ids for %d runes: %v", len(ids), utf8.RuneCountInString(s), err)
		}
		back, err := v.Decode(ids)
		if err != nil || back != s {
			t.Fatalf("Decode(Encode(text)) differs: %v", err)
		}
		checkWindows(t, ids, v.Size(), int(seqLen%64)+1, int(step%16)+1)
		tr, va := Split(ids, float64(val)/256)
		if len(tr)+len(va) != len(ids) || !slices.Equal(append(slices.Clone(tr), va...), ids) {
			t.Fatalf("Split(%d ids, %v) gives %d + %d", len(ids), float64(val)/256, len(tr), len(va))
		}
	})
}

// checkWindows checks Windows(ids, seqLen, step) against its definition.
func checkWindows(t *testing.T, ids []int, size, seqLen, step int) {
	t.Helper()
	x, y, n, err := Windows(ids, seqLen, step)
	if len(ids) < seqLen+1 {
		if err == nil {
			t.Fatalf("%d windows of %d from %d ids", n, seqLen+1, len(ids))
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if n != (len(ids)-seqLen-1)/step+1 || len(x) != n*seqLen || len(y) != n*seqLen {
		t.Fatalf("%d windows (len x %d, y %d) of %d every %d from %d ids", n, len(x), len(y), seqLen, step, len(ids))
	}
	for i := range n {
		for j := range seqLen {
			if int(x[i*seqLen+j]) != ids[i*step+j] || int(y[i*seqLen+j]) != ids[i*step+j+1] {
				t.Fatalf("window %d, position %d: x %v, y %v", i, j, x[i*seqLen+j], y[i*seqLen+j])
			}
			if x[i*seqLen+j] < 0 || int(x[i*seqLen+j]) >= size {
				t.Fatalf("id %v outside the vocabulary of %d", x[i*seqLen+j], size)
			}
		}
	}
}

// FuzzVocabFromCodes fuzzes the vocabulary as a checkpoint stores it (one
// int32 code per id, read back by the language models' Load): nothing may
// panic; an accepted vocabulary has one id per code, gives the codes back,
// decodes every id, and when every code is a valid rune encodes the
// decoded text back to the same ids.
func FuzzVocabFromCodes(f *testing.F) {
	enc := func(rs ...rune) []byte {
		b := make([]byte, 4*len(rs))
		for i, r := range rs {
			binary.LittleEndian.PutUint32(b[4*i:], uint32(r))
		}
		return b
	}
	v, err := NewVocab(string(corpusSeed(4096)))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(enc(v.Runes()...))
	f.Add(enc('a', 'b', '\n', '東'))
	f.Add(enc('a', 'a'))
	f.Add(enc(-1, 0xD800, 0x110000, utf8.RuneError))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		codes := make([]int32, len(b)/4)
		for i := range codes {
			codes[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
		}
		v, err := VocabFromCodes(codes)
		if err != nil {
			return
		}
		if v.Size() != len(codes) || !slices.Equal(v.Codes(), codes) {
			t.Fatalf("vocabulary of %d ids from %d codes", v.Size(), len(codes))
		}
		ids := make([]int, v.Size())
		for i := range ids {
			ids[i] = i
		}
		s, err := v.Decode(ids)
		if err != nil {
			t.Fatalf("Decode of every id: %v", err)
		}
		if _, err := v.Decode([]int{-1}); err == nil {
			t.Fatal("id -1 decoded")
		}
		if _, err := v.Decode([]int{v.Size()}); err == nil {
			t.Fatal("id Size() decoded")
		}
		for _, c := range codes {
			if !utf8.ValidRune(c) {
				return
			}
		}
		got, err := v.Encode(s)
		if err != nil || !slices.Equal(got, ids) {
			t.Fatalf("Encode(Decode(ids)) = %v, %v; want %v", got, err, ids)
		}
	})
}
