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
		// The time statistics load x[i] and store env[i] at the same
		// pace; large buffers start on a page, so env starts half a page
		// in (alloc.go says why).
		const skew = 264 // float64s: 2112 bytes
		e.env = make([]float64, len(x)+skew)[skew:]
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
	// e. The second one computes the Welch PSD, the autocorrelation and
	// the spectral features while the first computes the time-domain
	// statistics; then both take spectrogram chunks and, once the
	// envelope exists, MFCC frame batches from a shared counter. Each
	// chunk or batch fills its own part of f with its goroutine's
	// buffers, and the MFCC mean is summed in frame order afterwards, so
	// the features do not depend on who did what.
	e.mfcc.prepare(len(x), f, e.cfg)
	e.spec.prepare(len(x), f, e.cfg)
	var next atomic.Int64
	ns := int64(e.spec.chunks(len(x), e.cfg.SpectrogramOverlap))
	nb := ns + int64(e.mfcc.batches(len(x)))
	envReady := make(chan struct{})
	share := func(g int, wait <-chan struct{}) {
		for i := next.Add(1) - 1; i < nb; i = next.Add(1) - 1 {
			if i < ns {
				e.spec.chunk(x, f, &e.spec.work[g], int(i))
				continue
			}
			if wait != nil {
				<-wait
				wait = nil
			}
			e.mfcc.batch(e.env, f, e.cfg, &e.mfcc.work[g], int(i-ns))
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.welch.run(x, f, e.cfg)
		e.spectral(f)
		share(1, envReady)
	}()
	e.timeStats(x, f)
	close(envReady)
	share(0, nil)
	<-done
	e.mfcc.mean(f, e.cfg)
	return nil
}

// frequencyStages computes the Welch PSD, the autocorrelation, the
// spectral features and the spectrogram (on one goroutine).
func (e *Extractor) frequencyStages(x []complex64, f *Features) {
	e.welch.run(x, f, e.cfg)
	e.spectral(f)
	e.spec.run(x, f, e.cfg)
}
