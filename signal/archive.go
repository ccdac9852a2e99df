package signal

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/gotrain/gotrain/internal/atomicfile"
)

// ArchiveExt is the extension of a SigMF archive: a tar file holding
// recordings as .sigmf-meta and .sigmf-data pairs.
const ArchiveExt = ".sigmf"

// IsArchive reports whether path names a SigMF archive by its extension.
func IsArchive(path string) bool { return strings.HasSuffix(path, ArchiveExt) }

// ArchiveRecording is one recording of a SigMF archive, named by its
// members' common base name without the folder ("rec" for
// "capture/rec.sigmf-meta" and "capture/rec.sigmf-data").
type ArchiveRecording struct {
	Name      string
	Recording *Recording
}

// maxArchiveBytes bounds the bytes read from an archive: its recordings'
// data at MaxSamples each in the widest format, for up to 64 recordings,
// plus their metadata.
const maxArchiveBytes = 64 * (int64(MaxSamples)*8 + maxMetaBytes)

// ReadArchive reads every recording of the SigMF archive at path, in the
// order of their metadata members. It refuses, naming the member, a
// member whose name is absolute or climbs out of the archive (a ".."
// part), a member that is neither a regular file nor a folder (links,
// devices), a metadata member without its data member or the reverse, two
// members of one name, and anything ReadSigMF refuses in a recording.
// Other files (such as a .sigmf-collection) are skipped.
func ReadArchive(path string) ([]ArchiveRecording, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("signal: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, fmt.Errorf("signal: %s is a folder, not a SigMF archive", path)
	}
	return readArchive(f, path, maxArchiveBytes)
}

// readArchive is ReadArchive on the bytes of r, at most limit of them;
// name is used in errors.
func readArchive(r io.Reader, name string, limit int64) ([]ArchiveRecording, error) {
	lr := &io.LimitedReader{R: r, N: limit + 1}
	tr := tar.NewReader(lr)
	metas := map[string][]byte{}
	datas := map[string][]byte{}
	var order []string
	seen := map[string]bool{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if lr.N <= 0 {
			return nil, fmt.Errorf("signal: %s: more than the %d bytes an archive may hold", name, limit)
		}
		if err != nil {
			return nil, fmt.Errorf("signal: %s: not a SigMF archive (tar): %w", name, err)
		}
		member := h.Name
		if err := checkMemberName(member); err != nil {
			return nil, fmt.Errorf("signal: %s: member %q: %w", name, member, err)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			continue
		case tar.TypeReg:
		default:
			return nil, fmt.Errorf("signal: %s: member %q is not a regular file (tar type %q)", name, member, h.Typeflag)
		}
		clean := path.Clean(member)
		if seen[clean] {
			return nil, fmt.Errorf("signal: %s: member %q appears twice", name, member)
		}
		seen[clean] = true
		base := path.Base(clean)
		var dst map[string][]byte
		var max int64
		switch {
		case strings.HasSuffix(base, MetaExt):
			dst, max, base = metas, maxMetaBytes, strings.TrimSuffix(base, MetaExt)
			order = append(order, base)
		case strings.HasSuffix(base, DataExt):
			dst, max, base = datas, int64(MaxSamples)*8, strings.TrimSuffix(base, DataExt)
		default:
			continue // another file of the archive
		}
		if _, dup := dst[base]; dup {
			return nil, fmt.Errorf("signal: %s: two members named %q", name, path.Base(clean))
		}
		if h.Size < 0 || h.Size > max {
			return nil, fmt.Errorf("signal: %s: member %q is %d bytes, more than the %d this reader accepts", name, member, h.Size, max)
		}
		var b bytes.Buffer
		if _, err := io.Copy(&b, io.LimitReader(tr, h.Size)); err != nil {
			return nil, fmt.Errorf("signal: %s: reading member %q: %w", name, member, err)
		}
		if lr.N <= 0 {
			return nil, fmt.Errorf("signal: %s: more than the %d bytes an archive may hold", name, limit)
		}
		dst[base] = b.Bytes()
	}
	for base := range datas {
		if _, ok := metas[base]; !ok {
			return nil, fmt.Errorf("signal: %s: %s has no %s", name, base+DataExt, base+MetaExt)
		}
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("signal: %s: no recording (no %s member)", name, MetaExt)
	}
	out := make([]ArchiveRecording, 0, len(order))
	for _, base := range order {
		data, ok := datas[base]
		if !ok {
			return nil, fmt.Errorf("signal: %s: %s has no %s", name, base+MetaExt, base+DataExt)
		}
		where := name + ":" + base
		m, err := ParseMeta(metas[base], where+MetaExt)
		if err != nil {
			return nil, err
		}
		x, err := decodeData(data, m.Datatype, where+DataExt)
		if err != nil {
			return nil, err
		}
		out = append(out, ArchiveRecording{Name: base, Recording: &Recording{Meta: m, Samples: x}})
	}
	return out, nil
}

