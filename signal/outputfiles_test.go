//go:build unix

package signal

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSynthesizeFileWritesThroughFIFO checks that `signal synth --format
// cu8 --out PIPE` streams the samples into a named pipe and leaves the pipe.
func TestSynthesizeFileWritesThroughFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x")
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	o := SynthOptions{Mod: QPSK, SampleRate: 1e5, Samples: 50_000, SNRdB: 10, Seed: 3}
	x, err := Synthesize(o)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := Encode(nil, x, CU8) // 100 kB: more than a pipe holds
	// Read-write: the pipe has a reader at once; the deadline ends the
	// test if the pipe was replaced by a file.
	r, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.SetReadDeadline(time.Now().Add(10 * time.Second))
	got := make([]byte, len(want))
	read := make(chan error, 1)
	go func() { _, err := io.ReadFull(r, got); read <- err }()
	if _, err := SynthesizeFile(path, "cu8", "", o); err != nil {
		t.Fatal(err)
	}
	if err := <-read; err != nil {
		t.Fatalf("reading the pipe: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Error("the pipe's reader got other bytes than the record's")
	}
	if st, err := os.Lstat(path); err != nil || st.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("after the write: %v, %v; want the FIFO kept", st.Mode(), err)
	}
}

// TestSynthesizeFileKeepsCharDevice checks that `signal synth --out
// /dev/null` (or a node made with `mknod x c 1 3`) writes through the
// device and leaves it a character device.
func TestSynthesizeFileKeepsCharDevice(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x")
	if err := syscall.Mknod(path, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		if os.Geteuid() == 0 {
			t.Skipf("mknod: %v", err)
		}
		path = "/dev/null" // only root could replace it
	}
	o := SynthOptions{Mod: BPSK, SampleRate: 1e4, Samples: 1000, SNRdB: 10, Seed: 1}
	for _, format := range []string{"cu8", "cf32_le"} {
		if _, err := SynthesizeFile(path, format, "", o); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if st, err := os.Lstat(path); err != nil || st.Mode()&fs.ModeCharDevice == 0 {
			t.Fatalf("%s: after the write %v, %v; want a character device", format, st.Mode(), err)
		}
	}
}

// TestWriteSigMFIsOneCommit checks that a SigMF pair is replaced all at
// once: when one of the two files cannot be written, neither changes.
func TestWriteSigMFIsOneCommit(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "rec")
	rec := func(seed uint64) *Recording {
		x, err := Synthesize(SynthOptions{Mod: QPSK, SampleRate: 1e4, Samples: 300, SNRdB: 10, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		return &Recording{Meta: Meta{Datatype: CF32, SampleRate: 1e4, Label: "qpsk"}, Samples: x}
	}
	if err := WriteSigMF(base, rec(1)); err != nil {
		t.Fatal(err)
	}
	meta, data := SigMFPaths(base)
	oldData, _ := os.ReadFile(data)
	// The meta file's name now holds a folder: the pair cannot be written.
	if err := os.Rename(meta, meta+".saved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(meta, 0o755); err != nil {
		t.Fatal(err)
	}
	err := WriteSigMF(base, rec(2))
	if b, _ := os.ReadFile(data); !bytes.Equal(b, oldData) {
		t.Error("the data file changed although the meta file could not be written (half a pair)")
	}
	if err == nil || !strings.Contains(err.Error(), meta) || !strings.Contains(err.Error(), "directory") {
		t.Errorf("WriteSigMF with a folder as the meta file: %v, want an error naming it", err)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}
