package train

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/gotrain/gotrain/dist"
	"github.com/gotrain/gotrain/rng"
)

// RankGradsVar is the harness variable (in HarnessScope) where a rank's
// training graph leaves its gradients, flattened into one float32 vector,
// for the allreduce between the ranks (Config.Comm); checkpoints leave it
// out.
const RankGradsVar = "rank_grads"

// ranks is the harness's side of data-parallel training across the ranks
// of a dist.Comm. Each optimizer step is two graphs and a collective call:
//
//  1. the trainer's graph (model, loss, gradients) runs on this rank's
//     slice of the global batch; the optimizer, instead of updating the
//     weights, stores the gradients, flattened and concatenated in
//     IterVariables order, in RankGradsVar (stash);
//  2. the host sums that vector over the ranks (AllreduceFloat32);
//  3. the apply graph splits the sum back into one gradient per variable,
//     divides it by the number of ranks (each rank's loss is the mean over
//     its equal slice, so the mean of the ranks' gradients is the gradient
//     of the global batch's mean loss) and runs the optimizer's update with
//     it: learning-rate schedule, loss scaling, clipping, moving averages,
//     as on one process.
//
// The ranks start from the same weights (the same seed draws them; the
// first step checks they agree) and apply the same summed gradients, so
// their weights stay equal without ever being sent.
type ranks struct {
	comm dist.Comm
	// vars are the trainable variables of the training graph, in the
	// order of their gradients in RankGradsVar; lossDType the loss's dtype.
	vars      []*context.Variable
	total     int
	lossDType dtypes.DType
	// applying is set while the apply graph is built: the optimizer then
	// updates the weights instead of stashing the gradients.
	applying bool
	apply    *context.Exec
	// checked: the ranks' weights were compared after this run's first
	// step (agree); setupChecked: the ranks' runs were compared
	// (checkSetup).
	checked, setupChecked bool
	// stop: some rank's run was cancelled; every rank stops after the
	// step in which that was found.
	stop bool
	// commTime is the time spent in the steps' collective calls.
	commTime time.Duration
}

// setupRanks checks cfg for training across cfg.Comm's ranks and returns
// the ranks state (nil for one rank) and cfg as this rank runs it: ranks
// other than 0 write no logs, plots or reports.
func setupRanks(cfg Config, nDev int) (*ranks, Config, error) {
	if cfg.Ranks() <= 1 {
		return nil, cfg, nil
	}
	n := cfg.Ranks()
	switch {
	case nDev > 1:
		return nil, cfg, fmt.Errorf("train: Comm of %d ranks with Devices %d: across ranks, each rank trains on one device", n, nDev)
	case cfg.BatchSize%n != 0:
		return nil, cfg, fmt.Errorf("train: BatchSize %d is not a multiple of the %d ranks (each rank takes an equal share of every batch)", cfg.BatchSize, n)
	case cfg.DeviceDataBudgetMiB > 0:
		return nil, cfg, fmt.Errorf("train: DeviceDataBudgetMiB with a Comm of %d ranks: device-resident data serves whole batches only", n)
	case cfg.FindLR:
		return nil, cfg, fmt.Errorf("train: FindLR with a Comm of %d ranks: run the range test in one process", n)
	}
	if cfg.Rank() != 0 {
		cfg.MetricsLog, cfg.PlotsDir, cfg.PerfSummary, cfg.TensorBoardDir = "", "", "", ""
	}
	return &ranks{comm: cfg.Comm}, cfg, nil
}

