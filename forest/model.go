package forest

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"math"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/gotrain/gotrain/internal/atomicfile"
)

// ErrInvalidModel is wrapped by the errors of [Load] and [LoadFile] about a
// model file that is damaged, truncated or not a model file, and by those of
// [Forest.Save] about a forest that cannot be saved.
var ErrInvalidModel = errors.New("invalid model")

const (
	modelMagic = "GOTRAINFOREST\n"
	// modelVersion is the newest format version, the one of a forest
	// that uses any of its additions (Options.Splitter random); a forest
	// that uses none is written as version 1, byte for byte as before
	// them (Forest.version). Readers take both.
	modelVersion = 2
	modelFormat  = "gotrain-forest"
	modelCreator = "gotrain"

	// maxHeaderLen bounds the JSON header.
	maxHeaderLen = 64 << 20
	// maxModelTrees bounds the number of trees (as Options.Trees does).
	maxModelTrees = 1 << 20
	// maxTreeNodes bounds the nodes of one tree.
	maxTreeNodes = 1 << 28
	// maxModelFeatures bounds the number of features, as the predictor does.
	maxModelFeatures = 1<<16 - 2
	// maxTreeValues bounds the values (nodes × outputs) of one tree: the
	// predictor indexes them with int32.
	maxTreeValues = math.MaxInt32
	// maxTreeDepth bounds the depth of a tree: the predictor is built
	// recursively, and a hostile degenerate tree must not exhaust the stack.
	maxTreeDepth = 1 << 20
	// maxOutputs bounds the values per node (the number of classes).
	maxOutputs = 1 << 16
	// maxEdges is the most bin edges a feature can have: its missing code
	// len(edges)+1 must fit in a uint8.
	maxEdges = 254
	// maxLeafSampleRows bounds the training rows of the leaf samples (row
	// indices are int32).
	maxLeafSampleRows = 1<<31 - 2
	// maxTreeBytes bounds the total size of the trees.
	maxTreeBytes = 1 << 40
	// nodeFixedBytes is the size of a node in the tree arrays, values excluded.
	nodeFixedBytes = 4 + 4 + 1 + 1 + 8 + 4 + 8 + 8
	// ioChunk is the size of the buffer arrays are encoded and decoded through.
	ioChunk = 64 << 10
)

