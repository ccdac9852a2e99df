// Package sigraph computes the radio-signal features of package signal as
// GoMLX graphs, batched over records, so they run on any GoMLX backend: XLA
// devices (with their native FFT) and simplego, GoMLX's pure-Go backend,
// which has no FFT op and no complex dtype. There, complex data travel as
// separate real and imaginary tensors and the FFTs are built from DFT
// matrix products (four-step Cooley–Tukey splits for lengths above 64).
//
// The features and their definitions are those of the CPU
// [signal.Extractor] (docs/SIGNAL.md); the "Graph path" section there says
// which steps run on the host and the precision of every stage.
//
// [New] returns an [Extractor] for a backend the caller opened and owns;
// it satisfies [signal.FeatureExtractor] and [signal.BatchExtractor].
// [NewFeatureExtractor] chooses between it and the CPU path's extractor by
// the backend it is given (nil: the CPU path). [Compare] measures a result
// against the CPU path's, and [Benchmark] runs [signal.Benchmark] with
// graph extractors (or, given no backend, on the CPU path).
package sigraph

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/gotrain/gotrain/signal"
)

// Options tune the graph extractor. The zero value is the default.
type Options struct {
	// DirectMax is the largest FFT length done as one DFT matrix product
	// where the backend has no FFT op; longer transforms are split
	// (four-step). 0 means DefaultDirectMax.
	DirectMax int
	// DeviceNum is the backend device the graphs run on (default 0).
	DeviceNum int
	// SeparateTwiddles makes the four-step FFT multiply by its twiddles in
	// a separate element-wise step instead of folding them into its second
	// matrix product (a DotGeneral batched over k1), the default, which
	// measured 6–8 % faster per record on simplego in most runs; for
	// comparisons.
	SeparateTwiddles bool
	// GraphFFT builds the FFTs from graph operations even where the
	// backend has a native FFT (for tests and comparisons).
	GraphFFT bool
	// MFCCFloat64 computes the MFCC stage (frames, FFTs, power, mel
	// projection, log) in float64 instead of float32. The float32 default
	// is within 2e−5 absolute of the CPU path (docs/SIGNAL.md) and faster.
	MFCCFloat64 bool
	// SpectrogramFloat32 computes the spectrogram in float32 instead of
	// float64: faster where float64 is slow (consumer GPUs), but cells far
	// below a strong peak then come to or past the 1e−4 parity floor
	// (measured 0.9e−4 to 1.4e−4 relative in dB on a 30 dB tone).
	SpectrogramFloat32 bool
}

// Extractor computes [signal.Features] with GoMLX graphs on one backend.
// The graph is compiled once per batch shape (records × samples) and
// reused. An Extractor is safe for concurrent use (calls are serialised);
// call Close to release its compiled graphs.
type Extractor struct {
	mu      sync.Mutex
	backend backends.Backend
	cfg     signal.Config
	records int
	opts    Options
	native  bool
	exec    *graph.Exec
	n       int // record length the builder is for (0: none yet)
	b       *builder

	re, im  []float32 // staged input
	sortBuf []float64 // signal.PSDLevels' scratch
}

// New returns a graph extractor for cfg on backend that runs up to records
// records per graph execution.
func New(backend backends.Backend, cfg signal.Config, records int) (*Extractor, error) {
	return NewWithOptions(backend, cfg, records, Options{})
}

// NewWithOptions is New with tuning options.
func NewWithOptions(backend backends.Backend, cfg signal.Config, records int, opts Options) (*Extractor, error) {
	if backend == nil {
		return nil, errors.New("sigraph: nil backend")
	}
	if records < 1 {
		return nil, fmt.Errorf("sigraph: %d records per batch; want at least 1", records)
	}
	cpu, err := signal.NewExtractor(cfg) // validates cfg and fills in the defaults
	if err != nil {
		return nil, fmt.Errorf("sigraph: %w", err)
	}
	if opts.DirectMax == 0 {
		opts.DirectMax = DefaultDirectMax
	}
	if opts.DirectMax < 1 {
		return nil, fmt.Errorf("sigraph: direct DFT limit %d must be positive", opts.DirectMax)
	}
	e := &Extractor{backend: backend, cfg: cpu.Config(), records: records, opts: opts}
	e.native = !opts.GraphFFT && nativeFFT(backend, dtypes.Float64) && nativeFFT(backend, dtypes.Float32)
	return e, nil
}

// NewFeatureExtractor returns an extractor of one record per call for cfg
// on the path backend names: the CPU path's [signal.Extractor] when
// backend is nil, else a graph [Extractor] on backend (with opts; its
// DeviceNum picks the device). It is the choice `gotrain signal features`
// makes for --device. Call release when done: it releases the graph
// extractor's compiled graphs (the backend stays open; it belongs to the
// caller) and does nothing on the CPU path.
func NewFeatureExtractor(backend backends.Backend, cfg signal.Config, opts Options) (e signal.FeatureExtractor, release func(), err error) {
	if backend == nil {
		cpu, err := signal.NewExtractor(cfg)
		if err != nil {
			return nil, nil, err
		}
		return cpu, func() {}, nil
	}
	g, err := NewWithOptions(backend, cfg, 1, opts)
	if err != nil {
		return nil, nil, err
	}
	return g, g.Close, nil
}

