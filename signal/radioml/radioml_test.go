package radioml

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/signal"
)

// fixtureI and fixtureQ are the sample values scripts/make_radioml_fixture.py
// writes: exact in float32.
func fixtureI(n, i int) float32 { return float32((n*1031+i*7)%4096-2048) / 1024 }
func fixtureQ(n, i int) float32 { return float32((n*517+i*13)%4096-2048) / 2048 }

// checkBatch checks records [lo, hi) of a fixture of snrs per class.
func checkBatch(t *testing.T, name string, b *Batch, lo, hi int, snrs []int) {
	t.Helper()
	if len(b.Class) != hi-lo || len(b.SNR) != hi-lo || len(b.IQ) != (hi-lo)*b.FrameLen {
		t.Fatalf("%s [%d, %d): %d classes, %d SNRs, %d samples", name, lo, hi, len(b.Class), len(b.SNR), len(b.IQ))
	}
	for r := range hi - lo {
		n := lo + r
		if b.Class[r] != n/len(snrs) || b.SNR[r] != snrs[n%len(snrs)] {
			t.Errorf("%s record %d: class %d SNR %d, want %d and %d", name, n, b.Class[r], b.SNR[r], n/len(snrs), snrs[n%len(snrs)])
		}
		for i, v := range b.Record(r) {
			if real(v) != fixtureI(n, i) || imag(v) != fixtureQ(n, i) {
				t.Fatalf("%s record %d sample %d: %v, want (%v, %v)", name, n, i, v, fixtureI(n, i), fixtureQ(n, i))
			}
		}
	}
}

func openFixture(t *testing.T, name string) *File {
	t.Helper()
	f, err := Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestReadWhole reads the h5py-default file (superblock 0, symbol table
// root group, contiguous datasets) and the libver="latest" ones
// (superblock 3, version 2 object headers, link messages; contiguous, and
// one gzip-compressed chunk per dataset) and one after a user block,
// whole and in pieces, and gets back every value the script wrote.
func TestReadWhole(t *testing.T) {
	for _, c := range []struct {
		file     string
		n, frame int
		snrs     []int
	}{{"small.hdf5", 48, 1024, []int{-20, 30}}, {"latest.hdf5", 2, 1024, []int{10}},
		{"latest_single.hdf5", 2, 1024, []int{10}}, {"userblock.hdf5", 2, 16, []int{10}}} {
		f := openFixture(t, c.file)
		if f.N != c.n || f.FrameLen != c.frame {
			t.Fatalf("%s: N %d, frame %d: want %d and %d", c.file, f.N, f.FrameLen, c.n, c.frame)
		}
		if c.file == "latest_single.hdf5" && !(f.x.single && len(f.x.filters) == 2) {
			t.Fatalf("%s: X single chunk %v, filters %v: want one filtered chunk", c.file, f.x.single, f.x.filters)
		}
		for _, r := range [][2]int{{0, f.N}, {1, 2}, {f.N - 1, f.N}, {f.N / 2, f.N}, {0, 0}} {
			b, err := f.Read(r[0], r[1])
			if err != nil {
				t.Fatalf("%s %v: %v", c.file, r, err)
			}
			checkBatch(t, c.file, b, r[0], r[1], c.snrs)
		}
	}
}

// TestReadChunkedGzip reads the chunked file (5-record chunks, the last
// one partial; shuffle and gzip) in ranges that start and end inside
// chunks and across them.
func TestReadChunkedGzip(t *testing.T) {
	f := openFixture(t, "chunked_gzip.hdf5")
	if f.N != 24 || len(f.x.filters) != 2 || f.x.layout != 2 {
		t.Fatalf("N %d, X layout %d, filters %v: want 24 chunked records through shuffle and deflate", f.N, f.x.layout, f.x.filters)
	}
	for _, r := range [][2]int{{0, 24}, {3, 11}, {10, 11}, {20, 24}, {4, 5}, {5, 10}} {
		b, err := f.Read(r[0], r[1])
		if err != nil {
			t.Fatalf("%v: %v", r, err)
		}
		checkBatch(t, "chunked_gzip.hdf5", b, r[0], r[1], []int{0})
	}
}

// TestRefused checks that what the reader does not handle, and files not
// of the layout, are errors naming the file, the dataset and the reason.
func TestRefused(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{"fletcher32.hdf5", "dataset X: fletcher32 (filter 3) is not supported"},
		{"latest_chunked.hdf5", "dataset X: chunk index type 3 (fixed array) is not supported"},
		{"bad_shape.hdf5", "dataset X: shape [2 16 3]: want N×L×2"},
		{"no_z.hdf5", "no dataset Z in the root group"},
		{"bad_z.hdf5", "dataset Z: shape [2 2]: want 2×1"},
	} {
		path := filepath.Join("testdata", c.file)
		_, err := Open(path)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming the file and %q", c.file, err, c.want)
		}
	}
	f := openFixture(t, "not_onehot.hdf5")
	if _, err := f.Read(0, 1); err != nil {
		t.Errorf("not_onehot.hdf5 record 0: %v", err)
	}
	if _, err := f.Read(0, 2); err == nil || !strings.Contains(err.Error(), "dataset Y: record 1 has classes 1 and 5") {
		t.Errorf("not_onehot.hdf5: error %v, want record 1's two classes", err)
	}
	for _, r := range [][2]int{{-1, 1}, {2, 1}, {0, 3}} {
		if _, err := f.Read(r[0], r[1]); err == nil || !strings.Contains(err.Error(), "want 0 ≤ lo ≤ hi ≤ 2") {
			t.Errorf("Read(%d, %d): error %v", r[0], r[1], err)
		}
	}
}

