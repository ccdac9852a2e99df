package cpubackend

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// fusionGraph mixes every fusible operation, scalar operands, a shared
// intermediate and an intermediate that is also an output.
func fusionGraph(x, y, s *graph.Node) []*graph.Node {
	r1 := graph.Tanh(graph.Add(graph.Mul(x, y), s))
	r2 := graph.Div(graph.Sqrt(graph.Abs(x)), graph.AddScalar(graph.Exp(graph.Neg(graph.Abs(y))), 1e-3))
	r3 := graph.Max(graph.Min(x, y), graph.Neg(s))
	r4 := graph.Mul(graph.Sign(graph.Sub(x, y)), graph.Logistic(y))
	shared := graph.Abs(y)
	r5 := graph.Sub(graph.Rsqrt(graph.AddScalar(graph.Abs(x), 1)), graph.Log(graph.AddScalar(shared, 1)))
	r6 := graph.Mul(shared, shared)
	out := graph.Add(graph.Add(graph.Add(r1, r2), graph.Add(r3, r4)), graph.Add(r5, r6))
	return []*graph.Node{out, r2}
}

func fusionInputs(n int) (x, y []float32) {
	r := rand.New(rand.NewPCG(5, 6))
	x, y = make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], y[i] = float32(r.NormFloat64()*3), float32(r.NormFloat64())
	}
	specials := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.Copysign(0, -1)), 0, 1e-38, -1e38}
	for i, v := range specials {
		x[i*7] = v
		y[i*11+3] = v
	}
	return x, y
}

// runGraph compiles fn on a new backend with config, runs it on the
// arguments args gives for that backend (donated buffers are the backend's)
// and returns the outputs' values (bfloat16 ones widened: exactly, bit for
// bit).
func runGraph[F graph.ExecGraphFn](t *testing.T, config string, fn F, args func(backends.Backend) []any) [][]float32 {
	t.Helper()
	be, err := New(config)
	if err != nil {
		t.Fatal(err)
	}
	defer be.Finalize()
	exec, err := graph.NewExec(be, fn)
	if err != nil {
		t.Fatal(err)
	}
	outs, err := exec.Exec(args(be)...)
	if err != nil {
		t.Fatal(err)
	}
	var res [][]float32
	for _, o := range outs {
		res = append(res, mixedFloats(t, o))
	}
	return res
}

func runFusionGraph(t *testing.T, config string, rows, cols int) ([][]float32, int) {
	t.Helper()
	before := fusedChains.Load()
	x, y := fusionInputs(rows * cols)
	res := runGraph(t, config, fusionGraph, func(backends.Backend) []any {
		return []any{tensors.FromFlatDataAndDimensions(x, rows, cols), tensors.FromFlatDataAndDimensions(y, rows, cols), float32(0.25)}
	})
	return res, int(fusedChains.Load() - before)
}

// TestFusionBitIdentical checks that fused chains give exactly the values
// of the unfused operations, specials included, on one goroutine (small)
// and split over several (large).
func TestFusionBitIdentical(t *testing.T) {
	for _, dims := range [][2]int{{37, 53}, {300, 301}} {
		want, nf := runFusionGraph(t, "ops_sequential,no_fusion", dims[0], dims[1])
		if nf != 0 {
			t.Fatalf("no_fusion fused %d chains", nf)
		}
		sides := fusedSides.Load()
		got, nf := runFusionGraph(t, "ops_sequential", dims[0], dims[1])
		// r2, an output the final sum also reads, is the one chain's side
		// output.
		if sides = fusedSides.Load() - sides; nf != 1 || sides != 1 {
			t.Fatalf("%d chains fused with %d side outputs, want 1 with 1", nf, sides)
		}
		for k := range want {
			for i := range want[k] {
				a, b := got[k][i], want[k][i]
				if math.Float32bits(a) != math.Float32bits(b) && !(a != a && b != b) {
					t.Fatalf("%v output %d[%d]: fused %g (%#x), unfused %g (%#x)", dims, k, i, a, math.Float32bits(a), b, math.Float32bits(b))
				}
			}
		}
	}
}