// treeLayout names the per-tree arrays in file order, as the header lists them.
var treeLayout = []string{
	"feature:int32", "left:int32", "bin:uint8", "missing_left:uint8", "threshold:float64",
	"value:float64[outputs]", "samples:int32", "weight:int64", "gain:float64",
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// modelHeader is the JSON header.
type modelHeader struct {
	Format      string       `json:"format"`
	Version     int          `json:"version"`
	CreatedBy   string       `json:"created_by"`
	Task        Task         `json:"task"`
	Criterion   Criterion    `json:"criterion"`
	Options     modelOptions `json:"options"`
	Features    []string     `json:"features"`
	Target      string       `json:"target"`
	Classes     []string     `json:"classes"`
	NumFeatures int          `json:"num_features"`
	NumTrees    int          `json:"num_trees"`
	Outputs     int          `json:"outputs"`
	NodeCounts  []int64      `json:"node_counts"`
	TreeLayout  []string     `json:"tree_layout"`
	BinEdges    [][]float64  `json:"bin_edges"`
	OOBScore    jsonScore    `json:"oob_score"`
	OOBRows     int          `json:"oob_rows"`
	// Version 2: the leaf samples' sizes, when the forest keeps them.
	LeafSamples *modelLeafSamples `json:"leaf_samples,omitempty"`
	// Version 2: each feature's category dictionary (null for a numeric
	// feature), when a feature is categorical.
	Categories [][]string `json:"categories,omitempty"`
	// Version 2: each tree's number of category sets, when a feature is
	// categorical.
	CategorySets []int64 `json:"category_sets,omitempty"`
}

// modelLeafSamples are the sizes of the leaf samples section (LeafSamples):
// the training targets, then each tree's rows and counts.
type modelLeafSamples struct {
	TrainRows int     `json:"train_rows"`
	Counts    []int64 `json:"counts"` // rows kept of each tree
}

// modelOptions are the Options other than Task and Criterion.
type modelOptions struct {
	Trees           int     `json:"trees"`
	MaxDepth        int     `json:"max_depth"`
	MinSamplesSplit int     `json:"min_samples_split"`
	MinSamplesLeaf  int     `json:"min_samples_leaf"`
	MaxFeatures     string  `json:"max_features"`
	Bootstrap       bool    `json:"bootstrap"`
	MaxSamples      float64 `json:"max_samples"`
	Seed            uint64  `json:"seed"`
	Bins            int     `json:"bins"`
	Threads         int     `json:"threads"`
	OOB             bool    `json:"oob"`
	// Version 2: "random" for the random splitter, absent for best.
	Splitter Splitter `json:"splitter,omitempty"`
	// Version 2: true when the leaf samples are kept (absent otherwise).
	KeepLeafSamples bool `json:"keep_leaf_samples,omitempty"`
	// Version 2: the class weights, when given.
	ClassWeight string `json:"class_weight,omitempty"`
	// Version 2: the least weight fraction of a leaf, when not 0.
	MinWeightFractionLeaf float64 `json:"min_weight_fraction_leaf,omitempty"`
}

// jsonScore is a float64 that JSON-encodes NaN as null and the infinities as
// the strings "Infinity" and "-Infinity"; set records that it was present.
type jsonScore struct {
	v   float64
	set bool
}

func (s jsonScore) MarshalJSON() ([]byte, error) {
	switch {
	case math.IsNaN(s.v):
		return []byte("null"), nil
	case math.IsInf(s.v, 1):
		return []byte(`"Infinity"`), nil
	case math.IsInf(s.v, -1):
		return []byte(`"-Infinity"`), nil
	}
	return json.Marshal(s.v)
}

func (s *jsonScore) UnmarshalJSON(b []byte) error {
	s.set = true
	switch string(b) {
	case "null":
		s.v = math.NaN()
		return nil
	case `"Infinity"`:
		s.v = math.Inf(1)
		return nil
	case `"-Infinity"`:
		s.v = math.Inf(-1)
		return nil
	}
	return json.Unmarshal(b, &s.v)
}

// Save writes the forest in the model file format (see the package
// documentation). It refuses, with an error wrapping [ErrInvalidModel], a
// forest that Load would reject, such as one whose names are not valid
// UTF-8.
func (f *Forest) Save(w io.Writer) error {
	if err := f.checkSave(); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, ioChunk)
	if err := f.encode(bw); err != nil {
		return fmt.Errorf("forest: save model: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("forest: save model: %w", err)
	}
	return nil
}

// checkSave checks that f can be saved and loaded back.
func (f *Forest) checkSave() error {
	if err := f.validateMeta(len(f.Trees)); err != nil {
		return fmt.Errorf("forest: cannot save model: %w", err)
	}
	var total int64
	for t := range f.Trees {
		if err := f.validateTree(t); err != nil {
			return fmt.Errorf("forest: cannot save model: %w", err)
		}
		total += int64(len(f.Trees[t].Feature)) * (nodeFixedBytes + 8*int64(f.Outputs()))
		if total > maxTreeBytes {
			return fmt.Errorf("forest: cannot save model: %w", invalid("the trees exceed %d bytes", int64(maxTreeBytes)))
		}
	}
	if err := f.validateLeafSamples(); err != nil {
		return fmt.Errorf("forest: cannot save model: %w", err)
	}
	if math.IsNaN(f.Options.MaxSamples) || math.IsInf(f.Options.MaxSamples, 0) {
		return fmt.Errorf("forest: cannot save model: %w", invalid("max samples %v is not finite", f.Options.MaxSamples))
	}
	check := func(what string, s []string) error {
		for i, name := range s {
			if !utf8.ValidString(name) {
				return fmt.Errorf("forest: cannot save model: %w", invalid("%s %d (%q) is not valid UTF-8", what, i, name))
			}
		}
		return nil
	}
	if err := check("feature name", f.Features); err != nil {
		return err
	}
	if err := check("class name", f.Classes); err != nil {
		return err
	}
	if !utf8.ValidString(f.Target) {
		return fmt.Errorf("forest: cannot save model: %w", invalid("target name %q is not valid UTF-8", f.Target))
	}
	return nil
}

// version returns the format version f needs: 2 when it uses an
// addition of version 2, else 1 (see modelVersion).
func (f *Forest) version() int {
	if f.Binner != nil && f.Binner.HasCategorical() {
		return 2
	}
	if f.Options.Splitter == Random || f.Options.KeepLeafSamples || f.LeafSamples != nil || f.Options.ClassWeight != "" || f.Options.MinWeightFractionLeaf != 0 {
		return 2
	}
	return 1
}

// header returns f's JSON header.
func (f *Forest) header() modelHeader {
	o := f.Options
	h := modelHeader{
		Format:    modelFormat,
		Version:   f.version(),
		CreatedBy: modelCreator,
		Task:      o.Task,
		Criterion: o.Criterion,
		Options: modelOptions{
			Trees:           o.Trees,
			MaxDepth:        o.MaxDepth,
			MinSamplesSplit: o.MinSamplesSplit,
			MinSamplesLeaf:  o.MinSamplesLeaf,
			MaxFeatures:     o.MaxFeatures,
			Bootstrap:       !o.NoBootstrap,
			MaxSamples:      o.MaxSamples,
			Seed:            o.Seed,
			Bins:            o.Bins,
			Threads:         o.Threads,
			OOB:             o.OOB,
		},
		Features:    f.Features,
		Target:      f.Target,
		Classes:     f.Classes,
		NumFeatures: f.NumFeatures,
		NumTrees:    len(f.Trees),
		Outputs:     f.Outputs(),
		NodeCounts:  make([]int64, len(f.Trees)),
		TreeLayout:  treeLayout,
		OOBScore:    jsonScore{v: f.OOBScore, set: true},
		OOBRows:     f.OOBRows,
	}
	if o.Splitter == Random {
		h.Options.Splitter = Random
	}
	h.Options.KeepLeafSamples = o.KeepLeafSamples
	h.Options.ClassWeight = o.ClassWeight
	h.Options.MinWeightFractionLeaf = o.MinWeightFractionLeaf
	if ls := f.LeafSamples; ls != nil {
		h.LeafSamples = &modelLeafSamples{TrainRows: len(ls.Y), Counts: make([]int64, len(ls.Rows))}
		for t, r := range ls.Rows {
			h.LeafSamples.Counts[t] = int64(len(r))
		}
	}
	if f.Binner != nil {
		h.BinEdges = f.Binner.Edges
		if f.Binner.HasCategorical() {
			h.Categories = f.Binner.Categories
			h.CategorySets = make([]int64, len(f.Trees))
			for t := range f.Trees {
				h.CategorySets[t] = int64(len(f.Trees[t].Sets))
			}
		}
	}
	for t := range f.Trees {
		h.NodeCounts[t] = int64(len(f.Trees[t].Feature))
	}
	return h
}

// encoder writes bytes and keeps their checksum.
type encoder struct {
	w   io.Writer
	crc uint32
	buf []byte
	err error
}

func (e *encoder) write(p []byte) {
	if e.err != nil {
		return
	}
	e.crc = crc32.Update(e.crc, castagnoli, p)
	_, e.err = e.w.Write(p)
}

// writeArray writes xs, size bytes each, encoded by put.
func writeArray[T any](e *encoder, xs []T, size int, put func([]byte, T)) {
	per := len(e.buf) / size
	for lo := 0; lo < len(xs) && e.err == nil; lo += per {
		chunk := xs[lo:min(len(xs), lo+per)]
		b := e.buf[:len(chunk)*size]
		for i, x := range chunk {
			put(b[i*size:], x)
		}
		e.write(b)
	}
}

func putInt32(b []byte, x int32)     { binary.LittleEndian.PutUint32(b, uint32(x)) }
func putInt64(b []byte, x int64)     { binary.LittleEndian.PutUint64(b, uint64(x)) }
func putUint64(b []byte, x uint64)   { binary.LittleEndian.PutUint64(b, x) }
func putFloat64(b []byte, x float64) { binary.LittleEndian.PutUint64(b, math.Float64bits(x)) }
func putUint8(b []byte, x uint8)     { b[0] = x }
func putBool(b []byte, x bool) {
	b[0] = 0
	if x {
		b[0] = 1
	}
}

// encode writes f to w without checking it.
func (f *Forest) encode(w io.Writer) error {
	return f.encodeTrees(w, func(t int) (*wideTree, error) {
		tr, err := f.Trees[t].widen()
		if err != nil {
			return nil, invalid("tree %d: %v", t, err)
		}
		return tr, nil
	})
}

// encodeTrees writes f to w with tree t as tree(t) gives it.
func (f *Forest) encodeTrees(w io.Writer, tree func(t int) (*wideTree, error)) error {
	h := f.header()
	hdr, err := json.Marshal(h)
	if err != nil {
		return err
	}
	if len(hdr) > maxHeaderLen {
		return invalid("the header takes %d bytes, more than the limit of %d", len(hdr), maxHeaderLen)
	}
	e := &encoder{w: w, buf: make([]byte, ioChunk)}
	prefix := make([]byte, 0, len(modelMagic)+12)
	prefix = append(prefix, modelMagic...)
	prefix = binary.LittleEndian.AppendUint32(prefix, uint32(h.Version))
	prefix = binary.LittleEndian.AppendUint64(prefix, uint64(len(hdr)))
	e.write(prefix)
	e.write(hdr)
	for t := range f.Trees {
		tr, err := tree(t)
		if err != nil {
			return err
		}
		writeArray(e, tr.Feature, 4, putInt32)
		writeArray(e, tr.Left, 4, putInt32)
		writeArray(e, tr.Bin, 1, putUint8)
		writeArray(e, tr.MissingLeft, 1, putBool)
		writeArray(e, tr.Threshold, 8, putFloat64)
		writeArray(e, tr.Value, 8, putFloat64)
		writeArray(e, tr.Samples, 4, putInt32)
		writeArray(e, tr.Weight, 8, putInt64)
		writeArray(e, tr.Gain, 8, putFloat64)
	}
	if f.Binner.HasCategorical() {
		for t := range f.Trees {
			for _, s := range f.Trees[t].Sets {
				writeArray(e, s[:], 8, putUint64)
			}
		}
	}
	if ls := f.LeafSamples; ls != nil {
		writeArray(e, ls.Y, 8, putFloat64)
		for t := range ls.Rows {
			writeArray(e, ls.Rows[t], 4, putInt32)
			writeArray(e, ls.Weights[t], 8, putInt64)
		}
	}
	if e.err != nil {
		return e.err
	}
	_, err = w.Write(binary.LittleEndian.AppendUint32(nil, e.crc))
	return err
}

// SaveFile writes the forest to the named file, atomically
// (internal/atomicfile): it writes a temporary file in the same folder,
// syncs it to disk and renames it over path. On error, no temporary file is
// left and an existing file at path is unchanged. A new file gets the usual
// permissions (0666 less the umask: 0644 under umask 022); a replaced file
// keeps its permissions. A symbolic link at path is followed (the file it
// names is replaced, the link kept); a FIFO or character device is written
// through; a folder or other special file is refused.
func (f *Forest) SaveFile(path string) error {
	if err := f.checkSave(); err != nil {
		return err
	}
	if err := atomicfile.Write(path, f.encode); err != nil {
		return fmt.Errorf("forest: save model %s: %w", path, err)
	}
	return nil
}

// Load reads a forest in the model file format (see the package
// documentation) from r. It reads exactly the model's bytes and not beyond.
// Errors about the data wrap [ErrInvalidModel] (and [io.ErrUnexpectedEOF]
// when it ends early). When r is an *os.File, *bytes.Reader, *bytes.Buffer or
// *strings.Reader, sizes declared by the file are checked against the bytes
// left before anything is allocated.
func Load(r io.Reader) (*Forest, error) {
	return load(r, "", remaining(r))
}

// LoadFile reads a forest from the named file, which must hold exactly one
// model. Its errors name the file.
func LoadFile(path string) (*Forest, error) {
	file, err := os.Open(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("forest: model %s: %w", path, err)
	}
	defer file.Close()
	f, err := load(file, path, remaining(file))
	if err != nil {
		return nil, err
	}
	var one [1]byte
	if n, _ := io.ReadFull(file, one[:]); n > 0 {
		return nil, fmt.Errorf("forest: model %s: %w", path, invalid("unexpected data after the model"))
	}
	return f, nil
}

// remaining returns the number of bytes left in r, or -1 when unknown.
func remaining(r io.Reader) int64 {
	switch v := r.(type) {
	case *bytes.Reader:
		return int64(v.Len())
	case *bytes.Buffer:
		return int64(v.Len())
	case *strings.Reader:
		return int64(v.Len())
	case *os.File:
		st, err := v.Stat()
		if err != nil || !st.Mode().IsRegular() {
			return -1
		}
		pos, err := v.Seek(0, io.SeekCurrent)
		if err != nil || pos > st.Size() {
			return -1
		}
		return st.Size() - pos
	}
	return -1
}

// decoder reads bytes and keeps their checksum.
type decoder struct {
	r    io.Reader
	crc  uint32
	n    int64 // bytes read
	size int64 // bytes available at the start, or -1 when unknown
	buf  []byte
	tree int // the tree being read, or -1
}

// read fills p; what names the data for the error on a short read.
func (d *decoder) read(p []byte, what string) error {
	k, err := io.ReadFull(d.r, p)
	d.crc = crc32.Update(d.crc, castagnoli, p[:k])
	d.n += int64(k)
	if err == nil {
		return nil
	}
	if d.tree >= 0 {
		what = fmt.Sprintf("tree %d %s", d.tree, what)
	}
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return invalid("truncated at byte %d, reading %s: %w", d.n, what, io.ErrUnexpectedEOF)
	}
	return fmt.Errorf("reading %s: %w", what, err)
}

