package signal

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// ExtractBatch computes the features of every record on workers goroutines
// (0 means runtime.GOMAXPROCS), each with its own [Extractor]. out must have
// one Features per record; its slices are reused as [Extractor.Extract]
// does. The first error stops the batch and names its record.
func ExtractBatch(cfg Config, records [][]complex64, out []Features, workers int) error {
	if len(out) != len(records) {
		return fmt.Errorf("signal: %d records but %d feature slots", len(records), len(out))
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, len(records))
	var (
		next   atomic.Int64
		failed atomic.Bool
		mu     sync.Mutex
		first  error
		wg     sync.WaitGroup
	)
	for range workers {
		e, err := NewExtractor(cfg)
		if err != nil {
			return err
		}
		wg.Go(func() {
			for !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= len(records) {
					return
				}
				if err := e.Extract(records[i], &out[i]); err != nil {
					mu.Lock()
					if first == nil {
						first = fmt.Errorf("signal: record %d: %w", i, err)
					}
					mu.Unlock()
					failed.Store(true)
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}
