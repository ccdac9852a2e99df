package train

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/gotrain/gotrain/internal/atomicfile"
)

// ErrNoCheckpoint is returned by Restore when the directory holds no valid
// checkpoint.
var ErrNoCheckpoint = errors.New("no valid checkpoint")

const (
	ckptMagic  = "GOTRAIN-CKPT-1\n"
	ckptPrefix = "ckpt-"
	ckptExt    = ".gtc"
)

// Checkpointer writes and restores checkpoints in Dir. A checkpoint file holds
// every context variable (weights, optimizer moments, step counters, the RNG
// state) except GoMLX's running train metrics and the harness state (step, data position, early stopping). It is
// written to a temporary file, synced and renamed, so a crash never leaves a
// partial file under the final name; a SHA-256 at the end rejects a
// truncated or corrupt file.
type Checkpointer struct {
	// Dir is the checkpoint directory.
	Dir string
	// KeepBest is the number of checkpoints with the best monitored value
	// kept besides the last.
	KeepBest int
	// Mode is ModeMin or ModeMax for the monitored value.
	Mode string
	// Warn, if set, receives a message for each checkpoint skipped as invalid.
	Warn func(msg string)
	// manifest, when set, is written to Dir as run.json before the first
	// checkpoint of a new run.
	manifest *Manifest
}

type ckptVar struct {
	Scope     string `json:"scope"`
	Name      string `json:"name"`
	DType     string `json:"dtype"`
	Dims      []int  `json:"dims"`
	Trainable bool   `json:"trainable"`
	Offset    int    `json:"offset"`
	Size      int    `json:"size"`
}

type ckptHeader struct {
	Step    int64          `json:"step"`
	Monitor float64        `json:"monitor"`
	Data    DataPosition   `json:"data"`
	Stopper *EarlyStopping `json:"early_stopping,omitempty"`
	Scaler  *LossScaler    `json:"loss_scaler,omitempty"`
	Config  Config         `json:"config"`
	// PlannedSteps is the last step a time-limited run planned
	// (Config.TimeLimit): a resumed run with Cosine keeps it as its end.
	PlannedSteps int64     `json:"planned_steps,omitempty"`
	Variables    []ckptVar `json:"variables"`
}

// Save writes a checkpoint of h with monitor as its monitored value, prunes
// old ones, and returns the file's path.
func (c *Checkpointer) Save(h *Harness, monitor float64) (string, error) {
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return "", fmt.Errorf("train: checkpoint: %w", err)
	}
	if c.manifest != nil {
		c.manifest.Created = time.Now().UTC()
		if err := writeManifest(c.Dir, c.manifest); err != nil {
			return "", fmt.Errorf("train: checkpoint: run manifest: %w", err)
		}
		c.manifest = nil
	}
	if h.emaApplied {
		// The weights' variables hold the averages (after Run): save each
		// in its own place.
		if err := swapEMA(h.emaPairs()); err != nil {
			return "", fmt.Errorf("train: checkpoint: %w", err)
		}
		defer func() { _ = swapEMA(h.emaPairs()) }()
	}
	hdr := ckptHeader{Step: h.step, Monitor: monitor, Data: h.data.Position(), Stopper: h.stopper, Scaler: h.scaler, Config: h.cfg, PlannedSteps: h.plannedSteps}
	if math.IsNaN(monitor) || math.IsInf(monitor, 0) {
		hdr.Monitor = 0
	}
	var blob bytes.Buffer
	for v := range h.ctx.IterVariables() {
		if !v.HasValue() || isMetricsScope(v.Scope()) || v.Scope() == StepMetricsScope ||
			(v.Scope() == HarnessScope && v.Name() == RankGradsVar) {
			continue
		}
		t, err := v.Value()
		if err != nil {
			return "", fmt.Errorf("train: checkpoint: reading %s: %w", v.ScopeAndName(), err)
		}
		cv := ckptVar{Scope: v.Scope(), Name: v.Name(), DType: t.DType().String(), Dims: t.Shape().Dimensions,
			Trainable: v.Trainable, Offset: blob.Len()}
		err = t.ConstBytes(func(data []byte) { blob.Write(data) })
		if err != nil {
			return "", fmt.Errorf("train: checkpoint: reading %s: %w", v.ScopeAndName(), err)
		}
		cv.Size = blob.Len() - cv.Offset
		hdr.Variables = append(hdr.Variables, cv)
	}
	sort.Slice(hdr.Variables, func(i, j int) bool {
		a, b := hdr.Variables[i], hdr.Variables[j]
		return a.Scope+"/"+a.Name < b.Scope+"/"+b.Name
	})
	hb, err := json.Marshal(hdr)
	if err != nil {
		return "", fmt.Errorf("train: checkpoint: %w", err)
	}
	var out bytes.Buffer
	out.WriteString(ckptMagic)
	_ = binary.Write(&out, binary.LittleEndian, uint64(len(hb)))
	out.Write(hb)
	out.Write(blob.Bytes())
	sum := sha256.Sum256(out.Bytes())
	out.Write(sum[:])

	path := filepath.Join(c.Dir, fmt.Sprintf("%s%012d%s", ckptPrefix, h.step, ckptExt))
	if err := writeAtomic(path, out.Bytes()); err != nil {
		return "", fmt.Errorf("train: checkpoint: %w", err)
	}
	if err := c.prune(); err != nil {
		return path, err
	}
	return path, nil
}