// TestReduceFastMatchesIterator compares the contiguous-axes reductions
// with simplego's iterator (no_fusion has the same reductions, so the
// reference here is a float64 loop; sums within float32 rounding).
func TestReduceFastMatchesIterator(t *testing.T) {
	be, err := New("ops_sequential")
	if err != nil {
		t.Fatal(err)
	}
	defer be.Finalize()
	// The second shape is large enough for the reductions to be split
	// over the CPUs.
	for _, dims := range [][]int{{3, 4, 5, 7}, {6, 50, 40, 12}} {
		testReduceFast(t, be, dims)
	}
}

func testReduceFast(t *testing.T, be backends.Backend, dims []int) {
	x := make([]float32, dims[0]*dims[1]*dims[2]*dims[3])
	r := rand.New(rand.NewPCG(9, 9))
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	x[17] = float32(math.Inf(-1))
	for _, axes := range [][]int{{0}, {3}, {1, 2}, {0, 1, 2, 3}, {2, 3}, {0, 1}, {1, 3}} {
		for _, isMax := range []bool{false, true} {
			exec, err := graph.NewExec(be, func(v *graph.Node) *graph.Node {
				if isMax {
					return graph.ReduceMax(v, axes...)
				}
				return graph.ReduceSum(v, axes...)
			})
			if err != nil {
				t.Fatal(err)
			}
			out, err := exec.Exec(tensors.FromFlatDataAndDimensions(x, dims...))
			if err != nil {
				t.Fatal(err)
			}
			got, _ := tensors.CopyFlatData[float32](out[0])
			// Reference: float64 accumulation over the reduced axes.
			red := map[int]bool{}
			for _, a := range axes {
				red[a] = true
			}
			want := map[int]float64{}
			abs, count := map[int]float64{}, map[int]int{}
			idx := make([]int, 4)
			for flat := range x {
				rem := flat
				for a := 3; a >= 0; a-- {
					idx[a] = rem % dims[a]
					rem /= dims[a]
				}
				o := 0
				for a := range 4 {
					if !red[a] {
						o = o*dims[a] + idx[a]
					}
				}
				v, seen := want[o]
				switch {
				case !seen && isMax:
					want[o] = float64(x[flat])
				case isMax:
					want[o] = math.Max(v, float64(x[flat]))
				default:
					want[o] = v + float64(x[flat])
					abs[o] += math.Abs(float64(x[flat]))
					count[o]++
				}
			}
			if len(got) != len(want) {
				t.Fatalf("axes %v: %d outputs, want %d", axes, len(got), len(want))
			}
			for o, w := range want {
				// float32 sums of count[o] terms: within count·2⁻²³·Σ|x|.
				if g := float64(got[o]); g != w && math.Abs(g-w) > 1e-5*(1+math.Abs(w))+float64(count[o])*0x1p-23*abs[o] {
					t.Fatalf("axes %v max=%v: output %d = %g, want %g", axes, isMax, o, g, w)
				}
			}
		}
	}
}

// TestSignFloat32 checks the branch-free Sign against simplego's definition.
func TestSignFloat32(t *testing.T) {
	in := []float32{-2, -1e-45, float32(math.Copysign(0, -1)), 0, 1e-45, 3, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), -float32(math.NaN()), math.MaxFloat32, -math.MaxFloat32}
	out := make([]float32, len(in))
	signFloat32(out, in)
	for i, x := range in {
		var want float32
		switch {
		case x < 0:
			want = -1
		case x > 0:
			want = 1
		}
		if math.Float32bits(out[i]) != math.Float32bits(want) {
			t.Errorf("sign(%g) = %g, want %g", x, out[i], want)
		}
	}
}

