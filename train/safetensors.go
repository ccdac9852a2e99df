package train

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"

	"github.com/gotrain/gotrain/internal/atomicfile"
)

// Exporting a checkpoint's weights as safetensors (Hugging Face's format,
// github.com/huggingface/safetensors): 8 bytes, the length N of the header
// (uint64, little-endian); N bytes of JSON header, an object with a
// "__metadata__" object of strings and, per tensor, {"dtype", "shape",
// "data_offsets": [begin, end]} (byte offsets in the buffer that follows
// the header); then the buffer, the tensors' bytes (little-endian,
// row-major) one after the other with no gap. The header is padded with
// spaces so that the buffer starts at a multiple of 8 bytes, and the
// tensors are laid out by element size, largest first (then by name), so
// that each starts at a multiple of its element size, as the reference
// implementation lays them out.
//
// Tensor names are the variables' scope and name without the leading "/"
// ("l1/w" for the variable w of scope /l1): every variable of the model,
// trainable or not (such as a language model's vocabulary), and none of
// the training state (the optimizer's moments and step counters, the
// random-number state, the harness's own variables).

// Weights choices of ExportOptions.
const (
	// WeightsAuto exports the moving averages when the checkpoint has
	// them (a run with EMADecay), else the trained weights.
	WeightsAuto = "auto"
	// WeightsEMA exports the moving averages (an error without them).
	WeightsEMA = "ema"
	// WeightsRaw exports the trained weights.
	WeightsRaw = "raw"
)

// ExportOptions configure ExportSafetensors.
type ExportOptions struct {
	// Weights is WeightsAuto (""), WeightsEMA or WeightsRaw.
	Weights string
}

// ExportTensor describes one tensor of an exported file.
type ExportTensor struct {
	Name  string `json:"name"`
	DType string `json:"dtype"`
	Shape []int  `json:"shape"`
	// Offsets are the tensor's data_offsets in the buffer.
	Offsets [2]int64 `json:"data_offsets"`
	// Variable is the checkpoint variable the values come from (the
	// average's, for an averaged weight).
	Variable string `json:"variable"`
}

// ExportReport says what ExportSafetensors wrote.
type ExportReport struct {
	Format     string `json:"format"`
	Checkpoint string `json:"checkpoint"`
	Out        string `json:"out"`
	Step       int64  `json:"step"`
	// Weights is "ema" when the moving averages were exported, else "raw".
	Weights  string            `json:"weights"`
	Tensors  []ExportTensor    `json:"tensors"`
	Metadata map[string]string `json:"metadata"`
	// HeaderBytes is N, the header's length; Bytes the file's size.
	HeaderBytes int64 `json:"header_bytes"`
	Bytes       int64 `json:"bytes"`
}

// WriteText writes the report: the file, the source, then each tensor.
func (r *ExportReport) WriteText(w io.Writer) error {
	if _, err := fmt.Fprintf(w, "%s: %d tensors, %d bytes (%s weights of step %d of %s)\n",
		r.Out, len(r.Tensors), r.Bytes, r.Weights, r.Step, r.Checkpoint); err != nil {
		return err
	}
	for _, t := range r.Tensors {
		if _, err := fmt.Fprintf(w, "  %-40s %-4s %v\n", t.Name, t.DType, t.Shape); err != nil {
			return err
		}
	}
	return nil
}

// safetensorsDType is the safetensors name of dt ("" for one it lacks).
func safetensorsDType(dt dtypes.DType) string {
	switch dt {
	case dtypes.Bool:
		return "BOOL"
	case dtypes.Int8:
		return "I8"
	case dtypes.Int16:
		return "I16"
	case dtypes.Int32:
		return "I32"
	case dtypes.Int64:
		return "I64"
	case dtypes.Uint8:
		return "U8"
	case dtypes.Uint16:
		return "U16"
	case dtypes.Uint32:
		return "U32"
	case dtypes.Uint64:
		return "U64"
	case dtypes.Float16:
		return "F16"
	case dtypes.BFloat16:
		return "BF16"
	case dtypes.Float32:
		return "F32"
	case dtypes.Float64:
		return "F64"
	}
	return ""
}

// trainingState tells whether the variable scope/name is training state
// rather than part of the model.
func trainingState(scope, name string) bool {
	if strings.HasPrefix(name, "#") || (scope == context.RootScope && name == optimizers.GlobalStepVariableName) {
		return true
	}
	for _, s := range []string{"/" + optimizers.Scope, "/" + optimizers.AdamDefaultScope, HarnessScope, "/metrics", EMAScope} {
		if scope == s || strings.HasPrefix(scope, s+"/") {
			return true
		}
	}
	return false
}

// ExportSafetensors writes the model of a checkpoint to out as a
// safetensors file, atomically (internal/atomicfile). path is a
// checkpoint file, a run folder or a folder of runs (its newest run's
// newest valid checkpoint, as LoadForInference takes it). The metadata
// holds the step, which weights were written, and the run's kind and
// architecture when its manifest says them.
func ExportSafetensors(path, out string, opts ExportOptions) (*ExportReport, error) {
	switch opts.Weights {
	case "":
		opts.Weights = WeightsAuto
	case WeightsAuto, WeightsEMA, WeightsRaw:
	default:
		return nil, fmt.Errorf("train: export: Weights %q: want auto, ema or raw", opts.Weights)
	}
	f, hdr, blob, err := firstReadableCheckpoint(path)
	if err != nil {
		return nil, fmt.Errorf("train: export: %w", err)
	}
	return writeSafetensors(f, hdr, blob, out, opts.Weights)
}

