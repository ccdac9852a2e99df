package forest

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/data"
)

// TestBinnerDistinctPathMatchesSort checks the binner's path for features of
// at most maxDistinct distinct values (counted in a hash set) against the
// edges of all the feature's values sorted, bit for bit: −0 beside +0,
// denormals next to zero, NaNs, counts of distinct values just at and just
// past the number of real bins (midpoints, then equal-frequency bins), and
// past maxDistinct (the sort itself).
func TestBinnerDistinctPathMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	special := []float64{math.Copysign(0, -1), 0, 5e-324, -5e-324, 1e-310, -1, 1, 0.5, math.MaxFloat64, -math.MaxFloat64}
	for _, tc := range []struct {
		name     string
		distinct int
		bins     int
		runs     bool // each value over many consecutive rows
	}{
		{"specials", 0, 256, false},
		{"few", 17, 256, false},
		{"exactly the real bins", 255, 256, false},
		{"one past the real bins", 256, 256, false},
		{"few bins, at", 7, 8, false},
		{"few bins, past", 8, 8, false},
		{"many", 3000, 256, false},
		{"past the set", maxDistinct + 500, 256, false},
		{"specials in runs", 0, 256, true},
		{"runs", 300, 256, true},
		{"runs past the set", maxDistinct + 500, 256, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const cols = 3
			rows := 4000
			if tc.distinct > 2000 {
				rows = 3 * tc.distinct
			}
			pool := append([]float64(nil), special...)
			if tc.distinct > 0 {
				pool = pool[:0]
				for len(pool) < tc.distinct {
					pool = append(pool, math.Round(r.NormFloat64()*1e6)/64)
				}
			}
			x := make([]float64, rows*cols)
			for i := range x {
				switch {
				case i%97 == 0:
					x[i] = math.NaN()
				case tc.runs:
					x[i] = pool[(i/cols/7)%len(pool)]
				case i < len(pool)*cols: // every pool value appears
					x[i] = pool[i/cols]
				default:
					x[i] = pool[r.IntN(len(pool))]
				}
			}
			bn, err := newBinner(x, rows, cols, tc.bins, 2, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			for j := 0; j < cols; j++ {
				var vals []float64
				for i := 0; i < rows; i++ {
					if v := x[i*cols+j]; !math.IsNaN(v) {
						vals = append(vals, v)
					}
				}
				want := quantileEdges(vals, tc.bins-1)
				got := bn.Edges[j]
				if len(got) != len(want) {
					t.Fatalf("feature %d: %d edges, want %d", j, len(got), len(want))
				}
				for k := range want {
					if math.Float64bits(got[k]) != math.Float64bits(want[k]) {
						t.Fatalf("feature %d edge %d: %v (%#x), want %v (%#x)", j, k, got[k], math.Float64bits(got[k]), want[k], math.Float64bits(want[k]))
					}
				}
			}
		})
	}
}

// TestBinColumnCodeCache checks the codes binColumn writes, through its
// cache of the codes of a column of few distinct values, against a count of
// the edges below each value: integers, −0, fractions and NaN, with few and
// many bins, columns one after another through one columnBinner (each
// column's entries must not serve the next), and a column of too many
// distinct values for the cache.
func TestBinColumnCodeCache(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var cb columnBinner
	for _, tc := range []struct {
		bins  int
		scale float64
		many  bool
	}{{8, 1, false}, {64, 1, false}, {64, 1.0 / 255, false}, {256, 1.0 / 255, false}, {256, 1, true}} {
		vals := make([]float64, 6000)
		for i := range vals {
			switch {
			case tc.many && i%11 != 3:
				vals[i] = r.NormFloat64()
			case i%11 == 0:
				vals[i] = math.Copysign(0, -1)
			case i%11 == 1:
				vals[i] = (float64(r.IntN(260)) + 0.5) * tc.scale
			case i%11 == 2:
				vals[i] = -float64(r.IntN(3)) * tc.scale
			case i%11 == 3:
				vals[i] = math.NaN()
			case i%11 == 4:
				vals[i] = float64(256+r.IntN(40)) * tc.scale
			default:
				vals[i] = float64(r.IntN(256)) * tc.scale
			}
		}
		bn := &Binner{Edges: make([][]float64, 1), keys: make([][]uint64, 1)}
		dst := make([]uint8, len(vals))
		d := &data.Dataset{Name: "t", Rows: len(vals), Cols: 1}
		if err := binColumn(d, bn, nil, &cb, 0, vals, nil, tc.bins, dst); err != nil {
			t.Fatal(err)
		}
		if cb.set.few() == tc.many {
			t.Fatalf("%+v: few distinct values %v", tc, cb.set.few())
		}
		e := bn.Edges[0]
		for i, v := range vals {
			want := len(e) + 1
			if !math.IsNaN(v) {
				want = 0
				for _, x := range e {
					if x < v {
						want++
					}
				}
			}
			if int(dst[i]) != want {
				t.Fatalf("%+v: value %v (row %d): code %d, want %d", tc, v, i, dst[i], want)
			}
		}
	}
}

