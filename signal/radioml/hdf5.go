package radioml

// A minimal HDF5 reader: enough of the format (the HDF Group's "HDF5 File
// Format Specification", version 3) to find the datasets of a file's root
// group and read their elements. It reads what h5py writes for plain
// numeric arrays:
//
//   - superblock versions 0 to 3 (h5py's default "earliest" files have 0,
//     libver="latest" ones 3), at offset 0 or after a user block;
//   - version 1 and 2 object headers with their continuation blocks;
//   - root groups held as a symbol table (version 1 B-tree and local heap)
//     or as link messages (compact storage);
//   - fixed-point (1, 2, 4, 8 bytes, signed or not) and IEEE
//     floating-point (4, 8 bytes) elements of either byte order;
//   - compact, contiguous and chunked layouts (layout message versions 3
//     and 4; chunks indexed by a version 1 B-tree, or a single chunk),
//     with the shuffle and deflate (gzip) filters.
//
// Anything else (dense link storage, the version 4 chunk indexes other
// than a single chunk, other filters, variable-length or compound types)
// is refused with an error that names it. Every size read from the file
// is checked against the file's size and the limits below before
// anything is allocated for it.

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"sort"
)

// Limits on what the reader accepts from a file.
const (
	maxHeaderMessages   = 4096    // messages in one object header
	maxContinuations    = 256     // continuation blocks of one object header
	maxRootLinks        = 1 << 16 // links of the root group
	maxBTreeDepth       = 64      // levels of a version 1 B-tree
	maxRank             = 32      // HDF5's own limit on dimensions
	maxChunkBytes       = 1 << 26 // one chunk, decompressed (h5py's own chunks are at most 1 MiB)
	maxCompactBytes     = 1 << 16 // compact data lives in the object header
	maxFilterClientData = 256     // client values of one filter
)

var errUndefined = errors.New("undefined address")

// undef is HDF5's undefined address (all bits set).
const undef = ^uint64(0)

// h5file is an open HDF5 file.
type h5file struct {
	r       io.ReaderAt
	size    int64 // bytes
	base    uint64
	offSize int    // size of offsets (addresses), bytes
	lenSize int    // size of lengths, bytes
	root    uint64 // the root group's object header
}

// h5dataset describes one dataset: its shape, element type and storage.
type h5dataset struct {
	name     string
	dims     []uint64
	elem     elemType
	layout   int    // 0 compact, 1 contiguous, 2 chunked
	addr     uint64 // contiguous: data address (absolute); chunked: index address
	compact  []byte
	chunk    []uint64 // chunk dims (rank), chunked only
	chunks   []h5chunk
	filters  []h5filter
	single   bool   // version 4 single-chunk index
	singleSz uint64 // its stored size when filtered
	singleFM uint32 // and filter mask
}

// h5chunk is one stored chunk: its offset in the dataset (rank values),
// its file address, stored size and filter mask.
type h5chunk struct {
	offset []uint64
	addr   uint64
	size   uint64
	mask   uint32
}

type h5filter struct {
	id   uint16
	name string
	data []uint32
}

// elemType is a numeric element type.
type elemType struct {
	float  bool
	signed bool
	big    bool // big-endian
	size   int  // bytes
}

func (t elemType) String() string {
	order := "LE"
	if t.big {
		order = "BE"
	}
	switch {
	case t.float:
		return fmt.Sprintf("float%d %s", 8*t.size, order)
	case t.signed:
		return fmt.Sprintf("int%d %s", 8*t.size, order)
	}
	return fmt.Sprintf("uint%d %s", 8*t.size, order)
}

// float64At returns element i of b as a float64.
func (t elemType) float64At(b []byte, i int) float64 {
	p := b[i*t.size : (i+1)*t.size]
	var u uint64
	switch t.size {
	case 1:
		u = uint64(p[0])
	case 2:
		u = uint64(t.order().Uint16(p))
	case 4:
		u = uint64(t.order().Uint32(p))
	case 8:
		u = t.order().Uint64(p)
	}
	switch {
	case t.float && t.size == 4:
		return float64(math.Float32frombits(uint32(u)))
	case t.float:
		return math.Float64frombits(u)
	case t.signed:
		shift := 64 - 8*t.size
		return float64(int64(u<<shift) >> shift)
	}
	return float64(u)
}

