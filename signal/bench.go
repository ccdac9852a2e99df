package signal

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/gotrain/gotrain/internal/stats"
)

// BatchExtractor extracts the features of several records in one call, as
// the graph extractor (signal/sigraph's *Extractor) does: out has one
// Features per record.
type BatchExtractor interface {
	ExtractBatch(records [][]complex64, out []Features) error
}

// BenchOptions configure [Benchmark]. Zero fields take the defaults shown.
type BenchOptions struct {
	// Synth describes the record (Mod, SampleRate and Samples are
	// required). The warm-up uses Synth.Seed, timed run i Synth.Seed+1+i
	// and record j of the batched run Synth.Seed+1000+j.
	Synth SynthOptions
	// Runs is the number of timed single-record runs after one warm-up
	// (default 20; at most MaxBenchRuns).
	Runs int
	// Records is the number of records of the batched run (default 32; at
	// most MaxBenchRecords, and with Batch at most MaxSamples samples in
	// all).
	Records int
	// Workers is the number of goroutines of the batched run on the CPU
	// path (0: GOMAXPROCS; at most Records); with Batch set it is 1.
	Workers int
	// Threads is the number of goroutines per record in the single-record
	// runs, for synthesis ([Synthesizer.Threads]) and for the CPU
	// extractor ([Config.Threads]); default 1, at most MaxBenchThreads.
	// Results do not depend on it.
	Threads int
	// Config configures the CPU extractors; SampleRate defaults to
	// Synth.SampleRate. (Extractor and Batch bring their own.)
	Config Config
	// Extractor, when set, extracts the single-record runs instead of a CPU
	// [Extractor] (a graph extractor, for instance).
	Extractor FeatureExtractor
	// Batch, when set, extracts the batched run: the records are
	// synthesized on the calling goroutine and extracted in one
	// ExtractBatch call (after an untimed warm-up call on as many records,
	// which compiles what it needs), instead of being synthesized and
	// extracted on Workers goroutines with CPU extractors.
	Batch BatchExtractor
}

// BenchResult is what [Benchmark] measured; times in milliseconds. The
// JSON keys are those of `gotrain signal bench --json`, and WriteText
// writes its text.
type BenchResult struct {
	// Device names the device; Benchmark leaves it to the caller.
	Device  string `json:"device"`
	Record  string `json:"record"` // the record in words
	Samples int    `json:"samples"`
	Runs    int    `json:"runs"`
	Threads int    `json:"threads_per_record"`
	// Medians over the timed runs of synthesis, extraction and both.
	SynthMS    float64 `json:"synth_ms_per_record"`
	FeaturesMS float64 `json:"features_ms_per_record"`
	TotalMS    float64 `json:"total_ms_per_record"`
	// Minima over the timed runs.
	SynthMinMS    float64 `json:"synth_min_ms"`
	FeaturesMinMS float64 `json:"features_min_ms"`
	TotalMinMS    float64 `json:"total_min_ms"`
	// Workers is the goroutines of the batched run (1 with a Batch
	// extractor), BatchRecords its record count and RecordsPerSecond its
	// throughput, synthesis included.
	Workers          int     `json:"workers"`
	BatchRecords     int     `json:"batch_records"`
	RecordsPerSecond float64 `json:"records_per_second"`
	// RealTimeFactor is the record's duration over TotalMS.
	RealTimeFactor float64   `json:"real_time_factor_single"`
	TotalRunsMS    []float64 `json:"total_runs_ms"` // every timed run, in order
	GoMaxProcs     int       `json:"gomaxprocs"`
	// GraphBatch is the most records per graph execution of the batched
	// run (sigraph.Benchmark); 0 on the CPU path.
	GraphBatch int `json:"-"`
}