// checkMemberName refuses an archive member name that is empty, absolute,
// or has a ".." part: one that would leave the archive's folder when
// unpacked.
func checkMemberName(name string) error {
	switch {
	case name == "":
		return errors.New("empty name")
	case strings.HasPrefix(name, "/") || strings.HasPrefix(name, `\`) || (len(name) > 1 && name[1] == ':'):
		return errors.New("an absolute path leaves the archive")
	}
	if slices.Contains(strings.FieldsFunc(name, func(r rune) bool { return r == '/' || r == '\\' }), "..") {
		return errors.New(`a ".." part leaves the archive`)
	}
	return nil
}

// WriteArchive writes recs as a SigMF archive at path, atomically
// (internal/atomicfile): a tar file whose folder is named after the
// archive (its base name without .sigmf) and holds each recording's
// NAME.sigmf-meta and NAME.sigmf-data, as WriteSigMF would write them. A
// name must be a plain file name (no folder, no ".."), and names must
// differ.
func WriteArchive(path string, recs []ArchiveRecording) error {
	if len(recs) == 0 {
		return errors.New("signal: no recording to archive")
	}
	folder := strings.TrimSuffix(pathBase(path), ArchiveExt)
	if folder == "" || checkMemberName(folder) != nil {
		return fmt.Errorf("signal: %s: the archive's name gives no folder name", path)
	}
	seen := map[string]bool{}
	type member struct {
		name string
		b    []byte
	}
	var members []member
	for _, ar := range recs {
		if ar.Name == "" || strings.ContainsAny(ar.Name, `/\`) || ar.Name == "." || ar.Name == ".." || seen[ar.Name] {
			return fmt.Errorf("signal: archive %s: recording name %q is not a new plain file name", path, ar.Name)
		}
		seen[ar.Name] = true
		if ar.Recording == nil || len(ar.Recording.Samples) == 0 {
			return fmt.Errorf("signal: archive %s: recording %q has no samples", path, ar.Name)
		}
		meta, data, err := encodeSigMF(ar.Recording)
		if err != nil {
			return fmt.Errorf("signal: archive %s: recording %q: %w", path, ar.Name, err)
		}
		members = append(members, member{folder + "/" + ar.Name + MetaExt, meta}, member{folder + "/" + ar.Name + DataExt, data})
	}
	err := atomicfile.Write(path, func(w io.Writer) error {
		tw := tar.NewWriter(w)
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: folder + "/", Mode: 0o755, Format: tar.FormatPAX}); err != nil {
			return err
		}
		for _, m := range members {
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: m.name, Size: int64(len(m.b)), Mode: 0o644, Format: tar.FormatPAX}); err != nil {
				return err
			}
			if _, err := tw.Write(m.b); err != nil {
				return err
			}
		}
		return tw.Close()
	})
	if err != nil {
		return fmt.Errorf("signal: writing archive %s: %w", path, err)
	}
	return nil
}

// pathBase is the last element of a file path (either separator).
func pathBase(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

// metaJSON returns the .sigmf-meta text of m for a recording of n samples
// (the document WriteSigMF writes).
func metaJSON(m Meta, n int) ([]byte, error) {
	doc := metaDoc(m, n)
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
