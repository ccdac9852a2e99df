package moe

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gomlx/gomlx/pkg/core/distributed"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/gotrain/gotrain/train"
)

// ErrNoFreeSlot is returned by Grow when every expert slot is in use.
var ErrNoFreeSlot = errors.New("moe: no free expert slot (raise MaxExperts)")

// DeviceOf is the device expert slot s is placed on: slots are split in
// contiguous blocks of ceil(slots/devices).
func DeviceOf(slot, slots, devices int) int {
	if devices <= 1 || slots <= 0 {
		return 0
	}
	per := (slots + devices - 1) / devices
	return slot / per
}

// Placement counts the active experts on each of devices devices.
func Placement(active []bool, devices int) []int {
	devices = max(devices, 1)
	out := make([]int, devices)
	for s, a := range active {
		if a {
			out[DeviceOf(s, len(active), devices)]++
		}
	}
	return out
}

// FreeSlot picks the slot a new expert goes to: a free slot on the device
// with the fewest active experts (the lowest-numbered device on a tie, and
// its lowest free slot). It returns -1 when no slot is free.
func FreeSlot(active []bool, devices int) int {
	devices = max(devices, 1)
	count := Placement(active, devices)
	best, bestCount := -1, math.MaxInt
	for s, a := range active {
		if a {
			continue
		}
		d := DeviceOf(s, len(active), devices)
		if count[d] < bestCount {
			best, bestCount = s, count[d]
		}
	}
	return best
}

// Active reads which expert slots are in use from ctx.
func (m *Model) Active(ctx *context.Context) ([]bool, error) {
	v, err := m.readVar(ctx, VarActive)
	if err != nil {
		return nil, err
	}
	out := make([]bool, len(v))
	for i, a := range v {
		out[i] = a > 0.5
	}
	return out, nil
}

// Stats are the routing statistics of the last training batch.
type Stats struct {
	// Load is each slot's share of the routing assignments.
	Load []float64
	// Assigned is the number of routing assignments; Dropped those over
	// capacity.
	Assigned, Dropped float64
}

// LastStats reads the routing statistics of the last training step from ctx.
func (m *Model) LastStats(ctx *context.Context) (Stats, error) {
	load, err := m.readVar(ctx, VarLoad)
	if err != nil {
		return Stats{}, err
	}
	a, err := m.readVar(ctx, VarAssigned)
	if err != nil {
		return Stats{}, err
	}
	d, err := m.readVar(ctx, VarDropped)
	if err != nil {
		return Stats{}, err
	}
	s := Stats{Load: make([]float64, len(load)), Assigned: float64(a[0]), Dropped: float64(d[0])}
	for i, v := range load {
		s.Load[i] = float64(v)
	}
	return s, nil
}