// TestTruncated checks that a file cut short anywhere, before or after it
// was opened, is an error, not a panic or a short read taken for data.
func TestTruncated(t *testing.T) {
	full, err := os.ReadFile(filepath.Join("testdata", "small.hdf5"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, n := range []int{0, 7, 100, 700, 1500, 3000, 10000, len(full) / 2, len(full) - 1} {
		path := filepath.Join(dir, "cut.hdf5")
		if err := os.WriteFile(path, full[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := Open(path)
		if err == nil {
			_, err = f.Read(0, f.N)
			f.Close()
		}
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("cut to %d bytes: error %v, want one naming the file", n, err)
		}
	}
	// A file cut short after it was opened: the read comes up short.
	path := filepath.Join(dir, "shrinks.hdf5")
	if err := os.WriteFile(path, full, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.Truncate(path, int64(len(full)/2)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Read(40, 48); err == nil || !strings.Contains(err.Error(), "dataset X: unexpected EOF") {
		t.Errorf("file cut after opening: error %v, want X's short read", err)
	}
}

// TestHugeSizes checks that sizes read from a file are checked against
// the file before anything is allocated for them: a root object header
// that claims 4 GiB of messages is refused without allocating them.
func TestHugeSizes(t *testing.T) {
	full, err := os.ReadFile(filepath.Join("testdata", "small.hdf5"))
	if err != nil {
		t.Fatal(err)
	}
	h, err := openH5(bytes.NewReader(full), int64(len(full)))
	if err != nil {
		t.Fatal(err)
	}
	// A version 1 object header: version, reserved, message count,
	// reference count, then the 4-byte size of its messages.
	at := h.abs(h.root) + 8
	binary.LittleEndian.PutUint32(full[at:], 0xfffffff0)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = open(bytes.NewReader(full), int64(len(full)), "huge.hdf5")
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "run past the end of the file") {
		t.Errorf("error %v, want the header's size refused", err)
	}
	if d := after.TotalAlloc - before.TotalAlloc; d > 64<<20 {
		t.Errorf("allocated %d bytes for a refused header", d)
	}
}

// TestClasses checks the class list: 24 names in the data set's order,
// each the package signal modulation of the same name in lower case.
func TestClasses(t *testing.T) {
	want := "OOK 4ASK 8ASK BPSK QPSK 8PSK 16PSK 32PSK 16APSK 32APSK 64APSK 128APSK 16QAM 32QAM 64QAM 128QAM 256QAM " +
		"AM-SSB-WC AM-SSB-SC AM-DSB-WC AM-DSB-SC FM GMSK OQPSK"
	if got := strings.Join(Classes[:], " "); got != want {
		t.Errorf("Classes = %s, want %s", got, want)
	}
	for c := range Classes {
		m, err := signal.ParseModulation(string(Modulation(c)))
		if err != nil || m != Modulation(c) {
			t.Errorf("class %d %s: modulation %q, %v", c, Classes[c], Modulation(c), err)
		}
	}
	if Modulation(-1) != "" || Modulation(24) != "" {
		t.Errorf("Modulation out of range: %q, %q", Modulation(-1), Modulation(24))
	}
}
