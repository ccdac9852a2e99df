package signal

import (
	"fmt"
	"sync/atomic"
)

// Extractor computes [Features] on the CPU. It keeps its plans and work
// buffers between calls, so extracting records of one length allocates
// nothing after the first call (when the Features value is reused too).
// An Extractor is not safe for concurrent use: give each goroutine its own,
// or use [ExtractBatch].
type Extractor struct {
	cfg Config
	n   int // record length the buffers are sized for

	welch welchState
	spec  specState
	mfcc  mfccState
	env   []float64 // |x|, the MFCC input
	sort  []float64 // median scratch
}

// NewExtractor returns an extractor for cfg.
func NewExtractor(cfg Config) (*Extractor, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	e := &Extractor{cfg: c}
	if err := e.welch.init(c); err != nil {
		return nil, err
	}
	if err := e.spec.init(c); err != nil {
		return nil, err
	}
	if err := e.mfcc.init(c); err != nil {
		return nil, err
	}
	return e, nil
}

// Config returns the extractor's configuration with its defaults filled in.
func (e *Extractor) Config() Config { return e.cfg }

// Extract computes the features of record x into f.
func (e *Extractor) Extract(x []complex64, f *Features) error {
	if min := e.cfg.MinSamples(); len(x) < min {
		return fmt.Errorf("signal: record of %d samples is shorter than the %d the features need", len(x), min)
	}
	if len(x) != e.n {
		e.n = len(x)
		e.env = make([]float64, len(x))
	}
	f.Samples = len(x)
	f.SampleRate = e.cfg.SampleRate
	if e.cfg.Threads < 2 {
		e.timeStats(x, f)
		e.frequencyStages(x, f)
		e.mfcc.run(e.env, f, e.cfg)
		return nil
	}
	// The two goroutines write disjoint fields of f and disjoint state of
	// e. The second one, after the frequency-domain stages, helps with
	// the MFCC frame batches once the envelope exists; each batch fills
	// its own rows, and the mean is summed in frame order afterwards.
	e.mfcc.prepare(len(x), f, e.cfg)
	var next atomic.Int64
	nb := int64(e.mfcc.batches(len(x)))
	mfcc := func(w *mfccWork) {
		for bi := next.Add(1) - 1; bi < nb; bi = next.Add(1) - 1 {
			e.mfcc.batch(e.env, f, e.cfg, w, int(bi))
		}
	}
	envReady := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.frequencyStages(x, f)
		<-envReady
		mfcc(&e.mfcc.work[1])
	}()
	e.timeStats(x, f)
	close(envReady)
	mfcc(&e.mfcc.work[0])
	<-done
	e.mfcc.mean(f, e.cfg)
	return nil
}

// frequencyStages computes the Welch PSD, the autocorrelation, the
// spectral features and the spectrogram.
func (e *Extractor) frequencyStages(x []complex64, f *Features) {
	e.welch.run(x, f, e.cfg)
	e.spectral(f)
	e.spec.run(x, f, e.cfg)
}