// readVar copies variable Scope/name of ctx to the host.
func (m *Model) readVar(ctx *context.Context, name string) (out []float32, err error) {
	v := ctx.GetVariableByScopeAndName("/"+Scope, name)
	if v == nil {
		return nil, fmt.Errorf("moe: variable %s/%s does not exist yet (no training step done?)", Scope, name)
	}
	err = train.Catch(func() {
		t, err := v.Value()
		if err != nil {
			panic(err)
		}
		out, err = tensors.CopyFlatData[float32](t)
		if err != nil {
			panic(err)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("moe: reading %s/%s: %w", Scope, name, err)
	}
	return out, nil
}

// writeVar sets variable Scope/name of ctx to data, keeping its shape.
func (m *Model) writeVar(ctx *context.Context, name string, data []float32) error {
	v := ctx.GetVariableByScopeAndName("/"+Scope, name)
	if v == nil {
		return fmt.Errorf("moe: variable %s/%s does not exist", Scope, name)
	}
	err := train.Catch(func() {
		if err := v.SetValue(tensors.FromFlatDataAndDimensions(data, v.Shape().Dimensions...)); err != nil {
			panic(err)
		}
	})
	if err != nil {
		return fmt.Errorf("moe: writing %s/%s: %w", Scope, name, err)
	}
	return nil
}

// GrowEvent describes one expert split.
type GrowEvent struct {
	// Parent is the slot split; Child the slot that received the copy.
	Parent int `json:"parent"`
	// Child is the new expert's slot, on device Device.
	Child  int `json:"child"`
	Device int `json:"device"`
	// Step is the optimizer step after which the split happened.
	Step int64 `json:"step"`
}

// Grow splits expert parent into itself and a free slot (FreeSlot: on the
// device with the fewest experts). The child gets a copy of the parent's
// weights, perturbed without changing its function: each hidden ReLU unit
// is scaled by a random c in [e^-eps, e^eps] and its outgoing weights by
// 1/c. The parent's gate row is copied to the child and both gate biases
// get ln 2 less log-share (VarGateShare, a non-trainable offset of the
// probabilities), so the other experts' probabilities are unchanged and
// the two halves share the parent's probability; their logits are equal,
// so top-k selects them together (see topKMask) and the predictions are
// unchanged at the split (up to rounding, and as long as the capacity
// limit drops nothing: the capacity per expert shrinks with one more
// expert). The optimizer state of the child slot is left as it was.
func (m *Model) Grow(ctx *context.Context, parent int, eps float64, seed uint64) (GrowEvent, error) {
	active, err := m.Active(ctx)
	if err != nil {
		return GrowEvent{}, err
	}
	S := m.cfg.MaxExperts
	if parent < 0 || parent >= S || !active[parent] {
		return GrowEvent{}, fmt.Errorf("moe: grow: slot %d is not an active expert", parent)
	}
	child := FreeSlot(active, m.cfg.Devices)
	if child < 0 {
		return GrowEvent{}, ErrNoFreeSlot
	}
	r := rand.New(rand.NewPCG(seed, uint64(child)))
	sizes := m.layerSizes()
	// Per hidden layer l, the scale of each of its units in the child.
	scales := make([][]float32, len(sizes)-2)
	for l := range scales {
		scales[l] = make([]float32, sizes[l+1])
		for h := range scales[l] {
			scales[l][h] = float32(math.Exp(eps * (2*r.Float64() - 1)))
		}
	}
	for l := 0; l+1 < len(sizes); l++ {
		in, out := sizes[l], sizes[l+1]
		wName, bName := fmt.Sprintf("%s%d", ExpertWeights, l), fmt.Sprintf("%s%d", ExpertBiases, l)
		w, err := m.readVar(ctx, wName)
		if err != nil {
			return GrowEvent{}, err
		}
		b, err := m.readVar(ctx, bName)
		if err != nil {
			return GrowEvent{}, err
		}
		pw, cw := w[parent*in*out:(parent+1)*in*out], w[child*in*out:(child+1)*in*out]
		pb, cb := b[parent*out:(parent+1)*out], b[child*out:(child+1)*out]
		for i := range in {
			for o := range out {
				v := pw[i*out+o]
				if l < len(scales) {
					v *= scales[l][o]
				}
				if l > 0 {
					v /= scales[l-1][i]
				}
				cw[i*out+o] = v
			}
		}
		for o := range out {
			v := pb[o]
			if l < len(scales) {
				v *= scales[l][o]
			}
			cb[o] = v
		}
		if err := m.writeVar(ctx, wName, w); err != nil {
			return GrowEvent{}, err
		}
		if err := m.writeVar(ctx, bName, b); err != nil {
			return GrowEvent{}, err
		}
	}
	gw, err := m.readVar(ctx, VarGateW)
	if err != nil {
		return GrowEvent{}, err
	}
	gb, err := m.readVar(ctx, VarGateB)
	if err != nil {
		return GrowEvent{}, err
	}
	for i := range len(gw) / S {
		gw[i*S+child] = gw[i*S+parent]
	}
	gb[child] = gb[parent]
	if err := m.writeVar(ctx, VarGateW, gw); err != nil {
		return GrowEvent{}, err
	}
	if err := m.writeVar(ctx, VarGateB, gb); err != nil {
		return GrowEvent{}, err
	}
	share, err := m.readVar(ctx, VarGateShare)
	if err != nil {
		return GrowEvent{}, err
	}
	share[parent] -= float32(math.Ln2)
	share[child] = share[parent]
	if err := m.writeVar(ctx, VarGateShare, share); err != nil {
		return GrowEvent{}, err
	}
	act := make([]float32, S)
	for s, a := range active {
		if a || s == child {
			act[s] = 1
		}
	}
	if err := m.writeVar(ctx, VarActive, act); err != nil {
		return GrowEvent{}, err
	}
	return GrowEvent{Parent: parent, Child: child, Device: DeviceOf(child, S, m.cfg.Devices)}, nil
}

// VariableSharding implements train.Sharder. With Config.ExpertParallel
// the expert variables (leading axis: slots) are split along that axis over
// the mesh's data axis, so each device holds its block of experts (see
// DeviceOf); everything else, and every variable without ExpertParallel,
// is replicated.
func (m *Model) VariableSharding(mesh *distributed.DeviceMesh, scope, name string, s shapes.Shape) (*distributed.ShardingSpec, error) {
	if !m.cfg.ExpertParallel || scope != "/"+Scope || !isExpertVar(name) {
		return nil, nil
	}
	b := distributed.BuildSpec(mesh).S(train.DataAxis)
	for range s.Rank() - 1 {
		b = b.R()
	}
	spec, err := b.Done()
	if err != nil {
		return nil, fmt.Errorf("moe: sharding %s%s over the experts: %w", scope, name, err)
	}
	return spec, nil
}

// isExpertVar tells whether name is an expert weight or bias.
func isExpertVar(name string) bool {
	return len(name) > len(ExpertWeights) && (name[:len(ExpertWeights)] == ExpertWeights || name[:len(ExpertBiases)] == ExpertBiases)
}

var _ train.Sharder = (*Model)(nil)
