package sigraph

import (
	"github.com/gomlx/gomlx/backends"

	"github.com/gotrain/gotrain/signal"
)

// BenchBatch is the most records [Benchmark] extracts per graph execution
// in its batched run: a 1-s record's intermediate tensors take tens of MB.
const BenchBatch = 8

// Benchmark runs [signal.Benchmark] with graph extractors on backend (with
// opts): the single-record runs extract one record per graph execution,
// the batched run up to BenchBatch records per execution, its records
// synthesized on the calling goroutine (the result's GraphBatch). The
// extractors are closed before it returns; the backend stays open. With
// a nil backend it runs signal.Benchmark(bo) on the CPU path, as
// `gotrain signal bench` does on --device cpu.
func Benchmark(backend backends.Backend, opts Options, bo signal.BenchOptions) (signal.BenchResult, error) {
	if backend == nil {
		return signal.Benchmark(bo)
	}
	cfg := bo.Config
	if cfg.SampleRate == 0 {
		cfg.SampleRate = bo.Synth.SampleRate
	}
	single, err := NewWithOptions(backend, cfg, 1, opts)
	if err != nil {
		return signal.BenchResult{}, err
	}
	defer single.Close()
	batch, err := NewWithOptions(backend, cfg, BenchBatch, opts)
	if err != nil {
		return signal.BenchResult{}, err
	}
	defer batch.Close()
	bo.Extractor, bo.Batch = single, batch
	r, err := signal.Benchmark(bo)
	r.GraphBatch = min(r.BatchRecords, BenchBatch)
	return r, err
}

// The interfaces package signal uses to drive the graph extractor.
var (
	_ signal.FeatureExtractor = (*Extractor)(nil)
	_ signal.BatchExtractor   = (*Extractor)(nil)
	_ signal.Compiler         = (*Extractor)(nil)
)
