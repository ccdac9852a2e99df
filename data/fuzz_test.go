package data

import (
	"bytes"
	"math"
	"testing"
)

func FuzzReadCSV(f *testing.F) {
	seeds := []string{
		"a,b,y\n1,2,3\n4,5,6\n",
		"\uFEFFa,b,y\r\n1,,NA\r\nnan,2,3\r\n",
		"x;y\n1.5;cat\n2;dog\n",
		"a,y\n1,10\n2,-1\n3,2.0\n",
		"\"a,1\",\"y\"\n\"1\n\",2\n",
		"a,a\n1,2\n",
		"0,1,2\n3,4,5\n",
		"a,y\n1e999,2\n",
		"a,b\n1,2,3\n",
		"",
		"\n",
		"a,\"b\n",
		"a,b,y\n1,2,3\n4,-1,6\n",
		"b,a,y\n1,0.5,3\n4,,6\n",
	}
	for i, s := range seeds {
		f.Add([]byte(s), i%2 == 0, uint8(i))
	}
	f.Fuzz(func(t *testing.T, in []byte, classification bool, opt uint8) {
		opts := CSVOptions{Classification: classification, MaxRows: int(opt >> 5)}
		if opt&16 != 0 {
			opts.Weight = "b" // a weight column, when the input has one
		}
		switch opt % 4 {
		case 1:
			opts.Comma = ';'
		case 2:
			opts.Target = "y"
		case 3:
			opts.Target = "a"
		}
		d, err := ReadCSV(bytes.NewReader(in), "fuzz.csv", opts)
		if err != nil {
			if d != nil {
				t.Fatal("non-nil Dataset with an error")
			}
			return
		}
		if d.Rows < 1 || d.Cols < 1 || len(d.X) != d.Rows*d.Cols || len(d.Y) != d.Rows || len(d.FeatureNames) != d.Cols {
			t.Fatalf("inconsistent shape: %d×%d, len X %d, len Y %d, %d names", d.Rows, d.Cols, len(d.X), len(d.Y), len(d.FeatureNames))
		}
		if opts.MaxRows > 0 && d.Rows > opts.MaxRows {
			t.Fatalf("%d rows, MaxRows %d", d.Rows, opts.MaxRows)
		}
		// Every value takes at least one byte (its delimiter or newline),
		// so memory stays proportional to the input.
		if len(d.X) > len(in) {
			t.Fatalf("%d values from %d bytes", len(d.X), len(in))
		}
		for _, v := range d.X {
			if math.IsInf(v, 0) {
				t.Fatal("infinite feature value")
			}
		}
		if opts.Weight != "" && len(d.Weights) != d.Rows {
			t.Fatalf("%d weights for %d rows", len(d.Weights), d.Rows)
		}
		for _, w := range d.Weights {
			if !(w >= 0) || math.IsInf(w, 0) {
				t.Fatalf("weight %v", w)
			}
		}
		k := d.NumClasses()
		for _, y := range d.Y {
			if math.IsNaN(y) || math.IsInf(y, 0) {
				t.Fatalf("target %v", y)
			}
			if classification && (y < 0 || int(y) >= k || y != math.Trunc(y)) {
				t.Fatalf("class %v outside 0..%d", y, k-1)
			}
		}
		if classification && d.Classes != nil && len(d.Classes) > d.Rows {
			t.Fatalf("%d classes from %d rows", len(d.Classes), d.Rows)
		}
	})
}

func FuzzReadIDX(f *testing.F) {
	img := idxFile(idxImagesMagic, []uint32{2, 2, 3}, []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})
	lbl := idxFile(idxLabelsMagic, []uint32{3}, []byte{1, 2, 3})
	f.Add(img)
	f.Add(lbl)
	f.Add(gzipBytes(f, img))
	f.Add(gzipBytes(f, lbl))
	f.Add(img[:len(img)-1])
	f.Add(idxFile(idxImagesMagic, []uint32{2048, 1024, 1024}, []byte{1}))
	f.Add(idxFile(idxLabelsMagic, []uint32{10_000_000}, nil))
	f.Add([]byte{0x1f, 0x8b})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, in []byte) {
		gz := len(in) >= 2 && in[0] == 0x1f && in[1] == 0x8b
		pix, n, rows, cols, err := ReadIDXImages(bytes.NewReader(in), "fuzz")
		if err == nil {
			if len(pix) != n*rows*cols || rows < 1 || cols < 1 {
				t.Fatalf("%d pixels for %d×%d×%d", len(pix), n, rows, cols)
			}
			if !gz && len(pix) != len(in)-16 {
				t.Fatalf("%d pixels from %d bytes", len(pix), len(in))
			}
		}
		labels, err := ReadIDXLabels(bytes.NewReader(in), "fuzz")
		if err == nil && !gz && len(labels) != len(in)-8 {
			t.Fatalf("%d labels from %d bytes", len(labels), len(in))
		}
	})
}