// Config returns the configuration with its defaults filled in.
func (e *Extractor) Config() signal.Config { return e.cfg }

// NativeFFT tells whether the graphs use the backend's FFT op (true) or
// FFTs built from graph operations (false).
func (e *Extractor) NativeFFT() bool { return e.native }

// Backend returns the backend the extractor runs on.
func (e *Extractor) Backend() backends.Backend { return e.backend }

// Close releases the compiled graphs. The backend stays open (it belongs
// to the caller).
func (e *Extractor) Close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.exec != nil {
		e.exec.Finalize()
		e.exec = nil
	}
	e.n = 0
}

// Extract computes the features of record x into f (implements
// [signal.FeatureExtractor]); f's slices are reused.
func (e *Extractor) Extract(x []complex64, f *signal.Features) error {
	out := []signal.Features{*f}
	err := e.ExtractBatch([][]complex64{x}, out)
	*f = out[0]
	return err
}

// ExtractBatch computes the features of every record into out (one per
// record; their slices are reused). Records of one length run together,
// up to the extractor's records per graph execution.
func (e *Extractor) ExtractBatch(records [][]complex64, out []signal.Features) error {
	if len(out) != len(records) {
		return fmt.Errorf("sigraph: %d records but %d feature slots", len(records), len(out))
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	minN := e.cfg.MinSamples()
	for i, x := range records {
		if len(x) < minN {
			return fmt.Errorf("sigraph: record %d: %d samples is shorter than the %d the features need", i, len(x), minN)
		}
	}
	for lo := 0; lo < len(records); {
		hi := lo + 1
		for hi < len(records) && hi-lo < e.records && len(records[hi]) == len(records[lo]) {
			hi++
		}
		if err := e.run(records[lo:hi], out[lo:hi]); err != nil {
			if hi-lo == 1 {
				return fmt.Errorf("sigraph: record %d: %w", lo, err)
			}
			return fmt.Errorf("sigraph: records %d..%d: %w", lo, hi-1, err)
		}
		lo = hi
	}
	return nil
}

// Compile builds and compiles the graph for batches of records records of
// samples samples each, so that the first extraction does not pay for it
// (optional: extraction compiles what it needs).
func (e *Extractor) Compile(records, samples int) (err error) {
	if records < 1 || samples < e.cfg.MinSamples() {
		return fmt.Errorf("sigraph: cannot compile for %d records of %d samples (want ≥ 1 records of ≥ %d samples)", records, samples, e.cfg.MinSamples())
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("sigraph: compiling on %s: %v", e.backend.Name(), r)
		}
	}()
	if err := e.prepare(samples); err != nil {
		return fmt.Errorf("sigraph: %w", err)
	}
	z := make([]float32, records*samples)
	t := tensors.FromFlatDataAndDimensions(z, records, samples)
	if err := e.exec.PreCompile(t, t); err != nil {
		return fmt.Errorf("sigraph: compiling on %s: %w", e.backend.Name(), err)
	}
	return nil
}

// prepare (re)builds the graph function for records of n samples.
func (e *Extractor) prepare(n int) error {
	if e.n == n && e.exec != nil {
		return nil
	}
	if e.exec != nil {
		e.exec.Finalize()
		e.exec = nil
	}
	c := e.cfg
	specDT, mfDT := dtypes.Float64, dtypes.Float32
	if e.opts.SpectrogramFloat32 {
		specDT = dtypes.Float32
	}
	if e.opts.MFCCFloat64 {
		mfDT = dtypes.Float64
	}
	plan := fftPlan{native: e.native, directMax: e.opts.DirectMax, folded: !e.opts.SeparateTwiddles}
	b := &builder{cfg: c, n: n, timeDT: dtypes.Float64, specDT: specDT, mfDT: mfDT,
		welchFFT: plan, specFFT: plan, mfccFFT: plan,
		melW: melMatrix(c.MelBands, c.MFCCFrame, c.SampleRate), dct: dctMatrix(c.MFCCs, c.MelBands),
		tukey: signal.TukeyWindow(c.SpectrogramSegment, 0.25)}
	exec, err := graph.NewExec(e.backend, b.build)
	if err != nil {
		return fmt.Errorf("creating the feature graph: %w", err)
	}
	e.exec, e.n, e.b = exec, n, b
	return nil
}

