package signal

import "fmt"

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
	e.timeStats(x, f)
	e.welch.run(x, f, e.cfg)
	e.spectral(f)
	e.spec.run(x, f, e.cfg)
	e.mfcc.run(e.env, f, e.cfg)
	return nil
}
