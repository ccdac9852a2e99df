package bench

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/forest"
	"github.com/gotrain/gotrain/forest/forestgraph"
	"github.com/gotrain/gotrain/gemm"
	"github.com/gotrain/gotrain/signal"
	"github.com/gotrain/gotrain/signal/sigraph"
)

// Workloads returns the workloads that exist at the given size.
func Workloads(size Size) ([]Workload, error) {
	n := 256
	if size == Seed {
		n = 1024
	}
	fit, pred, err := forestWorkloads(size)
	if err != nil {
		return nil, err
	}
	secs := 0.25
	if size == Seed {
		secs = 1
	}
	return []Workload{&MatMul{N: n}, fit, pred, &SignalFeatures{Seconds: secs}}, nil
}

// MatMul multiplies two N×N float32 matrices: gotrain's SGEMM (package
// gemm) on the native CPU, a GoMLX graph elsewhere.
type MatMul struct {
	N int
}

// Name implements Workload.
func (m *MatMul) Name() string { return "matmul" }

// Describe implements Workload.
func (m *MatMul) Describe() string { return fmt.Sprintf("C = A·B, %dx%d float32", m.N, m.N) }

// Unit implements Workload.
func (m *MatMul) Unit() string { return "GFLOP/s" }

// Tolerance implements Workload: DefaultTolerance of the largest entry
// (float32 sums of N products in another order).
func (m *MatMul) Tolerance() Tolerance { return Tolerance{Rel: DefaultTolerance} }

func (m *MatMul) inputs() (a, b []float32) {
	rng := rand.New(rand.NewPCG(3, 4))
	a, b = make([]float32, m.N*m.N), make([]float32, m.N*m.N)
	for i := range a {
		a[i], b[i] = float32(rng.Float64()*2-1), float32(rng.Float64()*2-1)
	}
	return a, b
}

// Runner implements Workload.
func (m *MatMul) Runner(e *device.Engine) (func() (Output, error), func(), error) {
	n := m.N
	a, b := m.inputs()
	flops := 2 * float64(n) * float64(n) * float64(n)
	if e.Native() {
		c := make([]float32, n*n)
		return func() (Output, error) {
			if err := gemm.Sgemm(false, false, n, n, n, 1, a, n, b, n, 0, c, n); err != nil {
				return Output{}, err
			}
			return Output{Values: toF64(c), Items: flops / 1e9}, nil
		}, func() {}, nil
	}
	backend, err := e.Backend()
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	exec, err := graph.NewExec(backend, graph.MatMul)
	if err != nil {
		return nil, nil, err
	}
	ta := tensors.FromFlatDataAndDimensions(a, n, n)
	tb := tensors.FromFlatDataAndDimensions(b, n, n)
	call := func() (out Output, err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("matmul on %s: %v", e.Name(), r)
			}
		}()
		outs, _, err := exec.ExecWithGraphOnDevice(backends.DeviceNum(e.DeviceNum()), ta, tb) // ExecOnDevice ignores its device in GoMLX v0.26
		if err != nil {
			return Output{}, err
		}
		defer func() { _ = outs[0].FinalizeAll() }()
		c, err := tensors.CopyFlatData[float32](outs[0]) // waits for the device
		if err != nil {
			return Output{}, err
		}
		return Output{Values: toF64(c), Items: flops / 1e9}, nil
	}
	return call, exec.Finalize, nil
}

