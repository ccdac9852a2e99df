package train

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/gomlx/gomlx/pkg/ml/train/losses"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// The reader below is the test's own: it shares no code with the writer.
// It checks the TFRecord framing and decodes the records as the messages
// of the published definitions, built here as descriptors from their
// field numbers and types:
//
//	tensorflow/core/util/event.proto (package tensorflow):
//	  message Event { double wall_time = 1; int64 step = 2;
//	    oneof what { string file_version = 3; bytes graph_def = 4; Summary summary = 5;
//	                 LogMessage log_message = 6; SessionLog session_log = 7; ... } }
//	  message SessionLog { enum SessionStatus { STATUS_UNSPECIFIED = 0; START = 1; STOP = 2; CHECKPOINT = 3; }
//	    SessionStatus status = 1; string checkpoint_path = 2; string msg = 3; }
//	tensorflow/core/framework/summary.proto:
//	  message Summary { message Value { string node_name = 7; string tag = 1;
//	    oneof value { float simple_value = 2; bytes obsolete_old_style_histogram = 3; ... } }
//	    repeated Value value = 1; }
//
// (LogMessage, the images, histograms, audio and tensors are left out: a
// field the descriptor lacks would be kept as unknown bytes, which the
// test refuses.)

func field(name string, num int32, typ descriptorpb.FieldDescriptorProto_Type, label descriptorpb.FieldDescriptorProto_Label, typeName string, oneof *int32) *descriptorpb.FieldDescriptorProto {
	f := &descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(num), Type: typ.Enum(), Label: label.Enum(), JsonName: proto.String(name)}
	if typeName != "" {
		f.TypeName = proto.String(typeName)
	}
	f.OneofIndex = oneof
	return f
}

// eventDescriptor builds tensorflow.Event from the field numbers above.
func eventDescriptor(t *testing.T) protoreflect.MessageDescriptor {
	t.Helper()
	const (
		opt = descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL
		rep = descriptorpb.FieldDescriptorProto_LABEL_REPEATED
	)
	T := func(x descriptorpb.FieldDescriptorProto_Type) descriptorpb.FieldDescriptorProto_Type { return x }
	zero := proto.Int32(0)
	fd := &descriptorpb.FileDescriptorProto{
		Name:    proto.String("tensorflow/core/util/event.proto"),
		Package: proto.String("tensorflow"),
		Syntax:  proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{
			{
				Name: proto.String("Event"),
				Field: []*descriptorpb.FieldDescriptorProto{
					field("wall_time", 1, T(descriptorpb.FieldDescriptorProto_TYPE_DOUBLE), opt, "", nil),
					field("step", 2, T(descriptorpb.FieldDescriptorProto_TYPE_INT64), opt, "", nil),
					field("file_version", 3, T(descriptorpb.FieldDescriptorProto_TYPE_STRING), opt, "", zero),
					field("graph_def", 4, T(descriptorpb.FieldDescriptorProto_TYPE_BYTES), opt, "", zero),
					field("summary", 5, T(descriptorpb.FieldDescriptorProto_TYPE_MESSAGE), opt, ".tensorflow.Summary", zero),
					field("session_log", 7, T(descriptorpb.FieldDescriptorProto_TYPE_MESSAGE), opt, ".tensorflow.SessionLog", zero),
				},
				OneofDecl: []*descriptorpb.OneofDescriptorProto{{Name: proto.String("what")}},
			},
			{
				Name: proto.String("SessionLog"),
				Field: []*descriptorpb.FieldDescriptorProto{
					field("status", 1, T(descriptorpb.FieldDescriptorProto_TYPE_ENUM), opt, ".tensorflow.SessionLog.SessionStatus", nil),
					field("checkpoint_path", 2, T(descriptorpb.FieldDescriptorProto_TYPE_STRING), opt, "", nil),
					field("msg", 3, T(descriptorpb.FieldDescriptorProto_TYPE_STRING), opt, "", nil),
				},
				EnumType: []*descriptorpb.EnumDescriptorProto{{
					Name: proto.String("SessionStatus"),
					Value: []*descriptorpb.EnumValueDescriptorProto{
						{Name: proto.String("STATUS_UNSPECIFIED"), Number: proto.Int32(0)},
						{Name: proto.String("START"), Number: proto.Int32(1)},
						{Name: proto.String("STOP"), Number: proto.Int32(2)},
						{Name: proto.String("CHECKPOINT"), Number: proto.Int32(3)},
					},
				}},
			},
			{
				Name: proto.String("Summary"),
				Field: []*descriptorpb.FieldDescriptorProto{
					field("value", 1, T(descriptorpb.FieldDescriptorProto_TYPE_MESSAGE), rep, ".tensorflow.Summary.Value", nil),
				},
				NestedType: []*descriptorpb.DescriptorProto{{
					Name: proto.String("Value"),
					Field: []*descriptorpb.FieldDescriptorProto{
						field("node_name", 7, T(descriptorpb.FieldDescriptorProto_TYPE_STRING), opt, "", nil),
						field("tag", 1, T(descriptorpb.FieldDescriptorProto_TYPE_STRING), opt, "", nil),
						field("simple_value", 2, T(descriptorpb.FieldDescriptorProto_TYPE_FLOAT), opt, "", zero),
						field("obsolete_old_style_histogram", 3, T(descriptorpb.FieldDescriptorProto_TYPE_BYTES), opt, "", zero),
					},
					OneofDecl: []*descriptorpb.OneofDescriptorProto{{Name: proto.String("value")}},
				}},
			},
		},
	}
	file, err := protodesc.NewFile(fd, nil)
	if err != nil {
		t.Fatal(err)
	}
	return file.Messages().ByName("Event")
}