// isMetricsScope tells whether scope holds GoMLX's running train metrics
// (moving averages of the loss). Their names carry a UUID drawn per Trainer,
// so they cannot be restored into a new one; they are not saved, and do not
// affect training.
func isMetricsScope(scope string) bool {
	return scope == "/metrics" || strings.HasPrefix(scope, "/metrics/")
}

// writeAtomic writes data to path atomically, through internal/atomicfile
// (the one write path of gotrain's files).
func writeAtomic(path string, data []byte) error {
	return atomicfile.WriteFile(path, data)
}

// List returns the checkpoint files in Dir, newest (highest step) first.
func (c *Checkpointer) List() ([]string, error) {
	entries, err := os.ReadDir(c.Dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("train: listing checkpoints: %w", err)
	}
	var out []string
	for _, e := range entries {
		n := e.Name()
		if strings.HasPrefix(n, ckptPrefix) && strings.HasSuffix(n, ckptExt) && !e.IsDir() {
			out = append(out, filepath.Join(c.Dir, n))
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(out)))
	return out, nil
}

// prune keeps the newest checkpoint and the KeepBest with the best monitor value.
func (c *Checkpointer) prune() error {
	files, err := c.List()
	if err != nil || len(files) <= 1 {
		return err
	}
	type scored struct {
		path    string
		monitor float64
	}
	var rest []scored
	for _, f := range files[1:] {
		hdr, _, err := readCheckpoint(f)
		if err != nil {
			continue // invalid files are left for inspection
		}
		rest = append(rest, scored{f, hdr.Monitor})
	}
	sort.SliceStable(rest, func(i, j int) bool {
		if c.Mode == ModeMax {
			return rest[i].monitor > rest[j].monitor
		}
		return rest[i].monitor < rest[j].monitor
	})
	for i, s := range rest {
		if i >= c.KeepBest {
			if err := os.Remove(s.path); err != nil {
				return fmt.Errorf("train: pruning checkpoints: %w", err)
			}
		}
	}
	return nil
}

// readCheckpoint reads and verifies a checkpoint file.
func readCheckpoint(path string) (ckptHeader, []byte, error) {
	return readCheckpointFile(path)
}

// Restore loads the newest valid checkpoint into h (variables, step, data
// position, early-stopping state) and returns its path. Invalid files are
// skipped (reported through Warn). It returns ErrNoCheckpoint if there is
// none.
func (c *Checkpointer) Restore(h *Harness) (string, error) {
	if c == nil {
		return "", fmt.Errorf("train: resume: %w (checkpoints are disabled)", ErrNoCheckpoint)
	}
	files, err := c.List()
	if err != nil {
		return "", err
	}
	for _, f := range files {
		hdr, blob, err := readCheckpoint(f)
		if err != nil {
			if c.Warn != nil {
				c.Warn(fmt.Sprintf("skipping invalid checkpoint: %v", err))
			}
			continue
		}
		if err := c.load(h, hdr, blob); err != nil {
			return "", fmt.Errorf("train: resume from %s: %w", f, err)
		}
		return f, nil
	}
	return "", fmt.Errorf("train: resume from %s: %w", c.Dir, ErrNoCheckpoint)
}