// readArray reads n values of size bytes each, decoded by get. When the
// input's size is unknown, the slice grows as the bytes arrive.
func readArray[T any](d *decoder, n int, size int, get func([]byte) T, what string) ([]T, error) {
	c := n
	if d.size < 0 {
		c = min(n, ioChunk/size)
	}
	out := make([]T, 0, c)
	for len(out) < n {
		k := min(n-len(out), len(d.buf)/size)
		b := d.buf[:k*size]
		if err := d.read(b, what); err != nil {
			return nil, err
		}
		for i := 0; i < k; i++ {
			out = append(out, get(b[i*size:]))
		}
	}
	return out, nil
}

func getInt32(b []byte) int32     { return int32(binary.LittleEndian.Uint32(b)) }
func getInt64(b []byte) int64     { return int64(binary.LittleEndian.Uint64(b)) }
func getUint64(b []byte) uint64   { return binary.LittleEndian.Uint64(b) }
func getFloat64(b []byte) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(b)) }
func getUint8(b []byte) uint8     { return b[0] }

// load reads a model from r; name (the file, or "") is for errors; size is
// the number of bytes r holds, or -1 when unknown.
func load(r io.Reader, name string, size int64) (*Forest, error) {
	f, err := decode(r, size)
	if err != nil {
		if name == "" {
			return nil, fmt.Errorf("forest: model: %w", err)
		}
		return nil, fmt.Errorf("forest: model %s: %w", name, err)
	}
	return f, nil
}

