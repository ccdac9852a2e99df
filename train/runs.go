package train

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"time"
)

// Runs own their checkpoints: a harness writes into its own folder under
// Config.CheckpointDir (run-<UTC time>-<random>), with a manifest,
// run.json, that says what the run trains. Pruning touches only the run's
// folder, so two runs given the same CheckpointDir both keep theirs, and
// resuming picks the newest run that trains the same kind of model with
// the same architecture.

// ManifestName is the name of a run's manifest in its folder.
const ManifestName = "run.json"

// manifestFormat is the version of the manifest's layout.
const manifestFormat = 1

// RunInfo says what a run trains; models set Config.Run. Resuming from a
// run of another Kind or Arch is an error.
type RunInfo struct {
	// Kind is the model kind, such as "charlstm" or "moe".
	Kind string `json:"kind,omitempty"`
	// Arch is the architecture, as JSON (ArchJSON); runs of another
	// architecture cannot be resumed.
	Arch string `json:"arch,omitempty"`
	// Data is a fingerprint of the training data (Fingerprint); resuming on
	// other data is allowed, with a warning.
	Data string `json:"data,omitempty"`
}

// ArchJSON returns v as compact JSON for RunInfo.Arch ("" if it cannot be
// encoded).
func ArchJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// Fingerprint returns a short fingerprint of training data for
// RunInfo.Data: the first 16 hex digits of its SHA-256, after "sha256:".
func Fingerprint(data ...[]byte) string {
	h := sha256.New()
	for _, d := range data {
		h.Write(d)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)[:8])
}

// Manifest is a run's run.json.
type Manifest struct {
	// Format is the manifest layout's version (1).
	Format int `json:"format"`
	// Run is the run's folder name.
	Run string `json:"run"`
	RunInfo
	// Seed is the run's Config.Seed.
	Seed int64 `json:"seed"`
	// Version is the gotrain module version that started the run.
	Version string `json:"version"`
	// Created is when the run wrote its first checkpoint.
	Created time.Time `json:"created"`
}

// compatible says why a run described by m cannot be resumed by a run
// described by want ("" if it can). An empty Kind or Arch on either side
// is not compared.
func (m *Manifest) compatible(want RunInfo) string {
	switch {
	case m.Kind != "" && want.Kind != "" && m.Kind != want.Kind:
		return fmt.Sprintf("it trains a %s model, not %s", m.Kind, want.Kind)
	case m.Arch != "" && want.Arch != "" && m.Arch != want.Arch:
		return fmt.Sprintf("its architecture %s differs from %s", m.Arch, want.Arch)
	}
	return ""
}

// NewRunName returns a fresh run folder name: run-<UTC time>-<8 random
// hex digits>, so that names sort by start time and never collide.
func NewRunName() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "run-" + time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// moduleVersion is the gotrain version recorded in manifests.
func moduleVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// ReadManifest reads the manifest of the run folder dir.
func ReadManifest(dir string) (*Manifest, error) {
	path := filepath.Join(dir, ManifestName)
	b, err := readBounded(path, 1<<20)
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("run manifest %s: %w", path, err)
	}
	if m.Format < 1 || m.Format > manifestFormat {
		return nil, fmt.Errorf("run manifest %s: format %d: this gotrain reads format 1 to %d", path, m.Format, manifestFormat)
	}
	return &m, nil
}

// readBounded reads a small file whole, refusing one larger than limit
// bytes.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > limit {
		return nil, fmt.Errorf("%s: not a regular file of at most %d bytes", path, limit)
	}
	b := make([]byte, fi.Size())
	if _, err := f.ReadAt(b, 0); err != nil && fi.Size() > 0 {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// writeManifest writes m into dir (created if needed), atomically.
func writeManifest(dir string, m *Manifest) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, ManifestName), append(b, '\n'))
}

// runCandidate is a folder that may be resumed.
type runCandidate struct {
	dir    string
	newest time.Time // of its newest checkpoint file (or the manifest)
}

