package signal

import (
	"errors"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/internal/stats"
)

// benchRecord is a short QPSK record for the benchmark tests.
func benchRecord() SynthOptions {
	return SynthOptions{Mod: QPSK, SampleRate: 200e3, Samples: 4096, SNRdB: 10, CarrierOffset: 25e3, Seed: 5}
}

func TestBenchmarkCPU(t *testing.T) {
	for _, threads := range []int{1, 2} {
		r, err := Benchmark(BenchOptions{Synth: benchRecord(), Runs: 3, Records: 3, Workers: 2, Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		if r.Samples != 4096 || r.Runs != 3 || r.Threads != threads || r.Workers != 2 || r.BatchRecords != 3 || r.GoMaxProcs < 1 {
			t.Errorf("threads %d: counts %+v", threads, r)
		}
		if len(r.TotalRunsMS) != 3 || r.TotalMS != stats.Median(r.TotalRunsMS) || r.TotalMinMS != slices.Min(r.TotalRunsMS) {
			t.Errorf("threads %d: total %v (min %v) is not the median of the runs %v", threads, r.TotalMS, r.TotalMinMS, r.TotalRunsMS)
		}
		if !(r.SynthMS > 0 && r.FeaturesMS > 0 && r.SynthMinMS <= r.SynthMS && r.FeaturesMinMS <= r.FeaturesMS && r.RecordsPerSecond > 0) {
			t.Errorf("threads %d: times %+v", threads, r)
		}
		if want := 4096 / 200e3 * 1000 / r.TotalMS; math.Abs(r.RealTimeFactor-want) > 1e-9*want {
			t.Errorf("real-time factor %v, want %v", r.RealTimeFactor, want)
		}
		if want := "qpsk, 4096 samples at 200000 Hz, offset 25000 Hz, SNR 10 dB (full band)"; r.Record != want {
			t.Errorf("record %q, want %q", r.Record, want)
		}
	}
}

// recorder is a fake single and batch extractor that keeps what it saw.
type recorder struct {
	single  [][]complex64
	batches [][][]complex64
	fail    error
}

func (r *recorder) Extract(x []complex64, f *Features) error {
	r.single = append(r.single, slices.Clone(x))
	return r.fail
}

func (r *recorder) ExtractBatch(recs [][]complex64, out []Features) error {
	if len(out) != len(recs) {
		return errors.New("slots")
	}
	var cp [][]complex64
	for _, x := range recs {
		cp = append(cp, slices.Clone(x))
	}
	r.batches = append(r.batches, cp)
	return nil
}

// TestBenchmarkExtractors checks that Benchmark hands the documented
// records to given extractors: the warm-up and the timed runs (seeds
// Seed, Seed+1, ...) to Extractor, and a warm-up batch then the batch of
// records Seed+1000+j to Batch.
func TestBenchmarkExtractors(t *testing.T) {
	o := benchRecord()
	rec := &recorder{}
	r, err := Benchmark(BenchOptions{Synth: o, Runs: 2, Records: 3, Workers: 4, Extractor: rec, Batch: rec})
	if err != nil {
		t.Fatal(err)
	}
	if r.Workers != 1 || r.BatchRecords != 3 || len(r.TotalRunsMS) != 2 {
		t.Errorf("result %+v", r)
	}
	want := func(seed uint64) []complex64 {
		so := o
		so.Seed = seed
		x, err := Synthesize(so)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	if len(rec.single) != 3 {
		t.Fatalf("Extractor got %d records, want 3 (warm-up + 2 runs)", len(rec.single))
	}
	for i, x := range rec.single {
		if !slices.Equal(x, want(o.Seed+uint64(i))) {
			t.Errorf("single record %d is not the record of seed %d", i, o.Seed+uint64(i))
		}
	}
	if len(rec.batches) != 2 || len(rec.batches[0]) != 3 || len(rec.batches[1]) != 3 {
		t.Fatalf("Batch got %d calls, want 2 of 3 records", len(rec.batches))
	}
	for j, x := range rec.batches[1] {
		if !slices.Equal(x, want(o.Seed+1000+uint64(j))) {
			t.Errorf("batch record %d is not the record of seed %d", j, o.Seed+1000+uint64(j))
		}
	}
	rec.fail = errors.New("boom")
	if _, err := Benchmark(BenchOptions{Synth: o, Runs: 1, Records: 1, Extractor: rec}); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("extractor error: %v", err)
	}
}

func TestBenchmarkErrors(t *testing.T) {
	for _, o := range []BenchOptions{
		{Synth: benchRecord(), Runs: -1},
		{Synth: benchRecord(), Threads: -2},
		{Synth: SynthOptions{Mod: QPSK, SampleRate: 200e3}},
		{Synth: benchRecord(), Records: 1, Config: Config{WelchSegment: 3}},
	} {
		if _, err := Benchmark(o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

// TestBenchResultWriteText checks the text of `gotrain signal bench` on
// the CPU path and on a graph device.
func TestBenchResultWriteText(t *testing.T) {
	r := BenchResult{Device: "cpu", Record: "qpsk, 4000 samples", Runs: 3, Threads: 2, SynthMS: 0.125, FeaturesMS: 1.5, TotalMS: 1.625,
		SynthMinMS: 0.1, FeaturesMinMS: 1.25, TotalMinMS: 1.375, Workers: 4, BatchRecords: 8, RecordsPerSecond: 123.45, RealTimeFactor: 12.4}
	head := `record: qpsk, 4000 samples
stage                 median ms  min ms
synthesis             0.125      0.100
all features          1.500      1.250
synthesis + features  1.625      1.375
2 goroutine(s) per record, median of 3 runs after a warm-up; 12x faster than real time
`
	for _, tt := range []struct {
		device     string
		graphBatch int
		want       string
	}{
		{"cpu", 0, "batched: 8 records on 4 goroutines: 123.5 records/s\n"},
		{"gpu:1", 8, "batched: 8 records in graph executions of up to 8 on gpu:1: 123.5 records/s\n"},
	} {
		r.Device, r.GraphBatch = tt.device, tt.graphBatch
		var b strings.Builder
		if err := r.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		if got := b.String(); got != head+tt.want {
			t.Errorf("got:\n%s\nwant:\n%s", got, head+tt.want)
		}
	}
}

// nopBatch is a BatchExtractor that does nothing.
type nopBatch struct{}

func (nopBatch) ExtractBatch([][]complex64, []Features) error { return nil }

// TestBenchmarkChecksSizesBeforeAllocating checks that the benchmark's
// sizes (the record, the runs, the records, the threads) are checked
// against their limits, with the option and the range in the error,
// before anything is allocated for them.
func TestBenchmarkChecksSizesBeforeAllocating(t *testing.T) {
	huge, long := benchRecord(), benchRecord()
	huge.Samples, long.Samples = 1e12, 8192
	for _, c := range []struct {
		o    BenchOptions
		want string
	}{
		{BenchOptions{Synth: huge}, "Samples 1000000000000: want 1 to 268435456"},
		{BenchOptions{Synth: benchRecord(), Runs: 1e12}, "Runs 1000000000000: want 1 to 1000000"},
		{BenchOptions{Synth: benchRecord(), Records: 1 << 40}, "Records 1099511627776: want 1 to 65536"},
		{BenchOptions{Synth: benchRecord(), Threads: 1 << 30}, "Threads 1073741824: want 1 to 1024"},
		{BenchOptions{Synth: long, Records: 1 << 16, Batch: nopBatch{}}, "the batched run holds them all"},
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := Benchmark(c.o)
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one containing %q", err, c.want)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
			t.Errorf("%q: %d bytes allocated before the error", c.want, n)
		}
	}
}
