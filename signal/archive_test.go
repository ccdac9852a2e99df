package signal

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestCapturesAnnotationsRoundTrip writes captures and annotations with
// every field SigMF's core namespace gives them and reads them back, and
// checks the reader's refusals.
func TestCapturesAnnotationsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	m := Meta{Datatype: CF32, SampleRate: 1e6,
		Captures: []Capture{{SampleStart: 0, Frequency: 915e6, DateTime: "2026-11-25T01:02:03Z"}, {SampleStart: 40, Frequency: 916e6}},
		Annotations: []Annotation{
			{SampleStart: 0, SampleCount: 30, FreqLowerEdge: 914.9e6, FreqUpperEdge: 915.1e6, Label: "qpsk", Comment: "burst"},
			{SampleStart: 50, SampleCount: 10, Label: "fm"},
		}}
	x := make([]complex64, 64)
	for i := range x {
		x[i] = complex(float32(i), -float32(i))
	}
	p := filepath.Join(dir, "rec")
	if err := WriteSigMF(p, &Recording{Meta: m, Samples: x}); err != nil {
		t.Fatal(err)
	}
	r, err := ReadSigMF(p)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r.Meta.Captures, m.Captures) || !reflect.DeepEqual(r.Meta.Annotations, m.Annotations) {
		t.Fatalf("read back captures %+v annotations %+v", r.Meta.Captures, r.Meta.Annotations)
	}
	if r.Meta.Frequency != 915e6 || r.Meta.Label != "qpsk" {
		t.Fatalf("first capture's frequency %v, first label %q", r.Meta.Frequency, r.Meta.Label)
	}
	for _, c := range []struct{ meta, want string }{
		{`{"global":{"core:datatype":"cf32_le"},"captures":[{"core:sample_start":-1}]}`, "is negative"},
		{`{"global":{"core:datatype":"cf32_le"},"captures":[{"core:sample_start":5},{"core:sample_start":5}]}`, "does not follow"},
		{`{"global":{"core:datatype":"cf32_le"},"annotations":[{"core:sample_start":0,"core:sample_count":-3}]}`, "must not be negative"},
		{`{"global":{"core:datatype":"cf32_le"},"annotations":[{"core:sample_start":0,"core:freq_lower_edge":2,"core:freq_upper_edge":1}]}`, "not an interval"},
		{`{"global":{"core:datatype":"cf32_le"},"annotations":[{"core:label":7}]}`, "annotations[0]: core:label"},
	} {
		if _, err := ParseMeta([]byte(c.meta), "m.sigmf-meta"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.meta, err, c.want)
		}
	}
}

// TestArchiveRoundTrip writes a SigMF archive of two recordings, reads it
// back, and loads a one-recording archive with Load.
func TestArchiveRoundTrip(t *testing.T) {
	dir := t.TempDir()
	a := &Recording{Meta: Meta{Datatype: CF32, SampleRate: 2e5, Label: "bpsk"}, Samples: []complex64{1, 2i, -1, -2i}}
	b := &Recording{Meta: Meta{Datatype: CF32, SampleRate: 1e5, Frequency: 1e9}, Samples: []complex64{0.5, 0.25i}}
	p := filepath.Join(dir, "cap.sigmf")
	if err := WriteArchive(p, []ArchiveRecording{{"a", a}, {"b", b}}); err != nil {
		t.Fatal(err)
	}
	got, err := ReadArchive(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "a" || got[1].Name != "b" {
		t.Fatalf("read %d recordings: %+v", len(got), got)
	}
	if !reflect.DeepEqual(got[0].Recording.Samples, a.Samples) || got[0].Recording.Meta.Label != "bpsk" || got[1].Recording.Meta.Frequency != 1e9 {
		t.Fatalf("recordings differ: %+v %+v", got[0].Recording, got[1].Recording)
	}
	names := tarNames(t, p)
	if want := "cap/,cap/a.sigmf-meta,cap/a.sigmf-data,cap/b.sigmf-meta,cap/b.sigmf-data"; strings.Join(names, ",") != want {
		t.Fatalf("members %v, want %s", names, want)
	}
	if _, err := Load(p, "", 0); err == nil || !strings.Contains(err.Error(), "holds 2 recordings (a, b)") {
		t.Fatalf("Load of two recordings: %v", err)
	}
	one := filepath.Join(dir, "one.sigmf")
	if err := WriteArchive(one, []ArchiveRecording{{"a", a}}); err != nil {
		t.Fatal(err)
	}
	r, err := Load(one, "", 0)
	if err != nil || len(r.Samples) != 4 || r.Meta.SampleRate != 2e5 {
		t.Fatalf("Load: %v", err)
	}
	for _, bad := range [][]ArchiveRecording{nil, {{"../x", a}}, {{"a", a}, {"a", b}}, {{"c", &Recording{}}}} {
		if err := WriteArchive(filepath.Join(dir, "bad.sigmf"), bad); err == nil {
			t.Errorf("WriteArchive(%v) succeeded", bad)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "bad.sigmf")); !os.IsNotExist(err) {
		t.Error("a refused archive left a file")
	}
}

// tarNames lists the member names of the tar file at p.
func tarNames(t *testing.T, p string) []string {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var names []string
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		names = append(names, h.Name)
	}
	return names
}