func (t elemType) order() binary.ByteOrder {
	if t.big {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// formatError is a malformed or unsupported file.
func formatError(format string, a ...any) error { return fmt.Errorf(format, a...) }

// readAt reads n bytes at absolute offset off, refusing reads past the end.
func (f *h5file) readAt(off uint64, n uint64) ([]byte, error) {
	if off == undef {
		return nil, errUndefined
	}
	if n > uint64(f.size) || off > uint64(f.size)-n {
		return nil, formatError("%d bytes at offset %d run past the end of the file (%d bytes)", n, off, f.size)
	}
	b := make([]byte, n)
	if _, err := f.r.ReadAt(b, int64(off)); err != nil && !(err == io.EOF && n == 0) {
		return nil, err
	}
	return b, nil
}

// abs turns a file address into an absolute offset.
func (f *h5file) abs(a uint64) uint64 {
	if a == undef {
		return undef
	}
	return a + f.base
}

// cursor decodes little-endian fields from a buffer and remembers the
// first overrun.
type cursor struct {
	b   []byte
	p   int
	err error
	f   *h5file
}

func (c *cursor) need(n int) bool {
	if c.err != nil {
		return false
	}
	if n < 0 || c.p+n > len(c.b) {
		c.err = formatError("structure truncated (%d bytes needed at %d of %d)", n, c.p, len(c.b))
		return false
	}
	return true
}

func (c *cursor) bytes(n int) []byte {
	if !c.need(n) {
		return nil
	}
	v := c.b[c.p : c.p+n]
	c.p += n
	return v
}

func (c *cursor) skip(n int) { c.bytes(n) }

func (c *cursor) u8() uint8 {
	if b := c.bytes(1); b != nil {
		return b[0]
	}
	return 0
}

func (c *cursor) u16() uint16 {
	if b := c.bytes(2); b != nil {
		return binary.LittleEndian.Uint16(b)
	}
	return 0
}

func (c *cursor) u32() uint32 {
	if b := c.bytes(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

// uint reads an n-byte little-endian unsigned integer (n ≤ 8); all-ones
// is returned as undef.
func (c *cursor) uint(n int) uint64 {
	b := c.bytes(n)
	if b == nil {
		return 0
	}
	var v uint64
	for i := n - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	if n < 8 && v == 1<<(8*n)-1 {
		return undef
	}
	return v
}

func (c *cursor) addr() uint64   { return c.uint(c.f.offSize) }
func (c *cursor) length() uint64 { return c.uint(c.f.lenSize) }

var h5sig = []byte("\x89HDF\r\n\x1a\n")

// openH5 reads the superblock of the HDF5 file r of size bytes.
func openH5(r io.ReaderAt, size int64) (*h5file, error) {
	f := &h5file{r: r, size: size}
	// The superblock is at 0, 512, 1024, 2048, ... (after a user block).
	var at int64 = -1
	sig := make([]byte, 8)
	for off := int64(0); off+8 <= size; off = max(512, 2*off) {
		if _, err := r.ReadAt(sig, off); err != nil {
			return nil, err
		}
		if bytes.Equal(sig, h5sig) {
			at = off
			break
		}
	}
	if at < 0 {
		return nil, formatError("not an HDF5 file (no superblock signature)")
	}
	head, err := f.readAt(uint64(at), min(uint64(size-at), 256))
	if err != nil {
		return nil, err
	}
	c := &cursor{b: head, p: 8, f: f}
	version := c.u8()
	switch version {
	case 0, 1:
		c.skip(3) // free-space, root symbol table entry, reserved
		c.skip(1) // shared header message version
		f.offSize, f.lenSize = int(c.u8()), int(c.u8())
		if err := f.checkSizes(); err != nil {
			return nil, err
		}
		c.skip(1)
		c.skip(4) // group leaf and internal node K
		c.skip(4) // consistency flags
		if version == 1 {
			c.skip(4) // indexed storage K, reserved
		}
		f.base = c.addr()
		if f.base == undef {
			return nil, formatError("superblock: undefined base address")
		}
		c.addr() // free space
		c.addr() // end of file
		c.addr() // driver information
		// Root group symbol table entry (its scratch-pad copy of the
		// B-tree and heap addresses is not needed: the root object
		// header has them too).
		c.addr() // link name offset
		f.root = c.addr()
	case 2, 3:
		f.offSize, f.lenSize = int(c.u8()), int(c.u8())
		if err := f.checkSizes(); err != nil {
			return nil, err
		}
		c.skip(1) // consistency flags
		f.base = c.addr()
		if f.base == undef {
			return nil, formatError("superblock: undefined base address")
		}
		c.addr() // superblock extension
		c.addr() // end of file
		f.root = c.addr()
	default:
		return nil, formatError("superblock version %d: want 0 to 3", version)
	}
	if c.err != nil {
		return nil, fmt.Errorf("superblock: %w", c.err)
	}
	if f.base > uint64(size) {
		return nil, formatError("superblock: base address %d beyond the file's %d bytes", f.base, size)
	}
	return f, nil
}

func (f *h5file) checkSizes() error {
	ok := func(n int) bool { return n == 2 || n == 4 || n == 8 }
	if !ok(f.offSize) || !ok(f.lenSize) {
		return formatError("superblock: offset size %d and length size %d: want 2, 4 or 8", f.offSize, f.lenSize)
	}
	return nil
}

// h5message is one object header message.
type h5message struct {
	typ  uint16
	data []byte
}

// headerMessages reads the messages of the object header at address a,
// following continuation blocks.
func (f *h5file) headerMessages(a uint64) ([]h5message, error) {
	off := f.abs(a)
	first, err := f.readAt(off, min(16, uint64(f.size)-min(off, uint64(f.size))))
	if err != nil {
		return nil, fmt.Errorf("object header at %d: %w", a, err)
	}
	if len(first) >= 4 && string(first[:4]) == "OHDR" {
		return f.headerV2(off)
	}
	return f.headerV1(off)
}

func (f *h5file) headerV1(off uint64) ([]h5message, error) {
	hb, err := f.readAt(off, 16)
	if err != nil {
		return nil, fmt.Errorf("object header at %d: %w", off, err)
	}
	c := &cursor{b: hb, f: f}
	if v := c.u8(); v != 1 {
		return nil, formatError("object header at %d: version %d: want 1 or 2", off, v)
	}
	c.skip(1)
	count := int(c.u16())
	c.skip(4) // reference count
	size := uint64(c.u32())
	if count > maxHeaderMessages {
		return nil, formatError("object header at %d: %d messages (at most %d)", off, count, maxHeaderMessages)
	}
	type block struct{ off, size uint64 }
	blocks := []block{{off + 16, size}}
	var msgs []h5message
	for len(blocks) > 0 && len(msgs) < count {
		b := blocks[0]
		blocks = blocks[1:]
		data, err := f.readAt(b.off, b.size)
		if err != nil {
			return nil, fmt.Errorf("object header at %d: %w", off, err)
		}
		c := &cursor{b: data, f: f}
		for c.p+8 <= len(data) && len(msgs) < count {
			typ := c.u16()
			n := int(c.u16())
			c.skip(4) // flags, reserved
			body := c.bytes(n)
			if c.err != nil {
				return nil, fmt.Errorf("object header at %d: %w", off, c.err)
			}
			msgs = append(msgs, h5message{typ, body})
			if typ == 0x10 {
				if len(blocks)+1 > maxContinuations {
					return nil, formatError("object header at %d: more than %d continuation blocks", off, maxContinuations)
				}
				cc := &cursor{b: body, f: f}
				a, l := cc.addr(), cc.length()
				if cc.err != nil {
					return nil, fmt.Errorf("object header at %d: continuation: %w", off, cc.err)
				}
				blocks = append(blocks, block{f.abs(a), l})
			}
		}
	}
	return msgs, nil
}

func (f *h5file) headerV2(off uint64) ([]h5message, error) {
	hb, err := f.readAt(off, min(uint64(f.size)-off, 64))
	if err != nil {
		return nil, fmt.Errorf("object header at %d: %w", off, err)
	}
	c := &cursor{b: hb, p: 4, f: f}
	if v := c.u8(); v != 2 {
		return nil, formatError("object header at %d: OHDR version %d: want 2", off, v)
	}
	flags := c.u8()
	if flags&0x20 != 0 {
		c.skip(16) // times
	}
	if flags&0x10 != 0 {
		c.skip(4) // attribute phase change values
	}
	size := c.uint(1 << (flags & 3))
	if c.err != nil {
		return nil, fmt.Errorf("object header at %d: %w", off, c.err)
	}
	type block struct{ off, size uint64 } // messages, without signature and checksum
	blocks := []block{{off + uint64(c.p), size}}
	var msgs []h5message
	hasOrder := flags&0x04 != 0
	for seen := 0; len(blocks) > 0; seen++ {
		b := blocks[0]
		blocks = blocks[1:]
		data, err := f.readAt(b.off, b.size)
		if err != nil {
			return nil, fmt.Errorf("object header at %d: %w", off, err)
		}
		c := &cursor{b: data, f: f}
		hsize := 4
		if hasOrder {
			hsize = 6
		}
		for c.p+hsize <= len(data) {
			typ := uint16(c.u8())
			n := int(c.u16())
			c.skip(1) // flags
			if hasOrder {
				c.skip(2)
			}
			body := c.bytes(n)
			if c.err != nil {
				return nil, fmt.Errorf("object header at %d: %w", off, c.err)
			}
			if len(msgs) >= maxHeaderMessages {
				return nil, formatError("object header at %d: more than %d messages", off, maxHeaderMessages)
			}
			msgs = append(msgs, h5message{typ, body})
			if typ == 0x10 {
				if seen+len(blocks)+1 > maxContinuations {
					return nil, formatError("object header at %d: more than %d continuation blocks", off, maxContinuations)
				}
				cc := &cursor{b: body, f: f}
				a, l := cc.addr(), cc.length()
				if cc.err != nil || l < 8 {
					return nil, formatError("object header at %d: bad continuation message", off)
				}
				sig, err := f.readAt(f.abs(a), 4)
				if err != nil || string(sig) != "OCHK" {
					return nil, formatError("object header at %d: continuation block at %d has no OCHK signature", off, a)
				}
				blocks = append(blocks, block{f.abs(a) + 4, l - 8})
			}
		}
	}
	return msgs, nil
}

// rootLinks returns the names and object header addresses of the root
// group's members.
func (f *h5file) rootLinks() (map[string]uint64, error) {
	bt, heap := undef, undef
	links := map[string]uint64{}
	{
		msgs, err := f.headerMessages(f.root)
		if err != nil {
			return nil, fmt.Errorf("root group: %w", err)
		}
		for _, m := range msgs {
			switch m.typ {
			case 0x11: // symbol table
				c := &cursor{b: m.data, f: f}
				bt, heap = c.addr(), c.addr()
				if c.err != nil {
					return nil, fmt.Errorf("root group: symbol table message: %w", c.err)
				}
			case 0x02: // link info
				c := &cursor{b: m.data, f: f}
				c.skip(1)
				fl := c.u8()
				if fl&1 != 0 {
					c.skip(8)
				}
				if heapAddr := c.addr(); c.err == nil && heapAddr != undef {
					return nil, formatError("root group: links in dense storage (a fractal heap) are not supported")
				}
			case 0x06: // link
				name, addr, err := f.parseLink(m.data)
				if err != nil {
					return nil, fmt.Errorf("root group: %w", err)
				}
				if name != "" {
					if len(links) >= maxRootLinks {
						return nil, formatError("root group: more than %d links", maxRootLinks)
					}
					links[name] = addr
				}
			}
		}
		if bt == undef {
			return links, nil
		}
	}
	hb, err := f.readAt(f.abs(heap), 8+2*uint64(f.lenSize)+uint64(f.offSize))
	if err != nil {
		return nil, fmt.Errorf("root group: local heap: %w", err)
	}
	c := &cursor{b: hb, f: f}
	if string(c.bytes(4)) != "HEAP" {
		return nil, formatError("root group: no local heap at %d", heap)
	}
	c.skip(4)
	heapSize := c.length()
	c.length() // free list
	heapData := c.addr()
	names, err := f.readAt(f.abs(heapData), heapSize)
	if err != nil {
		return nil, fmt.Errorf("root group: local heap data: %w", err)
	}
	err = f.walkBTree(f.abs(bt), 0, 0, map[uint64]bool{}, func(level int, key []byte, child uint64) error {
		if level > 0 {
			return nil
		}
		return f.readSymbolNode(child, names, links)
	})
	if err != nil {
		return nil, fmt.Errorf("root group: %w", err)
	}
	return links, nil
}

// parseLink decodes a link message; only hard links are kept (a soft or
// external link gives the name "").
func (f *h5file) parseLink(b []byte) (string, uint64, error) {
	c := &cursor{b: b, f: f}
	if v := c.u8(); v != 1 {
		return "", 0, formatError("link message version %d: want 1", v)
	}
	flags := c.u8()
	typ := uint8(0)
	if flags&0x08 != 0 {
		typ = c.u8()
	}
	if flags&0x04 != 0 {
		c.skip(8)
	}
	if flags&0x10 != 0 {
		c.skip(1)
	}
	n := c.uint(1 << (flags & 3))
	if n > uint64(len(b)) {
		return "", 0, formatError("link name of %d bytes in a %d-byte message", n, len(b))
	}
	name := string(c.bytes(int(n)))
	if typ != 0 {
		return "", 0, c.err
	}
	a := c.addr()
	return name, a, c.err
}

// readSymbolNode adds the entries of the symbol table node at address a.
func (f *h5file) readSymbolNode(a uint64, names []byte, links map[string]uint64) error {
	entry := 2*f.offSize + 24
	hb, err := f.readAt(f.abs(a), 8)
	if err != nil {
		return err
	}
	if string(hb[:4]) != "SNOD" {
		return formatError("no symbol table node at %d", a)
	}
	n := int(binary.LittleEndian.Uint16(hb[6:8]))
	body, err := f.readAt(f.abs(a)+8, uint64(n*entry))
	if err != nil {
		return err
	}
	c := &cursor{b: body, f: f}
	for range n {
		nameOff := c.uint(f.offSize)
		obj := c.addr()
		c.skip(24)
		if c.err != nil {
			return c.err
		}
		if nameOff >= uint64(len(names)) {
			return formatError("symbol name offset %d beyond the %d-byte heap", nameOff, len(names))
		}
		s := names[nameOff:]
		if i := bytes.IndexByte(s, 0); i >= 0 {
			s = s[:i]
		}
		if len(links) >= maxRootLinks {
			return formatError("more than %d links", maxRootLinks)
		}
		links[string(s)] = obj
	}
	return nil
}

// walkBTree visits a version 1 B-tree node at absolute offset off: fn gets
// each leaf child's level, the key before it and its address. keySize is
// the key size of a chunk tree, 0 for a group tree (whose keys are lengths).
func (f *h5file) walkBTree(off uint64, keySize int, depth int, seen map[uint64]bool, fn func(level int, key []byte, child uint64) error) error {
	if depth > maxBTreeDepth {
		return formatError("B-tree deeper than %d levels", maxBTreeDepth)
	}
	if seen[off] {
		return formatError("B-tree node at %d visited twice", off)
	}
	seen[off] = true
	hdr := 8 + 2*uint64(f.offSize)
	hb, err := f.readAt(off, hdr)
	if err != nil {
		return fmt.Errorf("B-tree node: %w", err)
	}
	if string(hb[:4]) != "TREE" {
		return formatError("no B-tree node at %d", off)
	}
	typ, level := hb[4], int(hb[5])
	n := uint64(binary.LittleEndian.Uint16(hb[6:8]))
	ks := uint64(keySize)
	switch {
	case keySize == 0 && typ == 0:
		ks = uint64(f.lenSize)
	case keySize == 0 || typ != 1:
		return formatError("B-tree node at %d has type %d: want a %s node", off, typ, map[bool]string{true: "group", false: "chunk"}[keySize == 0])
	}
	body, err := f.readAt(off+hdr, n*(ks+uint64(f.offSize))+ks)
	if err != nil {
		return fmt.Errorf("B-tree node: %w", err)
	}
	c := &cursor{b: body, f: f}
	for range n {
		key := c.bytes(int(ks))
		child := c.addr()
		if c.err != nil {
			return c.err
		}
		if level > 0 {
			if err := f.walkBTree(f.abs(child), keySize, depth+1, seen, fn); err != nil {
				return err
			}
			continue
		}
		if err := fn(0, key, child); err != nil {
			return err
		}
	}
	return nil
}

// dataset reads the object header at address a as a dataset.
func (f *h5file) dataset(name string, a uint64) (*h5dataset, error) {
	msgs, err := f.headerMessages(a)
	if err != nil {
		return nil, err
	}
	d := &h5dataset{name: name, layout: -1}
	var haveSpace, haveType bool
	var layoutMsg []byte
	for _, m := range msgs {
		switch m.typ {
		case 0x01:
			if d.dims, err = f.parseDataspace(m.data); err != nil {
				return nil, err
			}
			haveSpace = true
		case 0x03:
			if d.elem, err = parseDatatype(m.data); err != nil {
				return nil, err
			}
			haveType = true
		case 0x08:
			layoutMsg = m.data
		case 0x0B:
			if d.filters, err = parseFilters(m.data); err != nil {
				return nil, err
			}
		}
	}
	if !haveSpace || !haveType || layoutMsg == nil {
		return nil, formatError("not a dataset (no dataspace, datatype or layout message)")
	}
	if err := f.parseLayout(d, layoutMsg); err != nil {
		return nil, err
	}
	for _, ft := range d.filters {
		if ft.id != 1 && ft.id != 2 {
			return nil, formatError("%s is not supported (deflate and shuffle are)", ft)
		}
	}
	return d, nil
}

func (f *h5file) parseDataspace(b []byte) ([]uint64, error) {
	c := &cursor{b: b, f: f}
	v := c.u8()
	rank := int(c.u8())
	flags := c.u8()
	switch v {
	case 1:
		c.skip(5)
	case 2:
		if t := c.u8(); t == 2 {
			return nil, formatError("null dataspace")
		}
	default:
		return nil, formatError("dataspace version %d: want 1 or 2", v)
	}
	if rank > maxRank {
		return nil, formatError("dataspace of rank %d (at most %d)", rank, maxRank)
	}
	dims := make([]uint64, rank)
	for i := range dims {
		dims[i] = c.length()
	}
	_ = flags // maximum dimensions follow; not needed
	if c.err != nil {
		return nil, fmt.Errorf("dataspace: %w", c.err)
	}
	return dims, nil
}

func parseDatatype(b []byte) (elemType, error) {
	if len(b) < 8 {
		return elemType{}, formatError("datatype message truncated")
	}
	class := b[0] & 0x0f
	bits0 := b[1]
	size := int(binary.LittleEndian.Uint32(b[4:8]))
	t := elemType{size: size, big: bits0&1 != 0}
	switch class {
	case 0:
		t.signed = bits0&0x08 != 0
		if size != 1 && size != 2 && size != 4 && size != 8 {
			return t, formatError("integer of %d bytes: want 1, 2, 4 or 8", size)
		}
	case 1:
		t.float = true
		if bits0&0x40 != 0 {
			return t, formatError("VAX floating point is not supported")
		}
		if size != 4 && size != 8 {
			return t, formatError("floating point of %d bytes: want 4 or 8", size)
		}
	default:
		return t, formatError("datatype class %d: only integers (0) and floating point (1) are supported", class)
	}
	return t, nil
}

func parseFilters(b []byte) ([]h5filter, error) {
	c := &cursor{b: b}
	v := c.u8()
	n := int(c.u8())
	if v == 1 {
		c.skip(6)
	} else if v != 2 {
		return nil, formatError("filter pipeline version %d: want 1 or 2", v)
	}
	var fs []h5filter
	for range n {
		var ft h5filter
		ft.id = c.u16()
		nameLen := 0
		if v == 1 || ft.id >= 256 {
			nameLen = int(c.u16())
		}
		c.skip(2) // flags
		nv := int(c.u16())
		if nv > maxFilterClientData {
			return nil, formatError("filter %d has %d client values", ft.id, nv)
		}
		if nameLen > 0 {
			if v == 1 {
				nameLen = (nameLen + 7) &^ 7
			}
			ft.name = string(bytes.TrimRight(c.bytes(nameLen), "\x00"))
		}
		for range nv {
			ft.data = append(ft.data, c.u32())
		}
		if v == 1 && nv%2 == 1 {
			c.skip(4)
		}
		if c.err != nil {
			return nil, fmt.Errorf("filter pipeline: %w", c.err)
		}
		fs = append(fs, ft)
	}
	return fs, nil
}

// filterName names a filter for errors.
func (ft h5filter) String() string {
	names := map[uint16]string{1: "deflate", 2: "shuffle", 3: "fletcher32", 4: "szip", 5: "nbit", 6: "scaleoffset"}
	if n, ok := names[ft.id]; ok {
		return fmt.Sprintf("%s (filter %d)", n, ft.id)
	}
	if ft.name != "" {
		return fmt.Sprintf("%q (filter %d)", ft.name, ft.id)
	}
	return fmt.Sprintf("filter %d", ft.id)
}

func (f *h5file) parseLayout(d *h5dataset, b []byte) error {
	c := &cursor{b: b, f: f}
	v := c.u8()
	if v != 3 && v != 4 {
		return formatError("data layout version %d: want 3 or 4", v)
	}
	d.layout = int(c.u8())
	switch d.layout {
	case 0:
		n := int(c.u16())
		if n > maxCompactBytes {
			return formatError("compact data of %d bytes", n)
		}
		d.compact = c.bytes(n)
	case 1:
		d.addr = f.abs(c.addr())
		c.length()
	case 2:
		var ndims int
		var dims []uint64
		if v == 3 {
			ndims = int(c.u8())
			d.addr = f.abs(c.addr())
			for range min(ndims, maxRank+1) {
				dims = append(dims, uint64(c.u32()))
			}
		} else {
			flags := c.u8()
			ndims = int(c.u8())
			enc := int(c.u8())
			if enc < 1 || enc > 8 {
				return formatError("chunk dimension size of %d bytes", enc)
			}
			for range min(ndims, maxRank+1) {
				dims = append(dims, c.uint(enc))
			}
			switch idx := c.u8(); idx {
			case 1:
				if flags&0x02 != 0 {
					d.singleSz = c.length()
					d.singleFM = c.u32()
				}
				d.single = true
			default:
				names := map[uint8]string{2: "implicit", 3: "fixed array", 4: "extensible array", 5: "version 2 B-tree"}
				return formatError("chunk index type %d (%s) is not supported: write the file with h5py's default libver, or contiguous", idx, names[idx])
			}
			d.addr = f.abs(c.addr())
		}
		if c.err != nil {
			return fmt.Errorf("data layout: %w", c.err)
		}
		if ndims != len(d.dims)+1 {
			return formatError("chunks of %d dimensions for a dataset of rank %d", ndims, len(d.dims))
		}
		d.chunk = dims[:len(d.dims)]
		bytesPer := uint64(d.elem.size)
		for _, n := range d.chunk {
			hi, lo := bits.Mul64(bytesPer, n)
			if n == 0 || hi != 0 || lo > maxChunkBytes {
				return formatError("chunk of %v elements of %d bytes: at most %d bytes", d.chunk, d.elem.size, maxChunkBytes)
			}
			bytesPer = lo
		}
	default:
		return formatError("data layout class %d: want compact, contiguous or chunked", d.layout)
	}
	if c.err != nil {
		return fmt.Errorf("data layout: %w", c.err)
	}
	return nil
}

// loadChunks reads a chunked dataset's index into d.chunks.
func (f *h5file) loadChunks(d *h5dataset) error {
	if d.layout != 2 || d.chunks != nil {
		return nil
	}
	rank := len(d.dims)
	if d.single {
		size := d.chunkBytes()
		if len(d.filters) > 0 {
			size = d.singleSz
		}
		d.chunks = []h5chunk{{offset: make([]uint64, rank), addr: d.addr, size: size, mask: d.singleFM}}
		return nil
	}
	if d.addr == undef {
		d.chunks = []h5chunk{} // nothing written: fill value
		return nil
	}
	keySize := 8 + 8*(rank+1)
	err := f.walkBTree(d.addr, keySize, 0, map[uint64]bool{}, func(_ int, key []byte, child uint64) error {
		c := &cursor{b: key, f: f}
		ch := h5chunk{size: uint64(c.u32()), mask: c.u32(), addr: f.abs(child)}
		for range rank {
			ch.offset = append(ch.offset, c.uint(8))
		}
		if c.err != nil {
			return c.err
		}
		for i, o := range ch.offset {
			if o%d.chunk[i] != 0 || o >= d.dims[i] {
				return formatError("chunk at offset %v does not fit the dataset %v in chunks of %v", ch.offset, d.dims, d.chunk)
			}
		}
		if ch.size > uint64(f.size) {
			return formatError("chunk of %d bytes in a file of %d", ch.size, f.size)
		}
		d.chunks = append(d.chunks, ch)
		return nil
	})
	if err != nil {
		return err
	}
	sort.Slice(d.chunks, func(i, j int) bool { return d.chunks[i].offset[0] < d.chunks[j].offset[0] })
	return nil
}

// chunkBytes is the size of one decoded chunk.
func (d *h5dataset) chunkBytes() uint64 {
	n := uint64(d.elem.size)
	for _, c := range d.chunk {
		n *= c // checked in parseLayout
	}
	return n
}

// rowBytes is the size of one index of the first dimension.
func (d *h5dataset) rowBytes() uint64 {
	n := uint64(d.elem.size)
	for _, v := range d.dims[1:] {
		n *= v // checked by the caller (checkSize)
	}
	return n
}

// checkSize checks that the dataset's bytes fit in the file (contiguous
// and compact data must be stored whole; chunked data at least fits in
// the address space).
func (d *h5dataset) checkSize(fileSize int64) error {
	total := uint64(d.elem.size)
	for _, v := range d.dims {
		hi, lo := bits.Mul64(total, v)
		if hi != 0 || lo > 1<<62 {
			return formatError("shape %v is too large", d.dims)
		}
		total = lo
	}
	switch d.layout {
	case 0:
		if uint64(len(d.compact)) < total {
			return formatError("compact data of %d bytes for %d", len(d.compact), total)
		}
	case 1:
		if total > 0 && (d.addr == undef || total > uint64(fileSize) || d.addr > uint64(fileSize)-total) {
			return formatError("%d bytes of data at %d run past the end of the file (%d bytes)", total, d.addr, fileSize)
		}
	}
	return nil
}

// readRows reads rows [lo, hi) of the first dimension into dst, which
// holds (hi−lo)·rowBytes bytes in the file's element order.
func (f *h5file) readRows(d *h5dataset, lo, hi uint64, dst []byte) error {
	rb := d.rowBytes()
	switch d.layout {
	case 0:
		copy(dst, d.compact[lo*rb:hi*rb])
		return nil
	case 1:
		_, err := f.r.ReadAt(dst, int64(d.addr+lo*rb))
		return err
	}
	if err := f.loadChunks(d); err != nil {
		return err
	}
	clear(dst) // unwritten chunks read as the fill value 0
	var buf []byte
	// The chunks are sorted by their first offset: start at the first
	// that can reach row lo.
	first := sort.Search(len(d.chunks), func(i int) bool { return d.chunks[i].offset[0]+d.chunk[0] > lo })
	for _, ch := range d.chunks[first:] {
		if ch.offset[0] >= hi {
			break
		}
		if ch.offset[0]+d.chunk[0] <= lo {
			continue
		}
		if buf == nil {
			buf = make([]byte, d.chunkBytes())
		}
		if err := f.readChunk(d, ch, buf); err != nil {
			return fmt.Errorf("chunk at %v: %w", ch.offset, err)
		}
		d.copyChunk(ch.offset, buf, lo, hi, dst)
	}
	return nil
}

// readChunk reads and decodes one chunk into buf (chunkBytes long).
func (f *h5file) readChunk(d *h5dataset, ch h5chunk, buf []byte) error {
	raw, err := f.readAt(ch.addr, ch.size)
	if err != nil {
		return err
	}
	for i := len(d.filters) - 1; i >= 0; i-- {
		ft := d.filters[i]
		if ch.mask&(1<<i) != 0 {
			continue // skipped for this chunk
		}
		switch ft.id {
		case 1:
			zr, err := zlib.NewReader(bytes.NewReader(raw))
			if err != nil {
				return fmt.Errorf("deflate: %w", err)
			}
			out := make([]byte, 0, len(buf))
			w := bytes.NewBuffer(out)
			// One byte more than a chunk tells a chunk that inflates too far.
			if _, err := io.Copy(w, io.LimitReader(zr, int64(len(buf))+1)); err != nil {
				return fmt.Errorf("deflate: %w", err)
			}
			raw = w.Bytes()
		case 2:
			size := d.elem.size
			if len(ft.data) > 0 {
				size = int(ft.data[0])
			}
			if size < 1 || size > 64 {
				return formatError("shuffle of %d-byte elements", size)
			}
			raw = unshuffle(raw, size)
		default:
			return formatError("%s is not supported (deflate and shuffle are)", ft)
		}
	}
	if uint64(len(raw)) != uint64(len(buf)) {
		return formatError("decodes to %d bytes, want %d", len(raw), len(buf))
	}
	copy(buf, raw)
	return nil
}

// unshuffle undoes HDF5's shuffle filter: the first bytes of every
// element, then the second bytes, and so on; a remainder is left as is.
func unshuffle(b []byte, size int) []byte {
	n := len(b) / size
	out := make([]byte, len(b))
	for j := range size {
		src := b[j*n : (j+1)*n]
		for i, v := range src {
			out[i*size+j] = v
		}
	}
	copy(out[n*size:], b[n*size:])
	return out
}

// copyChunk copies the part of a decoded chunk at offset off that lies in
// rows [lo, hi) into dst (rows lo..hi−1 of the dataset, row-major).
func (d *h5dataset) copyChunk(off []uint64, chunk []byte, lo, hi uint64, dst []byte) {
	rank := len(d.dims)
	es := uint64(d.elem.size)
	if rank == 1 {
		for i := range d.chunk[0] {
			if g := off[0] + i; g >= lo && g < hi && g < d.dims[0] {
				copy(dst[(g-lo)*es:(g-lo+1)*es], chunk[i*es:(i+1)*es])
			}
		}
		return
	}
	// Runs along the innermost dimension, for every index of the others.
	last := rank - 1
	run := min(d.chunk[last], d.dims[last]-off[last])
	idx := make([]uint64, last) // index within the chunk, dims 0..last−1
	for {
		inside := true
		for k, i := range idx {
			g := off[k] + i
			if g >= d.dims[k] || (k == 0 && (g < lo || g >= hi)) {
				inside = false
				break
			}
		}
		if inside {
			var src, pos uint64
			for k, i := range idx {
				src = src*d.chunk[k] + i
				g := off[k] + i
				if k == 0 {
					g -= lo
				}
				pos = pos*d.dims[k] + g
			}
			src *= d.chunk[last]
			pos = pos*d.dims[last] + off[last]
			copy(dst[pos*es:(pos+run)*es], chunk[src*es:(src+run)*es])
		}
		k := last - 1
		for ; k >= 0; k-- {
			idx[k]++
			if idx[k] < d.chunk[k] {
				break
			}
			idx[k] = 0
		}
		if k < 0 {
			return
		}
	}
}