// ResumeCandidates returns the folders a run described by want may resume
// from, given path, newest first:
//   - path is a run folder (it holds run.json): path itself, or an error
//     saying why it is not compatible;
//   - otherwise the compatible run folders under path, and path itself when
//     it holds checkpoint files directly (the layout of gotrain before run
//     folders, whose checkpoints have no manifest), ordered by their newest
//     checkpoint.
//
// Runs skipped as incompatible or unreadable are reported through warn.
// No candidate is an error wrapping ErrNoCheckpoint that says what was
// skipped.
func ResumeCandidates(path string, want RunInfo, warn func(string)) ([]string, error) {
	if warn == nil {
		warn = func(string) {}
	}
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("train: resume: %s does not exist: %w", path, ErrNoCheckpoint)
		}
		return nil, fmt.Errorf("train: resume: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("train: resume: %s is not a folder", path)
	}
	if _, err := os.Stat(filepath.Join(path, ManifestName)); err == nil {
		m, err := ReadManifest(path)
		if err != nil {
			return nil, fmt.Errorf("train: resume: %w", err)
		}
		if why := m.compatible(want); why != "" {
			return nil, fmt.Errorf("train: resume: run %s cannot be resumed here: %s", path, why)
		}
		return []string{path}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("train: resume: %w", err)
	}
	var cands []runCandidate
	var skipped []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(path, e.Name())
		if _, err := os.Stat(filepath.Join(dir, ManifestName)); err != nil {
			continue // not a run folder
		}
		m, err := ReadManifest(dir)
		if err != nil {
			warn(fmt.Sprintf("warning: skipping run %s: %v", dir, err))
			skipped = append(skipped, dir+" (unreadable manifest)")
			continue
		}
		if why := m.compatible(want); why != "" {
			warn(fmt.Sprintf("warning: skipping run %s: %s", dir, why))
			skipped = append(skipped, dir+" ("+why+")")
			continue
		}
		cands = append(cands, runCandidate{dir, newestCheckpoint(dir, m.Created)})
	}
	if files, _ := (&Checkpointer{Dir: path}).List(); len(files) > 0 {
		cands = append(cands, runCandidate{path, newestCheckpoint(path, time.Time{})})
	}
	if len(cands) == 0 {
		msg := fmt.Sprintf("train: resume: no run to resume in %s", path)
		if len(skipped) > 0 {
			msg += "; skipped " + strings.Join(skipped, ", ")
		}
		return nil, fmt.Errorf("%s: %w", msg, ErrNoCheckpoint)
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].newest.After(cands[j].newest) })
	out := make([]string, len(cands))
	for i, c := range cands {
		out[i] = c.dir
	}
	return out, nil
}

// newestCheckpoint returns the modification time of the newest checkpoint
// file in dir, or def when it has none.
func newestCheckpoint(dir string, def time.Time) time.Time {
	files, _ := (&Checkpointer{Dir: dir}).List()
	t := def
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil && fi.ModTime().After(t) {
			t = fi.ModTime()
		}
	}
	return t
}

// Resume restores the newest valid checkpoint of the newest compatible run
// under Config.CheckpointDir (see ResumeCandidates), makes the harness
// continue that run (its later checkpoints go to the same folder) and
// returns the checkpoint's path. Invalid checkpoint files are skipped with
// a warning naming each; a run without a valid one is passed over for the
// next. Nothing to resume from is an error wrapping ErrNoCheckpoint, never
// a fresh start.
//
// Training across ranks (Config.Comm), rank 0 finds and restores the
// checkpoint and sends it to the other ranks, which restore the same
// bytes; every rank calls Resume.
func (h *Harness) Resume() (string, error) {
	if h.ranks != nil {
		if err := h.ranks.checkSetup(h); err != nil {
			return "", err
		}
		return h.ranks.resume(h)
	}
	return h.resumeHere()
}