// TestFusionTiledBroadcast checks chains that read a broadcast bias:
// repeated along the leading axes (the fused program reads the bias itself,
// a chunk's values starting anywhere in it), alone in a chain or shared,
// and broadcasts that do not tile (over a middle axis), all bit-identical
// to the unfused operations, on one goroutine and split over several.
func TestFusionTiledBroadcast(t *testing.T) {
	fn := func(x, b, lf, mid *graph.Node) []*graph.Node {
		shape := x.Shape()
		d := shape.Dimensions
		bias := graph.BroadcastToShape(graph.Reshape(b, 1, 1, d[2]), shape)
		relu := graph.Max(graph.Add(x, bias), graph.ScalarZero(x.Graph(), x.DType()))
		alone := graph.Mul(x, graph.BroadcastToShape(graph.Reshape(lf, 1, d[1], d[2]), shape))
		middle := graph.Sub(x, graph.BroadcastToShape(mid, shape))
		shared := graph.Div(graph.Sub(x, bias), graph.AddScalar(graph.Abs(bias), 1))
		return []*graph.Node{relu, alone, middle, shared, bias}
	}
	for _, dims := range [][3]int{{3, 5, 7}, {7, 300, 33}} {
		n := dims[0] * dims[1] * dims[2]
		x, y := fusionInputs(max(n, 100))
		x = x[:n]
		b, lf, mid := y[:dims[2]], y[:dims[1]*dims[2]], y[:dims[0]*dims[2]]
		run := func(config string) ([][]float32, int) {
			be, err := New(config)
			if err != nil {
				t.Fatal(err)
			}
			defer be.Finalize()
			before := fusedChains.Load()
			exec, err := graph.NewExec(be, fn)
			if err != nil {
				t.Fatal(err)
			}
			outs, err := exec.Exec(tensors.FromFlatDataAndDimensions(x, dims[:]...), tensors.FromFlatDataAndDimensions(b, dims[2]),
				tensors.FromFlatDataAndDimensions(lf, dims[1], dims[2]), tensors.FromFlatDataAndDimensions(mid, dims[0], 1, dims[2]))
			if err != nil {
				t.Fatal(err)
			}
			var res [][]float32
			for _, o := range outs {
				res = append(res, tensors.MustCopyFlatData[float32](o))
			}
			return res, int(fusedChains.Load() - before)
		}
		want, _ := run("ops_sequential,no_fusion")
		got, nf := run("ops_sequential")
		if nf < 3 {
			t.Fatalf("%v: %d chains fused, want the relu, the product alone and the shared one", dims, nf)
		}
		for k := range want {
			for i := range want[k] {
				a, b := got[k][i], want[k][i]
				if math.Float32bits(a) != math.Float32bits(b) && !(a != a && b != b) {
					t.Fatalf("%v output %d[%d]: fused %g, unfused %g", dims, k, i, a, b)
				}
			}
		}
	}
}

// TestTiledBroadcast checks which broadcasts the fused programs read as a
// repeated operand.
func TestTiledBroadcast(t *testing.T) {
	b := &Builder{}
	for _, c := range []struct {
		operand, out, axes []int
		want               bool
	}{
		{[]int{7}, []int{3, 5, 7}, []int{2}, true},
		{[]int{1, 1, 7}, []int{3, 5, 7}, []int{0, 1, 2}, true},
		{[]int{5, 7}, []int{3, 5, 7}, []int{1, 2}, true},
		{[]int{1, 5, 1}, []int{3, 5, 1}, []int{0, 1, 2}, true},
		{[]int{}, []int{3, 5}, []int{}, true},
		{[]int{3, 1, 7}, []int{3, 5, 7}, []int{0, 1, 2}, false},
		{[]int{5}, []int{3, 5, 7}, []int{1}, false},
		{[]int{3}, []int{3, 5, 7}, []int{0}, false},
		{[]int{5, 7}, []int{3, 5, 7}, []int{2, 1}, false},
	} {
		x := &Node{shape: shapes.Make(dtypes.Float32, c.operand...), builder: b}
		n := &Node{opType: backends.OpTypeBroadcastInDim, shape: shapes.Make(dtypes.Float32, c.out...), inputs: []*Node{x}, data: c.axes, builder: b}
		if _, got := tiledBroadcast(n); got != c.want {
			t.Errorf("operand %v to %v on axes %v: tiled %v, want %v", c.operand, c.out, c.axes, got, c.want)
		}
	}
}

