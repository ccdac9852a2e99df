// Package atomicfile is the one way gotrain writes files: a reader never
// sees a half-written output, a failed or interrupted write leaves the
// previous file as it was, and special files are never replaced.
//
// What a write does depends on what the path names (symbolic links are
// followed):
//
//   - A regular file, or nothing: the content goes to a temporary file in
//     the same folder (a hidden name made from the target's,
//     ".NAME.tmp-RANDOM"), which is synced to disk and renamed over the
//     target; then the folder is synced so that the rename survives a
//     crash. A new file gets the usual permission bits (0666 less the
//     umask, as os.Create gives, not the 0600 of os.CreateTemp); a
//     replaced file keeps its permission bits. On any error, or a panic in
//     the caller's write function, the temporary file is removed and the
//     target is unchanged.
//   - A FIFO or a character device (a pipe, /dev/null, a terminal): it is
//     opened and written through, never replaced. Such a write is not
//     atomic: a reader sees the bytes as they come, and a failure part way
//     cannot take back what was written.
//   - A directory, a socket, a block device or another special file: the
//     write is refused with a [*TargetError] naming the path and what it is.
//
// Replacing a file by a rename has its costs, which gotrain accepts for
// its outputs: it needs write permission on the folder (not only on the
// file); the new file belongs to the user who writes it; and other hard
// links to the old file keep the old content.
//
// [Write] and [WriteFile] write one file; a [Group] stages several and
// renames them together (a SigMF .sigmf-meta and .sigmf-data pair);
// [ReplaceDir] builds a whole folder beside the old one and swaps it in;
// [OpenAppend] opens a log that a resumed run continues; [CreateNew]
// creates a log that must not be another's (never an existing file's
// name); [SameFile] tells
// whether two paths name one file (for refusing an output that is one of
// the inputs); [Check] tells early whether a path may be written.
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// TargetError is returned when a path names something a write must not
// replace or cannot write through: a directory, a socket, a block device,
// another special file, or a symbolic link to nothing.
type TargetError struct {
	Path string // the path as given
	What string // what it is: "a directory", "a socket", ...
}

func (e *TargetError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file (nor a FIFO or character device to write through)", e.Path, e.What)
}

// bufSize is the size of the buffer a write function writes through.
const bufSize = 64 << 10

// target is what a path resolves to.
type target struct {
	path    string      // the file to replace or write through (links resolved)
	exists  bool        // a regular file is there
	perm    fs.FileMode // its permission bits, when it exists
	through bool        // a FIFO or character device: write through
}

// resolve tells what a write to path would do, or why it is refused.
func resolve(path string) (target, error) {
	if path == "" {
		return target{}, errors.New("no file name given")
	}
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if lst, lerr := os.Lstat(path); lerr == nil && lst.Mode()&fs.ModeSymlink != 0 {
			return target{}, &TargetError{Path: path, What: "a symbolic link to a missing file"}
		}
		return target{path: path}, nil
	case err != nil:
		return target{}, err
	}
	m := st.Mode()
	switch {
	case m.IsRegular():
	case m&fs.ModeNamedPipe != 0:
		return target{path: path, through: true}, nil
	case m&fs.ModeCharDevice != 0:
		return target{path: path, through: true}, nil
	default:
		return target{}, &TargetError{Path: path, What: kind(m)}
	}
	t := target{path: path, exists: true, perm: m.Perm()}
	if lst, err := os.Lstat(path); err == nil && lst.Mode()&fs.ModeSymlink != 0 {
		// Replace the file the link points to and keep the link.
		if t.path, err = filepath.EvalSymlinks(path); err != nil {
			return target{}, err
		}
	}
	return t, nil
}

// kind names the type of a file that is not regular.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	default:
		return "a special file (" + m.Type().String() + ")"
	}
}

// Check returns the error a write to path would be refused with before
// anything is written ([*TargetError] for a directory, a socket, ...), or
// nil when path may be written: a regular file, a FIFO, a character device,
// or a new name in an existing folder. Commands call it to refuse a bad
// output before they spend time computing it.
func Check(path string) error {
	t, err := resolve(path)
	if err != nil {
		return err
	}
	if t.through || t.exists {
		return nil
	}
	dir := filepath.Dir(t.path)
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("%s: folder %s: %w", path, dir, bare(err))
	}
	if !st.IsDir() {
		return fmt.Errorf("%s: %s is not a folder", path, dir)
	}
	return nil
}

// WriteFile writes data to the file at path as [Write] does.
func WriteFile(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Write writes the file at path with what fn writes to w (buffered), as
// the package documentation describes: a regular file or a new name is
// replaced atomically, a FIFO or a character device is written through,
// anything else is refused. When fn fails or panics, the temporary file is
// removed and an existing file at path is unchanged; fn's error is
// returned as it is (the caller knows its context) and its panic goes on.
// Every other error names path.
func Write(path string, fn func(w io.Writer) error) error {
	t, err := resolve(path)
	if err != nil {
		return wrap(path, err)
	}
	if t.through {
		return writeThrough(path, fn)
	}
	tmp, err := stage(path, t, fn)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, t.path); err != nil {
		os.Remove(tmp)
		return wrap(path, err)
	}
	if err := syncDir(filepath.Dir(t.path)); err != nil {
		return fmt.Errorf("%s is written, but syncing its folder failed: %w", path, err)
	}
	return nil
}

// wrap names path in err, unless err is a *TargetError (which does).
func wrap(path string, err error) error {
	var te *TargetError
	if errors.As(err, &te) {
		return err
	}
	return fmt.Errorf("writing %s: %w", path, bare(err))
}

// stage writes a synced and closed temporary file beside t.path holding
// what fn writes, with t's permission bits, and returns its name. On
// error or panic the temporary file is removed. Errors other than fn's
// name path.
func stage(path string, t target, fn func(io.Writer) error) (name string, err error) {
	f, err := createTemp(t.path)
	if err != nil {
		return "", wrap(path, err)
	}
	done := false
	defer func() {
		if !done {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := fill(path, f, fn); err != nil {
		return "", err
	}
	if t.exists {
		if err := f.Chmod(t.perm); err != nil {
			return "", wrap(path, err)
		}
	}
	if err := f.Sync(); err != nil {
		return "", wrap(path, err)
	}
	if err := f.Close(); err != nil {
		return "", wrap(path, err)
	}
	done = true
	return f.Name(), nil
}

// fill runs fn on a buffer over f and flushes it. fn's error is returned
// as it is; a write error names path.
func fill(path string, f *os.File, fn func(io.Writer) error) error {
	bw := bufio.NewWriterSize(f, bufSize)
	if err := fn(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return wrap(path, err)
	}
	return nil
}

// writeThrough opens a FIFO or character device and writes fn's output to it.
func writeThrough(path string, fn func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return wrap(path, err)
	}
	err = fill(path, f, fn)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = wrap(path, cerr)
	}
	return err
}

// tempName returns a hidden name beside path for a temporary file or
// folder: ".NAME.<what>-RANDOM" (NAME shortened to stay under the usual
// 255-byte limit on a file name).
func tempName(path, what string) string {
	dir, base := filepath.Split(path)
	if len(base) > 200 {
		base = base[:200]
	}
	return filepath.Join(dir, "."+base+"."+what+"-"+strconv.FormatUint(uint64(rand.Uint32()), 10))
}

// createTemp creates a new file beside path with a hidden name and
// permission bits 0666 less the umask.
func createTemp(path string) (*os.File, error) {
	for range 1000 {
		f, err := os.OpenFile(tempName(path, "tmp"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, bare(err)
		}
		return f, nil
	}
	return nil, errors.New("cannot find a free temporary file name")
}

// syncDir syncs a folder so that renames in it are durable. Systems that
// cannot sync a folder are not an error.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return bare(err)
	}
	err = d.Sync()
	d.Close()
	if err == nil || errors.Is(err, syscall.EINVAL) || errors.Is(err, errors.ErrUnsupported) || errors.Is(err, syscall.EBADF) {
		return nil
	}
	return bare(err)
}

// bare strips the *fs.PathError or *os.LinkError around err, which would
// name a temporary file instead of the caller's (the caller's error names
// the target). errors.Is still finds the system error.
func bare(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