// resumeHere is Resume in this process alone.
func (h *Harness) resumeHere() (string, error) {
	if h.ckpt == nil {
		return "", fmt.Errorf("train: resume: %w (checkpoints are disabled)", ErrNoCheckpoint)
	}
	warn := func(msg string) {
		if h.logf != nil {
			h.logf(msg)
		}
	}
	dirs, err := ResumeCandidates(h.cfg.CheckpointDir, h.cfg.Run, warn)
	if err != nil {
		return "", err
	}
	var invalid []string
	for _, dir := range dirs {
		ck := *h.ckpt
		ck.Dir = dir
		ck.Warn = func(msg string) {
			invalid = append(invalid, msg)
			warn("warning: " + msg)
		}
		path, err := ck.Restore(h)
		if errors.Is(err, ErrNoCheckpoint) {
			continue
		}
		if err != nil {
			return "", err
		}
		if m, err := ReadManifest(dir); err == nil && m.Data != "" && h.cfg.Run.Data != "" && m.Data != h.cfg.Run.Data {
			warn(fmt.Sprintf("warning: resuming run %s on other training data than it started with", dir))
		}
		h.ckpt.Dir, h.ckpt.manifest = dir, nil // continue the run where it is
		h.markRestored(path)
		return path, nil
	}
	msg := fmt.Sprintf("train: resume: no valid checkpoint in %s", strings.Join(dirs, ", "))
	if len(invalid) > 0 {
		msg += " (" + strings.Join(invalid, "; ") + ")"
	}
	return "", fmt.Errorf("%s: %w", msg, ErrNoCheckpoint)
}

// markRestored records that the trainable variables were restored from
// the checkpoint path (checkRestored checks them after the first step).
func (h *Harness) markRestored(path string) {
	h.resumedFrom, h.restored = path, map[string]bool{}
	for v := range h.ctx.IterVariables() {
		if v.Trainable {
			h.restored[v.ScopeAndName()] = true
		}
	}
}

// RunDir returns the folder this run writes its checkpoints into: a new
// folder under Config.CheckpointDir, or after Resume the folder of the
// run it continues ("" with checkpoints disabled).
func (h *Harness) RunDir() string {
	if h.ckpt == nil {
		return ""
	}
	return h.ckpt.Dir
}

// RunCheckpoints returns the checkpoint files to load a model from, given
// a folder: those of the folder itself when it holds any (a run folder, or
// a folder of earlier releases), else those of its runs, newest run first
// (ResumeCandidates); each folder's newest checkpoint first. A folder with
// neither gives no files.
func RunCheckpoints(dir string) ([]string, error) {
	files, err := (&Checkpointer{Dir: dir}).List()
	if err != nil || len(files) > 0 {
		return files, err
	}
	runs, err := ResumeCandidates(dir, RunInfo{}, nil)
	if errors.Is(err, ErrNoCheckpoint) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	for _, r := range runs {
		fs, err := (&Checkpointer{Dir: r}).List()
		if err != nil {
			return nil, err
		}
		files = append(files, fs...)
	}
	return files, nil
}

// checkRestored, on the first step after Resume, when the model has built
// its variables, checks that the checkpoint held every trainable one: a
// variable created afresh means the checkpoint was written by another
// model or architecture, and training on would silently start from new
// weights.
func (h *Harness) checkRestored() error {
	if h.restored == nil {
		return nil
	}
	restored, from := h.restored, h.resumedFrom
	h.restored, h.resumedFrom = nil, ""
	var fresh []string
	for v := range h.ctx.IterVariables() {
		if v.Trainable && !restored[v.ScopeAndName()] {
			fresh = append(fresh, v.ScopeAndName())
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	sort.Strings(fresh)
	if len(fresh) > 3 {
		fresh = append(fresh[:3], fmt.Sprintf("and %d more", len(fresh)-3))
	}
	return fmt.Errorf("train: resume from %s: the checkpoint does not hold the model's variables %s: it was written by another model or architecture", from, strings.Join(fresh, ", "))
}

// Resumable tells whether Harness.Resume would find something to resume in
// path for a run described by want: a compatible run (or path itself)
// holding a checkpoint that reads back valid. A folder that does not exist
// or holds nothing compatible is false, not an error.
func Resumable(path string, want RunInfo) (bool, error) {
	dirs, err := ResumeCandidates(path, want, nil)
	if errors.Is(err, ErrNoCheckpoint) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, dir := range dirs {
		files, err := (&Checkpointer{Dir: dir}).List()
		if err != nil {
			return false, err
		}
		for _, f := range files {
			if _, _, err := readCheckpointFile(f); err == nil {
				return true, nil
			}
		}
	}
	return false, nil
}