// TestFusedChainAllocations checks that a fused chain with scalar operands
// allocates per execution, not per chunk: a pointer to a scalar argument of
// binaryChunk, passed to the vector loops, had put every call's scalars on
// the heap (784 allocations for the 256 chunks of this graph).
func TestFusedChainAllocations(t *testing.T) {
	be, err := New("ops_sequential")
	if err != nil {
		t.Fatal(err)
	}
	defer be.Finalize()
	exec, err := graph.NewExec(be, func(x, y *graph.Node) *graph.Node {
		return graph.Mul(graph.Sign(graph.AddScalar(graph.Sign(graph.Sub(x, y)), 1)), graph.MulScalar(y, 0.5))
	})
	if err != nil {
		t.Fatal(err)
	}
	const rows, cols = 256, 512 // 32 chunks of fusedChunk
	x, y := fusionInputs(rows * cols)
	tx := tensors.FromFlatDataAndDimensions(x, rows, cols)
	ty := tensors.FromFlatDataAndDimensions(y, rows, cols)
	before := fusedChains.Load()
	allocs := testing.AllocsPerRun(5, func() {
		outs, err := exec.Exec(tx, ty)
		if err != nil {
			t.Fatal(err)
		}
		outs[0].FinalizeAll()
	})
	if fusedChains.Load() == before {
		t.Fatal("the chain was not fused")
	}
	if allocs > 64 {
		t.Errorf("%.0f allocations per execution of a fused chain over %d chunks, want at most 64", allocs, rows*cols/fusedChunk)
	}
}

// adamGraph is the shape of an Adam update: the new moments are outputs
// and are read by the parameter's update (side outputs of its chain), and
// both read the clipped gradient (a node with two uses, both in the chain).
func adamGraph(p, m, v, g *graph.Node) []*graph.Node {
	g = graph.Neg(graph.MulScalar(g, -0.75))
	m2 := graph.Add(graph.MulScalar(m, 0.9), graph.MulScalar(g, 0.1))
	v2 := graph.Add(graph.MulScalar(v, 0.999), graph.MulScalar(graph.Mul(g, g), 0.001))
	den := graph.AddScalar(graph.Sqrt(graph.MulScalar(v2, 1.25)), 1e-7)
	p2 := graph.Sub(p, graph.Div(graph.MulScalar(graph.MulScalar(m2, 1.5), 0.002), den))
	// m read again after m2, whose side output may take over m's buffer
	// when m is donated: the side's chunk must be written after it.
	p2 = graph.Add(p2, graph.MulScalar(m, 1e-3))
	return []*graph.Node{p2, m2, v2}
}

// TestFusionSideOutputs checks a chain with side outputs against the unfused
// operations, bit for bit, with operations run one at a time and in
// parallel, on one goroutine and split over several, with the inputs donated
// (the outputs then take over their buffers) and not.
func TestFusionSideOutputs(t *testing.T) {
	run := func(config string, n int, donate bool) ([][]float32, int64) {
		t.Helper()
		sides, chains := fusedSides.Load(), fusedChains.Load()
		res := runGraph(t, config, adamGraph, func(be backends.Backend) []any {
			r := rand.New(rand.NewPCG(7, 8))
			var args []any
			for k := range 4 {
				x := make([]float32, n)
				for i := range x {
					x[i] = float32(r.NormFloat64())
					if k == 2 { // the second moment is not negative
						x[i] *= x[i]
					}
				}
				tx := tensors.FromFlatDataAndDimensions(x, n)
				if !donate {
					args = append(args, tx)
					continue
				}
				d, err := graph.DonateTensorBuffer(tx, be, 0)
				if err != nil {
					t.Fatal(err)
				}
				args = append(args, d)
			}
			return args
		})
		if c := fusedChains.Load() - chains; c != 1 && !strings.Contains(config, "no_fusion") {
			t.Fatalf("%s: %d chains fused, want the whole update in 1", config, c)
		}
		return res, fusedSides.Load() - sides
	}
	for _, n := range []int{1000, 200_000} {
		want, _ := run("ops_sequential,no_fusion", n, false)
		for _, config := range []string{"ops_sequential", "ops_parallel"} {
			for _, donate := range []bool{false, true} {
				got, sides := run(config, n, donate)
				if sides != 2 {
					t.Fatalf("%s n=%d: %d side outputs fused, want 2 (the moments)", config, n, sides)
				}
				for k := range want {
					for i := range want[k] {
						if math.Float32bits(got[k][i]) != math.Float32bits(want[k][i]) {
							t.Fatalf("%s n=%d donate=%v: output %d[%d] = %g, unfused %g", config, n, donate, k, i, got[k][i], want[k][i])
						}
					}
				}
			}
		}
	}
}

