package data

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// mnistSpellings are the file names LoadMNIST accepts for the training
// images and labels (findMNISTFile); FuzzLoadMNIST picks one by index.
var mnistSpellings = [][2]string{
	{"train-images-idx3-ubyte", "train-labels-idx1-ubyte"},
	{"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"},
	{"train-images.idx3-ubyte", "train-labels.idx1-ubyte"},
	{"train-images.idx3-ubyte.gz", "train-labels.idx1-ubyte.gz"},
}

// FuzzLoadMNIST writes a fuzzed images file and labels file as MNIST's
// training and test files (under one of the accepted spellings, gzipped
// or not) and loads the folder with LoadMNIST: nothing may panic; an
// error names a file of the folder or the folder; accepted data sets hold
// one label per image, pixels scaled into [0, 1] and labels that are the
// file's bytes, no more values than the files' bytes, and the names
// LoadMNIST documents.
func FuzzLoadMNIST(f *testing.F) {
	img := idxFile(idxImagesMagic, []uint32{3, 2, 2}, []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 255})
	lbl := idxFile(idxLabelsMagic, []uint32{3}, []byte{7, 0, 9})
	f.Add(img, lbl, uint8(0))
	f.Add(gzipBytes(f, img), gzipBytes(f, lbl), uint8(1))
	f.Add(img, gzipBytes(f, lbl), uint8(2))
	f.Add(img, idxFile(idxLabelsMagic, []uint32{2}, []byte{1, 2}), uint8(3))
	f.Add(img, idxFile(idxLabelsMagic, []uint32{3}, []byte{10, 200, 255}), uint8(0))
	f.Add(idxFile(idxImagesMagic, []uint32{0, 28, 28}, nil), idxFile(idxLabelsMagic, []uint32{0}, nil), uint8(0))
	f.Add(idxFile(idxImagesMagic, []uint32{1, 0, 5}, nil), idxFile(idxLabelsMagic, []uint32{1}, []byte{1}), uint8(0))
	f.Add(img[:10], lbl, uint8(0))
	f.Add([]byte{0x1f, 0x8b, 8}, lbl, uint8(1))
	f.Fuzz(func(t *testing.T, images, labels []byte, spelling uint8) {
		dir := t.TempDir()
		names := mnistSpellings[int(spelling)%len(mnistSpellings)]
		for _, prefix := range []string{"train", "t10k"} {
			for i, b := range [][]byte{images, labels} {
				name := strings.Replace(names[i], "train", prefix, 1)
				if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		gz := len(images) >= 2 && images[0] == 0x1f && images[1] == 0x8b
		train, test, err := LoadMNIST(dir)
		if err != nil {
			if train != nil || test != nil {
				t.Fatal("data sets with an error")
			}
			if !strings.Contains(err.Error(), dir) {
				t.Fatalf("error names no file of %s: %v", dir, err)
			}
			return
		}
		for _, c := range []struct {
			d    *Dataset
			name string
		}{{train, "mnist-train"}, {test, "mnist-test"}} {
			d := c.d
			switch {
			case d.Name != c.name || d.TargetName != "label" || d.Classes != nil:
				t.Fatalf("data set %q, target %q, classes %v", d.Name, d.TargetName, d.Classes)
			case d.Rows < 1 || d.Cols < 1 || len(d.X) != d.Rows*d.Cols || len(d.Y) != d.Rows || len(d.FeatureNames) != d.Cols:
				t.Fatalf("%s: %d×%d, len X %d, len Y %d, %d names", d.Name, d.Rows, d.Cols, len(d.X), len(d.Y), len(d.FeatureNames))
			case !gz && len(d.X) != len(images)-16:
				t.Fatalf("%s: %d pixels from a %d-byte file", d.Name, len(d.X), len(images))
			case d.FeatureNames[0] != "px0" || d.FeatureNames[d.Cols-1] != "px"+strconv.Itoa(d.Cols-1):
				t.Fatalf("%s: feature names %q … %q", d.Name, d.FeatureNames[0], d.FeatureNames[d.Cols-1])
			}
			for _, v := range d.X {
				if !(v >= 0 && v <= 1) {
					t.Fatalf("%s: pixel %v outside [0, 1]", d.Name, v)
				}
			}
			for _, y := range d.Y {
				if y < 0 || y > 255 || y != math.Trunc(y) {
					t.Fatalf("%s: label %v is not a byte", d.Name, y)
				}
			}
		}
	})
}
