package train

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math/bits"
	"os"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
)

// MaxCheckpointBytes bounds the checkpoint files read (64 GiB): a larger
// file is refused before it is read.
const MaxCheckpointBytes = 1 << 36

// maxCheckpointRank bounds the rank of a checkpoint variable.
const maxCheckpointRank = 32

// readCheckpointFile reads and verifies the checkpoint file path. The file
// must be a regular file of at most MaxCheckpointBytes; it is read once,
// and nothing the header describes is allocated before the checksum
// ([decodeCheckpoint]) and every variable's dtype, shape, offset and size
// have been checked against the file. Errors name path.
func readCheckpointFile(path string) (ckptHeader, []byte, error) {
	// Look before opening: opening a FIFO would wait for a writer.
	if st, err := os.Stat(path); err != nil {
		return ckptHeader{}, nil, fmt.Errorf("checkpoint %w", err)
	} else if !st.Mode().IsRegular() {
		return ckptHeader{}, nil, fmt.Errorf("checkpoint %s: not a regular file (%s)", path, st.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return ckptHeader{}, nil, fmt.Errorf("checkpoint %w", err)
	}
	defer func() { _ = f.Close() }()
	st, err := f.Stat()
	if err != nil {
		return ckptHeader{}, nil, fmt.Errorf("checkpoint %w", err)
	}
	if !st.Mode().IsRegular() {
		return ckptHeader{}, nil, fmt.Errorf("checkpoint %s: not a regular file (%s)", path, st.Mode().Type())
	}
	if st.Size() > MaxCheckpointBytes {
		return ckptHeader{}, nil, fmt.Errorf("checkpoint %s: %d bytes is larger than the %d bytes (MaxCheckpointBytes) a checkpoint may have", path, st.Size(), int64(MaxCheckpointBytes))
	}
	// Read what the file holds now, at most one byte beyond its size at
	// Stat: a file that grew meanwhile fails the checksum.
	b, err := io.ReadAll(io.LimitReader(f, st.Size()+1))
	if err != nil {
		return ckptHeader{}, nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return decodeCheckpoint(b, path)
}

// decodeCheckpoint verifies the checkpoint b (the bytes of the file named
// path, for errors): magic line, SHA-256 of the rest before anything
// else, header length, the JSON header, then each variable. It returns the
// header and the variables' bytes.
func decodeCheckpoint(b []byte, path string) (ckptHeader, []byte, error) {
	var hdr ckptHeader
	minLen := len(ckptMagic) + 8 + sha256.Size
	if len(b) < minLen || string(b[:len(ckptMagic)]) != ckptMagic {
		return hdr, nil, fmt.Errorf("checkpoint %s: not a gotrain checkpoint or truncated (%d bytes)", path, len(b))
	}
	body, sum := b[:len(b)-sha256.Size], b[len(b)-sha256.Size:]
	if got := sha256.Sum256(body); !bytes.Equal(got[:], sum) {
		return hdr, nil, fmt.Errorf("checkpoint %s: checksum mismatch (truncated or corrupt)", path)
	}
	hl := binary.LittleEndian.Uint64(body[len(ckptMagic):])
	start := uint64(len(ckptMagic) + 8)
	if hl > uint64(len(body))-start {
		return hdr, nil, fmt.Errorf("checkpoint %s: header length %d is beyond the file's %d bytes", path, hl, len(b))
	}
	if err := json.Unmarshal(body[start:start+hl], &hdr); err != nil {
		return hdr, nil, fmt.Errorf("checkpoint %s: header: %w", path, err)
	}
	blob := body[start+hl:]
	for _, v := range hdr.Variables {
		if err := v.check(len(blob)); err != nil {
			return hdr, nil, fmt.Errorf("checkpoint %s: variable %s/%s: %w", path, v.Scope, v.Name, err)
		}
	}
	if p := hdr.Data; p.Epoch < 0 || p.Offset < 0 {
		return hdr, nil, fmt.Errorf("checkpoint %s: data position %+v is negative", path, p)
	}
	return hdr, blob, nil
}

// check verifies that v's dtype is known, its dimensions are not negative
// and give exactly v.Size bytes, and its bytes lie within a blob of n
// bytes, without overflow.
func (v ckptVar) check(n int) error {
	dt, err := dtypes.DTypeString(v.DType)
	if err != nil {
		return fmt.Errorf("dtype %q: %w", v.DType, err)
	}
	size := dtypeBytes(dt)
	if size == 0 {
		return fmt.Errorf("dtype %s is not one a checkpoint holds", dt)
	}
	if len(v.Dims) > maxCheckpointRank {
		return fmt.Errorf("rank %d is above %d", len(v.Dims), maxCheckpointRank)
	}
	total := uint64(size)
	for _, d := range v.Dims {
		if d < 0 {
			return fmt.Errorf("negative dimension in shape %v", v.Dims)
		}
		hi, lo := bits.Mul64(total, uint64(d))
		if hi != 0 || lo > uint64(n) {
			return fmt.Errorf("shape %v of %s is more bytes than the file's %d of variables", v.Dims, dt, n)
		}
		total = lo
	}
	if v.Offset < 0 || v.Size < 0 || v.Offset > n || v.Size > n-v.Offset {
		return fmt.Errorf("bytes %d to %d are outside the file's %d bytes of variables", v.Offset, int64(v.Offset)+int64(v.Size), n)
	}
	if uint64(v.Size) != total {
		return fmt.Errorf("%d bytes for shape %v of %s, want %d", v.Size, v.Dims, dt, total)
	}
	return nil
}

// dtypeBytes is the size of one element of dt in bytes, 0 for a dtype a
// checkpoint does not hold.
func dtypeBytes(dt dtypes.DType) int {
	switch dt {
	case dtypes.Bool, dtypes.Int8, dtypes.Uint8:
		return 1
	case dtypes.Int16, dtypes.Uint16, dtypes.Float16, dtypes.BFloat16:
		return 2
	case dtypes.Int32, dtypes.Uint32, dtypes.Float32:
		return 4
	case dtypes.Int64, dtypes.Uint64, dtypes.Float64, dtypes.Complex64:
		return 8
	case dtypes.Complex128:
		return 16
	}
	return 0
}