// stash stores grads, the gradients of the trainable variables of their
// graph, in RankGradsVar (the first half of a step across ranks).
func (r *ranks) stash(ctx *context.Context, grads []*graph.Node, lossDType dtypes.DType) {
	if len(grads) == 0 {
		panic(errors.New("train: the training graph has no trainable variables"))
	}
	g := grads[0].Graph()
	var vars []*context.Variable
	for v := range ctx.IterVariables() {
		if v.Trainable && v.InUseByGraph(g) {
			vars = append(vars, v)
		}
	}
	if len(vars) != len(grads) {
		panic(fmt.Errorf("train: %d gradients for %d trainable variables", len(grads), len(vars)))
	}
	parts := make([]*graph.Node, len(grads))
	total := 0
	for i, gr := range grads {
		if !gr.Shape().Equal(vars[i].Shape()) {
			panic(fmt.Errorf("train: the gradient of %s has shape %s, the variable %s", vars[i].ScopeAndName(), gr.Shape(), vars[i].Shape()))
		}
		if !gr.DType().IsFloat() {
			panic(fmt.Errorf("train: variable %s is trainable with dtype %s: training across ranks sums float gradients", vars[i].ScopeAndName(), gr.DType()))
		}
		size := gr.Shape().Size()
		parts[i] = graph.Reshape(graph.ConvertDType(gr, dtypes.Float32), size)
		total += size
	}
	flat := parts[0]
	if len(parts) > 1 {
		flat = graph.Concatenate(parts, 0)
	}
	rankGradsVar(ctx, total).SetValueGraph(flat)
	if r.vars == nil {
		r.vars, r.total, r.lossDType = vars, total, lossDType
		return
	}
	// Another training graph (a new batch shape): it must train the same
	// variables, for the apply graph splits the vector as the first did.
	same := len(vars) == len(r.vars)
	for i := 0; same && i < len(vars); i++ {
		same = vars[i] == r.vars[i]
	}
	if !same {
		panic(errors.New("train: this training graph trains other variables than the first one did; training across ranks needs the same ones in every step"))
	}
}

// rankGradsVar is RankGradsVar with total float32 values.
func rankGradsVar(ctx *context.Context, total int) *context.Variable {
	return ctx.InAbsPath(HarnessScope).Checked(false).
		VariableWithShape(RankGradsVar, shapes.Make(dtypes.Float32, total)).SetTrainable(false)
}

// applyGraph splits sum, the gradients summed over the ranks, into the
// variables' gradients, averages them and runs the optimizer's update.
func (r *ranks) applyGraph(opt *optimizer) func(ctx *context.Context, sum *graph.Node) {
	return func(ctx *context.Context, sum *graph.Node) {
		g := sum.Graph()
		grads := make([]*graph.Node, len(r.vars))
		off := 0
		for i, v := range r.vars {
			_ = v.ValueGraph(g) // in use by this graph, in the stash's order
			size := v.Shape().Size()
			gr := graph.Reshape(graph.Slice(sum, graph.AxisRange(off, off+size)), v.Shape().Dimensions...)
			gr = graph.MulScalar(gr, 1/float64(r.comm.Size()))
			grads[i] = graph.ConvertDType(gr, v.DType())
			off += size
		}
		r.applying = true
		defer func() { r.applying = false }()
		opt.UpdateGraphWithGradients(ctx, grads, r.lossDType)
	}
}

