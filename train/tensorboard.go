package train

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gotrain/gotrain/internal/atomicfile"
)

// TensorBoard event files (Config.TensorBoardDir): TFRecord files of
// tensorflow.Event messages, as TensorFlow's summary writers write them.
// The messages are encoded by hand with protowire, from the field numbers
// of the published definitions:
//
//	tensorflow/core/util/event.proto:
//	  Event { double wall_time = 1; int64 step = 2;
//	          oneof what { string file_version = 3; Summary summary = 5; SessionLog session_log = 7; ... } }
//	  SessionLog { SessionStatus status = 1; ... }   START = 1
//	tensorflow/core/framework/summary.proto:
//	  Summary { repeated Value value = 1; }
//	  Summary.Value { string tag = 1; oneof value { float simple_value = 2; ... } }
//
// A record is the length of the data (uint64, little-endian), the masked
// CRC-32C of those 8 bytes (uint32, little-endian), the data, and the
// masked CRC-32C of the data; masked(c) = ((c >> 15) | (c << 17)) +
// 0xa282ead8, with the Castagnoli polynomial.

// TensorBoardFileVersion is the file_version of the first event of a file.
const TensorBoardFileVersion = "brain.Event:2"

// tbWriter appends events to one event file of its own.
type tbWriter struct {
	path string
	f    *os.File
	now  func() time.Time
}

var crc32c = crc32.MakeTable(crc32.Castagnoli)

// maskedCRC is TFRecord's masked CRC-32C of b.
func maskedCRC(b []byte) uint32 {
	c := crc32.Checksum(b, crc32c)
	return ((c >> 15) | (c << 17)) + 0xa282ead8
}

// openTensorBoard creates a new event file in dir, named as TensorBoard
// expects, events.out.tfevents.<unix seconds>.<host>, followed (as
// TensorFlow's own writers do) by .<process id>.<n> with the first n that
// names no file yet: a file is created only where none was, so another
// run's file is never overwritten or continued. The file begins with the
// file_version event. A run resumed after step after > 0 writes next a
// SessionLog START at step after+1: TensorBoard then drops the events of
// step after+1 and later that the earlier files of dir hold (written
// after the checkpoint the run resumed from, and written again now).
func openTensorBoard(dir string, after int64, now func() time.Time) (*tbWriter, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("train: TensorBoard folder: %w", err)
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	host = strings.NewReplacer("/", "_", string(filepath.Separator), "_").Replace(host)
	t := now()
	w := &tbWriter{now: now}
	for n := 0; ; n++ {
		w.path = filepath.Join(dir, fmt.Sprintf("events.out.tfevents.%d.%s.%d.%d", t.Unix(), host, os.Getpid(), n))
		w.f, err = atomicfile.CreateNew(w.path)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || n >= 1000 {
			return nil, fmt.Errorf("train: TensorBoard event file: %w", err)
		}
	}
	ev := eventHeader(nil, t, 0)
	ev = protowire.AppendTag(ev, 3, protowire.BytesType)
	ev = protowire.AppendString(ev, TensorBoardFileVersion)
	if err := w.writeRecord(ev); err != nil {
		_ = w.f.Close()
		return nil, err
	}
	if after > 0 {
		var sl []byte
		sl = protowire.AppendTag(sl, 1, protowire.VarintType)
		sl = protowire.AppendVarint(sl, 1) // SessionLog.START
		ev = eventHeader(nil, t, after+1)
		ev = protowire.AppendTag(ev, 7, protowire.BytesType)
		ev = protowire.AppendBytes(ev, sl)
		if err := w.writeRecord(ev); err != nil {
			_ = w.f.Close()
			return nil, err
		}
	}
	return w, nil
}

// eventHeader appends an Event's wall_time and step.
func eventHeader(b []byte, t time.Time, step int64) []byte {
	b = protowire.AppendTag(b, 1, protowire.Fixed64Type)
	b = protowire.AppendFixed64(b, math.Float64bits(float64(t.UnixNano())/1e9))
	if step != 0 {
		b = protowire.AppendTag(b, 2, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(step))
	}
	return b
}

// writeRecord appends data as one TFRecord, in one write.
func (w *tbWriter) writeRecord(data []byte) error {
	rec := make([]byte, 0, len(data)+16)
	rec = binary.LittleEndian.AppendUint64(rec, uint64(len(data)))
	rec = binary.LittleEndian.AppendUint32(rec, maskedCRC(rec[:8]))
	rec = append(rec, data...)
	rec = binary.LittleEndian.AppendUint32(rec, maskedCRC(data))
	if _, err := w.f.Write(rec); err != nil {
		return fmt.Errorf("train: writing TensorBoard event file: %w", err)
	}
	return nil
}

// Write appends the record of a metrics line as an Event at its step,
// with a scalar summary (simple_value) per finite number of the record
// other than the step itself, tagged with the field's name (loss, lr,
// val_loss, ...). A record without such a number writes nothing.
func (w *tbWriter) Write(rec map[string]any) error {
	step, ok := number(rec, "step")
	if !ok {
		return nil
	}
	keys := make([]string, 0, len(rec))
	for k := range rec {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var sum []byte
	for _, k := range keys {
		v, ok := number(rec, k)
		if k == "step" || !ok {
			continue
		}
		var val []byte
		val = protowire.AppendTag(val, 1, protowire.BytesType)
		val = protowire.AppendString(val, k)
		val = protowire.AppendTag(val, 2, protowire.Fixed32Type)
		val = protowire.AppendFixed32(val, math.Float32bits(float32(v)))
		sum = protowire.AppendTag(sum, 1, protowire.BytesType)
		sum = protowire.AppendBytes(sum, val)
	}
	if sum == nil {
		return nil
	}
	ev := eventHeader(nil, w.now(), int64(step))
	ev = protowire.AppendTag(ev, 5, protowire.BytesType)
	ev = protowire.AppendBytes(ev, sum)
	return w.writeRecord(ev)
}

// Close closes the event file.
func (w *tbWriter) Close() error {
	if err := w.f.Close(); err != nil {
		return fmt.Errorf("train: closing TensorBoard event file: %w", err)
	}
	return nil
}
