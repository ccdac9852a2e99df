// gotrain: simplego's package comment is replaced by this one.

// Package cpubackend is gotrain's CPU backend for GoMLX: a fork of GoMLX
// v0.26.0's pure-Go backend "simplego" (Apache License 2.0, see LICENSE in
// this directory; copyright the GoMLX authors) whose heavy operations run
// on gotrain's own kernels. It registers itself as the GoMLX backend "cpu".
// UPSTREAM.md lists the fork's files and changes; doc.go summarises them.
package cpubackend

import (
	// gotrain: no "fmt" (the parallelism option no longer prints).
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/notimplemented"
	"github.com/pkg/errors"

	"sync"
)

// gotrain: simplego's go:generate lines (running its generators from GoMLX's
// repository) are in generate.go, running this repository's copies.

// BackendName to be used in GOMLX_BACKEND to specify this backend.
const BackendName = "cpu" // gotrain: simplego's is "go".

// Registers New() as the constructor of the "cpu" backend (gotrain: simplego's comment said "xla").
func init() {
	backends.Register(BackendName, New)
}

// GetBackend returns a singleton backend for SimpleGo, created with the default configuration.
// The backend is only created at the first call of the function.
//
// The singleton is never destroyed.
var GetBackend = sync.OnceValue(func() backends.Backend {
	backend, err := New("")
	if err != nil {
		panic(err)
	}
	return backend
})

// New constructs a new SimpleGo Backend.
// There are no configurations, the string is simply ignored.
func New(config string) (backends.Backend, error) {
	b := newDefaultBackend()
	// gotrain: SGEMM, element-wise fusion and graph rewrites are on by default.
	b.useGEMM = true
	b.fuse = true
	b.rewrite = true
	parts := strings.Split(config, ",")
	for _, part := range parts {
		key := part
		var value string
		if eqPos := strings.Index(part, "="); eqPos != -1 {
			key, value = part[0:eqPos], part[eqPos+1:]
		}
		switch key {
		case "parallelism":
			vInt, err := strconv.Atoi(value)
			if err != nil {
				return nil, errors.Wrapf(err, "invalid value for %q in SimpleGo backend config: needs an int, got %q", key, value)
			}
			b.workers.SetMaxParallelism(vInt)
			// gotrain: no longer prints "SimpleGo backend: parallelism set to N".
		case "dotgeneral_small":
			// This will force DotGeneral operation to use the version designed for smaller matrices.
			b.dotGeneralForceProblemSize = smallProblemSize
			b.useGEMM = false // gotrain: forcing a simplego DotGeneral version turns SGEMM off.
		case "dotgeneral_large":
			// This will force DotGeneral operation to use the version designed for large matrices.
			b.dotGeneralForceProblemSize = largeProblemSize
			b.useGEMM = false // gotrain: forcing a simplego DotGeneral version turns SGEMM off.
		case "dotgeneral_check":
			// This will force every DotGeneral operation to be executed with both versions and the outputs compared.
			// This is used exclusively for debugging purposes.
			b.dotGeneralForceProblemSize = checkProblemSize
			b.useGEMM = false // gotrain: forcing a simplego DotGeneral version turns SGEMM off.
		// gotrain: the fork's options no_gemm, no_fusion and no_rewrite.
		case "no_gemm":
			// Keep simplego's own DotGeneral (for comparisons).
			b.useGEMM = false
		case "no_fusion":
			// Run every element-wise operation on its own (for comparisons).
			b.fuse = false
		case "no_rewrite":
			// Run the graph as written (for comparisons): see rewrite.go.
			b.rewrite = false
		case "ops_sequential":
			// This will force the ops to be executed sequentially.
			// The default is running parallel if it's the only thing executing, otherwise sequentially.
			b.opsExecutionType = opsExecutionSequential
		case "ops_parallel":
			// This will force the ops to be executed in parallel where possible.
			// The default is running parallel if it's the only thing executing, otherwise sequentially.
			b.opsExecutionType = opsExecutionParallel
		case "":
			// No-op, just skip.
		default:
			// gotrain: the fork's name and options in the message.
			return nil, errors.Errorf("unknown configuration option %q for the cpu backend -- valid configuration options are: "+
				"parallelism=#workers, no_gemm, no_fusion, no_rewrite, dotgeneral_small, dotgeneral_large, dotgeneral_check, ops_sequential, ops_parallel", key)
		}
	}
	return b, nil
}

