package data

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// concatShards reads the n shards of path and joins their rows.
func concatShards(t testing.TB, path string, opts CSVOptions, n int) (*Dataset, error) {
	var all *Dataset
	for k := range n {
		d, err := LoadCSVShard(path, opts, k, n)
		if err != nil {
			return nil, err
		}
		if all == nil {
			all = d
			all.X, all.Y = slices.Clone(d.X), slices.Clone(d.Y)
			continue
		}
		if !slices.Equal(d.FeatureNames, all.FeatureNames) {
			t.Fatalf("shard %d has columns %q, shard 0 %q", k, d.FeatureNames, all.FeatureNames)
		}
		all.X = append(all.X, d.X...)
		all.Y = append(all.Y, d.Y...)
		all.Weights = append(all.Weights, d.Weights...)
		all.Rows += d.Rows
	}
	return all, nil
}

func sameValues(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return x == y || (math.IsNaN(x) && math.IsNaN(y)) })
}

// TestLoadCSVShard: the shards of a file, for any number of them (more
// than its lines included: empty shards), hold every row once, in order,
// as LoadCSV reads them; line endings LF or CRLF, quoted commas, missing
// values, a weight column.
func TestLoadCSVShard(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("a,\"b,c\",w,y\r\n")
	for i := range 41 {
		fmt.Fprintf(&b, "%d,%s,%d,%d\r\n", i*i*i, strings.Repeat("1", 1+i%7), 1+i%3, i%5)
		if i%6 == 0 {
			fmt.Fprintf(&b, "\"%d\",NaN,1,2\n", i)
		}
	}
	path := filepath.Join(dir, "d.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := CSVOptions{Weight: "w"}
	whole, err := LoadCSV(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 2, 3, 5, 8, 60, 200} {
		got, err := concatShards(t, path, opts, n)
		if err != nil {
			t.Fatalf("%d shards: %v", n, err)
		}
		if got.Rows != whole.Rows || !sameValues(got.X, whole.X) || !slices.Equal(got.Y, whole.Y) || !slices.Equal(got.Weights, whole.Weights) || !slices.Equal(got.FeatureNames, whole.FeatureNames) {
			t.Fatalf("%d shards: %d rows, want %d, or other values", n, got.Rows, whole.Rows)
		}
	}
	if _, err := LoadCSVShard(path, opts, 3, 3); err == nil {
		t.Error("shard 3 of 3: no error")
	}
}

// TestLoadCSVShardRefusals: a quoted field spanning lines is refused by
// the shard that holds it (naming the line), a FIFO or a folder by every
// shard.
func TestLoadCSVShardRefusals(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "q.csv")
	if err := os.WriteFile(path, []byte("a,y\n1,2\n\"3\n4\",5\n6,7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := concatShards(t, path, CSVOptions{}, 1)
	if err == nil || !strings.Contains(err.Error(), "line 3: a quoted field spans lines") {
		t.Fatalf("error %v, want one naming line 3 and the quoted field", err)
	}
	failed := 0
	for k := range 3 {
		if _, err := LoadCSVShard(path, CSVOptions{}, k, 3); err != nil {
			failed++
		}
	}
	if failed == 0 {
		t.Fatal("no shard of 3 refused the quoted line break")
	}
	if _, err := LoadCSVShard(dir, CSVOptions{}, 0, 1); err == nil || !strings.Contains(err.Error(), "regular file") {
		t.Fatalf("a folder: error %v", err)
	}
}

// FuzzLoadCSVShard: whatever the content, the shards either agree with the
// whole file's rows or one of them fails (a quoted line break, or what
// LoadCSV refuses too).
func FuzzLoadCSVShard(f *testing.F) {
	f.Add([]byte("a,b,y\n1,2,3\n4,5,6\n7,8,9\n"), uint8(2))
	f.Add([]byte("a,y\r\n\"1,5\",2\n3,4"), uint8(3))
	f.Add([]byte("a,y\n1,2\n\"3\n4\",5\n"), uint8(2))
	f.Fuzz(func(t *testing.T, content []byte, shards uint8) {
		n := 1 + int(shards%6)
		path := filepath.Join(t.TempDir(), "f.csv")
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := concatShards(t, path, CSVOptions{}, n)
		if err != nil {
			return
		}
		whole, err := LoadCSV(path, CSVOptions{})
		if err != nil {
			// A shard may read what the whole file does not (its rows
			// alone make other columns categorical, say) only when the
			// whole file fails.
			return
		}
		if got.Rows != whole.Rows || (whole.Categories == nil && got.Categories == nil && !sameValues(got.X, whole.X)) || !sameValues(got.Y, whole.Y) {
			t.Fatalf("%d shards: %d rows, the whole file %d, or other values", n, got.Rows, whole.Rows)
		}
	})
}

// TestShardRange: a line starting at a range's first byte is that range's
// (ranges of 10 bytes over lines of 10 bytes give a line each); one
// starting inside a range goes with it.
func TestShardRange(t *testing.T) {
	content := "y\n" + strings.Repeat("123456789\n", 4)
	r := strings.NewReader(content)
	for k := range 4 {
		h, s, e, err := ShardRange(r, int64(len(content)), k, 4)
		if err != nil || h != 2 || s != int64(2+10*k) || e != int64(12+10*k) {
			t.Fatalf("shard %d: header %d, bytes [%d, %d), %v; want 2, [%d, %d)", k, h, s, e, err, 2+10*k, 12+10*k)
		}
	}
	// Three ranges of 13 or 14 bytes: lines start at 2, 12, 22, 32; the
	// ranges at 2, 15, 28: lines 12 and 22... go to the range they start in.
	want := [][2]int64{{2, 22}, {22, 32}, {32, 42}}
	for k, w := range want {
		_, s, e, err := ShardRange(r, int64(len(content)), k, 3)
		if err != nil || s != w[0] || e != w[1] {
			t.Fatalf("shard %d of 3: bytes [%d, %d), %v; want [%d, %d)", k, s, e, err, w[0], w[1])
		}
	}
}
