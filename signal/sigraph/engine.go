package sigraph

import (
	"errors"

	"github.com/gomlx/gomlx/backends"

	"github.com/gotrain/gotrain/signal"
)

// Engine is where features are extracted, as the caller selected it: the
// CPU path of package signal, or a GoMLX backend and a device number for
// the graphs of this package. Package device's *Engine satisfies it;
// sigraph does not choose the device (it does not import device), it
// takes the engine it is given.
type Engine interface {
	// Name names the device, for reports.
	Name() string
	// Native tells whether the work runs on the CPU path rather than as
	// graphs.
	Native() bool
	// Backend returns the GoMLX backend that runs the graphs.
	Backend() (backends.Backend, error)
	// DeviceNum is the device's number within the backend.
	DeviceNum() int
}

// engineBackend returns e's backend, or nil on a native engine (what
// NewFeatureExtractor and Benchmark take for the CPU path).
func engineBackend(e Engine) (backends.Backend, error) {
	if e == nil {
		return nil, errors.New("sigraph: nil engine")
	}
	if e.Native() {
		return nil, nil
	}
	return e.Backend()
}

// ExtractFile extracts the features of the record spec names on e, as
// `gotrain signal features` does: it loads the record (spec.Load),
// extracts with the extractor of e (NewFeatureExtractor: one record per
// graph execution on a graph engine, released on return), writes the
// files spec names (spec.Extract) and returns the report, whose Device
// names e.
func ExtractFile(e Engine, spec signal.FeaturesSpec) (*signal.FeaturesReport, error) {
	b, err := engineBackend(e)
	if err != nil {
		return nil, err
	}
	rec, cfg, err := spec.Load()
	if err != nil {
		return nil, err
	}
	x, release, err := NewFeatureExtractor(b, cfg, Options{DeviceNum: e.DeviceNum()})
	if err != nil {
		return nil, err
	}
	defer release()
	rep, err := spec.Extract(x, rec)
	if err != nil {
		return nil, err
	}
	rep.Device = e.Name()
	return rep, nil
}

// BenchmarkOn runs Benchmark on e (signal.Benchmark on a native engine)
// and returns its result, whose Device names e.
func BenchmarkOn(e Engine, bo signal.BenchOptions) (signal.BenchResult, error) {
	b, err := engineBackend(e)
	if err != nil {
		return signal.BenchResult{}, err
	}
	res, err := Benchmark(b, Options{DeviceNum: e.DeviceNum()}, bo)
	if err != nil {
		return res, err
	}
	res.Device = e.Name()
	return res, nil
}
