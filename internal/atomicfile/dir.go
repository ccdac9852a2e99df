package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// ReplaceDir makes the folder dst hold what build writes, all at once:
// build fills a new hidden folder beside dst (".NAME.tmp-RANDOM", given
// as tmpDir), which is then swapped with dst. dst may not exist yet; a
// symbolic link to a folder is followed (the link stays).
//
// Until the swap, dst is untouched: when build fails or panics, or the
// process is interrupted, dst holds its old content (an interrupted
// process leaves the hidden folder behind; nothing reads it). On Linux
// the swap is one atomic exchange of the two names; elsewhere it is two
// renames, dst to a hidden name and the new folder to dst, with a window
// of microseconds in which dst does not exist (the old folder is then at
// ".NAME.old-RANDOM"). The old content is removed after the swap. The new
// folder gets dst's permission bits, or 0777 less the umask for a new
// dst. build's error is returned as it is; other errors name dst.
func ReplaceDir(dst string, build func(tmpDir string) error) error {
	return ReplaceDirKeeping(dst, nil, build)
}

// ReplaceDirKeeping is [ReplaceDir] that carries over into the new folder
// the entries of the old one for which keep(name) is true and that build
// did not write: files as hard links (copies where the file system refuses
// a link), folders entry by entry, symbolic links as links. The old folder
// is not changed until the swap. keep may be nil (nothing is kept).
func ReplaceDirKeeping(dst string, keep func(name string) bool, build func(tmpDir string) error) error {
	if dst == "" {
		return errors.New("replacing a folder: no folder name given")
	}
	path := dst
	var old fs.FileInfo
	switch st, err := os.Stat(dst); {
	case errors.Is(err, fs.ErrNotExist):
		if lst, lerr := os.Lstat(dst); lerr == nil && lst.Mode()&fs.ModeSymlink != 0 {
			return &TargetError{Path: dst, What: "a symbolic link to a missing folder"}
		}
	case err != nil:
		return fmt.Errorf("replacing %s: %w", dst, bare(err))
	case !st.IsDir():
		return fmt.Errorf("replacing %s: it is not a folder", dst)
	default:
		old = st
		if path, err = filepath.EvalSymlinks(dst); err != nil {
			return fmt.Errorf("replacing %s: %w", dst, bare(err))
		}
	}
	// A name ending in "." or ".." cannot be renamed: use the folder's
	// own name in its parent.
	path, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("replacing %s: %w", dst, err)
	}
	tmp, err := mkdirTemp(path)
	if err != nil {
		return fmt.Errorf("replacing %s: %w", dst, err)
	}
	swapped := false
	defer func() {
		if !swapped {
			os.RemoveAll(tmp)
		}
	}()
	if old != nil {
		if err := os.Chmod(tmp, old.Mode().Perm()); err != nil {
			return fmt.Errorf("replacing %s: %w", dst, bare(err))
		}
	}
	if err := build(tmp); err != nil {
		return err
	}
	if old != nil && keep != nil {
		if err := carry(path, tmp, keep); err != nil {
			return fmt.Errorf("replacing %s: keeping its other files: %w", dst, err)
		}
	}
	if err := syncDir(tmp); err != nil {
		return fmt.Errorf("replacing %s: %w", dst, err)
	}
	if old == nil {
		if err := os.Rename(tmp, path); err != nil {
			return fmt.Errorf("replacing %s: %w", dst, bare(err))
		}
		swapped = true
		return syncParent(dst, path)
	}
	err = exchange(tmp, path)
	if errors.Is(err, errors.ErrUnsupported) {
		err = swapByRenames(tmp, path)
	}
	if err != nil {
		return fmt.Errorf("replacing %s: %w", dst, err)
	}
	swapped = true // tmp now holds the old content (or is gone)
	serr := syncParent(dst, path)
	if err := os.RemoveAll(tmp); err != nil {
		return errors.Join(serr, fmt.Errorf("%s is replaced, but removing the old content (%s) failed: %w", dst, tmp, err))
	}
	return serr
}

// syncParent syncs the folder holding path after a rename in it.
func syncParent(dst, path string) error {
	if err := syncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("%s is replaced, but syncing its parent folder failed: %w", dst, err)
	}
	return nil
}

// swapByRenames swaps the folders at a (new) and b (old) with two renames,
// leaving the old content at a; on failure b is back as it was.
func swapByRenames(a, b string) error {
	aside := tempName(b, "old")
	if err := os.Rename(b, aside); err != nil {
		return bare(err)
	}
	if err := os.Rename(a, b); err != nil {
		if rerr := os.Rename(aside, b); rerr != nil {
			return fmt.Errorf("%w; the old folder is at %s (%w)", bare(err), aside, bare(rerr))
		}
		return bare(err)
	}
	if err := os.Rename(aside, a); err != nil {
		return os.RemoveAll(aside) // the swap is done; only the old content is left to remove
	}
	return nil
}

// mkdirTemp creates a new hidden folder beside path with permission bits
// 0777 less the umask.
func mkdirTemp(path string) (string, error) {
	for range 1000 {
		name := tempName(path, "tmp")
		err := os.Mkdir(name, 0o777)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", bare(err)
		}
		return name, nil
	}
	return "", errors.New("cannot find a free temporary folder name")
}

// carry links or copies the entries of the folder from for which keep is
// true into the folder to, unless to already has one of that name.
func carry(from, to string, keep func(string) bool) error {
	ents, err := os.ReadDir(from)
	if err != nil {
		return bare(err)
	}
	for _, e := range ents {
		if !keep(e.Name()) {
			continue
		}
		dst := filepath.Join(to, e.Name())
		if _, err := os.Lstat(dst); err == nil {
			continue // build wrote its own
		}
		if err := linkTree(filepath.Join(from, e.Name()), dst); err != nil {
			return err
		}
	}
	return nil
}

// linkTree recreates src at dst: a file as a hard link or a copy, a
// folder entry by entry, a symbolic link as a link. Other special files
// are refused.
func linkTree(src, dst string) error {
	st, err := os.Lstat(src)
	if err != nil {
		return err
	}
	m := st.Mode()
	switch {
	case m&fs.ModeSymlink != 0:
		to, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(to, dst)
	case m.IsDir():
		if err := os.Mkdir(dst, 0o700); err != nil {
			return err
		}
		ents, err := os.ReadDir(src)
		if err != nil {
			return err
		}
		for _, e := range ents {
			if err := linkTree(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
				return err
			}
		}
		return os.Chmod(dst, m.Perm())
	case m.IsRegular():
		if os.Link(src, dst) == nil {
			return nil
		}
		in, err := os.Open(src)
		if err != nil {
			return err
		}
		defer in.Close()
		if err := Write(dst, func(w io.Writer) error { _, err := io.Copy(w, in); return err }); err != nil {
			return err
		}
		return os.Chmod(dst, m.Perm())
	default:
		return fmt.Errorf("%s is %s, which cannot be carried over", src, kind(m))
	}
}
