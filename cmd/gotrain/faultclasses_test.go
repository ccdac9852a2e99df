package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// faultFixtures are the inputs the fault-class tests give the commands.
type faultFixtures struct {
	dir, model, predictCSV, record, dataset, corpus, trainCSV string
}

// newFaultFixtures writes a small model, CSV, SigMF record, signal data set
// and corpus.
func newFaultFixtures(t *testing.T) *faultFixtures {
	t.Helper()
	d := t.TempDir()
	f := &faultFixtures{dir: d, model: filepath.Join(d, "m.gtf"), predictCSV: filepath.Join(d, "in.csv"),
		record: filepath.Join(d, "rec"), dataset: filepath.Join(d, "set"), corpus: filepath.Join(d, "corpus.txt"),
		trainCSV: filepath.Join(d, "train.csv")}
	must := func(_, _ string, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(run(t, "forest", "train", "--dataset", "diabetes", "--trees", "5", "--save", f.model))
	csv := "bmi,age,sex,bp,s1,s2,s3,s4,s5,s6\n32.1,59,2,101,157,93.2,38,4,4.8598,87\n21.6,48,1,87,183,103.2,70,3,3.8918,69\n"
	if err := os.WriteFile(f.predictCSV, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.trainCSV, []byte("x,y\n1,2\n2,4\n3,6\n4,8\n5,10\n6,12\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	must(run(t, "signal", "synth", "--samples", "4096", "--out", f.record))
	must(run(t, "signal", "dataset", "--per-class", "8", "--samples", "4096", "--snr", "10:20:5", "--mods", "bpsk,fm", "--out", f.dataset))
	if err := os.WriteFile(f.corpus, []byte(strings.Repeat("abcdefghijklmnopqrstuvwxyz ", 8)), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// fileOutput is one flag of one command that writes one file.
type fileOutput struct {
	name string
	// args returns the command line with the output at out.
	args func(f *faultFixtures, out string) []string
	// input returns one of the command's inputs, for the input = output case.
	input func(f *faultFixtures) string
}

var fileOutputs = []fileOutput{
	{"signal synth --out", func(f *faultFixtures, out string) []string {
		return []string{"signal", "synth", "--samples", "4096", "--format", "cu8", "--out", out}
	}, nil},
	{"forest train --save", func(f *faultFixtures, out string) []string {
		return []string{"forest", "train", "--train", f.trainCSV, "--trees", "3", "--save", out}
	}, func(f *faultFixtures) string { return f.trainCSV }},
	{"forest predict --out", func(f *faultFixtures, out string) []string {
		return []string{"forest", "predict", "--model", f.model, "--data", f.predictCSV, "--out", out}
	}, func(f *faultFixtures) string { return f.predictCSV }},
	{"forest explain --out", func(f *faultFixtures, out string) []string {
		return []string{"forest", "explain", "--model", f.model, "--data", f.predictCSV, "--out", out}
	}, func(f *faultFixtures) string { return f.predictCSV }},
	{"signal features --csv", func(f *faultFixtures, out string) []string {
		return []string{"signal", "features", "--in", f.record + ".sigmf-meta", "--csv", out}
	}, func(f *faultFixtures) string { return f.record + ".sigmf-data" }},
	{"signal features --spectrogram", func(f *faultFixtures, out string) []string {
		return []string{"signal", "features", "--in", f.record + ".sigmf-meta", "--spectrogram", out}
	}, func(f *faultFixtures) string { return f.record + ".sigmf-meta" }},
	{"signal classify train --out", func(f *faultFixtures, out string) []string {
		return []string{"signal", "classify", "train", "--data", f.dataset, "--test-fraction", "0.25", "--trees", "5", "--out", out}
	}, func(f *faultFixtures) string { return filepath.Join(f.dataset, "features.csv") }},
	{"signal classify train --png-confusion", func(f *faultFixtures, out string) []string {
		return []string{"signal", "classify", "train", "--data", f.dataset, "--test-fraction", "0.25", "--trees", "5", "--png-confusion", out}
	}, func(f *faultFixtures) string { return filepath.Join(f.dataset, "features.csv") }},
	{"lm lstm train --metrics-log", func(f *faultFixtures, out string) []string {
		return []string{"--device", "go", "lm", "lstm", "train", "--data", f.corpus, "--hidden-size", "8", "--layers", "1",
			"--seq-length", "4", "--batch-size", "8", "--steps", "2", "--no-checkpoint", "--progress", "off", "--metrics-log", out}
	}, func(f *faultFixtures) string { return f.corpus }},
	{"moe train --metrics-log", func(f *faultFixtures, out string) []string {
		return []string{"--device", "go", "moe", "train", "--dataset", "digits", "--out", filepath.Join(f.dir, "moe"), "--steps", "2",
			"--hidden", "8", "--experts", "2", "--no-checkpoint", "--progress", "off", "--metrics-log", out}
	}, nil},
	{"lm transformer train --metrics-log (two phases)", func(f *faultFixtures, out string) []string {
		return append([]string{"--device", "go", "lm", "transformer", "train", "--pretrain-data", f.corpus, "--instruction-data",
			filepath.Join("..", "..", "models", "transformer", "testdata", "instructions.jsonl"), "--steps", "2", "--no-checkpoint",
			"--metrics-log", out}, transformerTiny...)
	}, func(f *faultFixtures) string { return f.corpus }},
}

// TestOutputsToSpecialFiles applies the special-file fault class to every
// flag that names one output file: a FIFO is written through (a reader
// gets the bytes, the FIFO stays), a character device stays one, a
// directory is refused, and an output that is one of the command's inputs
// is refused with the input unchanged.
func TestOutputsToSpecialFiles(t *testing.T) {
	f := newFaultFixtures(t)
	for _, o := range fileOutputs {
		t.Run(o.name, func(t *testing.T) {
			dir := t.TempDir()
			// A FIFO is written through.
			fifo := filepath.Join(dir, "fifo")
			if err := syscall.Mkfifo(fifo, 0o644); err != nil {
				t.Fatal(err)
			}
			got := make(chan int, 1)
			go func() {
				r, err := os.Open(fifo)
				if err != nil {
					got <- -1
					return
				}
				n, _ := io.Copy(io.Discard, r)
				r.Close()
				got <- int(n)
			}()
			if _, _, err := run(t, o.args(f, fifo)...); err != nil {
				t.Errorf("to a FIFO: %v", err)
				// Unblock the reader.
				if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
					w.Close()
				}
			}
			select {
			case n := <-got:
				if n <= 0 {
					t.Errorf("the FIFO's reader got %d bytes", n)
				}
			case <-time.After(30 * time.Second):
				t.Error("the command ended without opening the FIFO it was given")
				if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					w.Close() // unblock the reader
				}
			}
			if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
				t.Errorf("the FIFO was replaced: %v %v", fi.Mode(), err)
			}
			// A character device stays one (a private null device, when
			// this process may make one; else /dev/null is only read).
			null := filepath.Join(dir, "null")
			if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, int(mkdev(1, 3))); err != nil {
				null = ""
			}
			if null != "" {
				if _, _, err := run(t, o.args(f, null)...); err != nil {
					t.Errorf("to a character device: %v", err)
				}
				if fi, err := os.Lstat(null); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
					t.Errorf("the character device was replaced: %v %v", fi.Mode(), err)
				}
			}
			// "-" is standard output: the file's bytes go there (the
			// report to standard error), the same as in a regular file
			// (a metrics log has times in it: its first line is checked).
			regular := filepath.Join(dir, "regular")
			if _, _, err := run(t, o.args(f, regular)...); err != nil {
				t.Fatalf("to a regular file: %v", err)
			}
			want, _ := os.ReadFile(regular)
			stdout, _, err := run(t, o.args(f, "-")...)
			if strings.Contains(o.name, "metrics-log") {
				// Times differ: at least the file's records (the
				// transformer's second phase goes to the same stream, not to
				// a file of its own), each a whole JSON line with its step.
				lines := strings.Split(strings.TrimSpace(stdout), "\n")
				if n := strings.Count(string(want), "\n"); err != nil || len(lines) < n || n == 0 {
					t.Errorf("to -: %v; %d lines on standard output, the file has %d", err, len(lines), n)
				}
				for _, l := range lines {
					if !json.Valid([]byte(l)) || !strings.Contains(l, `"step"`) {
						t.Errorf("to -: line %q is not a metrics record", l)
					}
				}
			} else if err != nil || len(want) == 0 || stdout != string(want) {
				t.Errorf("to -: %v; standard output differs from the file (%d bytes, the file %d)", err, len(stdout), len(want))
			}
			// A directory is refused.
			if _, _, err := run(t, o.args(f, dir)...); err == nil || !strings.Contains(err.Error(), "directory") {
				t.Errorf("to a directory: %v; want a refusal naming a directory", err)
			}
			// An input is refused and stays as it was.
			if o.input != nil {
				in := o.input(f)
				before, err := os.ReadFile(in)
				if err != nil {
					t.Fatal(err)
				}
				_, _, err = run(t, o.args(f, in)...)
				if err == nil || !strings.Contains(err.Error(), "refusing to overwrite") {
					t.Errorf("to its input %s: %v; want a refusal", in, err)
				}
				if after, _ := os.ReadFile(in); !bytes.Equal(before, after) {
					t.Errorf("the input %s changed", in)
				}
			}
		})
	}
}