// TestFusedSlotsReused runs a program whose results are read late, twice by
// one instruction and as a side output, after slotted gave them fewer slots
// than instructions, against the same arithmetic in plain loops.
func TestFusedSlotsReused(t *testing.T) {
	in := func(i int) fusedOperand { return fusedOperand{kind: fromInput, idx: i} }
	tmp := func(i int) fusedOperand { return fusedOperand{kind: fromTemp, idx: i} }
	const n = 3*fusedChunk + 7
	prog := &fusedProgram{size: n, sides: []int{1}, instrs: []fusedInstr{
		{op: backends.OpTypeMul, a: in(0), b: in(1)},     // t0 = x·y
		{op: backends.OpTypeAdd, a: tmp(0), b: in(0)},    // t1 = t0 + x (a side output)
		{op: backends.OpTypeNeg, a: tmp(1), unary: true}, // t2 = −t1
		{op: backends.OpTypeMul, a: tmp(2), b: tmp(0)},   // t3 = t2·t0 (t0 read late)
		{op: backends.OpTypeMul, a: tmp(3), b: tmp(3)},   // t4 = t3·t3
		{op: backends.OpTypeSub, a: tmp(4), b: tmp(1)},   // t5 = t4 − t1
		{op: backends.OpTypeAdd, a: tmp(5), b: in(1)},    // t6 = t5 + y (the output)
	}}
	prog.slotted()
	if prog.slots >= len(prog.instrs)-1 {
		t.Errorf("%d slots for %d instructions: none reused", prog.slots, len(prog.instrs))
	}
	prog.chunkLen = fusedChunk
	nt := prog.slots + len(prog.tiled)
	prog.temps.New = func() any { return make([]float32, nt*fusedChunk) }
	x, y := fusionInputs(n)
	out, side := make([]float32, n), make([]float32, n)
	prog.run([][]float32{x, y}, out, [][]float32{side}, 0, (n+fusedChunk-1)/fusedChunk)
	for i := range n {
		// Each product is rounded on its own (float32(...)), as the
		// program's separate instructions are: without the conversions
		// arm64's compiler fuses a product and a sum into one FMADD.
		t0 := float32(x[i] * y[i])
		t1 := t0 + x[i]
		t3 := float32(-t1 * t0)
		want := (float32(t3*t3) - t1) + y[i]
		if math.Float32bits(out[i]) != math.Float32bits(want) && !(out[i] != out[i] && want != want) {
			t.Fatalf("output %d = %g, want %g", i, out[i], want)
		}
		if math.Float32bits(side[i]) != math.Float32bits(t1) && !(side[i] != side[i] && t1 != t1) {
			t.Fatalf("side output %d = %g, want %g", i, side[i], t1)
		}
	}
}