// invalidError is an error about the model's content; it wraps ErrInvalidModel.
type invalidError struct{ err error }

func (e *invalidError) Error() string   { return e.err.Error() }
func (e *invalidError) Unwrap() []error { return []error{ErrInvalidModel, e.err} }

// invalid returns an error wrapping ErrInvalidModel and whatever format wraps.
func invalid(format string, a ...any) error {
	return &invalidError{fmt.Errorf(format, a...)}
}

// decode reads and checks a model.
func decode(r io.Reader, size int64) (*Forest, error) {
	d := &decoder{r: r, size: size, buf: make([]byte, ioChunk), tree: -1}
	pre := d.buf[:len(modelMagic)+12]
	if err := d.read(pre[:len(modelMagic)], "the magic bytes"); err != nil {
		return nil, err
	}
	if string(pre[:len(modelMagic)]) != modelMagic {
		return nil, invalid("not a gotrain forest model (bad magic bytes %q)", pre[:len(modelMagic)])
	}
	if err := d.read(pre[len(modelMagic):], "the version and header length"); err != nil {
		return nil, err
	}
	version := binary.LittleEndian.Uint32(pre[len(modelMagic):])
	if version < 1 || version > modelVersion {
		return nil, invalid("unsupported format version %d (this reader knows versions 1 to %d)", version, modelVersion)
	}
	hlen := binary.LittleEndian.Uint64(pre[len(modelMagic)+4:])
	if hlen > maxHeaderLen {
		return nil, invalid("header length %d exceeds the limit of %d", hlen, maxHeaderLen)
	}
	if d.size >= 0 && int64(hlen) > d.size-d.n {
		return nil, invalid("header length %d exceeds the %d bytes left: %w", hlen, d.size-d.n, io.ErrUnexpectedEOF)
	}
	hdr, err := readArray(d, int(hlen), 1, getUint8, "the header")
	if err != nil {
		return nil, err
	}
	var h modelHeader
	if err := json.Unmarshal(hdr, &h); err != nil {
		return nil, invalid("header: %v", err)
	}
	hdr = nil
	f, err := h.forest(int(version))
	if err != nil {
		return nil, err
	}

	// Bound the trees' size before allocating them.
	out := f.Outputs()
	var body int64
	for t, n := range h.NodeCounts {
		if n < 1 || n > maxTreeNodes {
			return nil, invalid("tree %d: %d nodes, want 1..%d", t, n, maxTreeNodes)
		}
		if v := n * int64(out); v > maxTreeValues || v > math.MaxInt/8 {
			return nil, invalid("tree %d: %d nodes of %d values each is too many", t, n, out)
		}
		body += n * (nodeFixedBytes + 8*int64(out))
		if body > maxTreeBytes {
			return nil, invalid("the trees take more than %d bytes", int64(maxTreeBytes))
		}
	}
	if h.CategorySets != nil {
		if len(h.CategorySets) != len(h.NodeCounts) {
			return nil, invalid("header: category_sets has %d entries for %d trees", len(h.CategorySets), len(h.NodeCounts))
		}
		for t, k := range h.CategorySets {
			if k < 0 || k > h.NodeCounts[t] {
				return nil, invalid("header: category_sets: tree %d has %d sets for %d nodes", t, k, h.NodeCounts[t])
			}
			if body += 32 * k; body > maxTreeBytes {
				return nil, invalid("the trees take more than %d bytes", int64(maxTreeBytes))
			}
		}
	}
	if ls := h.LeafSamples; ls != nil {
		if ls.TrainRows < 1 || ls.TrainRows > maxLeafSampleRows || len(ls.Counts) != len(h.NodeCounts) {
			return nil, invalid("header: leaf_samples has %d training rows and %d counts for %d trees, want 1..%d rows and a count per tree", ls.TrainRows, len(ls.Counts), len(h.NodeCounts), maxLeafSampleRows)
		}
		body += 8 * int64(ls.TrainRows)
		for t, k := range ls.Counts {
			if k < 0 || k > int64(ls.TrainRows) {
				return nil, invalid("header: leaf_samples: tree %d keeps %d rows of %d", t, k, ls.TrainRows)
			}
			if body += 12 * k; body > maxTreeBytes {
				return nil, invalid("the trees and leaf samples take more than %d bytes", int64(maxTreeBytes))
			}
		}
	}
	if d.size >= 0 && body+4 > d.size-d.n {
		return nil, invalid("the header declares %d bytes of trees and checksum but %d bytes follow: %w", body+4, d.size-d.n, io.ErrUnexpectedEOF)
	}

	if d.size >= 0 {
		f.Trees = make([]Tree, 0, len(h.NodeCounts))
	} else {
		f.Trees = make([]Tree, 0, min(len(h.NodeCounts), 1024))
	}
	// Each tree is read as the file keeps it, checked and kept as a Tree;
	// the first fault is reported after the checksum (a damaged file is
	// reported as damaged). The trees of a forest with categorical features
	// are checked once their category sets, which follow the trees, are read.
	var fault error
	var wides []*wideTree
	cat := h.CategorySets != nil || f.Binner.HasCategorical()
	for t, n64 := range h.NodeCounts {
		n := int(n64)
		d.tree = t
		tr := new(wideTree)
		if tr.Feature, err = readArray(d, n, 4, getInt32, "feature"); err != nil {
			return nil, err
		}
		if tr.Left, err = readArray(d, n, 4, getInt32, "left"); err != nil {
			return nil, err
		}
		if tr.Bin, err = readArray(d, n, 1, getUint8, "bin"); err != nil {
			return nil, err
		}
		ml, err := readArray(d, n, 1, getUint8, "missing_left")
		if err != nil {
			return nil, err
		}
		tr.MissingLeft = make([]bool, n)
		for i, b := range ml {
			if b > 1 && fault == nil {
				fault = invalid("tree %d node %d: missing_left byte is %d, want 0 or 1", t, i, b)
			}
			tr.MissingLeft[i] = b == 1
		}
		ml = nil
		if tr.Threshold, err = readArray(d, n, 8, getFloat64, "threshold"); err != nil {
			return nil, err
		}
		if tr.Value, err = readArray(d, n*out, 8, getFloat64, "value"); err != nil {
			return nil, err
		}
		if tr.Samples, err = readArray(d, n, 4, getInt32, "samples"); err != nil {
			return nil, err
		}
		if tr.Weight, err = readArray(d, n, 8, getInt64, "weight"); err != nil {
			return nil, err
		}
		if tr.Gain, err = readArray(d, n, 8, getFloat64, "gain"); err != nil {
			return nil, err
		}
		f.Trees = append(f.Trees, Tree{})
		switch {
		case cat:
			wides = append(wides, tr)
		case fault == nil:
			fault = f.keepTree(t, tr)
		}
	}
	for t, k := range h.CategorySets {
		d.tree = t
		words, err := readArray(d, 4*int(k), 8, getUint64, "category sets")
		if err != nil {
			return nil, err
		}
		tr := wides[t]
		if k > 0 {
			tr.Sets = make([]CategorySet, k)
			for i := range tr.Sets {
				copy(tr.Sets[i][:], words[4*i:])
			}
		}
		tr.Category = f.categoryIndex(tr.Feature)
	}
	if ls := h.LeafSamples; ls != nil {
		d.tree = -1
		s := &LeafSamples{Rows: make([][]int32, len(ls.Counts)), Weights: make([][]int64, len(ls.Counts))}
		if s.Y, err = readArray(d, ls.TrainRows, 8, getFloat64, "leaf samples' targets"); err != nil {
			return nil, err
		}
		for t, k := range ls.Counts {
			d.tree = t
			if s.Rows[t], err = readArray(d, int(k), 4, getInt32, "leaf sample rows"); err != nil {
				return nil, err
			}
			if s.Weights[t], err = readArray(d, int(k), 8, getInt64, "leaf sample weights"); err != nil {
				return nil, err
			}
		}
		f.LeafSamples = s
	}

	d.tree = -1
	sum := d.crc
	var tail [4]byte
	if err := d.read(tail[:], "the checksum"); err != nil {
		return nil, err
	}
	if got := binary.LittleEndian.Uint32(tail[:]); got != sum {
		return nil, invalid("checksum mismatch: the file says %08x, its content gives %08x (the file is damaged)", got, sum)
	}
	if fault != nil {
		return nil, fault
	}
	for t, tr := range wides {
		if err := f.keepTree(t, tr); err != nil {
			return nil, err
		}
		wides[t] = nil
	}
	if err := f.validateLeafSamples(); err != nil {
		return nil, err
	}
	if f.pred, err = compile(f); err != nil {
		return nil, invalid("%s", strings.TrimPrefix(err.Error(), "forest: "))
	}
	return f, nil
}