// mkdev returns the device number of major and minor (Linux encoding).
func mkdev(major, minor uint32) uint64 {
	return uint64(major&0xfff)<<8 | uint64(minor&0xff) | uint64(minor&^0xff)<<12 | uint64(major&^0xfff)<<32
}

// TestBadSizesRefused applies the bad-size fault class to every command
// that sizes something from a flag: a negative, zero or absurd size is an
// error naming the flag and its range, before anything is allocated (a
// panic or an out-of-memory would end the test binary).
func TestBadSizesRefused(t *testing.T) {
	f := newFaultFixtures(t)
	out := filepath.Join(t.TempDir(), "out")
	lstm := func(extra ...string) []string {
		return append([]string{"--device", "go", "lm", "lstm", "train", "--data", f.corpus, "--no-checkpoint", "--steps", "1"}, extra...)
	}
	moe := func(extra ...string) []string {
		return append([]string{"--device", "go", "moe", "train", "--dataset", "digits", "--out", out, "--steps", "1"}, extra...)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"signal", "synth", "--samples", "-5", "--out", out}, "--samples -5: want 1 to"},
		{[]string{"signal", "synth", "--samples", "1000000000000", "--out", out}, "--samples 1000000000000: want 1 to"},
		{[]string{"signal", "synth", "--snr", "-1e308", "--out", out}, "--snr -1e+308: want"},
		{[]string{"signal", "synth", "--rate", "0", "--samples", "64", "--out", out}, "--rate"},
		{[]string{"signal", "bench", "--samples", "-3"}, "--samples"},
		{[]string{"signal", "bench", "--runs", "0"}, "--runs"},
		{[]string{"signal", "dataset", "--per-class", "-1", "--out", out}, "per class -1"},
		{[]string{"signal", "dataset", "--samples", "1000000000000", "--out", out}, "1000000000000 samples"},
		{[]string{"signal", "features", "--in", f.record + ".sigmf-meta", "--impedance", "-1"}, "mpedance"},
		{[]string{"forest", "train", "--dataset", "diabetes", "--trees", "0"}, "--trees 0: want 1 to"},
		{[]string{"forest", "train", "--dataset", "diabetes", "--min-samples-leaf", "0"}, "--min-samples-leaf 0: want >= 1"},
		{[]string{"forest", "train", "--dataset", "diabetes", "--bins", "1"}, "--bins 1: want 2 to 256"},
		{[]string{"forest", "train", "--dataset", "diabetes", "--permutation-importance", "-1"}, "--permutation-importance -1: want >= 0"},
		{[]string{"forest", "train", "--dataset", "diabetes", "--threads", "-1"}, "--threads -1: want 0"},
		{[]string{"forest", "predict", "--model", f.model, "--data", f.predictCSV, "--batch-rows", "0"}, "--batch-rows 0"},
		{[]string{"signal", "classify", "train", "--data", f.dataset, "--test-fraction", "0.25", "--trees", "0"}, "--trees 0: want 1 to"},
		{lstm("--hidden-size", "0"), "--hidden-size 0"},
		{lstm("--hidden-size", "1000000000"), "--hidden-size"},
		{lstm("--seq-length", "0"), "length 0"},
		{lstm("--batch-size", "0"), "--batch-size \"0\""},
		{[]string{"--device", "go", "lm", "lstm", "sample", "--model", filepath.Join("..", "..", "models", "charlstm", "testdata", "lstm-v1.gtc"), "--length", "1000000000000"}, "--length 1000000000000"},
		{[]string{"--device", "go", "lm", "transformer", "train", "--pretrain-data", f.corpus, "--width", "0", "--no-checkpoint"}, "--width 0"},
		{moe("--capacity-factor", "-1"), "--capacity-factor -1: want"},
		{moe("--experts", "100000"), "--experts"},
		{[]string{"bench", "--repeats", "0"}, "repeats"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, _, err := run(t, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v; want one containing %q", err, tc.want)
			}
		})
	}
}