func toF64(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

// ForestFit fits a random forest; ForestPredict predicts with one.
type forestWorkload struct {
	name, desc string
	train      *data.Dataset
	test       *data.Dataset
	opt        forest.Options
	predict    bool
	model      *forest.Forest
}

func forestWorkloads(size Size) (fit, pred Workload, err error) {
	var train, test *data.Dataset
	var opt forest.Options
	var what string
	if size == Seed {
		train = data.MakeRegression(100000, 20, 1)
		test = train
		opt = forest.Options{Trees: 100, MaxDepth: 16}
		what = "100k x 20 synthetic regression, 100 trees, depth 16"
	} else {
		d, err := data.Diabetes()
		if err != nil {
			return nil, nil, err
		}
		tr, te := data.TrainTestSplit(d.Rows, 0.2, 42)
		train, test = d.Subset(tr), d.Subset(te)
		opt = forest.Options{Trees: 200, MaxDepth: 16}
		what = "diabetes 353 x 10, 200 trees, depth 16"
	}
	fit = &forestWorkload{name: "forest-fit", desc: "fit " + what, train: train, test: test, opt: opt}
	pred = &forestWorkload{name: "forest-predict", desc: fmt.Sprintf("predict %d rows, %s", test.Rows, what), train: train, test: test, opt: opt, predict: true}
	return fit, pred, nil
}

func (w *forestWorkload) Name() string     { return w.name }
func (w *forestWorkload) Describe() string { return w.desc }
func (w *forestWorkload) Unit() string {
	if w.predict {
		return "rows/s"
	}
	return "trees/s"
}

// Tolerance implements Workload: DefaultTolerance of the largest
// prediction (the graph paths grow the same trees and walk them as the
// CPU does: on simplego the predictions are identical).
func (w *forestWorkload) Tolerance() Tolerance { return Tolerance{Rel: DefaultTolerance} }

func (w *forestWorkload) Runner(e *device.Engine) (func() (Output, error), func(), error) {
	if !e.Native() && !w.predict {
		// The graph learner (forest/forestgraph) grows the same trees on the
		// device; the output is the fitted forest's predictions, as on the CPU.
		backend, err := e.Backend()
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %v", ErrUnsupported, err)
		}
		return func() (Output, error) {
			f, _, err := forestgraph.Fit(backend, w.train, w.opt, forestgraph.GrowOptions{DeviceNum: e.DeviceNum()})
			if err != nil {
				return Output{}, err
			}
			p, err := f.Predict(w.test.X, w.test.Rows)
			if err != nil {
				return Output{}, err
			}
			return Output{Values: p, Items: float64(len(f.Trees))}, nil
		}, func() {}, nil
	}
	if w.predict && w.model == nil {
		m, err := forest.Fit(w.train, w.opt)
		if err != nil {
			return nil, nil, err
		}
		w.model = m
	}
	if !e.Native() {
		// The trained forest as GoMLX graphs (forest/forestgraph) on the device.
		backend, err := e.Backend()
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %v", ErrUnsupported, err)
		}
		p, err := forestgraph.NewPredictorWithOptions(backend, w.model, w.test.Rows, forestgraph.Options{DeviceNum: e.DeviceNum()})
		if err != nil {
			return nil, nil, err
		}
		return func() (Output, error) {
			v, err := p.Predict(w.test.X, w.test.Rows)
			if err != nil {
				return Output{}, err
			}
			return Output{Values: v, Items: float64(w.test.Rows)}, nil
		}, p.Close, nil
	}
	return func() (Output, error) {
		f := w.model
		if !w.predict {
			var err error
			if f, err = forest.Fit(w.train, w.opt); err != nil {
				return Output{}, err
			}
		}
		p, err := f.Predict(w.test.X, w.test.Rows)
		if err != nil {
			return Output{}, err
		}
		items := float64(len(f.Trees))
		if w.predict {
			items = float64(w.test.Rows)
		}
		return Output{Values: p, Items: items}, nil
	}, func() {}, nil
}

// SignalFeatures synthesises a QPSK record and extracts every feature from
// it (the "1-s 200 kHz record"): with the CPU extractor on the
// native CPU, with the graph extractor (signal/sigraph) on simplego and XLA
// devices.
type SignalFeatures struct {
	// Seconds of signal at 200 kHz per record.
	Seconds float64
}

// Name implements Workload.
func (s *SignalFeatures) Name() string { return "signal-features" }

