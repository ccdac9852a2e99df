package text

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestVocabRoundTrip(t *testing.T) {
	for _, tc := range []struct{ name, text string }{
		{"ascii", "hello, world\n"},
		{"unicode", "naïve café — 東京 🚂\ttab"},
		{"one rune", "aaaa"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := NewVocab(tc.text)
			if err != nil {
				t.Fatal(err)
			}
			ids, err := v.Encode(tc.text)
			if err != nil {
				t.Fatal(err)
			}
			if len(ids) != len([]rune(tc.text)) {
				t.Errorf("%d ids for %d runes", len(ids), len([]rune(tc.text)))
			}
			got, err := v.Decode(ids)
			if err != nil || got != tc.text {
				t.Errorf("Decode(Encode(%q)) = %q, %v", tc.text, got, err)
			}
			w, err := VocabFromRunes(v.Runes())
			if err != nil || !w.Equal(v) {
				t.Errorf("VocabFromRunes(Runes()) differs: %v", err)
			}
		})
	}
}

func TestVocabErrors(t *testing.T) {
	v, err := NewVocab("abc")
	if err != nil {
		t.Fatal(err)
	}
	_, err = v.Encode("abxyzx")
	if err == nil || !strings.Contains(err.Error(), `'x', 'y', 'z'`) || !strings.Contains(err.Error(), "3 character(s)") {
		t.Errorf("Encode with unknown runes: %v, want them listed once each", err)
	}
	if _, err := v.Decode([]int{0, 3}); err == nil {
		t.Error("Decode of an id outside the vocabulary: no error")
	}
	if _, err := NewVocab(""); err == nil {
		t.Error("NewVocab(\"\"): no error")
	}
	if _, err := VocabFromRunes([]rune("aba")); err == nil {
		t.Error("VocabFromRunes with a duplicate: no error")
	}
}

func TestWindows(t *testing.T) {
	ids := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	for _, tc := range []struct {
		seq, step, n int
		firstX       []float32
		lastY        []float32
		err          bool
	}{
		{seq: 3, step: 1, n: 7, firstX: []float32{0, 1, 2}, lastY: []float32{7, 8, 9}},
		{seq: 3, step: 3, n: 3, firstX: []float32{0, 1, 2}, lastY: []float32{7, 8, 9}},
		{seq: 4, step: 3, n: 2, firstX: []float32{0, 1, 2, 3}, lastY: []float32{4, 5, 6, 7}},
		{seq: 9, step: 5, n: 1, firstX: []float32{0, 1, 2, 3, 4, 5, 6, 7, 8}, lastY: []float32{1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{seq: 10, step: 1, err: true},
		{seq: 0, step: 1, err: true},
		{seq: 3, step: 0, err: true},
	} {
		x, y, n, err := Windows(ids, tc.seq, tc.step)
		if tc.err {
			if err == nil {
				t.Errorf("Windows(seq %d, step %d): no error", tc.seq, tc.step)
			}
			continue
		}
		if err != nil || n != tc.n || len(x) != n*tc.seq || len(y) != n*tc.seq {
			t.Errorf("Windows(seq %d, step %d) = %d windows (%d, %d values), %v; want %d", tc.seq, tc.step, n, len(x), len(y), err, tc.n)
			continue
		}
		if !reflect.DeepEqual(x[:tc.seq], tc.firstX) || !reflect.DeepEqual(y[len(y)-tc.seq:], tc.lastY) {
			t.Errorf("Windows(seq %d, step %d): first x %v, last y %v; want %v, %v", tc.seq, tc.step, x[:tc.seq], y[len(y)-tc.seq:], tc.firstX, tc.lastY)
		}
		for i := range n { // y is x shifted by one
			for j := 0; j+1 < tc.seq; j++ {
				if y[i*tc.seq+j] != x[i*tc.seq+j+1] {
					t.Fatalf("window %d: y is not x shifted by one", i)
				}
			}
		}
	}
}

func TestSplit(t *testing.T) {
	ids := make([]int, 100)
	tr, va := Split(ids, 0.1)
	if len(tr) != 90 || len(va) != 10 {
		t.Errorf("Split(100, 0.1) = %d, %d", len(tr), len(va))
	}
	if tr, va := Split(ids, -1); len(tr) != 100 || va != nil {
		t.Errorf("Split(100, -1) = %d, %d", len(tr), len(va))
	}
}

func TestDefaultCorpusPath(t *testing.T) {
	p, err := DefaultCorpusPath()
	if err != nil {
		t.Skipf("no default corpus here: %v", err)
	}
	if !strings.HasSuffix(filepath.ToSlash(p), DefaultCorpusName) {
		t.Errorf("DefaultCorpusPath() = %s", p)
	}
	t.Setenv("GOROOT", t.TempDir())
	if _, err := DefaultCorpusPath(); err == nil || !strings.Contains(err.Error(), "Isaac.Newton-Opticks.txt") {
		t.Errorf("with an empty GOROOT: %v, want an error naming the path", err)
	}
}

func TestCodesRoundTrip(t *testing.T) {
	v, err := NewVocab("naïve café — 東京 🚂")
	if err != nil {
		t.Fatal(err)
	}
	codes := v.Codes()
	for i, r := range v.Runes() {
		if codes[i] != r {
			t.Fatalf("code %d = %d, want the rune %q", i, codes[i], r)
		}
	}
	w, err := VocabFromCodes(codes)
	if err != nil || !w.Equal(v) {
		t.Errorf("VocabFromCodes(Codes()) differs: %v", err)
	}
	if _, err := VocabFromCodes([]int32{'a', 'a'}); err == nil {
		t.Error("VocabFromCodes with a duplicate: no error")
	}
}

func TestLoadText(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ok := write("ok.txt", []byte("café"))
	if got, err := LoadText(ok); err != nil || got != "café" {
		t.Errorf("LoadText = %q, %v", got, err)
	}
	for _, tc := range []struct{ path, want string }{
		{write("empty.txt", nil), "is empty"},
		{write("bin.txt", []byte("ab\x00cd")), "looks binary (NUL byte at offset 2)"},
		{write("latin1.txt", []byte("caf\xe9 au lait")), "not valid UTF-8 (invalid byte 0xe9 at offset 3)"},
		{filepath.Join(dir, "missing.txt"), "missing.txt"},
	} {
		if _, err := LoadText(tc.path); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("LoadText(%s) = %v, want an error saying %q", tc.path, err, tc.want)
		}
	}
}

func TestSampleReportWriteText(t *testing.T) {
	var b strings.Builder
	r := SampleReport{Prompt: "The ", Text: "light is"}
	if err := r.WriteText(&b); err != nil || b.String() != "The light is\n" {
		t.Fatalf("WriteText = %q, %v; want the prompt and the text on one line", b.String(), err)
	}
}