// TestFusedSums checks sums over all axes of element-wise operands (one
// operation, as a gradient norm's squares, and a chain) that run the operand
// chunk by chunk against the unfused graph, bit for bit, for sizes that end
// inside a group of four and inside a chunk, and that an operand that is
// also an output is left alone.
func TestFusedSums(t *testing.T) {
	sums := func(x, y *graph.Node) []*graph.Node {
		sq := graph.ReduceAllSum(graph.Mul(x, x))
		chain := graph.ReduceAllSum(graph.Sqrt(graph.Abs(graph.Sub(x, graph.MulScalar(y, 0.5)))))
		shared := graph.Mul(x, y) // also an output: not absorbed
		return []*graph.Node{sq, chain, graph.ReduceAllSum(shared), shared}
	}
	run := func(config string, rows, cols int) ([][]float32, int64) {
		before := fusedSumCount.Load()
		x, y := fusionInputs(rows * cols)
		for i := range x { // finite values: the sums are then finite too
			if x[i] != x[i] || x[i] > 1e30 || x[i] < -1e30 {
				x[i] = 1
			}
			if y[i] != y[i] || y[i] > 1e30 || y[i] < -1e30 {
				y[i] = -1
			}
		}
		res := runGraph(t, config, sums, func(backends.Backend) []any {
			return []any{tensors.FromFlatDataAndDimensions(x, rows, cols), tensors.FromFlatDataAndDimensions(y, rows, cols)}
		})
		return res, fusedSumCount.Load() - before
	}
	// The last two are two and three of sumBlocked's blocks.
	for _, dims := range [][2]int{{5, 15}, {37, 53}, {300, 301}, {600, 301}} {
		want, _ := run("ops_sequential,no_fusion", dims[0], dims[1])
		got, n := run("ops_sequential", dims[0], dims[1])
		if wantN := int64(2); n != wantN {
			t.Fatalf("%v: %d sums fused, want %d", dims, n, wantN)
		}
		for k := range 3 {
			if math.Float32bits(got[k][0]) != math.Float32bits(want[k][0]) {
				t.Errorf("%v: sum %d = %g (%#x), unfused %g (%#x)", dims, k, got[k][0], math.Float32bits(got[k][0]), want[k][0], math.Float32bits(want[k][0]))
			}
		}
	}
}

func TestReducesAllAxes(t *testing.T) {
	x := &Node{shape: shapes.Make(dtypes.Float32, 3, 1, 4)}
	for _, c := range []struct {
		axes []int
		want bool
	}{
		{[]int{0, 1, 2}, true},
		{[]int{2, 0, 1}, true},
		{[]int{0, 2}, false},
		{[]int{1, 1, 2}, false},
		{[]int{-1, 0, 1}, false},
		{nil, false},
	} {
		if got := reducesAllAxes(&Node{data: c.axes}, x); got != c.want {
			t.Errorf("axes %v of [3 1 4]: %v, want %v", c.axes, got, c.want)
		}
	}
	if reducesAllAxes(&Node{data: []int{}}, &Node{shape: shapes.Make(dtypes.Float32)}) {
		t.Error("a scalar: true, want false")
	}
}

// TestFusedSumOrder sums values whose running sums cancel unless combined
// as the reduction combines them ((s0+s1)+(s2+s3)), fused and not.
func TestFusedSumOrder(t *testing.T) {
	const n = 4 * 1000
	x, y := make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], y[i] = []float32{1e4, 1, -1e4, 1}[i%4], []float32{1e4, 1, 1e4, 1}[i%4]
	}
	fn := func(x, y *graph.Node) *graph.Node { return graph.ReduceAllSum(graph.Mul(graph.AddScalar(x, 0), y)) }
	args := func(backends.Backend) []any {
		return []any{tensors.FromFlatDataAndDimensions(x, n), tensors.FromFlatDataAndDimensions(y, n)}
	}
	before := fusedSumCount.Load()
	got := runGraph(t, "ops_sequential", fn, args)[0][0]
	if fusedSumCount.Load() == before {
		t.Fatal("the sum was not fused")
	}
	if want := runGraph(t, "ops_sequential,no_fusion", fn, args)[0][0]; math.Float32bits(got) != math.Float32bits(want) {
		t.Errorf("fused sum %g, unfused %g", got, want)
	}
}