// Describe implements Workload.
func (s *SignalFeatures) Describe() string {
	return fmt.Sprintf("QPSK synthesis + all features, %.2g s at 200 kHz", s.Seconds)
}

// Unit implements Workload.
func (s *SignalFeatures) Unit() string { return "records/s" }

// The record and extractor configuration of SignalFeatures.
const (
	signalRate  = 200000
	signalWelch = 1024 // Welch segment: one bin is signalRate/signalWelch Hz
	signalMFCCs = 13
	signalRel   = 1e-4 // the graph extractor's parity floor (docs/SIGNAL.md)
)

// Tolerance implements Workload: 1e−4 of each feature (signal.FeatureNames)
// against its own magnitude, the graph extractor's parity floor of
// docs/SIGNAL.md ("Parity with the CPU path"; it computes the MFCCs in
// float32), with floors that give a feature near zero its scale: 1 dB for
// levels and SNRs, one Welch bin (195 Hz) for frequencies, 1 for the
// normalised cumulants, phases (rad) and MFCCs, 1e−3 of full scale for
// the amplitude statistics, 1e−6 for the flatness, none for powers.
func (s *SignalFeatures) Tolerance() Tolerance {
	bin := float64(signalRate) / signalWelch
	floor := map[string]float64{
		"rssi_dbfs": 1, "rssi_dbm": 1, "snr_db": 1, "snr_inband_db": 1,
		"occupied_bw_hz": bin, "obw_hz": bin, "centroid_hz": bin, "bandwidth_hz": bin, "rolloff_hz": bin,
		"inst_freq_mean": bin, "inst_freq_std": bin, "flatness": 1e-6,
		"c20": 1, "c40": 1, "c41": 1, "c42": 1, "inst_phase_mean": 1, "inst_phase_std": 1,
		"inst_amp_mean": 1e-3, "inst_amp_std": 1e-3, "noise_psd": 0, "c21": 0,
	}
	names := signal.FeatureNames(signalMFCCs)
	floors := make([]float64, len(names))
	for i, n := range names {
		// A feature missing from the table (one added to signal.Features
		// later) gets 0: held to its own magnitude, never left unchecked.
		floors[i] = floor[n]
		if strings.HasPrefix(n, "mfcc") {
			floors[i] = 1
		}
	}
	return Tolerance{Rel: signalRel, Floors: floors}
}

// Runner implements Workload.
func (s *SignalFeatures) Runner(e *device.Engine) (func() (Output, error), func(), error) {
	const rate = signalRate
	opts := signal.SynthOptions{Mod: signal.QPSK, SampleRate: rate, Samples: int(s.Seconds * rate), SNRdB: 10, CarrierOffset: 25000, Seed: 1}
	cfg := signal.Config{SampleRate: rate, WelchSegment: signalWelch, MFCCs: signalMFCCs}
	var ex signal.FeatureExtractor
	closeFn := func() {}
	if e.Native() {
		ce, err := signal.NewExtractor(cfg)
		if err != nil {
			return nil, nil, err
		}
		ex = ce
	} else {
		// The graph extractor (signal/sigraph) on simplego or an XLA device.
		backend, err := e.Backend()
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %v", ErrUnsupported, err)
		}
		g, err := sigraph.NewWithOptions(backend, cfg, 1, sigraph.Options{DeviceNum: e.DeviceNum()})
		if err != nil {
			return nil, nil, err
		}
		ex = g
		closeFn = g.Close
	}
	var syn signal.Synthesizer
	x := make([]complex64, opts.Samples)
	var f signal.Features
	var vec []float64
	return func() (Output, error) {
		if err := syn.Generate(x, opts); err != nil {
			return Output{}, err
		}
		if err := ex.Extract(x, &f); err != nil {
			return Output{}, err
		}
		vec = f.Vector(vec[:0])
		return Output{Values: vec, Items: 1}, nil
	}, closeFn, nil
}