// byteSource is a data.ByteColumnSource of random bytes for the tests;
// floatSource hides its ByteColumn, so that binColumns reads its values.
type byteSource struct {
	cols   [][]uint8
	values *[256]float64
}

func (s *byteSource) ReadColumn(j int, dst []float64) ([]float64, []string, error) {
	dst = dst[:0]
	for _, b := range s.cols[j] {
		dst = append(dst, s.values[b])
	}
	return dst, nil, nil
}

func (s *byteSource) ByteColumn(j int) ([]uint8, *[256]float64, error) {
	return s.cols[j], s.values, nil
}

type floatSource struct{ s *byteSource }

func (f floatSource) ReadColumn(j int, dst []float64) ([]float64, []string, error) {
	return f.s.ReadColumn(j, dst)
}

// TestByteColumnsBinning checks that binColumns bins the columns of a
// data.ByteColumnSource by counting their bytes (binByteColumn) into the
// edges and codes it gives when it reads their values: bytes of few and of
// all 256 values, values that repeat across bytes, a byte whose value is
// missing, weighted and unweighted, bin counts below and above the
// distinct values.
func TestByteColumnsBinning(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	values := new([256]float64)
	for b := range values {
		values[b] = float64(b) / 255
	}
	values[7] = values[6] // two bytes, one value
	values[200] = math.NaN()
	const n, p = 3000, 5
	src := &byteSource{cols: make([][]uint8, p), values: values}
	for j := range src.cols {
		col := make([]uint8, n)
		for i := range col {
			switch j {
			case 0: // mostly 0, as MNIST
				if r.IntN(5) == 0 {
					col[i] = uint8(r.IntN(256))
				}
			case 1: // few values, one missing
				col[i] = []uint8{3, 6, 7, 200}[r.IntN(4)]
			default:
				col[i] = uint8(r.IntN(256))
			}
		}
		src.cols[j] = col
	}
	w := make([]int64, n)
	for i := range w {
		w[i] = int64(r.IntN(4)) // some rows weigh nothing
	}
	for _, bins := range []int{4, 64, 256} {
		for _, wt := range [][]int64{nil, w} {
			var got, want [2]any
			for k, source := range []data.ColumnSource{src, floatSource{src}} {
				d := &data.Dataset{Rows: n, Cols: p, Source: source, Y: make([]float64, n)}
				bn, codes, err := binColumns(d, bins, wt, 2)
				if err != nil {
					t.Fatal(err)
				}
				got[k], want[k] = bn.Edges, codes
			}
			if !reflect.DeepEqual(got[0], got[1]) {
				t.Fatalf("bins %d, weighted %v: edges of the bytes %v, of the values %v", bins, wt != nil, got[0], got[1])
			}
			if !reflect.DeepEqual(want[0], want[1]) {
				t.Fatalf("bins %d, weighted %v: codes of the bytes differ from the values'", bins, wt != nil)
			}
		}
	}
}

// TestByteColumnsInfinite checks that a byte standing for an infinite
// value is refused as binColumn refuses it: the same error, naming the
// first row that holds one, even when that row weighs nothing.
func TestByteColumnsInfinite(t *testing.T) {
	values := new([256]float64)
	for b := range values {
		values[b] = float64(b)
	}
	values[9] = math.Inf(1)
	values[4] = math.Inf(-1)
	const n = 200
	col := make([]uint8, n)
	col[37], col[120] = 9, 4
	w := make([]int64, n)
	for i := range w {
		w[i] = 1
	}
	w[37] = 0
	only := append([]uint8(nil), col...) // the one infinite value at a row of weight 0
	only[120] = 0
	for _, c := range []struct {
		col []uint8
		w   []int64
	}{{col, nil}, {col, w}, {only, w}} {
		src := &byteSource{cols: [][]uint8{c.col}, values: values}
		wt := c.w
		var msgs [2]string
		for k, source := range []data.ColumnSource{src, floatSource{src}} {
			d := &data.Dataset{Rows: n, Cols: 1, Source: source, Y: make([]float64, n)}
			_, _, err := binColumns(d, 256, wt, 1)
			if err == nil {
				t.Fatalf("weighted %v, path %d: infinite values binned", wt != nil, k)
			}
			msgs[k] = err.Error()
		}
		if msgs[0] != msgs[1] || !strings.Contains(msgs[0], "row 37") {
			t.Fatalf("weighted %v: bytes' error %q, values' %q; want both at row 37", wt != nil, msgs[0], msgs[1])
		}
	}
}
