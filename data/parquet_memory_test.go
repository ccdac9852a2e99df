package data

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// The memory measurement of issue #20: reading a 1M x 20 Parquet file
// column by column into uint8 codes should take about one float64 column
// (8 MB) plus the codes (20 MB) besides the runtime. It is not part of the
// ordinary tests; run it with
//
//	GOTRAIN_PARQUET_MEMORY=1 go test -run TestParquetMemory -v ./data/
//
// It writes /tmp/gotrain-parquet-1m20.parquet (GOTRAIN_PARQUET_FILE
// overrides the path) when the file is missing, then reports the peak Go
// heap (live objects, sampled every 100 µs with the collector at
// GOGC=5) of reading it column by column through table.feature into
// codes, and of data.LoadFile, which builds the whole row-major X.

const (
	memRows = 1_000_000
	memCols = 20
)

func TestParquetMemory(t *testing.T) {
	if os.Getenv("GOTRAIN_PARQUET_MEMORY") == "" {
		t.Skip("set GOTRAIN_PARQUET_MEMORY=1 to measure (writes a 1M x 20 Parquet file in /tmp)")
	}
	path := os.Getenv("GOTRAIN_PARQUET_FILE")
	if path == "" {
		path = "/tmp/gotrain-parquet-1m20.parquet"
	}
	if _, err := os.Stat(path); err != nil {
		start := time.Now()
		writeMemoryFile(t, path)
		t.Logf("wrote %s in %v", path, time.Since(start).Round(time.Millisecond))
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %.1f MiB", path, float64(st.Size())/(1<<20))

	defer debug.SetGCPercent(debug.SetGCPercent(5))
	opts := CSVOptions{Target: "y"}

	columns := measurePeak(func() {
		tb, closer, err := openParquet(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer closer()
		nfeat := len(tb.roles.features)
		codes := make([]uint8, tb.rows*nfeat)
		var col []float64
		for k := range nfeat {
			vals, _, _, err := tb.feature(k, col)
			if err != nil {
				t.Fatal(err)
			}
			// A stand-in for the binner: 256 bins of [-4, 4).
			out := codes[k*tb.rows : (k+1)*tb.rows]
			for i, v := range vals {
				out[i] = uint8(min(max((v+4)*32, 0), 255))
			}
			col = vals
		}
		runtime.KeepAlive(codes)
	})
	whole := measurePeak(func() {
		d, err := LoadFile(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		runtime.KeepAlive(d)
	})
	mib := func(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
	t.Logf("column by column into uint8 codes: %v, peak heap %s above the start (one float64 column %s + codes %s = %s)",
		columns.took.Round(time.Millisecond), mib(columns.peak-columns.base), mib(memRows*8), mib(memRows*memCols), mib(memRows*8+memRows*memCols))
	t.Logf("LoadFile (whole X, then Y): %v, peak heap %s above the start (X alone is %s)",
		whole.took.Round(time.Millisecond), mib(whole.peak-whole.base), mib(memRows*memCols*8))
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "VmHWM") {
				t.Logf("process %s (includes the test binary and, on a first run, writing the file)", strings.Join(strings.Fields(line), " "))
			}
		}
	}
}

// peak is the heap of live objects at the start of a measurement and its
// largest sample during it, in bytes.
type peak struct {
	base, peak uint64
	took       time.Duration
}

// measurePeak runs fn while sampling the heap's live objects.
func measurePeak(fn func()) peak {
	runtime.GC()
	debug.FreeOSMemory()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	p := peak{base: read()}
	var top atomic.Uint64
	top.Store(p.base)
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(100 * time.Microsecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if v := read(); v > top.Load() {
					top.Store(v)
				}
			}
		}
	}()
	start := time.Now()
	fn()
	p.took = time.Since(start)
	close(done)
	if v := read(); v > top.Load() {
		top.Store(v)
	}
	p.peak = top.Load()
	return p
}

// writeMemoryFile writes memRows rows of memCols float64 features f0..f19
// (normal, a few missing) and a target y, in row groups of 100,000 rows.
func writeMemoryFile(t *testing.T, path string) {
	mem := memory.NewGoAllocator()
	fields := make([]arrow.Field, memCols+1)
	for j := range memCols {
		fields[j] = arrow.Field{Name: fmt.Sprintf("f%d", j), Type: arrow.PrimitiveTypes.Float64, Nullable: true}
	}
	fields[memCols] = arrow.Field{Name: "y", Type: arrow.PrimitiveTypes.Float64}
	schema := arrow.NewSchema(fields, nil)
	f, err := os.Create(path + ".tmp")
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(schema, f, parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDictionaryDefault(false)), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(20, 1))
	const group = 100_000
	for start := 0; start < memRows; start += group {
		n := min(group, memRows-start)
		arrays := make([]arrow.Array, memCols+1)
		y := make([]float64, n)
		for j := range memCols {
			b := array.NewFloat64Builder(mem)
			for i := range n {
				v := r.NormFloat64()
				if r.IntN(100) == 0 {
					b.AppendNull()
					continue
				}
				b.Append(v)
				y[i] += v * float64(j%5)
			}
			arrays[j] = b.NewArray()
		}
		b := array.NewFloat64Builder(mem)
		for i := range n {
			b.Append(math.Round(y[i]*1000) / 1000)
		}
		arrays[memCols] = b.NewArray()
		rec := array.NewRecordBatch(schema, arrays, int64(n))
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
}