// WriteText writes r as `gotrain signal bench` prints it: the record, a
// table of the single-record times, and the batched throughput.
func (r *BenchResult) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "record: %s\n", r.Record)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "stage\tmedian ms\tmin ms\n")
	fmt.Fprintf(tw, "synthesis\t%.3f\t%.3f\n", r.SynthMS, r.SynthMinMS)
	fmt.Fprintf(tw, "all features\t%.3f\t%.3f\n", r.FeaturesMS, r.FeaturesMinMS)
	fmt.Fprintf(tw, "synthesis + features\t%.3f\t%.3f\n", r.TotalMS, r.TotalMinMS)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "%d goroutine(s) per record, median of %d runs after a warm-up; %.0fx faster than real time\n", r.Threads, r.Runs, r.RealTimeFactor)
	if r.GraphBatch == 0 {
		_, err := fmt.Fprintf(w, "batched: %d records on %d goroutines: %.1f records/s\n", r.BatchRecords, r.Workers, r.RecordsPerSecond)
		return err
	}
	_, err := fmt.Fprintf(w, "batched: %d records in graph executions of up to %d on %s: %.1f records/s\n",
		r.BatchRecords, r.GraphBatch, r.Device, r.RecordsPerSecond)
	return err
}

// Limits of BenchOptions, checked before a record is allocated.
const (
	MaxBenchRuns    = 1_000_000
	MaxBenchRecords = 1 << 16
	MaxBenchThreads = 1024
)

// withDefaults validates o and fills in the defaults.
func (o BenchOptions) withDefaults() (BenchOptions, error) {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&o.Runs, 20)
	def(&o.Records, 32)
	def(&o.Threads, 1)
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	switch {
	case o.Runs < 1 || o.Runs > MaxBenchRuns:
		return o, fmt.Errorf("signal: benchmark Runs %d: want 1 to %d", o.Runs, MaxBenchRuns)
	case o.Records < 1 || o.Records > MaxBenchRecords:
		return o, fmt.Errorf("signal: benchmark Records %d: want 1 to %d", o.Records, MaxBenchRecords)
	case o.Threads < 1 || o.Threads > MaxBenchThreads:
		return o, fmt.Errorf("signal: benchmark Threads %d: want 1 to %d", o.Threads, MaxBenchThreads)
	}
	// The record is checked before the runs allocate it (Samples too).
	if _, err := o.Synth.withDefaults(); err != nil {
		return o, fmt.Errorf("signal: benchmark record: %w", err)
	}
	// More workers than records would only hold more buffers.
	o.Workers = min(o.Workers, o.Records)
	if o.Batch != nil && int64(o.Records)*int64(o.Synth.Samples) > MaxSamples {
		return o, fmt.Errorf("signal: benchmark Records %d of %d samples: the batched run holds them all, at most %d samples (MaxSamples)",
			o.Records, o.Synth.Samples, MaxSamples)
	}
	if o.Config.SampleRate == 0 {
		o.Config.SampleRate = o.Synth.SampleRate
	}
	if o.Batch != nil {
		o.Workers = 1
	}
	return o, nil
}