// writeSafetensors writes the model variables of the checkpoint ckpt
// (its header and variables' bytes) to out.
func writeSafetensors(ckpt string, hdr ckptHeader, blob []byte, out, weights string) (*ExportReport, error) {
	avg := map[string]ckptVar{}
	for _, v := range hdr.Variables {
		if inEMAScope(v.Scope) {
			avg[context.JoinScope(v.Scope, v.Name)] = v
		}
	}
	if weights == WeightsEMA && len(avg) == 0 {
		return nil, fmt.Errorf("train: export: %s holds no moving averages of the weights (trained without EMADecay); export the trained weights", ckpt)
	}
	rep := &ExportReport{Format: "safetensors", Checkpoint: ckpt, Out: out, Step: hdr.Step, Weights: WeightsRaw}
	type src struct {
		ExportTensor
		v    ckptVar
		size int
	}
	var ts []src
	for _, v := range hdr.Variables {
		if trainingState(v.Scope, v.Name) {
			continue
		}
		dt, err := dtypes.DTypeString(v.DType)
		if err != nil {
			return nil, fmt.Errorf("train: export: %s: variable %s/%s: %w", ckpt, v.Scope, v.Name, err)
		}
		name := strings.TrimPrefix(context.JoinScope(v.Scope, v.Name), "/")
		st := safetensorsDType(dt)
		if st == "" {
			return nil, fmt.Errorf("train: export: %s: variable %s is %s, which safetensors has no dtype for", ckpt, name, dt)
		}
		from := v
		if a, ok := avg[context.JoinScope(emaScope(v.Scope), v.Name)]; ok && weights != WeightsRaw && v.Trainable {
			if a.DType != v.DType || !slices.Equal(a.Dims, v.Dims) {
				return nil, fmt.Errorf("train: export: %s: the moving average of %s is %s%v, the variable %s%v", ckpt, name, a.DType, a.Dims, v.DType, v.Dims)
			}
			from = a
			rep.Weights = WeightsEMA
		}
		shape := append([]int{}, v.Dims...)
		ts = append(ts, src{ExportTensor: ExportTensor{Name: name, DType: st, Shape: shape,
			Variable: context.JoinScope(from.Scope, from.Name)}, v: from, size: dtypeBytes(dt)})
	}
	if len(ts) == 0 {
		return nil, fmt.Errorf("train: export: %s holds no model variables", ckpt)
	}
	sort.Slice(ts, func(i, j int) bool {
		if ts[i].size != ts[j].size {
			return ts[i].size > ts[j].size
		}
		return ts[i].Name < ts[j].Name
	})
	rep.Metadata = map[string]string{"format": "gotrain", "gotrain_step": strconv.FormatInt(hdr.Step, 10),
		"gotrain_weights": rep.Weights, "gotrain_checkpoint": filepath.Base(ckpt)}
	if m, err := ReadManifest(filepath.Dir(ckpt)); err == nil {
		if m.Kind != "" {
			rep.Metadata["gotrain_kind"] = m.Kind
		}
		if m.Arch != "" {
			rep.Metadata["gotrain_arch"] = m.Arch
		}
		if m.Version != "" {
			rep.Metadata["gotrain_version"] = m.Version
		}
	}
	// The header: __metadata__, then the tensors in buffer order.
	var h strings.Builder
	h.WriteString(`{"__metadata__":`)
	mb, err := json.Marshal(rep.Metadata)
	if err != nil {
		return nil, fmt.Errorf("train: export: %w", err)
	}
	h.Write(mb)
	var off int64
	for i := range ts {
		t := &ts[i]
		t.Offsets = [2]int64{off, off + int64(t.v.Size)}
		off += int64(t.v.Size)
		nb, err := json.Marshal(t.Name)
		if err != nil {
			return nil, fmt.Errorf("train: export: %w", err)
		}
		sb, _ := json.Marshal(t.Shape)
		fmt.Fprintf(&h, `,%s:{"dtype":"%s","shape":%s,"data_offsets":[%d,%d]}`, nb, t.DType, sb, t.Offsets[0], t.Offsets[1])
		rep.Tensors = append(rep.Tensors, t.ExportTensor)
	}
	h.WriteString("}")
	header := []byte(h.String())
	for (8+len(header))%8 != 0 {
		header = append(header, ' ')
	}
	rep.HeaderBytes, rep.Bytes = int64(len(header)), 8+int64(len(header))+off
	err = atomicfile.Write(out, func(w io.Writer) error {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(header)))
		if _, err := w.Write(n[:]); err != nil {
			return err
		}
		if _, err := w.Write(header); err != nil {
			return err
		}
		for _, t := range ts {
			if _, err := w.Write(blob[t.v.Offset : t.v.Offset+t.v.Size]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("train: export: %w", err)
	}
	return rep, nil
}