// tfEvent is what the test reads of one Event.
type tfEvent struct {
	wallTime    float64
	step        int64
	fileVersion string
	sessionLog  int32 // status; -1 without a session_log
	scalars     map[string]float32
}

// readEvents reads an event file: each record is a uint64 length, the
// masked CRC-32C of those 8 bytes, the data, the masked CRC-32C of the
// data (masked c = ((c >> 15) | (c << 17)) + 0xa282ead8, Castagnoli).
func readEvents(t *testing.T, path string) []tfEvent {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	table := crc32.MakeTable(0x82f63b78) // Castagnoli, reversed
	masked := func(p []byte) uint32 {
		c := crc32.Checksum(p, table)
		return ((c >> 15) | (c << 17)) + 0xa282ead8
	}
	md := eventDescriptor(t)
	fields := md.Fields()
	var out []tfEvent
	for off := 0; off < len(b); {
		if len(b)-off < 12 {
			t.Fatalf("%s: %d bytes left at %d, a record's header is 12", path, len(b)-off, off)
		}
		n := binary.LittleEndian.Uint64(b[off:])
		if got := binary.LittleEndian.Uint32(b[off+8:]); got != masked(b[off:off+8]) {
			t.Fatalf("%s: record at %d: length CRC %08x, want %08x", path, off, got, masked(b[off:off+8]))
		}
		start := off + 12
		if n > uint64(len(b)-start-4) {
			t.Fatalf("%s: record at %d: length %d beyond the file", path, off, n)
		}
		data := b[start : start+int(n)]
		if got := binary.LittleEndian.Uint32(b[start+int(n):]); got != masked(data) {
			t.Fatalf("%s: record at %d: data CRC %08x, want %08x", path, off, got, masked(data))
		}
		off = start + int(n) + 4
		msg := dynamicpb.NewMessage(md)
		if err := proto.Unmarshal(data, msg); err != nil {
			t.Fatalf("%s: record at %d: %v", path, off, err)
		}
		if len(msg.GetUnknown()) > 0 {
			t.Fatalf("%s: record at %d has fields event.proto does not define here: %x", path, off, msg.GetUnknown())
		}
		ev := tfEvent{wallTime: msg.Get(fields.ByName("wall_time")).Float(), step: msg.Get(fields.ByName("step")).Int(),
			sessionLog: -1, scalars: map[string]float32{}}
		if f := fields.ByName("file_version"); msg.Has(f) {
			ev.fileVersion = msg.Get(f).String()
		}
		if f := fields.ByName("session_log"); msg.Has(f) {
			sl := msg.Get(f).Message()
			ev.sessionLog = int32(sl.Get(sl.Descriptor().Fields().ByName("status")).Enum())
		}
		if f := fields.ByName("summary"); msg.Has(f) {
			sum := msg.Get(f).Message()
			vals := sum.Get(sum.Descriptor().Fields().ByName("value")).List()
			for i := range vals.Len() {
				v := vals.Get(i).Message()
				vf := v.Descriptor().Fields()
				if !v.Has(vf.ByName("simple_value")) {
					t.Fatalf("%s: a summary value without simple_value", path)
				}
				ev.scalars[v.Get(vf.ByName("tag")).String()] = float32(v.Get(vf.ByName("simple_value")).Float())
			}
		}
		out = append(out, ev)
	}
	return out
}

