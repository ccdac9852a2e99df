package forest

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"testing"
)

// FuzzLoad checks that Load never panics, agrees with itself whether or not
// it knows the input's size, and that whatever it accepts saves, loads back
// identically and predicts without panicking. Each input is also tried with
// its last four bytes replaced by the right checksum, so that the fuzzer gets
// past the checksum to the structural checks.
func FuzzLoad(f *testing.F) {
	for _, task := range []Task{Regression, Classification} {
		good := saveBytes(f, tinyForest(f, task))
		hdr, _ := splitModel(f, good)
		treesAt := len(modelMagic) + 12 + len(hdr)
		f.Add(good)
		f.Add(good[:len(good)/2])
		f.Add(good[:treesAt])
		for _, at := range []int{3, len(modelMagic), len(modelMagic) + 4, len(modelMagic) + 20, treesAt + 1, treesAt + 17, len(good) - 1} {
			c := slices.Clone(good)
			c[at] ^= 0x41
			f.Add(c)
		}
		f.Add(append(slices.Clone(good), good...))
	}
	// A categorical forest (format 2: dictionaries and category sets).
	cat := saveBytes(f, fitOrFail(f, catData(200, 5, 3, true), Options{Task: Classification, Trees: 2, MaxDepth: 3, Seed: 1}))
	f.Add(cat)
	for _, at := range []int{len(cat) - 40, len(cat) - 100, len(cat) / 2} {
		c := slices.Clone(cat)
		c[at] ^= 0x41
		f.Add(c)
	}
	f.Add([]byte(modelMagic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		checkLoad(t, b)
		if len(b) >= 4 {
			checkLoad(t, fixChecksum(slices.Clone(b)))
		}
	})
}

func checkLoad(t *testing.T, b []byte) {
	f, err := Load(bytes.NewReader(b))
	g, err2 := Load(unsized{bytes.NewReader(b)})
	if (err == nil) != (err2 == nil) {
		t.Fatalf("sized and unsized loads disagree: %v / %v", err, err2)
	}
	if err != nil {
		if !errors.Is(err, ErrInvalidModel) || !errors.Is(err2, ErrInvalidModel) {
			t.Fatalf("errors do not wrap ErrInvalidModel: %v / %v", err, err2)
		}
		return
	}
	if d := forestsEqual(f, g); d != "" {
		t.Fatalf("sized and unsized loads differ: %s", d)
	}
	var buf bytes.Buffer
	if err := f.Save(&buf); err != nil {
		t.Fatalf("a loaded forest does not save: %v", err)
	}
	h, err := Load(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("a re-saved forest does not load: %v", err)
	}
	if d := forestsEqual(f, h); d != "" {
		t.Fatalf("re-saved forest differs: %s", d)
	}
	if f.NumFeatures > 1<<12 {
		return
	}
	p := f.NumFeatures
	x := make([]float64, 4*p)
	for j := 0; j < p; j++ {
		x[p+j] = math.NaN()
		x[2*p+j] = 1e300
		x[3*p+j] = -1e300
	}
	if _, err := f.Predict(x, 4); err != nil {
		t.Fatal(err)
	}
	if _, err := f.PredictValues(x, 4); err != nil {
		t.Fatal(err)
	}
}

// FuzzModelHeader fuzzes the JSON header of a small valid model, keeping
// its trees and fixing the checksum, to explore the header's checks.
func FuzzModelHeader(f *testing.F) {
	good := saveBytes(f, tinyForest(f, Classification))
	hdr, trees := splitModel(f, good)
	f.Add(slices.Clone(hdr))
	reg := saveBytes(f, tinyForest(f, Regression))
	rh, _ := splitModel(f, reg)
	f.Add(slices.Clone(rh))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, h []byte) {
		for v := uint32(1); v <= modelVersion; v++ {
			checkLoad(t, buildModel(v, uint64(len(h)), h, trees))
		}
	})
}

// FuzzModelTrees fuzzes the tree bytes of a small valid model, keeping its
// header and fixing the checksum, to explore the trees' checks.
func FuzzModelTrees(f *testing.F) {
	// Kinds: 0 regression, 1 classification (version 1), 2 regression
	// with leaf samples (version 2: the trees then the leaf samples), 3
	// categorical (version 2: the trees then the category sets).
	type kind struct {
		hdr     []byte
		version uint32
	}
	var kinds []kind
	leafy := tinyForest(f, Regression)
	leafy.Options.KeepLeafSamples = true
	ls := &LeafSamples{}
	for t := range leafy.Trees {
		tr := &leafy.Trees[t]
		var rows []int32
		var counts []int64
		for i, feat := range tr.Feature {
			if feat < 0 {
				for k := int32(0); k < tr.Samples(i); k++ {
					rows, counts = append(rows, k), append(counts, 1)
					if int(k) >= len(ls.Y) {
						ls.Y = append(ls.Y, float64(k))
					}
				}
				counts[len(counts)-1] += tr.Weight(i) - int64(tr.Samples(i))
			}
		}
		ls.Rows, ls.Weights = append(ls.Rows, rows), append(ls.Weights, counts)
	}
	leafy.LeafSamples = ls
	if err := leafy.checkSave(); err != nil {
		f.Fatal(err) // the seed must be a valid model
	}
	// A categorical forest: its trees are checked once their category sets,
	// which follow them, are read.
	cat, err := Fit(catData(60, 5, 0, false), Options{Trees: 2, Seed: 1, MaxDepth: 3})
	if err != nil {
		f.Fatal(err)
	}
	for k, fo := range []*Forest{tinyForest(f, Regression), tinyForest(f, Classification), leafy, cat} {
		var buf bytes.Buffer
		if err := fo.encode(&buf); err != nil {
			f.Fatal(err)
		}
		h, trees := splitModel(f, buf.Bytes())
		kinds = append(kinds, kind{slices.Clone(h), uint32(fo.version())})
		f.Add(uint8(k), slices.Clone(trees))
	}
	f.Fuzz(func(t *testing.T, k uint8, trees []byte) {
		c := kinds[int(k)%len(kinds)]
		checkLoad(t, buildModel(c.version, uint64(len(c.hdr)), c.hdr, trees))
	})
}
