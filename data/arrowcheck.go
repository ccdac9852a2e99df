package data

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// Arrow IPC files describe their schema in a flatbuffer, whose vectors
// declare their own lengths. The Arrow library allocates the schema's
// fields (and their key-value metadata) by those lengths before reading
// them, and follows child fields recursively: a hostile file could make
// it allocate terabytes or recurse forever, which no recover catches.
// checkArrowSchema walks the schema first, with bounds checks, and refuses
// such a file, and any nested column (gotrain reads flat columns only).

// errFlatbuffer is the error of a flatbuffer offset out of its buffer.
var errFlatbuffer = errors.New("schema metadata points outside itself")

// checkArrowSchema checks the schema of the Arrow IPC file f (of size
// bytes; the stream format when stream) before the library reads it.
func checkArrowSchema(f *os.File, size int64, stream bool) error {
	var buf []byte
	var schema int
	if stream {
		var head [8]byte
		if _, err := io.ReadFull(f, head[:4]); err != nil {
			return errors.New("no schema message")
		}
		n := int64(binary.LittleEndian.Uint32(head[:4]))
		if n == 0xffffffff { // the continuation marker, then the length
			if _, err := io.ReadFull(f, head[4:]); err != nil {
				return errors.New("no schema message")
			}
			n = int64(binary.LittleEndian.Uint32(head[4:]))
		}
		if n > size {
			return fmt.Errorf("schema message of %d bytes in a file of %d", n, size)
		}
		buf = make([]byte, n)
		if _, err := io.ReadFull(f, buf); err != nil {
			return errors.New("schema message cut short")
		}
		fb := flatbuffer(buf)
		msg, err := fb.root()
		if err != nil {
			return err
		}
		if kind, err := fb.scalar8(msg, 1); err != nil || kind != 1 { // Message.header_type == Schema
			return errors.New("the first message is not a schema")
		}
		if schema, err = fb.table(msg, 2); err != nil || schema == 0 { // Message.header
			return errors.New("the schema message holds no schema")
		}
	} else {
		const tail = 4 + len(arrowFileMagic) // footer length, magic
		if size < int64(2*len(arrowFileMagic)+tail) {
			return errors.New("too small for an Arrow IPC file")
		}
		var end [tail]byte
		if _, err := f.ReadAt(end[:], size-int64(tail)); err != nil {
			return err
		}
		if string(end[4:]) != arrowFileMagic {
			return errors.New("no Arrow IPC file footer")
		}
		n := int64(binary.LittleEndian.Uint32(end[:4]))
		if n <= 0 || n > size-int64(tail) {
			return fmt.Errorf("footer of %d bytes in a file of %d", n, size)
		}
		buf = make([]byte, n)
		if _, err := f.ReadAt(buf, size-int64(tail)-n); err != nil {
			return err
		}
		fb := flatbuffer(buf)
		footer, err := fb.root()
		if err != nil {
			return err
		}
		if schema, err = fb.table(footer, 1); err != nil || schema == 0 { // Footer.schema
			return errors.New("the footer holds no schema")
		}
	}
	return flatbuffer(buf).checkSchema(schema)
}

// flatbuffer reads a flatbuffer with bounds checks: each method returns
// errFlatbuffer rather than read outside it.
type flatbuffer []byte

func (b flatbuffer) u32(at int) (int, error) {
	if at < 0 || at > len(b)-4 {
		return 0, errFlatbuffer
	}
	return int(binary.LittleEndian.Uint32(b[at:])), nil
}

// root returns the position of the root table.
func (b flatbuffer) root() (int, error) {
	return b.u32(0)
}

// field returns the position of field slot k of the table at t, 0 when
// the field is absent.
func (b flatbuffer) field(t, k int) (int, error) {
	soff, err := b.u32(t)
	if err != nil {
		return 0, err
	}
	vt := t - int(int32(uint32(soff)))
	if vt < 0 || vt > len(b)-4 {
		return 0, errFlatbuffer
	}
	vlen := int(binary.LittleEndian.Uint16(b[vt:]))
	slot := 4 + 2*k
	if slot+2 > vlen {
		return 0, nil
	}
	if vt+slot+2 > len(b) {
		return 0, errFlatbuffer
	}
	off := int(binary.LittleEndian.Uint16(b[vt+slot:]))
	if off == 0 {
		return 0, nil
	}
	return t + off, nil
}

// scalar8 returns the byte in field slot k of the table at t (0 when
// absent).
func (b flatbuffer) scalar8(t, k int) (byte, error) {
	at, err := b.field(t, k)
	if err != nil || at == 0 {
		return 0, err
	}
	if at >= len(b) {
		return 0, errFlatbuffer
	}
	return b[at], nil
}

// indirect follows the offset stored at position at.
func (b flatbuffer) indirect(at int) (int, error) {
	off, err := b.u32(at)
	if err != nil {
		return 0, err
	}
	to := at + off
	if to > len(b)-4 {
		return 0, errFlatbuffer
	}
	return to, nil
}

// table returns the position of the table in field slot k of the table
// at t, 0 when absent.
func (b flatbuffer) table(t, k int) (int, error) {
	at, err := b.field(t, k)
	if err != nil || at == 0 {
		return 0, err
	}
	return b.indirect(at)
}

// vector returns the position of the first element and the length of
// the vector in field slot k of the table at t, each element taking
// size bytes; an absent vector is empty. A vector longer than the buffer
// is an error.
func (b flatbuffer) vector(t, k, size int) (start, n int, err error) {
	at, err := b.field(t, k)
	if err != nil || at == 0 {
		return 0, 0, err
	}
	v, err := b.indirect(at)
	if err != nil {
		return 0, 0, err
	}
	n, err = b.u32(v)
	if err != nil {
		return 0, 0, err
	}
	start = v + 4
	if n > (len(b)-start)/size {
		return 0, 0, fmt.Errorf("a vector of %d entries in %d bytes of schema metadata", n, len(b))
	}
	return start, n, nil
}

// text returns the string in field slot k of the table at t.
func (b flatbuffer) text(t, k int) (string, error) {
	start, n, err := b.vector(t, k, 1)
	if err != nil {
		return "", err
	}
	return string(b[start : start+n]), nil
}

// checkSchema checks the Schema table at s: its fields vector, each
// field's (a flat one, without children) and the key-value metadata.
func (b flatbuffer) checkSchema(s int) error {
	const (
		schemaFields   = 1
		schemaMetadata = 2
		schemaFeatures = 3
		fieldName      = 0
		fieldChildren  = 5
		fieldMetadata  = 6
	)
	if _, _, err := b.vector(s, schemaMetadata, 4); err != nil {
		return err
	}
	if _, _, err := b.vector(s, schemaFeatures, 8); err != nil {
		return err
	}
	start, n, err := b.vector(s, schemaFields, 4)
	if err != nil {
		return err
	}
	for j := range n {
		fd, err := b.indirect(start + 4*j)
		if err != nil {
			return err
		}
		if _, _, err := b.vector(fd, fieldMetadata, 4); err != nil {
			return err
		}
		_, kids, err := b.vector(fd, fieldChildren, 4)
		if err != nil {
			return err
		}
		if kids > 0 {
			name, _ := b.text(fd, fieldName)
			return &nestedColumnError{name: name, j: j}
		}
	}
	return nil
}

// nestedColumnError is the error of a column with child fields.
type nestedColumnError struct {
	name string
	j    int
}

func (e *nestedColumnError) Error() string {
	return fmt.Sprintf("column %q (%d) is nested (it has child fields); gotrain reads flat columns of numbers, booleans and text", e.name, e.j+1)
}