// forest checks the header and returns the forest it describes, without trees.
func (h *modelHeader) forest(version int) (*Forest, error) {
	switch {
	case h.Format != modelFormat:
		return nil, invalid("header: format is %q, want %q", h.Format, modelFormat)
	case h.Version != version:
		return nil, invalid("header: version is %d but the file's version is %d", h.Version, version)
	case version < 2 && h.Options.Splitter != "":
		return nil, invalid("header: splitter %q needs format version 2, the file is version %d", h.Options.Splitter, version)
	case h.Options.Splitter != "" && h.Options.Splitter != Random:
		return nil, invalid("header: unknown splitter %q", h.Options.Splitter)
	case version < 2 && (h.Options.ClassWeight != "" || h.Options.MinWeightFractionLeaf != 0):
		return nil, invalid("header: class_weight and min_weight_fraction_leaf need format version 2, the file is version %d", version)
	case version < 2 && (h.Categories != nil || h.CategorySets != nil):
		return nil, invalid("header: categorical features need format version 2, the file is version %d", version)
	case (h.Categories != nil) != (h.CategorySets != nil):
		return nil, invalid("header: categories and category_sets come together")
	case version < 2 && (h.Options.KeepLeafSamples || h.LeafSamples != nil):
		return nil, invalid("header: leaf samples need format version 2, the file is version %d", version)
	case h.Options.KeepLeafSamples != (h.LeafSamples != nil):
		return nil, invalid("header: keep_leaf_samples is %v but leaf_samples is %s", h.Options.KeepLeafSamples, map[bool]string{true: "present", false: "absent"}[h.LeafSamples != nil])
	case !slices.Equal(h.TreeLayout, treeLayout):
		return nil, invalid("header: unknown tree layout %q", h.TreeLayout)
	case !h.OOBScore.set:
		return nil, invalid("header: oob_score is missing")
	case h.NumTrees != len(h.NodeCounts):
		return nil, invalid("header: num_trees is %d but node_counts has %d entries", h.NumTrees, len(h.NodeCounts))
	}
	o := h.Options
	f := &Forest{
		Options: Options{
			Task:                  h.Task,
			Criterion:             h.Criterion,
			Trees:                 o.Trees,
			MaxDepth:              o.MaxDepth,
			MinSamplesSplit:       o.MinSamplesSplit,
			MinSamplesLeaf:        o.MinSamplesLeaf,
			MaxFeatures:           o.MaxFeatures,
			NoBootstrap:           !o.Bootstrap,
			MaxSamples:            o.MaxSamples,
			Seed:                  o.Seed,
			Bins:                  o.Bins,
			Threads:               o.Threads,
			OOB:                   o.OOB,
			Splitter:              cmp.Or(o.Splitter, Best),
			KeepLeafSamples:       o.KeepLeafSamples,
			ClassWeight:           o.ClassWeight,
			MinWeightFractionLeaf: o.MinWeightFractionLeaf,
		},
		Features:    h.Features,
		Target:      h.Target,
		NumFeatures: h.NumFeatures,
		Classes:     h.Classes,
		Binner:      &Binner{Edges: h.BinEdges, Categories: h.Categories},
		OOBScore:    h.OOBScore.v,
		OOBRows:     h.OOBRows,
	}
	if err := f.validateMeta(h.NumTrees); err != nil {
		return nil, err
	}
	if h.Outputs != f.Outputs() {
		return nil, invalid("header: outputs is %d, want %d for %s with %d classes", h.Outputs, f.Outputs(), f.Options.Task, len(f.Classes))
	}
	return f, nil
}