// run extracts one batch of records of one length.
func (e *Extractor) run(records [][]complex64, out []signal.Features) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("graph execution on %s: %v", e.backend.Name(), r)
		}
	}()
	n := len(records[0])
	if err := e.prepare(n); err != nil {
		return err
	}
	r := len(records)
	e.re = slices.Grow(e.re[:0], r*n)[:r*n]
	e.im = slices.Grow(e.im[:0], r*n)[:r*n]
	for i, x := range records {
		re, im := e.re[i*n:(i+1)*n], e.im[i*n:(i+1)*n]
		for k, v := range x {
			re[k], im[k] = real(v), imag(v)
		}
	}
	// ExecOnDevice ignores its device in GoMLX v0.26; ExecWithGraphOnDevice does not.
	outs, _, err := e.exec.ExecWithGraphOnDevice(backends.DeviceNum(e.opts.DeviceNum),
		tensors.FromFlatDataAndDimensions(e.re, r, n), tensors.FromFlatDataAndDimensions(e.im, r, n))
	if err != nil {
		return fmt.Errorf("graph execution on %s: %w", e.backend.Name(), err)
	}
	defer func() {
		for _, t := range outs {
			_ = t.FinalizeAll()
		}
	}()
	if len(outs) != numOutputs {
		return fmt.Errorf("graph returned %d outputs, want %d", len(outs), numOutputs)
	}
	f64 := make([][]float64, numOutputs)
	for i, t := range outs {
		if i == outSpectrogram {
			continue
		}
		if f64[i], err = tensors.CopyFlatData[float64](t); err != nil {
			return fmt.Errorf("reading output %d: %w", i, err)
		}
	}
	spec, err := tensors.CopyFlatData[float32](outs[outSpectrogram])
	if err != nil {
		return fmt.Errorf("reading the spectrogram: %w", err)
	}
	c := e.cfg
	m := c.WelchSegment
	lags := c.AutocorrLags + 1
	step := c.SpectrogramSegment - c.SpectrogramOverlap
	sFrames := (n - c.SpectrogramOverlap) / step
	sLen := c.SpectrogramSegment * sFrames
	mFrames := 1 + (n-c.MFCCFrame)/c.MFCCHop
	nc := c.MFCCs
	for i := range records {
		f := &out[i]
		s := f64[outScalars][i*numScalars : (i+1)*numScalars]
		f.Samples, f.SampleRate = n, c.SampleRate
		f.RSSIdBFS, f.RSSIdBm = s[sRSSIdBFS], s[sRSSIdBm]
		f.C21 = s[sPower]
		f.C20 = complex(s[sC20re], s[sC20im])
		f.C40 = complex(s[sC40re], s[sC40im])
		f.C41 = complex(s[sC41re], s[sC41im])
		f.C42 = s[sC42]
		f.InstAmpMean, f.InstAmpStd = s[sAmpMean], s[sAmpStd]
		f.InstPhaseMean, f.InstPhaseStd = s[sPhaseMean], s[sPhaseStd]
		f.InstFreqMean, f.InstFreqStd = s[sFreqMean], s[sFreqStd]
		f.CentroidHz, f.BandwidthHz, f.Flatness = s[sCentroid], s[sBandwidth], s[sFlatness]
		f.PSD = grow(f.PSD, m)
		copy(f.PSD, f64[outPSD][i*m:(i+1)*m])
		f.Autocorr = grow(f.Autocorr, lags)
		acr, aci := f64[outACRe][i*lags:(i+1)*lags], f64[outACIm][i*lags:(i+1)*lags]
		for k := range f.Autocorr {
			f.Autocorr[k] = complex(acr[k], aci[k])
		}
		f.SpecBins, f.SpecFrames = c.SpectrogramSegment, sFrames
		f.Spectrogram = grow(f.Spectrogram, sLen)
		copy(f.Spectrogram, spec[i*sLen:(i+1)*sLen])
		f.MFCCFrames = grow(f.MFCCFrames, mFrames*nc)
		copy(f.MFCCFrames, f64[outMFCCFrames][i*mFrames*nc:(i+1)*mFrames*nc])
		f.MFCC = grow(f.MFCC, nc)
		copy(f.MFCC, f64[outMFCC][i*nc:(i+1)*nc])
		e.sortBuf = signal.PSDLevels(f, c, e.sortBuf)
	}
	return nil
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// melMatrix returns signal.MelWeights transposed: a (frame/2+1) × bands
// matrix, row-major.
func melMatrix(bands, frame int, fs float64) []float64 {
	return transpose(signal.MelWeights(bands, frame, fs), bands, frame/2+1)
}

// dctMatrix returns signal.DCTOrtho transposed: an n × k matrix, row-major.
func dctMatrix(k, n int) []float64 {
	return transpose(signal.DCTOrtho(k, n), k, n)
}

// transpose returns the cols × rows transpose of a rows × cols matrix.
func transpose(a []float64, rows, cols int) []float64 {
	t := make([]float64, len(a))
	for r := range rows {
		for c := range cols {
			t[c*rows+r] = a[r*cols+c]
		}
	}
	return t
}
