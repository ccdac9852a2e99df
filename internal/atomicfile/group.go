package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// A Group writes several files that belong together (a SigMF .sigmf-data
// and .sigmf-meta pair) so that none of the new files is visible before
// all of them are written. [Group.Stage] and [Group.StageFunc] write each
// file to a synced temporary file beside its target; [Group.Commit] then
// renames them over their targets in the order they were staged;
// [Group.Abort] removes whatever was staged and not committed.
//
// POSIX has no rename of several files at once, so the guarantee is this:
// nothing is visible until Commit; Commit's renames take microseconds, in
// staging order, so stage the file readers look for (the metadata) last
// and a reader keyed on it never sees it beside an old or missing partner.
// When a rename fails, the files already renamed are rolled back: a
// replaced file is restored from a hard link made before the first rename,
// a new file is removed. Rollback is not possible where the file system
// refuses hard links (the replaced file is then lost for the new one) or
// after a crash in the middle of Commit (some targets are then new, some
// old; every one is complete).
//
// A FIFO or character device among the targets is written through during
// Commit, in its turn, from a copy kept in memory; it cannot be rolled
// back. A Group is not safe for concurrent use.
type Group struct {
	files []*staged
	done  bool
}

// rename is os.Rename; tests watch the order of Commit's renames through it.
var rename = os.Rename

// staged is one file of a Group.
type staged struct {
	path   string        // the target as given (for errors)
	target target        // what it resolves to
	tmp    string        // the temporary file ("" when written through)
	data   *bytes.Buffer // the content of a write-through target
	backup string        // hard link to the replaced file during Commit
}

// Stage writes data as the next file of the group, to be renamed to path
// by Commit. It returns the errors [WriteFile] would.
func (g *Group) Stage(path string, data []byte) error {
	return g.StageFunc(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// StageFunc writes what fn writes as the next file of the group, to be
// renamed to path by Commit. fn's error is returned as it is, and its panic
// goes on; either way nothing is staged for path. Staging one path twice is
// an error.
func (g *Group) StageFunc(path string, fn func(w io.Writer) error) error {
	if g.done {
		return fmt.Errorf("staging %s: the group is already committed or aborted", path)
	}
	t, err := resolve(path)
	if err != nil {
		return wrap(path, err)
	}
	for _, s := range g.files {
		if s.target.path == t.path {
			return fmt.Errorf("staging %s: already staged as %s", path, s.path)
		}
	}
	s := &staged{path: path, target: t}
	if t.through {
		s.data = new(bytes.Buffer)
		if err := fn(s.data); err != nil {
			return err
		}
	} else if s.tmp, err = stage(path, t, fn); err != nil {
		return err
	}
	g.files = append(g.files, s)
	return nil
}

// Commit renames the staged files over their targets in the order they
// were staged (and writes the FIFOs and devices among them through), then
// syncs their folders. When a step fails, it rolls back the renames done
// (see [Group]), removes the temporary files, and returns an error naming
// the file. A Group commits once.
func (g *Group) Commit() error {
	if g.done {
		return errors.New("atomicfile: the group is already committed or aborted")
	}
	defer g.Abort()
	// Hard links to the files about to be replaced, for a rollback.
	for _, s := range g.files {
		if s.tmp == "" || !s.target.exists {
			continue
		}
		for range 100 {
			name := tempName(s.target.path, "old")
			err := os.Link(s.target.path, name)
			if err == nil {
				s.backup = name
			}
			if !errors.Is(err, os.ErrExist) {
				break
			}
		}
	}
	for i, s := range g.files {
		var err error
		if s.tmp == "" {
			err = writeThrough(s.path, func(w io.Writer) error {
				_, err := w.Write(s.data.Bytes())
				return err
			})
		} else if err = rename(s.tmp, s.target.path); err != nil {
			err = wrap(s.path, err)
		} else {
			s.tmp = ""
		}
		if err != nil {
			if rerr := g.rollback(g.files[:i]); rerr != nil {
				return fmt.Errorf("%w (and the rollback failed: %w)", err, rerr)
			}
			return err
		}
	}
	var errs []error
	synced := map[string]bool{}
	for _, s := range g.files {
		if s.target.through {
			continue
		}
		if dir := filepath.Dir(s.target.path); !synced[dir] {
			synced[dir] = true
			if err := syncDir(dir); err != nil {
				errs = append(errs, fmt.Errorf("%s is written, but syncing its folder failed: %w", s.path, err))
			}
		}
	}
	return errors.Join(errs...)
}

// rollback undoes the renames of done, last first.
func (g *Group) rollback(done []*staged) error {
	var errs []error
	for i := len(done) - 1; i >= 0; i-- {
		s := done[i]
		switch {
		case s.target.through:
			errs = append(errs, fmt.Errorf("%s was written through and cannot be taken back", s.path))
		case s.backup != "":
			if err := os.Rename(s.backup, s.target.path); err != nil {
				errs = append(errs, wrap(s.path, err))
			} else {
				s.backup = ""
			}
		case s.target.exists:
			errs = append(errs, fmt.Errorf("%s cannot be restored (no hard link to the old file)", s.path))
		default:
			if err := os.Remove(s.target.path); err != nil {
				errs = append(errs, fmt.Errorf("removing the new %s: %w", s.path, bare(err)))
			}
		}
	}
	return errors.Join(errs...)
}

// Abort removes the group's temporary files (and the hard links Commit
// made); the targets are left as they are. It may be called more than
// once, and after Commit (defer it).
func (g *Group) Abort() {
	g.done = true
	for _, s := range g.files {
		if s.tmp != "" {
			os.Remove(s.tmp)
			s.tmp = ""
		}
		if s.backup != "" {
			os.Remove(s.backup)
			s.backup = ""
		}
		s.data = nil
	}
}