// validateMeta checks everything but the trees, for a forest of nt trees.
func (f *Forest) validateMeta(nt int) error {
	o := f.Options
	switch o.Task {
	case Regression:
		if o.Criterion != SquaredError {
			return invalid("criterion %q is not valid for regression", o.Criterion)
		}
		if len(f.Classes) != 0 {
			return invalid("a regression model has %d classes, want none", len(f.Classes))
		}
	case Classification:
		if o.Criterion != Gini && o.Criterion != Entropy {
			return invalid("criterion %q is not valid for classification", o.Criterion)
		}
		if len(f.Classes) < 1 || len(f.Classes) > maxOutputs {
			return invalid("a classification model has %d classes, want 1..%d", len(f.Classes), maxOutputs)
		}
	default:
		return invalid("unknown task %q", o.Task)
	}
	if _, err := o.withDefaults(); err != nil {
		return invalid("options: %s", strings.TrimPrefix(err.Error(), "forest: "))
	}
	if o.ClassWeight != "" {
		if _, err := classWeights(o.ClassWeight, []int32{}, f.Classes); err != nil {
			return invalid("options: %s", strings.TrimPrefix(err.Error(), "forest: "))
		}
	}
	switch {
	case f.NumFeatures < 1 || f.NumFeatures > maxModelFeatures:
		return invalid("%d features, want 1..%d", f.NumFeatures, maxModelFeatures)
	case len(f.Features) != 0 && len(f.Features) != f.NumFeatures:
		return invalid("%d feature names for %d features", len(f.Features), f.NumFeatures)
	case nt < 1 || nt > maxModelTrees:
		return invalid("%d trees, want 1..%d", nt, maxModelTrees)
	case f.OOBRows < 0:
		return invalid("oob rows is %d, want >= 0", f.OOBRows)
	case f.Binner == nil:
		return invalid("no bin edges")
	case len(f.Binner.Edges) != f.NumFeatures:
		return invalid("bin edges for %d features, want %d", len(f.Binner.Edges), f.NumFeatures)
	}
	if c := f.Binner.Categories; c != nil && len(c) != f.NumFeatures {
		return invalid("category dictionaries for %d features, want %d", len(c), f.NumFeatures)
	}
	for j, dict := range f.Binner.Categories {
		if dict == nil {
			continue
		}
		if len(dict) > MaxCategories {
			return invalid("feature %d has %d categories, want at most %d", j, len(dict), MaxCategories)
		}
		for k, name := range dict {
			switch {
			case !utf8.ValidString(name):
				return invalid("feature %d category %d (%q) is not valid UTF-8", j, k, name)
			case k > 0 && name <= dict[k-1]:
				return invalid("feature %d categories are not in increasing order: %q after %q", j, name, dict[k-1])
			}
		}
		if e := f.Binner.Edges[j]; !slices.Equal(e, categoryEdges(len(dict))) {
			return invalid("feature %d is categorical with %d categories but its bin edges are %v", j, len(dict), e)
		}
	}
	if f.Binner.Categories != nil && !f.Binner.HasCategorical() {
		return invalid("category dictionaries without a categorical feature")
	}
	for j, e := range f.Binner.Edges {
		if len(e) > maxEdges {
			return invalid("feature %d has %d bin edges, want at most %d", j, len(e), maxEdges)
		}
		for k, v := range e {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return invalid("feature %d bin edge %d is %v, want a finite number", j, k, v)
			}
			if k > 0 && v < e[k-1] {
				return invalid("feature %d bin edges are not ascending: edge %d is %v after %v", j, k, v, e[k-1])
			}
		}
	}
	return nil
}

// wideTree is a tree as the model file keeps it: every field an array of
// one entry a node (Tree keeps a split's fields per split and reads the
// thresholds from the edges). LoadModel reads and checks this form before
// it keeps a tree; Save writes it.
type wideTree struct {
	Feature     []int32
	Bin         []uint8
	Threshold   []float64
	MissingLeft []bool
	Left        []int32
	Value       []float64
	Samples     []int32
	Weight      []int64
	Gain        []float64
	Category    []int32
	Sets        []CategorySet
}

// widen returns t as the model file keeps it. It fails only when t's
// arrays do not fit together (a Tree not made by NewTree); what checkWide
// checks it leaves to checkWide (a split's threshold is Tree.Threshold).
func (t *Tree) widen() (*wideTree, error) {
	if err := t.Check(); err != nil {
		return nil, err
	}
	n := len(t.Feature)
	w := &wideTree{Feature: t.Feature, Left: t.Left, Value: t.Value, Samples: t.samples, Category: t.Category, Sets: t.Sets,
		Bin: make([]uint8, n), Threshold: make([]float64, n), MissingLeft: make([]bool, n), Weight: make([]int64, n), Gain: make([]float64, n)}
	for i := range n {
		w.Weight[i] = t.Weight(i)
		l := t.Left[i]
		if l < 0 {
			continue
		}
		k := int(l-1) >> 1
		w.Bin[i], w.MissingLeft[i], w.Gain[i] = t.bin[k], t.missingLeft[k], t.gain[k]
		if t.Feature[i] >= 0 {
			w.Threshold[i] = t.Threshold(i)
		}
	}
	return w, nil
}

// narrow returns w, which checkWide accepted, as a Tree whose thresholds
// are read from edges. It keeps w's per-node arrays.
func (w *wideTree) narrow(edges [][]float64) Tree {
	n := len(w.Feature)
	s := (n - 1) / 2
	t := Tree{Feature: w.Feature, Left: w.Left, Value: w.Value, Category: w.Category, Sets: w.Sets,
		bin: make([]uint8, s), missingLeft: make([]bool, s), gain: make([]float64, s),
		samples: w.Samples, weight: make([]uint32, n), edges: edges}
	for i, l := range w.Left {
		t.SetCounts(i, w.Samples[i], w.Weight[i])
		if l >= 0 {
			t.setSplit(i, w.Feature[i], w.Bin[i], w.MissingLeft[i], l, w.Gain[i])
		}
	}
	return t
}

// validateTree checks tree t's structure against the rest of the forest,
// which validateMeta accepted.
func (f *Forest) validateTree(t int) error { return f.checkTree(t, maxTreeDepth) }

// checkTree is validateTree with a given depth limit.
func (f *Forest) checkTree(t, maxDepth int) error {
	tr, err := f.Trees[t].widen()
	if err != nil {
		return invalid("tree %d: %v", t, err)
	}
	return f.checkWide(t, tr, maxDepth)
}

// keepTree checks tree t as the file keeps it and keeps it in f.Trees[t].
func (f *Forest) keepTree(t int, tr *wideTree) error {
	if err := f.checkWide(t, tr, maxTreeDepth); err != nil {
		return err
	}
	f.Trees[t] = tr.narrow(f.Binner.Edges)
	return nil
}