// step finishes an optimizer step across the ranks after the training
// graph ran: it sums the gradients, applies them, and returns loss (this
// rank's) averaged over the ranks. cancelled is whether this rank's run
// was cancelled; once any rank's was, r.stop is set on every rank.
func (r *ranks) step(h *Harness, loss float64, cancelled bool) (float64, error) {
	if r.vars == nil {
		return 0, errors.New("train: the training graph stored no gradients for the ranks")
	}
	t, err := rankGradsVar(h.ctx, r.total).Value()
	if err != nil {
		return 0, fmt.Errorf("train: reading the gradients: %w", err)
	}
	sum, err := tensors.CopyFlatData[float32](t)
	if err != nil {
		return 0, fmt.Errorf("train: reading the gradients: %w", err)
	}
	if len(sum) != r.total {
		return 0, fmt.Errorf("train: %d gradient values, want %d", len(sum), r.total)
	}
	start := time.Now()
	if err := r.comm.AllreduceFloat32(sum); err != nil {
		return 0, fmt.Errorf("train: summing the gradients across the ranks: %w", err)
	}
	r.commTime += time.Since(start)
	if r.apply == nil {
		if err := Catch(func() {
			r.apply, err = context.NewExec(h.backend, h.ctx.Checked(false), r.applyGraph(h.opt))
		}); err != nil {
			return 0, fmt.Errorf("train: building the optimizer's graph: %w", err)
		}
		if err != nil {
			return 0, fmt.Errorf("train: building the optimizer's graph: %w", err)
		}
		r.apply = r.apply.WithName("apply summed gradients")
	}
	if err := Catch(func() {
		_, err = r.apply.Exec(tensors.FromFlatDataAndDimensions(sum, len(sum)))
	}); err != nil {
		return 0, fmt.Errorf("train: applying the summed gradients: %w", err)
	}
	if err != nil {
		return 0, fmt.Errorf("train: applying the summed gradients: %w", err)
	}
	flag := 0.0
	if cancelled {
		flag = 1
	}
	buf := []float64{loss, flag}
	start = time.Now()
	if err := r.comm.AllreduceFloat64(buf); err != nil {
		return 0, fmt.Errorf("train: averaging the loss across the ranks: %w", err)
	}
	r.commTime += time.Since(start)
	h.perf.CommSeconds, h.perf.BytesSent = r.commTime.Seconds(), r.comm.BytesSent()
	r.stop = r.stop || buf[1] > 0
	return buf[0] / float64(r.comm.Size()), nil
}

// agree checks that every rank holds the same trainable weights: after
// this run's first step (a different seed or kind of backend on one rank
// would otherwise make it train another model unnoticed) and at every
// logged step (ranks whose arithmetic is not bit-for-bit the same, such
// as nondeterministic GPU reductions, would otherwise drift apart while
// rank 0's checkpoints stand for one of them). Every rank calls it at the
// same steps.
func (r *ranks) agree(h *Harness) error {
	r.checked = true
	sum, err := weightsHash(h.ctx)
	if err != nil {
		return err
	}
	bad, err := r.sameOnAll(sum)
	if err != nil {
		return fmt.Errorf("train: comparing the ranks' weights: %w", err)
	}
	if bad >= 0 {
		return fmt.Errorf("train: after step %d rank %d holds other weights than rank 0: every rank must train the same model with the same seed on the same kind of backend, with deterministic arithmetic", h.step, bad)
	}
	return nil
}

// checkSetup checks, before the first collective call of the training
// proper, that every rank trains the same run: batch, accumulation, steps,
// logging and evaluation periods, seed, model kind and architecture, and
// the training data's fingerprint and size. A rank launched with other
// flags or data would otherwise fail later with a less clear error, hang,
// or train on other data unnoticed.
func (r *ranks) checkSetup(h *Harness) error {
	if r.setupChecked {
		return nil
	}
	r.setupChecked = true
	c := h.cfg
	desc := fmt.Sprint(c.BatchSize, c.Accumulate, h.totalSteps, c.LogEvery, c.EvalEvery, c.Seed, c.Optimizer,
		c.Run.Kind, c.Run.Arch, c.Run.Data, h.data.Len(), h.data.xDim, h.data.yDim)
	bad, err := r.sameOnAll(uint64(crc32.Checksum([]byte(desc), castagnoli)) | uint64(len(desc))<<32)
	if err != nil {
		return fmt.Errorf("train: comparing the ranks' runs: %w", err)
	}
	if bad >= 0 {
		return fmt.Errorf("train: rank %d trains another run than rank 0 (batch size, accumulation, steps, log or evaluation period, seed, optimizer, model or training data differ): every rank must run the same command on the same data", bad)
	}
	return nil
}

// sameOnAll tells whether every rank passed the same value: -1, or the
// first rank whose value differs from rank 0's (every rank gets the same
// answer).
func (r *ranks) sameOnAll(v uint64) (int, error) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	all, err := r.comm.Gather(b[:], 0)
	if err != nil {
		return 0, err
	}
	verdict := make([]byte, 8)
	binary.LittleEndian.PutUint64(verdict, ^uint64(0))
	if r.comm.Rank() == 0 {
		for i, o := range all {
			if string(o) != string(b[:]) {
				binary.LittleEndian.PutUint64(verdict, uint64(i))
				break
			}
		}
	}
	if err := r.comm.Bcast(verdict, 0); err != nil {
		return 0, err
	}
	if bad := binary.LittleEndian.Uint64(verdict); bad != ^uint64(0) {
		return int(bad), nil
	}
	return -1, nil
}

