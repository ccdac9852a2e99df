package train

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/distributed"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// DataAxis is the name of the device-mesh axis the batch is split along in
// data-parallel training.
const DataAxis = "data"

// ParseDevices resolves a --devices value against the number of devices
// the backend has: "all" is every device, N is N of them (1 <= N <=
// available).
func ParseDevices(s string, available int) (int, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "all" {
		if available < 1 {
			return 0, fmt.Errorf("Devices all: the backend reports %d devices", available)
		}
		return available, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("Devices %q: want a positive number or all", s)
	}
	if n > available {
		return 0, fmt.Errorf("Devices %d: the backend has only %d device(s)", n, available)
	}
	return n, nil
}

// Sharder is the sharding hook: it decides how each model variable is
// placed on the devices of a data-parallel run, for instance one expert of
// a mixture-of-experts layer per device. A model package implements it and
// passes it with Harness.SetSharder. The harness calls it once per
// variable, after the model graph is built and before it is compiled,
// only when training on more than one device (--devices); returning nil
// leaves the variable replicated on every device (the default for weights
// in data parallelism).
//
// Example: experts stored as one [numExperts, d, d] variable, sharded on
// its first axis across the mesh's data axis:
//
//	func (m *MoE) VariableSharding(mesh *distributed.DeviceMesh, scope, name string, s shapes.Shape) (*distributed.ShardingSpec, error) {
//		if name != "experts" {
//			return nil, nil
//		}
//		return distributed.BuildSpec(mesh).S(train.DataAxis).R().R().Done()
//	}
type Sharder interface {
	// VariableSharding returns the sharding of the variable scope/name of
	// shape s on mesh, or nil for replicated.
	VariableSharding(mesh *distributed.DeviceMesh, scope, name string, s shapes.Shape) (*distributed.ShardingSpec, error)
}

// SharderFunc adapts a function to Sharder.
type SharderFunc func(mesh *distributed.DeviceMesh, scope, name string, s shapes.Shape) (*distributed.ShardingSpec, error)

// VariableSharding calls f.
func (f SharderFunc) VariableSharding(mesh *distributed.DeviceMesh, scope, name string, s shapes.Shape) (*distributed.ShardingSpec, error) {
	return f(mesh, scope, name, s)
}

// applySharder sets the sharding spec chosen by sh on every variable of
// ctx that has none yet.
func applySharder(ctx *context.Context, mesh *distributed.DeviceMesh, sh Sharder) error {
	for v := range ctx.IterVariables() {
		if v.ShardingSpec() != nil {
			continue
		}
		spec, err := sh.VariableSharding(mesh, v.Scope(), v.Name(), v.Shape())
		if err != nil {
			return fmt.Errorf("train: sharding variable %s: %w", v.ScopeAndName(), err)
		}
		if spec == nil {
			continue
		}
		if err := v.SetShardingSpec(spec); err != nil {
			return fmt.Errorf("train: sharding variable %s: %w", v.ScopeAndName(), err)
		}
	}
	return nil
}

// dataParallel holds what a data-parallel run over several devices needs.
type dataParallel struct {
	mesh    *distributed.DeviceMesh
	spec    *distributed.ShardingSpec // batch axis sharded over DataAxis
	devices []backends.DeviceNum
}

// newDataParallel builds a one-axis mesh over the first n devices and the
// sharding that splits a rank-2 batch along its first axis.
func newDataParallel(n int) (*dataParallel, error) {
	mesh, err := distributed.NewDeviceMesh([]int{n}, []string{DataAxis})
	if err != nil {
		return nil, fmt.Errorf("train: device mesh of %d devices: %w", n, err)
	}
	spec, err := distributed.BuildSpec(mesh).S(DataAxis).R().Done()
	if err != nil {
		return nil, fmt.Errorf("train: batch sharding over %d devices: %w", n, err)
	}
	dp := &dataParallel{mesh: mesh, spec: spec}
	for i := range n {
		dp.devices = append(dp.devices, backends.DeviceNum(i))
	}
	return dp, nil
}

// shard splits a host batch [b, d] into one [b/n, d] tensor per device, as
// a distributed.Tensor sharded along the batch axis.
func (dp *dataParallel) shard(t *tensors.Tensor) (*distributed.Tensor, error) {
	n := len(dp.devices)
	dims := t.Shape().Dimensions
	if len(dims) != 2 || dims[0]%n != 0 {
		return nil, fmt.Errorf("train: cannot split a batch of shape %s over %d devices", t.Shape(), n)
	}
	flat, err := tensors.CopyFlatData[float32](t)
	if err != nil {
		return nil, fmt.Errorf("train: reading a batch to split it: %w", err)
	}
	rows := dims[0] / n
	per := rows * dims[1]
	shards := make([]*tensors.Tensor, n)
	for i := range n {
		shards[i] = tensors.FromFlatDataAndDimensions(append([]float32(nil), flat[i*per:(i+1)*per]...), rows, dims[1])
	}
	dt, err := distributed.NewTensor(dp.spec, shards)
	if err != nil {
		return nil, fmt.Errorf("train: splitting a batch over %d devices: %w", n, err)
	}
	return dt, nil
}