// checkWide checks tree t, as the model file keeps it, against the rest of
// the forest.
func (f *Forest) checkWide(t int, tr *wideTree, maxDepth int) error {
	n, d := len(tr.Feature), f.Outputs()
	if n < 1 || n > maxTreeNodes {
		return invalid("tree %d: %d nodes, want 1..%d", t, n, maxTreeNodes)
	}
	for _, a := range []struct {
		name string
		n    int
	}{
		{"bin", len(tr.Bin)}, {"threshold", len(tr.Threshold)}, {"missing_left", len(tr.MissingLeft)},
		{"left", len(tr.Left)}, {"samples", len(tr.Samples)}, {"weight", len(tr.Weight)}, {"gain", len(tr.Gain)},
	} {
		if a.n != n {
			return invalid("tree %d: %d %s entries for %d nodes", t, a.n, a.name, n)
		}
	}
	if int64(n)*int64(d) > maxTreeValues {
		return invalid("tree %d: %d nodes of %d values each is too many", t, n, d)
	}
	if len(tr.Value) != n*d {
		return invalid("tree %d: %d values for %d nodes of %d outputs", t, len(tr.Value), n, d)
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	next := 1 // the left child the next internal node must have
	// Children being numbered consecutively, each level of the tree is a
	// range of nodes: the current level ends at levelEnd, and the next one
	// at next once the current level is done.
	depth, levelEnd := 0, 1
	for i := 0; i < n; i++ {
		if i == levelEnd {
			depth, levelEnd = depth+1, next
			if depth > maxDepth {
				return invalid("tree %d node %d: depth %d exceeds the limit of %d", t, i, depth, maxDepth)
			}
		}
		feat, l := tr.Feature[i], tr.Left[i]
		switch {
		case feat == -1:
			switch {
			case l != -1:
				return invalid("tree %d node %d: leaf with left child %d, want -1", t, i, l)
			case math.Float64bits(tr.Threshold[i]) != 0:
				return invalid("tree %d node %d: leaf with threshold %v, want 0", t, i, tr.Threshold[i])
			case tr.Bin[i] != 0 || tr.MissingLeft[i]:
				return invalid("tree %d node %d: leaf with bin %d and missing_left %v, want 0 and false", t, i, tr.Bin[i], tr.MissingLeft[i])
			case math.Float64bits(tr.Gain[i]) != 0:
				return invalid("tree %d node %d: leaf with gain %v, want 0", t, i, tr.Gain[i])
			}
		case feat < -1 || int(feat) >= f.NumFeatures:
			return invalid("tree %d node %d: feature %d out of range [0,%d)", t, i, feat, f.NumFeatures)
		default:
			switch {
			case int(l) <= i:
				return invalid("tree %d node %d: left child %d does not come after its parent", t, i, l)
			case int(l) >= n-1:
				return invalid("tree %d node %d: children %d and %d out of range (the tree has %d nodes)", t, i, l, int64(l)+1, n)
			case int(l) != next:
				return invalid("tree %d node %d: left child is %d, want %d (children must follow in breadth-first order)", t, i, l, next)
			}
			next += 2
			if f.Binner.IsCategorical(int(feat)) {
				if err := f.checkCategorySplit(t, i, tr); err != nil {
					return err
				}
				break
			}
			edges := f.Binner.Edges[feat]
			b := int(tr.Bin[i])
			if b >= len(edges) {
				return invalid("tree %d node %d: split bin %d out of range: feature %d has %d bin edges", t, i, b, feat, len(edges))
			}
			if math.Float64bits(tr.Threshold[i]) != math.Float64bits(edges[b]) {
				return invalid("tree %d node %d: threshold %v is not edge %d of feature %d (%v)", t, i, tr.Threshold[i], b, feat, edges[b])
			}
		}
		for q, v := range tr.Value[i*d : (i+1)*d] {
			if !finite(v) {
				return invalid("tree %d node %d: value %d is %v, want a finite number", t, i, q, v)
			}
		}
		switch {
		case !finite(tr.Gain[i]):
			return invalid("tree %d node %d: gain %v is not finite", t, i, tr.Gain[i])
		case tr.Samples[i] < 0:
			return invalid("tree %d node %d: samples %d is negative", t, i, tr.Samples[i])
		case tr.Weight[i] < 0:
			return invalid("tree %d node %d: weight %d is negative", t, i, tr.Weight[i])
		}
	}
	if next != n {
		return invalid("tree %d: %d nodes but the splits have children 1..%d", t, n, next-1)
	}
	want := f.categoryIndex(tr.Feature)
	switch {
	case want == nil && (tr.Category != nil || len(tr.Sets) > 0):
		return invalid("tree %d: %d category sets but no categorical split", t, len(tr.Sets))
	case want != nil && !slices.Equal(tr.Category, want):
		return invalid("tree %d: the category set indices do not number the categorical splits in node order", t)
	case want != nil && int(slices.Max(want))+1 != len(tr.Sets):
		return invalid("tree %d: %d category sets for %d categorical splits", t, len(tr.Sets), slices.Max(want)+1)
	}
	return nil
}

// categoryIndex returns what tr.Category must be: the number, in node
// order, of each node that splits a categorical feature, -1 for the other
// nodes; nil when there is no such node.
func (f *Forest) categoryIndex(feature []int32) []int32 {
	var idx []int32
	k := int32(0)
	for i, feat := range feature {
		if feat < 0 || !f.Binner.IsCategorical(int(feat)) {
			continue
		}
		if idx == nil {
			idx = make([]int32, len(feature))
			for q := range idx {
				idx[q] = -1
			}
		}
		idx[i] = k
		k++
	}
	return idx
}

// checkCategorySplit checks node i of tree t, a split of a categorical
// feature: Bin 0, Threshold 0, and MissingLeft telling whether its set
// (when it has one) holds the missing code.
func (f *Forest) checkCategorySplit(t, i int, tr *wideTree) error {
	switch {
	case tr.Bin[i] != 0:
		return invalid("tree %d node %d: categorical split with bin %d, want 0", t, i, tr.Bin[i])
	case math.Float64bits(tr.Threshold[i]) != 0:
		return invalid("tree %d node %d: categorical split with threshold %v, want 0", t, i, tr.Threshold[i])
	}
	if i < len(tr.Category) && tr.Category[i] >= 0 && int(tr.Category[i]) < len(tr.Sets) {
		set := tr.Sets[tr.Category[i]]
		if set.Has(f.Binner.MissingCode(int(tr.Feature[i]))) != tr.MissingLeft[i] {
			return invalid("tree %d node %d: missing_left is %v but the category set says otherwise", t, i, tr.MissingLeft[i])
		}
	}
	return nil
}

// validateLeafSamples checks f.LeafSamples against the trees: each tree
// keeps, leaf after leaf in node order, Samples[leaf] rows in increasing
// order, each a training row, with counts of at least 1 that sum to
// Weight[leaf].
func (f *Forest) validateLeafSamples() error {
	ls := f.LeafSamples
	if ls == nil {
		if f.Options.KeepLeafSamples {
			return invalid("the options keep leaf samples but the forest has none")
		}
		return nil
	}
	switch {
	case !f.Options.KeepLeafSamples:
		return invalid("the forest has leaf samples but its options do not keep them")
	case len(ls.Rows) != len(f.Trees) || len(ls.Weights) != len(f.Trees):
		return invalid("leaf samples of %d and %d trees for %d trees", len(ls.Rows), len(ls.Weights), len(f.Trees))
	}
	n := int32(len(ls.Y))
	for t := range f.Trees {
		tr := &f.Trees[t]
		rows, counts := ls.Rows[t], ls.Weights[t]
		if len(counts) != len(rows) {
			return invalid("tree %d: %d leaf sample rows but %d weights", t, len(rows), len(counts))
		}
		k := 0
		for i, feat := range tr.Feature {
			if feat >= 0 {
				continue
			}
			m := int(tr.Samples(i))
			if m > len(rows)-k {
				return invalid("tree %d leaf %d: %d samples, but %d leaf sample rows are left", t, i, m, len(rows)-k)
			}
			var w int64
			for q := k; q < k+m; q++ {
				switch r := rows[q]; {
				case r < 0 || r >= n:
					return invalid("tree %d leaf %d: leaf sample row %d, want 0..%d", t, i, r, n-1)
				case q > k && r <= rows[q-1]:
					return invalid("tree %d leaf %d: leaf sample rows not in increasing order", t, i)
				case counts[q] < 1:
					return invalid("tree %d leaf %d: leaf sample weight %d, want >= 1", t, i, counts[q])
				}
				if counts[q] > tr.Weight(i)-w { // no overflow: 0 <= w <= Weight
					return invalid("tree %d leaf %d: leaf sample weights exceed the leaf's weight %d", t, i, tr.Weight(i))
				}
				w += counts[q]
			}
			if w != tr.Weight(i) {
				return invalid("tree %d leaf %d: leaf sample weights sum to %d, the leaf's weight is %d", t, i, w, tr.Weight(i))
			}
			k += m
		}
		if k != len(rows) {
			return invalid("tree %d: %d leaf sample rows, its leaves hold %d", t, len(rows), k)
		}
	}
	return nil
}