func (c *Checkpointer) load(h *Harness, hdr ckptHeader, blob []byte) error {
	old, cur := hdr.Config, h.cfg
	if old.BatchSize != cur.BatchSize || old.Accumulate != cur.Accumulate || old.Seed != cur.Seed || old.Optimizer != cur.Optimizer {
		h.logf(fmt.Sprintf("train: resuming a run saved with Optimizer %s, BatchSize %d, Accumulate %d, Seed %d "+
			"under Optimizer %s, BatchSize %d, Accumulate %d, Seed %d: it will not match an uninterrupted run",
			old.Optimizer, old.BatchSize, old.Accumulate, old.Seed, cur.Optimizer, cur.BatchSize, cur.Accumulate, cur.Seed))
	}
	for _, cv := range hdr.Variables {
		dt, err := dtypes.DTypeString(cv.DType)
		if err != nil {
			return fmt.Errorf("variable %s/%s: dtype %q: %w", cv.Scope, cv.Name, cv.DType, err)
		}
		t := tensors.FromShape(shapes.Make(dt, cv.Dims...))
		var n int
		if err := t.MutableBytes(func(data []byte) { n = copy(data, blob[cv.Offset:cv.Offset+cv.Size]) }); err != nil {
			return fmt.Errorf("variable %s/%s: %w", cv.Scope, cv.Name, err)
		}
		if n != cv.Size {
			return fmt.Errorf("variable %s/%s: %d bytes for shape %v", cv.Scope, cv.Name, cv.Size, t.Shape())
		}
		if v := h.ctx.GetVariableByScopeAndName(cv.Scope, cv.Name); v != nil {
			if err := v.SetValue(t); err != nil {
				return fmt.Errorf("variable %s/%s: %w", cv.Scope, cv.Name, err)
			}
			continue
		}
		err = Catch(func() {
			h.ctx.InAbsPath(cv.Scope).Checked(false).VariableWithValue(cv.Name, t).SetTrainable(cv.Trainable)
		})
		if err != nil {
			return fmt.Errorf("variable %s/%s: %w", cv.Scope, cv.Name, err)
		}
	}
	if err := h.data.SetPosition(hdr.Data); err != nil {
		return err
	}
	h.step = hdr.Step
	if hdr.Stopper != nil && h.stopper != nil {
		*h.stopper = *hdr.Stopper
	}
	if hdr.PlannedSteps > 0 && h.cfg.Cosine {
		// The run's time limit planned its end and its schedule's.
		h.plannedSteps = hdr.PlannedSteps
		h.setTotalSteps(min(hdr.PlannedSteps, int64(h.totalSteps)))
	}
	if hdr.Scaler != nil && h.scaler != nil {
		*h.scaler = *hdr.Scaler
	}
	return nil
}

// ResumeDir returns the checkpoint directory to resume from, given a
// checkpoint directory or a checkpoint file: the directory itself, or the
// directory of a file that must be its newest checkpoint (the harness
// resumes from the newest). A path that does not exist, or an older file,
// is an error.
func ResumeDir(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("train: resume from %w", err)
	}
	if fi.IsDir() {
		return path, nil
	}
	dir := filepath.Dir(path)
	files, err := (&Checkpointer{Dir: dir}).List()
	if err != nil {
		return "", fmt.Errorf("train: resume from %s: %w", path, err)
	}
	if len(files) == 0 || filepath.Clean(files[0]) != filepath.Clean(path) {
		newest := "none"
		if len(files) > 0 {
			newest = files[0]
		}
		return "", fmt.Errorf("train: resume from %s: training resumes from the newest checkpoint of %s, which is %s; pass the directory or that file", path, dir, newest)
	}
	return dir, nil
}

// ResumeLatest is the resume value of SetRun that continues the newest
// valid run in the checkpoint directory (the CLI's bare --resume).
const ResumeLatest = "latest"

// SetRun applies to c what a command says about its run: the batch size
// batch ("" keeps c.BatchSize, N sets it, and auto returns auto true for
// the model to find one, see AutoBatchSize), the checkpoint directory
// dir, early stopping off when EarlyStopPatience is 0, and resuming:
// resume "" starts afresh, ResumeLatest continues the newest valid run in
// dir, and any other value is a run folder or checkpoint file whose
// directory resumeDir returns (a model's own; nil means ResumeDir).
// Errors name the Config fields.
func (c *Config) SetRun(batch, dir, resume string, resumeDir func(string) (string, error)) (auto bool, err error) {
	n, auto, err := ParseBatchSize(batch)
	if err != nil {
		return false, err
	}
	if n > 0 {
		c.BatchSize = n
	}
	if c.EarlyStopPatience == 0 {
		c.EarlyStopMonitor, c.EarlyStopPatience = "", 1 // off; 1 keeps the configuration valid
	}
	c.CheckpointDir = dir
	switch resume {
	case "":
		return auto, nil
	case ResumeLatest:
	default:
		if resumeDir == nil {
			resumeDir = ResumeDir
		}
		if c.CheckpointDir, err = resumeDir(resume); err != nil {
			return false, fmt.Errorf("Resume=%s: %w", resume, err)
		}
	}
	if c.NoCheckpoint {
		return false, errors.New("Resume and NoCheckpoint exclude each other")
	}
	c.Resume = true
	return auto, nil
}