// tarOf builds a tar file of members (name, type, content).
func tarOf(t testing.TB, members ...tarMember) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, m := range members {
		h := &tar.Header{Name: m.name, Typeflag: m.typ, Mode: 0o644, Size: int64(len(m.body)), Linkname: m.link}
		if m.typ != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if m.typ == tar.TypeReg {
			tw.Write([]byte(m.body))
		}
	}
	tw.Close()
	return buf.Bytes()
}

type tarMember struct {
	name string
	typ  byte
	body string
	link string
}

const testMeta = `{"global":{"core:datatype":"cf32_le","core:sample_rate":1000}}`

// TestArchiveRefusesEscapes checks that ReadArchive refuses members that
// would leave the archive, links, unpaired members and duplicates, each
// error naming the member.
func TestArchiveRefusesEscapes(t *testing.T) {
	data := string(make([]byte, 16))
	ok := []tarMember{{"r/x.sigmf-meta", tar.TypeReg, testMeta, ""}, {"r/x.sigmf-data", tar.TypeReg, data, ""}}
	if recs, err := readArchive(bytes.NewReader(tarOf(t, ok...)), "t.sigmf", 1<<20); err != nil || len(recs) != 1 || len(recs[0].Recording.Samples) != 2 {
		t.Fatalf("a good archive: %v", err)
	}
	for _, c := range []struct {
		name    string
		members []tarMember
		want    string
	}{
		{"parent", append(ok, tarMember{"../evil.sigmf-meta", tar.TypeReg, testMeta, ""}), `member "../evil.sigmf-meta": a ".." part`},
		{"inner parent", append(ok, tarMember{"r/../../x", tar.TypeReg, "", ""}), `a ".." part`},
		{"absolute", append(ok, tarMember{"/etc/x.sigmf-data", tar.TypeReg, data, ""}), "an absolute path"},
		{"backslash", append(ok, tarMember{`r\..\..\x`, tar.TypeReg, "", ""}), `a ".." part`},
		{"symlink", append(ok, tarMember{"r/l", tar.TypeSymlink, "", "/etc/passwd"}), "not a regular file"},
		{"hard link", append(ok, tarMember{"r/h", tar.TypeLink, "", "r/x.sigmf-data"}), "not a regular file"},
		{"no data", ok[:1], "has no x.sigmf-data"},
		{"no meta", ok[1:], "has no x.sigmf-meta"},
		{"twice", append(ok, ok[0]), "appears twice"},
		{"empty", nil, "no recording"},
	} {
		_, err := readArchive(bytes.NewReader(tarOf(t, c.members...)), "t.sigmf", 1<<20)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "t.sigmf") {
			t.Errorf("%s: %v, want an error naming t.sigmf and containing %q", c.name, err, c.want)
		}
	}
	if _, err := readArchive(bytes.NewReader(tarOf(t, ok...)), "t.sigmf", 100); err == nil || !strings.Contains(err.Error(), "more than the 100 bytes") {
		t.Errorf("an archive over the limit: %v", err)
	}
}

// FuzzReadArchive feeds ReadArchive's reader arbitrary bytes, seeded with
// good and hostile archives: it must return recordings or an error, never
// panic, and never a recording without samples.
func FuzzReadArchive(f *testing.F) {
	data := string(make([]byte, 16))
	f.Add(tarOf(f, tarMember{"r/x.sigmf-meta", tar.TypeReg, testMeta, ""}, tarMember{"r/x.sigmf-data", tar.TypeReg, data, ""}))
	f.Add(tarOf(f, tarMember{"../x.sigmf-meta", tar.TypeReg, testMeta, ""}))
	f.Add(tarOf(f, tarMember{"r/l", tar.TypeSymlink, "", "/etc"}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, in []byte) {
		recs, err := readArchive(bytes.NewReader(in), "fuzz.sigmf", 1<<20)
		if err != nil {
			return
		}
		for _, r := range recs {
			if r.Recording == nil || len(r.Recording.Samples) == 0 || checkMemberName(r.Name) != nil {
				t.Fatalf("recording %q without samples or with a bad name", r.Name)
			}
		}
	})
}