// TestTensorBoardEventFiles checks the event files of --tensorboard with
// the reader above: the name TensorBoard looks for, the file_version
// event first, a scalar per number of each metrics line at its step (the
// same values as the JSON log, as float32), and a resumed run: a new file
// beside the first, which stays as it was, starting with the file
// version and a SessionLog START at the step after the checkpoint.
func TestTensorBoardEventFiles(t *testing.T) {
	dir := t.TempDir()
	tb := filepath.Join(dir, "tb")
	run := func(steps int, resume bool) Result {
		t.Helper()
		h, err := New(testBackend(t), testConfig(func(c *Config) {
			c.BatchSize, c.Steps, c.LogEvery, c.Progress, c.TensorBoardDir = 16, steps, 1, ProgressOff, tb
			c.NoCheckpoint, c.CheckpointDir, c.CheckpointEvery, c.Resume = false, filepath.Join(dir, "ckpt"), 2, resume
			c.MetricsLog = filepath.Join(dir, "metrics.jsonl")
		}), mlp, losses.MeanSquaredError, synthData(t, 64, false))
		if err != nil {
			t.Fatal(err)
		}
		res, err := h.Run()
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := run(3, false)
	name := regexp.MustCompile(`^events\.out\.tfevents\.\d{10,}\.[^/]+\.\d+\.\d+$`)
	if filepath.Dir(res.TensorBoard) != tb || !name.MatchString(filepath.Base(res.TensorBoard)) {
		t.Fatalf("event file %q", res.TensorBoard)
	}
	evs := readEvents(t, res.TensorBoard)
	if len(evs) != 4 || evs[0].fileVersion != "brain.Event:2" || evs[0].step != 0 || len(evs[0].scalars) != 0 {
		t.Fatalf("events %+v: want the file version, then steps 1 to 3", evs)
	}
	recs, err := ReadMetricsLog(filepath.Join(dir, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for i, rec := range recs {
		ev := evs[i+1]
		if ev.step != int64(rec["step"].(float64)) || ev.wallTime < evs[0].wallTime || ev.sessionLog != -1 {
			t.Errorf("event %+v for line %v", ev, rec)
		}
		for _, k := range []string{"loss", "lr", "grad_norm", "epoch", "samples_per_s"} {
			if v, ok := ev.scalars[k]; !ok || v != float32(rec[k].(float64)) {
				t.Errorf("step %d: scalar %s = %v (%v), JSON %v", ev.step, k, v, ok, rec[k])
			}
		}
		if _, ok := ev.scalars["step"]; ok {
			t.Errorf("step %d: the step is a scalar too", ev.step)
		}
	}
	first, err := os.ReadFile(res.TensorBoard)
	if err != nil {
		t.Fatal(err)
	}

	// Resume from step 2 (the checkpoint of step 3 is removed, as if the
	// run had crashed after logging it).
	ck, _ := filepath.Glob(filepath.Join(dir, "ckpt", "run-*", "ckpt-000000000003.gtc"))
	if len(ck) != 1 {
		t.Fatalf("checkpoints %v", ck)
	}
	if err := os.Remove(ck[0]); err != nil {
		t.Fatal(err)
	}
	res2 := run(4, true)
	if res2.TensorBoard == res.TensorBoard || filepath.Dir(res2.TensorBoard) != tb {
		t.Fatalf("resumed run's event file %q (first %q)", res2.TensorBoard, res.TensorBoard)
	}
	if again, _ := os.ReadFile(res.TensorBoard); !bytes.Equal(again, first) {
		t.Error("the first run's event file changed")
	}
	files, _ := filepath.Glob(filepath.Join(tb, "*"))
	if len(files) != 2 {
		t.Errorf("files %v, want two event files", files)
	}
	evs = readEvents(t, res2.TensorBoard)
	var steps []int64
	for _, ev := range evs[2:] {
		steps = append(steps, ev.step)
	}
	if len(evs) < 3 || evs[0].fileVersion != "brain.Event:2" || evs[1].sessionLog != 1 || evs[1].step != 3 || !slices.Equal(steps, []int64{3, 4}) {
		t.Errorf("resumed events %+v: want the file version, START at step 3, then steps 3 and 4", evs)
	}
}