func newDefaultBackend() *Backend {
	b := &Backend{}
	b.workers.Initialize()
	return b
}

// Backend implements the backends.Backend interface.
type Backend struct {
	// bufferPools are a map to pools of buffers that can be reused.
	// The underlying type is map[bufferPoolKey]*sync.Pool.
	bufferPools sync.Map
	// gotrain: pooledBytes is the memory held by released buffers in bufferPools.
	pooledBytes atomic.Int64
	workers     workersPool

	numLiveExecutions atomic.Int32

	// dotGeneralForceProblemSize allows a DotGeneral algorithm to always be used.
	dotGeneralForceProblemSize dotGeneralProblemSizeType

	// opsExecutionType defines how to execute the ops of a computation.
	opsExecutionType opsExecutionType

	// isFinalized is true if the backend has been isFinalized.
	isFinalized bool

	// gotrain: useGEMM runs float32 DotGenerals with gotrain's SGEMM (package gemm)
	// where the operand layout allows (the default; config "no_gemm"
	// turns it off, and so does forcing a simplego DotGeneral version).
	useGEMM bool

	// fuse merges chains of float32 element-wise operations at Compile
	// (the default; config "no_fusion" turns it off). See fusion.go.
	fuse bool

	// rewrite replaces, at Compile, selections by one-hot constants (a
	// multiply then a reduce-sum, or a sum of multiplies) with slices and
	// concatenations, and sums of per-step weight-gradient products with one
	// product (the default; config "no_rewrite" turns it off). See
	// rewrite.go and rewrite_dotsum.go.
	rewrite bool
}

// Compile-time check that simplego.Backend implements backends.Backend.
var _ backends.Backend = &Backend{}

// Name returns the short name of the backend. E.g.: "xla" for the Xla/PJRT plugin.
func (b *Backend) Name() string {
	return "gotrain CPU (cpu)" // gotrain: simplego's is "SimpleGo (go)".
}

// String implement backends.Backend.
func (b *Backend) String() string { return BackendName }

// Description is a longer description of the Backend that can be used to pretty-print.
func (b *Backend) Description() string {
	return "Simple Go Portable Backend"
}

// NumDevices return the number of devices available for this Backend.
func (b *Backend) NumDevices() int {
	return 1
}

// DeviceDescription returns a description of the device with the given deviceNum.
func (b *Backend) DeviceDescription(deviceNum backends.DeviceNum) string {
	return "device#0"
}

// Capabilities returns information about what is supported by this backend.
func (b *Backend) Capabilities() backends.Capabilities {
	return Capabilities
}

// Builder creates a new builder used to construct a named computation.
func (b *Backend) Builder(name string) backends.Builder {
	builder := &Builder{
		backend: b,
		name:    name,
	}
	// Set the "not implemented" custom message:
	builder.Builder.ErrFn = notImplementedError
	return builder
}

func notImplementedError(opType backends.OpType) error {
	return errors.Wrapf(notimplemented.NotImplementedError, "sorry, op %q not implemented in SimpleGo yet "+
		"-- reach out to github.com/gomlx/gomlx and open an issue if you need this op, this helps us prioritize the work",
		opType)
}

// Finalize releases all the associated resources immediately, and makes the backend invalid.
func (b *Backend) Finalize() {
	b.isFinalized = true
	b.bufferPools.Clear()
	b.pooledBytes.Store(0) // gotrain: the free lists are emptied.
}

// IsFinalized returns true if the backend has been isFinalized.
func (b *Backend) IsFinalized() bool {
	return b.isFinalized
}