// castagnoli is the CRC-32C table (hardware-accelerated on amd64 and
// arm64), for hashing weights at every logged step.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// reseed gives a rank other than 0, before each step after the first, a
// random stream of its own (dropout masks then differ across the ranks'
// examples, as across one process's), drawn from the seed, the rank and
// the step, so that a resumed run draws the same. The first step of a
// fresh run draws the initial weights, the same on every rank, from the
// seed's stream; rank 0 keeps that stream, which its checkpoints hold.
func (r *ranks) reseed(h *Harness) error {
	rank := r.comm.Rank()
	if rank == 0 || h.step == 0 {
		return nil
	}
	seed := int64(mix64(uint64(h.cfg.Seed), uint64(rank), uint64(h.step)) >> 1)
	if err := h.ctx.SetRNGStateFromSeed(seed); err != nil {
		return fmt.Errorf("train: seeding rank %d's random stream: %w", rank, err)
	}
	return nil
}

// weightsHash is a CRC-32C of the trainable variables' names and bytes,
// in the order of their names, with their byte count in the high word.
func weightsHash(ctx *context.Context) (uint64, error) {
	var vars []*context.Variable
	for v := range ctx.IterVariables() {
		if v.Trainable && v.HasValue() {
			vars = append(vars, v)
		}
	}
	sort.Slice(vars, func(i, j int) bool { return vars[i].ScopeAndName() < vars[j].ScopeAndName() })
	hs := crc32.New(castagnoli)
	n := 0
	for _, v := range vars {
		t, err := v.Value()
		if err != nil {
			return 0, fmt.Errorf("train: reading %s: %w", v.ScopeAndName(), err)
		}
		hs.Write([]byte(v.ScopeAndName()))
		if err := t.ConstBytes(func(data []byte) { hs.Write(data); n += len(data) }); err != nil {
			return 0, fmt.Errorf("train: reading %s: %w", v.ScopeAndName(), err)
		}
	}
	return uint64(hs.Sum32()) | uint64(n)<<32, nil
}

// mix64 mixes its words into one (SplitMix64's finalizer over each).
func mix64(words ...uint64) uint64 {
	var h uint64 = 0x9e3779b97f4a7c15
	for _, w := range words {
		h = rng.Mix(h ^ (w + 0x9e3779b97f4a7c15 + (h << 6) + (h >> 2)))
	}
	return h
}

// meanAcross replaces each value of m (in name order) by its mean over
// the ranks.
func (r *ranks) meanAcross(m map[string]any, names []string) error {
	buf := make([]float64, len(names))
	for i, k := range names {
		buf[i], _ = m[k].(float64)
	}
	if err := r.comm.AllreduceFloat64(buf); err != nil {
		return fmt.Errorf("train: averaging the step metrics across the ranks: %w", err)
	}
	for i, k := range names {
		m[k] = buf[i] / float64(r.comm.Size())
	}
	return nil
}