// Benchmark times synthesis and feature extraction of the record o.Synth
// describes: one warm-up, then o.Runs runs on the calling goroutine (their
// medians and minima), then the throughput of a batch of o.Records records
// (on o.Workers goroutines with CPU extractors, or with o.Batch).
func Benchmark(o BenchOptions) (BenchResult, error) {
	o, err := o.withDefaults()
	if err != nil {
		return BenchResult{}, err
	}
	e := o.Extractor
	if e == nil {
		cfg := o.Config
		cfg.Threads = o.Threads
		if e, err = NewExtractor(cfg); err != nil {
			return BenchResult{}, err
		}
	}
	s := Synthesizer{Threads: o.Threads}
	x := make([]complex64, o.Synth.Samples)
	var f Features
	var synth, feat, total []float64
	for i := -1; i < o.Runs; i++ { // i == -1 is the warm-up
		so := o.Synth
		so.Seed += uint64(i + 1)
		t0 := time.Now()
		if err := s.Generate(x, so); err != nil {
			return BenchResult{}, err
		}
		t1 := time.Now()
		if err := e.Extract(x, &f); err != nil {
			return BenchResult{}, err
		}
		t2 := time.Now()
		if i >= 0 {
			synth = append(synth, ms(t1.Sub(t0)))
			feat = append(feat, ms(t2.Sub(t1)))
			total = append(total, ms(t2.Sub(t0)))
		}
	}
	r := BenchResult{Record: fmt.Sprintf("%s, %d samples at %g Hz, offset %g Hz, %s", o.Synth.Mod, o.Synth.Samples, o.Synth.SampleRate, o.Synth.CarrierOffset, o.Synth.SNRString()),
		Samples: o.Synth.Samples, Runs: o.Runs, Threads: o.Threads,
		SynthMS: stats.Median(synth), FeaturesMS: stats.Median(feat), TotalMS: stats.Median(total),
		SynthMinMS: slices.Min(synth), FeaturesMinMS: slices.Min(feat), TotalMinMS: slices.Min(total),
		Workers: o.Workers, BatchRecords: o.Records, TotalRunsMS: total, GoMaxProcs: runtime.GOMAXPROCS(0)}
	r.RealTimeFactor = float64(o.Synth.Samples) / o.Synth.SampleRate * 1000 / r.TotalMS
	if o.Batch != nil {
		r.RecordsPerSecond, err = batchThroughputWith(o.Batch, o.Synth, o.Records)
	} else {
		r.RecordsPerSecond, err = batchThroughput(o.Synth, o.Config, o.Records, o.Workers)
	}
	if err != nil {
		return BenchResult{}, err
	}
	return r, nil
}

// batchSeed is the seed of record i of a batched run.
func batchSeed(o SynthOptions, i int) SynthOptions {
	o.Seed += 1000 + uint64(i)
	return o
}

// batchThroughput synthesizes and extracts n records on workers
// goroutines (after one warm-up record each) and returns records per second.
func batchThroughput(o SynthOptions, cfg Config, n, workers int) (float64, error) {
	type worker struct {
		s Synthesizer
		e *Extractor
		x []complex64
		f Features
	}
	ws := make([]*worker, workers)
	for i := range ws {
		e, err := NewExtractor(cfg)
		if err != nil {
			return 0, err
		}
		w := &worker{e: e, x: make([]complex64, o.Samples)}
		if err := w.s.Generate(w.x, o); err != nil {
			return 0, err
		}
		if err := w.e.Extract(w.x, &w.f); err != nil {
			return 0, err
		}
		ws[i] = w
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		next  = make(chan int, n)
	)
	for i := range n {
		next <- i
	}
	close(next)
	t0 := time.Now()
	for _, w := range ws {
		wg.Go(func() {
			for i := range next {
				err := w.s.Generate(w.x, batchSeed(o, i))
				if err == nil {
					err = w.e.Extract(w.x, &w.f)
				}
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	if first != nil {
		return 0, first
	}
	return float64(n) / time.Since(t0).Seconds(), nil
}

// batchThroughputWith synthesizes n records and extracts them with one
// call of b (after an untimed warm-up call on zero records, which compiles
// and sizes the buffers) and returns records per second, synthesis included.
func batchThroughputWith(b BatchExtractor, o SynthOptions, n int) (float64, error) {
	recs := make([][]complex64, n)
	for i := range recs {
		recs[i] = make([]complex64, o.Samples)
	}
	out := make([]Features, n)
	if err := b.ExtractBatch(recs, out); err != nil {
		return 0, err
	}
	var s Synthesizer
	t0 := time.Now()
	for i, x := range recs {
		if err := s.Generate(x, batchSeed(o, i)); err != nil {
			return 0, err
		}
	}
	if err := b.ExtractBatch(recs, out); err != nil {
		return 0, err
	}
	return float64(n) / time.Since(t0).Seconds(), nil
}

// ms converts d to milliseconds.
func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }
