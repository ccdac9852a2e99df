package forest

import (
	"bufio"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// writeFileAtomic writes the named file with write, atomically: write
// fills a temporary file in the same folder (through a buffer), which is
// synced to disk and renamed over path. On error, no temporary file is left
// and an existing file at path is unchanged. A new file gets permissions
// 0644; a replaced file keeps its permissions. A symbolic link at path is
// replaced, not followed.
func writeFileAtomic(path string, write func(w io.Writer) error) (err error) {
	perm := fs.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		if !st.Mode().IsRegular() {
			return errors.New("not a regular file")
		}
		perm = st.Mode().Perm()
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	bw := bufio.NewWriterSize(tmp, ioChunk)
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	// Make the rename durable; not every system can sync a folder.
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