// shareEval makes every rank use rank 0's evaluation: the ranks first
// agree whether every evaluator succeeded (errs: this rank's error), then
// rank 0 sends its metrics. Early stopping and checkpoints then decide
// alike on every rank.
func (r *ranks) shareEval(m map[string]float64, evalErr error) (map[string]float64, error) {
	failed := []int64{0}
	if evalErr != nil {
		failed[0] = 1
	}
	if err := r.comm.AllreduceInt64(failed); err != nil {
		return nil, fmt.Errorf("train: sharing the evaluation: %w", err)
	}
	if evalErr != nil {
		return nil, evalErr
	}
	if failed[0] != 0 {
		return nil, fmt.Errorf("train: the evaluation failed on %d other rank(s) (see their logs)", failed[0])
	}
	var msg []byte
	if r.comm.Rank() == 0 {
		var err error
		if msg, err = json.Marshal(finiteOrString(m)); err != nil {
			return nil, fmt.Errorf("train: sharing the evaluation: %w", err)
		}
	}
	if err := r.bcastBytes(&msg); err != nil {
		return nil, fmt.Errorf("train: sharing the evaluation: %w", err)
	}
	if r.comm.Rank() == 0 {
		return m, nil
	}
	var raw map[string]any
	if err := json.Unmarshal(msg, &raw); err != nil {
		return nil, fmt.Errorf("train: reading rank 0's evaluation: %w", err)
	}
	out := make(map[string]float64, len(raw))
	for k, v := range raw {
		switch x := v.(type) {
		case float64:
			out[k] = x
		case string:
			var f float64
			if _, err := fmt.Sscan(x, &f); err != nil {
				return nil, fmt.Errorf("train: reading rank 0's evaluation: %s = %q", k, x)
			}
			out[k] = f
		}
	}
	return out, nil
}

// finiteOrString is m with NaN and infinite values as strings ("NaN",
// "+Inf"), which JSON cannot hold as numbers.
func finiteOrString(m map[string]float64) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			out[k] = fmt.Sprint(v)
		} else {
			out[k] = v
		}
	}
	return out
}

// bcastBytes sends rank 0's *msg to every rank: its length, then its
// bytes.
func (r *ranks) bcastBytes(msg *[]byte) error {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(*msg)))
	if err := r.comm.Bcast(n[:], 0); err != nil {
		return err
	}
	size := binary.LittleEndian.Uint64(n[:])
	if size > MaxCheckpointBytes+1<<20 {
		return fmt.Errorf("rank 0 announces %d bytes, more than a checkpoint may have", size)
	}
	if r.comm.Rank() != 0 {
		*msg = make([]byte, size)
	}
	return r.comm.Bcast(*msg, 0)
}

// resume is Harness.Resume across the ranks: rank 0 restores its newest
// valid checkpoint as one process does and sends the file to the other
// ranks, which restore the same bytes (so their checkpoint folder need not
// be shared). A failure on rank 0 fails every rank.
func (r *ranks) resume(h *Harness) (string, error) {
	var msg []byte
	var path string
	var failed error
	if r.comm.Rank() == 0 {
		var err error
		if path, err = h.resumeHere(); err == nil {
			var b []byte
			if b, err = readBounded(path, MaxCheckpointBytes); err == nil {
				msg = append(append([]byte{0}, path...), 0)
				msg = append(msg, b...)
			}
		}
		if err != nil {
			failed = err
			msg = append([]byte{1}, err.Error()...)
		}
	}
	if err := r.bcastBytes(&msg); err != nil {
		return "", fmt.Errorf("train: resume: sending the checkpoint to the ranks: %w", err)
	}
	if r.comm.Rank() == 0 {
		return path, failed
	}
	if len(msg) == 0 {
		return "", errors.New("train: resume: rank 0 sent nothing")
	}
	if msg[0] != 0 {
		text := string(msg[1:])
		if strings.Contains(text, ErrNoCheckpoint.Error()) {
			return "", fmt.Errorf("train: resume: rank 0 found nothing to resume from (%s): %w", text, ErrNoCheckpoint)
		}
		return "", fmt.Errorf("train: resume: rank 0 could not resume: %s", text)
	}
	end := 1
	for end < len(msg) && msg[end] != 0 {
		end++
	}
	if end == len(msg) {
		return "", errors.New("train: resume: rank 0's message has no checkpoint")
	}
	path = string(msg[1:end])
	hdr, blob, err := decodeCheckpoint(msg[end+1:], "rank 0's "+path)
	if err != nil {
		return "", fmt.Errorf("train: resume: %w", err)
	}
	if err := (&Checkpointer{}).load(h, hdr, blob); err != nil {
		return "", fmt.Errorf("train: resume from rank 0's %s: %w", path, err)
	}
	h.markRestored(path)
	return path, nil
}
