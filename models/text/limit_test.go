package text

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestLoadTextRefusesCorpusBeyondCap checks that a corpus larger than the
// cap (the 1 GiB default, as a sparse file, or a given one) is refused by
// its size before it is read, with an error naming it and the cap.
func TestLoadTextRefusesCorpusBeyondCap(t *testing.T) {
	p := filepath.Join(t.TempDir(), "corpus.txt")
	if err := os.WriteFile(p, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := LoadTextMax(p, 5); err != nil || s != "hello" {
		t.Errorf("5 bytes under a cap of 5: %q, %v", s, err)
	}
	if _, err := LoadTextMax(p, 4); !errors.Is(err, ErrTooLarge) || err.Error() != "text: corpus "+p+" is larger than the 4 bytes limit; raise it with maxBytes" {
		t.Errorf("5 bytes under a cap of 4: %v", err)
	}
	if _, err := LoadTextMax(p, -1); err == nil || !strings.Contains(err.Error(), "maxBytes -1") {
		t.Errorf("negative cap: %v", err)
	}
	if err := os.Truncate(p, DefaultMaxBytes+1); err != nil {
		t.Skipf("no sparse file: %v", err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := LoadText(p)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "larger than the 1 GiB limit") {
		t.Errorf("1 GiB + 1 byte: %v", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Errorf("%d bytes allocated to refuse it", n)
	}
}

// TestWindowsRefusesTooManyValuesBeforeAllocating checks that overlapping
// windows that would repeat the text into more than MaxWindowValues ids
// are refused, naming the limit, before they are allocated.
func TestWindowsRefusesTooManyValuesBeforeAllocating(t *testing.T) {
	ids := make([]int, 200_000)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, _, err := Windows(ids, 100_000, 1) // 100001 windows of 100000
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "MaxWindowValues") {
		t.Errorf("10^10 values: %v", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Errorf("%d bytes allocated before the error", n)
	}
	if _, _, n, err := Windows(ids[:1000], 10, 3); err != nil || n != 330 {
		t.Errorf("small windows: %d, %v", n, err)
	}
}

// TestVocabRefusesInvalidRunes checks that a vocabulary (from a
// checkpoint's codes) with a code that is not a Unicode character is
// refused: text could never hold it, and it would decode as U+FFFD, which
// does not encode back.
func TestVocabRefusesInvalidRunes(t *testing.T) {
	for _, c := range []int32{-1, 0xD800, 0xDFFF, 0x110000} {
		if _, err := VocabFromCodes([]int32{'a', c}); err == nil || !strings.Contains(err.Error(), "not a Unicode character") {
			t.Errorf("code %#x: %v", c, err)
		}
	}
	v, err := VocabFromCodes([]int32{'a', 0xFFFD, 0x10FFFF})
	if err != nil {
		t.Fatal(err)
	}
	s, err := v.Decode([]int{0, 1, 2})
	if err != nil {
		t.Fatal(err)
	}
	if ids, err := v.Encode(s); err != nil || len(ids) != 3 {
		t.Errorf("decode then encode: %v, %v", ids, err)
	}
}