// endlessFIFO makes a FIFO at path whose writer sends chunk (after head)
// over and over until the reader closes it or stop is closed. The writer
// never blocks a command that refuses the FIFO without opening it.
func endlessFIFO(t *testing.T, path string, head, chunk []byte) (stop func()) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var w *os.File
		for w == nil {
			select {
			case <-done:
				return
			default:
			}
			var err error
			if w, err = os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err != nil {
				w = nil
				time.Sleep(5 * time.Millisecond)
			}
		}
		defer w.Close()
		// Blocking writes from here: the reader is there.
		fd := int(w.Fd())
		_ = syscall.SetNonblock(fd, false)
		if _, err := w.Write(head); err != nil {
			return
		}
		for {
			select {
			case <-done:
				return
			default:
			}
			if _, err := w.Write(chunk); err != nil {
				return // the reader is gone
			}
		}
	}()
	return func() {
		close(done)
		select {
		case <-finished:
		case <-time.After(10 * time.Second):
			t.Error("the FIFO's writer did not stop")
		}
	}
}

// TestEndlessInputsRefused applies the endless-input fault class to every
// flag that names a file a command reads: an input that never ends (a
// FIFO fed forever) is refused with an error, never read until memory runs
// out; data files at the --max-input-mib cap (1 MiB here), which the error
// names, and the others (model files, checkpoints, IQ records) by refusing
// what is not a regular file or by their own bounds.
func TestEndlessInputsRefused(t *testing.T) {
	f := newFaultFixtures(t)
	csvRows := []byte(strings.Repeat("1,2,3,4,5,6,7,8,9,10\n", 100))
	idxHead := []byte{0, 0, 8, 3, 0, 0x0f, 0x42, 0x40, 0, 0, 0, 28, 0, 0, 0, 28} // 10^6 images of 28x28
	tcorpus, _ := transformerFiles(t)
	for _, tc := range []struct {
		name string
		// file is the FIFO's name in a fresh folder; head and chunk feed it.
		file        string
		head, chunk []byte
		args        func(fifo string) []string
		want        string
	}{
		{"forest train --train", "train.csv", []byte("a,b,c,d,e,f,g,h,i,y\n"), csvRows,
			func(p string) []string { return []string{"forest", "train", "--train", p} }, "1 MiB limit; raise it with --max-input-mib"},
		{"forest train --test", "test.csv", []byte("x,y\n"), []byte(strings.Repeat("1,2\n", 500)),
			func(p string) []string { return []string{"forest", "train", "--train", f.trainCSV, "--test", p} }, "1 MiB limit; raise it with --max-input-mib"},
		{"forest predict --data", "in.csv", []byte("bmi,age,sex,bp,s1,s2,s3,s4,s5,s6\n"), csvRows,
			func(p string) []string { return []string{"forest", "predict", "--model", f.model, "--data", p} }, "1 MiB limit; raise it with --max-input-mib"},
		{"forest predict --model", "m.gtf", nil, csvRows,
			func(p string) []string { return []string{"forest", "predict", "--model", p, "--data", f.predictCSV} }, "not a gotrain forest model"},
		{"lm lstm train --data", "corpus.txt", nil, []byte(strings.Repeat("abc ", 256)),
			func(p string) []string {
				return []string{"--device", "go", "lm", "lstm", "train", "--data", p, "--no-checkpoint", "--steps", "1"}
			}, "1 MiB limit; raise it with --max-input-mib"},
		{"lm lstm sample --model", "ckpt.gtc", nil, csvRows,
			func(p string) []string { return []string{"--device", "go", "lm", "lstm", "sample", "--model", p} }, "not a regular file"},
		{"lm transformer train --pretrain-data", "corpus.txt", nil, []byte(strings.Repeat("abc ", 256)),
			func(p string) []string {
				return []string{"--device", "go", "lm", "transformer", "train", "--pretrain-data", p, "--no-checkpoint", "--steps", "1"}
			}, "1 MiB limit; raise it with --max-input-mib"},
		{"lm transformer train --instruction-data", "inst.jsonl", nil, []byte(strings.Repeat(`{"prompt": "a", "response": "b"}`+"\n", 64)),
			func(p string) []string {
				return []string{"--device", "go", "lm", "transformer", "train", "--pretrain-data", tcorpus, "--instruction-data", p,
					"--no-checkpoint", "--steps", "1"}
			}, "1 MiB limit; raise it with --max-input-mib"},
		{"moe train --data-dir", "train-images-idx3-ubyte", idxHead, make([]byte, 4096),
			func(p string) []string {
				return []string{"--device", "go", "moe", "train", "--dataset", "mnist", "--data-dir", filepath.Dir(p), "--out", t.TempDir(), "--steps", "1"}
			}, "--max-input-mib"},
		{"signal classify train --data", "features.csv", []byte("label,snr_db_true,x\n"), []byte(strings.Repeat("bpsk,10,1\n", 100)),
			func(p string) []string {
				return []string{"signal", "classify", "train", "--data", filepath.Dir(p), "--test-fraction", "0.25"}
			}, "--max-input-mib"},
		{"signal features --in", "rec.cu8", nil, make([]byte, 4096),
			func(p string) []string { return []string{"signal", "features", "--in", p, "--rate", "1e6"} }, "not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fifo := filepath.Join(t.TempDir(), tc.file)
			if tc.file == "train-images-idx3-ubyte" {
				// The other MNIST files exist; the images never end.
				for _, n := range []string{"train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"} {
					if err := os.WriteFile(filepath.Join(filepath.Dir(fifo), n), []byte{0, 0, 8, 1, 0, 0, 0, 0}, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			stop := endlessFIFO(t, fifo, tc.head, tc.chunk)
			done := make(chan error, 1)
			go func() {
				_, _, err := run(t, append([]string{"--max-input-mib", "1"}, tc.args(fifo)...)...)
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("err = %v; want a refusal containing %q", err, tc.want)
				}
			case <-time.After(60 * time.Second):
				t.Fatal("still reading the endless input after a minute")
			}
			stop()
		})
	}
}