// TestSumBlocked checks sumBlocked, whose blocks are summed in parallel,
// against its definition written out: each block of sumBlock elements
// summed in 32 lanes by position mod 32, the lanes combined pairwise, the
// blocks' sums added in order.
func TestSumBlocked(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{sumBlock - 1, sumBlock, sumBlock + 1, 2*sumBlock + 33, 5*sumBlock + 7} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(9)-4)))
			if n > 2*sumBlock && i%sumBlock == 0 {
				// Blocks' sums whose order of addition shows: 1e8 + 1
				// rounds to 1e8 in float32, 1 + 1 does not.
				x[i] = []float32{1e8, 1, -1e8, 1, 1, 1}[i/sumBlock]
			}
		}
		var want float32
		for lo := 0; lo < n; lo += sumBlock {
			var lanes [32]float32
			for i, v := range x[lo:min(n, lo+sumBlock)] {
				lanes[i%32] += v
			}
			for _, w := range []int{16, 8, 4, 2, 1} {
				for l := range w {
					lanes[l] += lanes[l+w]
				}
			}
			if lo == 0 {
				want = lanes[0]
			} else {
				want += lanes[0]
			}
		}
		for range 3 { // the blocks go to whichever goroutine is free
			if got := sumBlocked(x); math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("n %d: sumBlocked %g, want %g", n, got, want)
			}
		}
	}
}

// TestMaxOfOrder checks maxOf, whose running maxima take the values out of
// order, against the sequential max of simplego's ReduceMax on lengths
// around its groups of eight, with signed zeros, infinities and NaNs.
func TestMaxOfOrder(t *testing.T) {
	const lowest = -math.MaxFloat32
	r := rand.New(rand.NewPCG(5, 6))
	negZero := float32(math.Copysign(0, -1))
	specials := []float32{negZero, 0, float32(math.Inf(-1)), float32(math.Inf(1)), lowest, float32(math.NaN())}
	for n := 0; n <= 70; n++ {
		for trial := range 40 {
			x := make([]float32, n)
			for i := range x {
				switch {
				case trial%4 == 0: // zeros of both signs only
					x[i] = specials[r.IntN(2)]
				case r.IntN(8) == 0 && trial%4 != 3:
					x[i] = specials[r.IntN(len(specials)-1)] // no NaN
				case r.IntN(20) == 0 && trial%4 == 3:
					x[i] = specials[r.IntN(len(specials))]
				default:
					x[i] = float32(r.NormFloat64()) - 3
				}
			}
			want := float32(lowest)
			for _, v := range x {
				want = max(want, v)
			}
			got := maxOf(x, lowest)
			if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
				t.Fatalf("maxOf(%v) = %g (%#x), want %g (%#x)", x, got, math.Float32bits(got), want, math.Float32bits(want))
			}
		}
	}
}

// TestSum32 checks sum32Add and sum32Finish, with and without the AVX2
// loops, against their definition written out here (lane l sums the
// elements i ≡ l mod 32 in order; lanes combine l+16, l+8, l+4, l+2, l+1),
// on lengths around the groups of 32 and on slices added one after another.
func TestSum32(t *testing.T) {
	avx2 := hasSumAVX2
	defer func() { hasSumAVX2 = avx2 }()
	r := rand.New(rand.NewPCG(7, 8))
	for _, on := range []bool{avx2, false} {
		hasSumAVX2 = on
		for _, n := range []int{0, 1, 5, 31, 32, 33, 63, 64, 65, 100, 512, 1000, 4099} {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(9)-4)))
			}
			var lanes [32]float32
			for i, v := range x {
				lanes[i%32] += v
			}
			for _, w := range []int{16, 8, 4, 2, 1} {
				for l := range w {
					lanes[l] += lanes[l+w]
				}
			}
			want := lanes[0]
			if got := sum32(x); math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("AVX2 %v, n %d: sum32 %g, want %g", on, n, got, want)
			}
			// In pieces of 64 and 512 (the fused chunks), the last one shorter.
			for _, piece := range []int{64, 512} {
				var s [32]float32
				for lo := 0; lo < n; lo += piece {
					sum32Add(&s, x[lo:min(n, lo+piece)])
				}
				if got := sum32Finish(&s); math.Float32bits(got) != math.Float32bits(want) {
					t.Fatalf("AVX2 %v, n %d in pieces of %d: %g, want %g", on, n, piece, got, want)
				}
			}
		}
	}
}
