package cpubackend

import (
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gotrain/gotrain/internal/parallel"
)

// Element-wise fusion.
//
// At Compile, chains of float32 (or bfloat16: fusion_bf16.go) element-wise operations whose
// intermediate results are read only inside the chain are merged into their
// last operation, which then runs a small program over the chunks of its
// output: every operation of the chain reads and writes chunk-sized
// temporaries that stay in the L1 cache instead of tensors of the full
// size. Each operation computes exactly the float32 expression the
// backend's unfused executor computes (simplego's, or for Sign, Logistic
// and Tanh this package's faster ones, fastmath.go), in the same order, so
// results are bit-identical with and without fusion (config "no_fusion"
// turns it off).
//
// A chain may also absorb an intermediate that is a graph output and has no
// other use (a side output: the new moments of an Adam update, which its
// parameter update reads): the program then writes it too, copying its
// chunk into its own buffer once the chunk's instructions have run, and a
// node appended to the graph (Node.fusedSide) stands for it among the
// outputs. One pass over the inputs then replaces one per chain.

// fusedChains counts the chains fused since the process started,
// fusedSides the side outputs they absorbed and fusedSumCount the sums that
// absorbed a chain (tests).
var fusedChains, fusedSides, fusedSumCount atomic.Int64

// fusedRepeats counts the repeated broadcasts programs read through their
// operands (tests).
var fusedRepeats atomic.Int64

// fusedChunk is the number of elements a fused program processes at once
// (at most). BenchmarkAdamUpdate: 512 -> 4,096 took an Adam update of
// 784×512 parameters from 1.28 to 0.97-1.02 ms and BenchmarkElementwise's
// five-operation chain on 784×512 from 355 to 248 µs: each operation of a
// chunk is a call through several switches, and longer chunks make fewer
// of them; 8,192 was no faster. A chunk's temporaries (16 KiB an
// operand) then live in L2 rather than L1, which costs less.
const fusedChunk = 4096

// Chunks are whole groups of sum32Add's 32 lanes (a compile-time check).
var _ = [1]int{}[fusedChunk%32]

// fusedMaxOps bounds the operations of one fused program.
const fusedMaxOps = 64

// fusibleOps are the operations fusion handles, with their arity.
var fusibleOps = map[backends.OpType]int{
	backends.OpTypeAdd: 2, backends.OpTypeSub: 2, backends.OpTypeMul: 2, backends.OpTypeDiv: 2,
	backends.OpTypeMax: 2, backends.OpTypeMin: 2,
	backends.OpTypeNeg: 1, backends.OpTypeAbs: 1, backends.OpTypeSign: 1, backends.OpTypeSqrt: 1,
	backends.OpTypeRsqrt: 1, backends.OpTypeExp: 1, backends.OpTypeLog: 1, backends.OpTypeTanh: 1,
	backends.OpTypeLogistic: 1,
}

// operandKind says where an instruction operand comes from.
type operandKind uint8

const (
	fromInput  operandKind = iota // an external input of the output's shape
	fromScalar                    // an external input with one element
	fromTemp                      // the result of an earlier instruction
	fromTiled                     // an external input repeated along the output (a broadcast bias)
)

type fusedOperand struct {
	kind operandKind
	idx  int
	// slot is the temporary a fromTiled operand is laid out in for a chunk.
	slot int
	// rep, when positive, makes a fromTiled operand repeated instead:
	// element i of the output reads element i / rep of the input (a
	// per-row statistic broadcast along the trailing axes).
	rep int
}

type fusedInstr struct {
	op   backends.OpType
	a, b fusedOperand
	// unary is set for one-operand operations (b unused).
	unary bool
	// dst is the temporary slot the result goes to (slotted).
	dst int
}

// fusedProgram is the chain merged into a node; the node's inputs are the
// chain's external inputs, in the order the operands' idx refer to.
type fusedProgram struct {
	instrs []fusedInstr
	// tiled are the fromTiled operands, by slot: each chunk copies the
	// input's repeated values into temporary slots+slot.
	tiled []fusedOperand
	// size is the number of elements of the output.
	size int
	// temps pools the chunk temporaries of one execution.
	temps sync.Pool
	// sides are the temporary slots holding the side outputs' results
	// (after slotted), and sideNodes the nodes that stand for them (in the
	// same order).
	sides     []int
	sideNodes []*Node
	// slots is the number of temporary slots the instructions use; the
	// tiled operands' slots follow them.
	slots int
	// sums is set when the program's node is a ReduceSum of the chain over
	// all its axes (fuseSums): it computes the sum of the chain's values.
	sums bool
	// chunkLen is the length of the program's chunks: fusedChunk (2,048
	// for a bfloat16 program), or the size rounded up to 32 when that is
	// less.
	chunkLen int
	// bf16 is set for a chain with bfloat16 operations or conversions
	// (fusion_bf16.go): extKinds then tells how each external input is
	// read, extBF16 which ones are bfloat16 (widened chunk by chunk),
	// direct which of those only Add, Sub, Mul and Div read (with AVX-512
	// they read it where it is: vecBinaryWiden), instBF16 which instructions are bfloat16 operations, trunc which
	// instructions' results are truncated to bfloat16, and
	// outBF16 and sideBF16 which outputs are narrowed.
	bf16     bool
	extKinds []operandKind
	extBF16  []bool
	direct   []bool
	instBF16 []bool
	trunc    []bool
	outBF16  bool
	sideBF16 []bool
}

// slotted gives every instruction a temporary slot for its result, reusing
// the slot of a result no later instruction reads (a result read by the
// instruction that writes the slot is read element by element before the
// element is written), so that a long chain's temporaries stay few and in
// the L1 cache; a side output keeps its slot to the chunk's end. Operands
// from earlier instructions then name slots, as do sides (instruction
// indices until then).
func (prog *fusedProgram) slotted() {
	n := len(prog.instrs)
	lastRead := make([]int, n)
	for t := range lastRead {
		lastRead[t] = -1
	}
	for t, ins := range prog.instrs {
		if ins.a.kind == fromTemp {
			lastRead[ins.a.idx] = t
		}
		if !ins.unary && ins.b.kind == fromTemp {
			lastRead[ins.b.idx] = t
		}
	}
	for _, t := range prog.sides {
		lastRead[t] = n // kept to the end of the chunk
	}
	slot := make([]int, n)
	var free []int
	for t := range prog.instrs {
		ins := &prog.instrs[t]
		operands := []*fusedOperand{&ins.a}
		if !ins.unary {
			operands = append(operands, &ins.b)
		}
		for _, o := range operands {
			if o.kind != fromTemp {
				continue
			}
			src := o.idx
			o.idx = slot[src]
			if lastRead[src] == t {
				lastRead[src] = -2 // freed once, even when read twice here
				free = append(free, slot[src])
			}
		}
		if len(free) > 0 {
			slot[t], free = free[len(free)-1], free[:len(free)-1]
		} else {
			slot[t] = prog.slots
			prog.slots++
		}
		ins.dst = slot[t]
		if lastRead[t] == -1 { // never read (the root): its slot is free again
			free = append(free, slot[t])
		}
	}
	for j, t := range prog.sides {
		prog.sides[j] = slot[t]
	}
}

// isFusible tells whether n can be part of a fused chain.
func isFusible(n *Node) bool {
	if n.opType == backends.OpTypeConvertDType {
		return isFusibleConvert(n)
	}
	arity, ok := fusibleOps[n.opType]
	if !ok || n.fusedSide != nil || !fusibleDType(n.opType, n.shape.DType) || len(n.inputs) != arity || n.multiOutputsShapes != nil || n.isNodeSelectOutput {
		return false
	}
	for _, in := range n.inputs {
		_, repeats := repeatsOutput(in.shape.Dimensions, n.shape.Dimensions)
		if in.shape.DType != n.shape.DType || !(in.shape.Equal(n.shape) || in.shape.Size() == 1 || repeats ||
			n.shape.DType == dtypes.BFloat16 && tilesOutput(in.shape.Dimensions, n.shape.Dimensions)) {
			return false
		}
	}
	return true
}

// fuseElementwise rewrites b's graph (before the executable is made): each
// fused chain's last node gets the program and the chain's external inputs.
func fuseElementwise(b *Builder) {
	uses, isOutput, seen := countUses(b)
	absorbed := make([]bool, len(b.nodes))
	for i := len(b.nodes) - 1; i >= 0; i-- {
		root := b.nodes[i]
		if !seen[i] || absorbed[i] || !isFusible(root) {
			continue
		}
		group := []*Node{root}
		inGroup := map[*Node]bool{root: true}
		var sides []*Node
		// refs counts the group's reads of each node: a node all of whose
		// uses are reads by the group (uses counts node inputs only, not
		// graph outputs) joins it; a graph output among them becomes a side
		// output. A node read by two members (a gradient both Adam moments
		// read) may join only once the second one has: hence the passes
		// until nothing joins.
		refs := map[*Node]int{}
		for _, in := range root.inputs {
			refs[in]++
		}
		for grew := true; grew && len(group) < fusedMaxOps; {
			grew = false
			for k := 0; k < len(group) && len(group) < fusedMaxOps; k++ {
				for _, in := range group[k].inputs {
					if inGroup[in] || absorbed[in.builderIdx] || refs[in] != uses[in.builderIdx] ||
						!isFusible(in) || !sameDims(in.shape, root.shape) || len(group) >= fusedMaxOps {
						continue
					}
					if isOutput[in.builderIdx] {
						sides = append(sides, in)
					}
					group = append(group, in)
					inGroup[in] = true
					for _, x := range in.inputs {
						refs[x]++
					}
					grew = true
				}
			}
		}
		if len(group) < 2 && root.shape.DType == dtypes.Float32 && !slices.ContainsFunc(root.inputs, func(in *Node) bool {
			_, repeats := repeatsOutput(in.shape.Dimensions, root.shape.Dimensions)
			return repeats || isLaidBroadcast(in)
		}) {
			continue
		}
		if len(group) < 2 && root.opType == backends.OpTypeConvertDType {
			continue // a conversion alone is its executor's pass already
		}
		slices.SortFunc(group, func(x, y *Node) int { return x.builderIdx - y.builderIdx })
		prog, externals := newFusedProgram(root, group, sides)
		for _, n := range group {
			if n != root {
				absorbed[n.builderIdx] = true
			}
		}
		root.inputs = externals
		root.fused = prog
		fusedChains.Add(1)
		for _, x := range sides {
			// The node standing for x among the outputs depends on the root,
			// so that it comes after it in both execution orders; the root
			// fills its result in (executeNode).
			side := b.newNode(x.opType, x.shape, root)
			side.fusedSide = root
			for k, o := range b.outputs {
				if o == x {
					b.outputs[k] = side
				}
			}
			prog.sideNodes = append(prog.sideNodes, side)
			fusedSides.Add(1)
		}
	}
	fuseSums(b)
}

// fuseSums makes each float32 ReduceSum over all the axes of an operand that
// is an element-wise chain read by it alone (a fused chain without side
// outputs, or one fusible operation: the squares a gradient norm sums) run
// that chain itself, summing its values chunk by chunk (fusedProgram.sum):
// the operand is never written out, and the sum is the unfused one, bit for
// bit (the reduction's order: sumBlocked).
func fuseSums(b *Builder) {
	uses, isOutput, seen := countUses(b)
	for i, r := range b.nodes {
		if !seen[i] || r.opType != backends.OpTypeReduceSum || r.fused != nil || r.shape.DType != dtypes.Float32 || len(r.inputs) != 1 {
			continue
		}
		x := r.inputs[0]
		if x.shape.DType != dtypes.Float32 || !reducesAllAxes(r, x) ||
			uses[x.builderIdx] != 1 || isOutput[x.builderIdx] || x.fusedSide != nil {
			continue
		}
		var prog *fusedProgram
		var externals []*Node
		switch {
		case x.fused != nil && len(x.fused.sides) == 0 && !x.fused.sums && !x.fused.bf16:
			prog, externals = x.fused, x.inputs
			x.fused, x.inputs = nil, nil // unreachable now; run, it would fail
		case x.fused == nil && isFusible(x) && x.opType != backends.OpTypeConvertDType:
			prog, externals = newFusedProgram(x, []*Node{x}, nil)
		default:
			continue
		}
		prog.sums = true
		r.fused, r.inputs = prog, externals
		fusedSumCount.Add(1)
	}
}

// reducesAllAxes tells whether the reduction r of x lists each of x's axes
// once: only then does the unfused reduction sum the whole tensor as sum32
// does (execReduceFast).
func reducesAllAxes(r, x *Node) bool {
	axes, ok := r.data.([]int)
	if !ok || x.shape.Rank() == 0 || len(axes) != x.shape.Rank() {
		return false
	}
	sorted := slices.Sorted(slices.Values(axes))
	for i, a := range sorted {
		if a != i {
			return false
		}
	}
	return true
}

// newFusedProgram compiles group (root's chain, in builder order) into a
// program over root's shape, with sides (members that are graph outputs)
// as its side outputs; it returns the program and its external inputs, in
// the order its operands name them.
func newFusedProgram(root *Node, group, sides []*Node) (*fusedProgram, []*Node) {
	prog := &fusedProgram{size: root.shape.Size()}
	var externals []*Node
	extIdx := map[*Node]int{}
	tempIdx := map[*Node]int{}
	type laid struct {
		x   *Node
		rep int
	}
	tiledSlot := map[laid]int{}
	operand := func(in *Node) fusedOperand {
		if t, ok := tempIdx[in]; ok {
			return fusedOperand{kind: fromTemp, idx: t}
		}
		x, ok := tiledBroadcast(in)
		rep := 0
		if !ok {
			x, rep, ok = repeatedBroadcast(in)
		}
		if ok {
			// Read the broadcast's operand instead: the broadcast is
			// not run unless something else uses it.
			in = x
			if x.shape.Size() > 1 {
				j, ok := extIdx[x]
				if !ok {
					j = len(externals)
					extIdx[x] = j
					externals = append(externals, x)
				}
				slot, ok := tiledSlot[laid{x, rep}]
				if !ok {
					slot = len(prog.tiled)
					tiledSlot[laid{x, rep}] = slot
					prog.tiled = append(prog.tiled, fusedOperand{kind: fromTiled, idx: j, slot: slot, rep: rep})
					if rep > 0 {
						fusedRepeats.Add(1)
					}
				}
				return fusedOperand{kind: fromTiled, idx: j, slot: slot, rep: rep}
			}
		}
		j, ok := extIdx[in]
		if !ok {
			j = len(externals)
			extIdx[in] = j
			externals = append(externals, in)
		}
		if sameDims(in.shape, root.shape) {
			return fusedOperand{kind: fromInput, idx: j}
		}
		if in.shape.Size() > 1 {
			// An operand broadcast implicitly: repeated along trailing
			// axes (repeatsOutput), or a bfloat16 one tiled along
			// leading ones (tilesOutput).
			rep, _ := repeatsOutput(in.shape.Dimensions, root.shape.Dimensions)
			slot, ok := tiledSlot[laid{in, rep}]
			if !ok {
				slot = len(prog.tiled)
				tiledSlot[laid{in, rep}] = slot
				prog.tiled = append(prog.tiled, fusedOperand{kind: fromTiled, idx: j, slot: slot, rep: rep})
				if rep > 0 {
					fusedRepeats.Add(1)
				}
			}
			return fusedOperand{kind: fromTiled, idx: j, slot: slot, rep: rep}
		}
		return fusedOperand{kind: fromScalar, idx: j}
	}
	for _, n := range group {
		ins := fusedInstr{op: n.opType, a: operand(n.inputs[0]), unary: len(n.inputs) == 1}
		if len(n.inputs) == 2 {
			ins.b = operand(n.inputs[1])
		}
		tempIdx[n] = len(prog.instrs)
		prog.instrs = append(prog.instrs, ins)
	}
	for _, x := range sides {
		prog.sides = append(prog.sides, tempIdx[x])
	}
	prog.slotted()
	prog.chunkLen = min(fusedChunk, (prog.size+31)&^31)
	nt := prog.slots + len(prog.tiled)
	if slices.ContainsFunc(group, func(n *Node) bool {
		return n.shape.DType == dtypes.BFloat16 || n.opType == backends.OpTypeConvertDType // bfloat16 members or inputs
	}) {
		prog.bf16Externals(root, group, sides, externals)
		nt += len(externals)
		// A bfloat16 program also widens each external operand into
		// a temporary: at 2,048 elements a program of a few operations
		// keeps its temporaries in L1 (BenchmarkElementwiseBF16: a Mul
		// on [1024, 344] 37 -> 30 µs, a three-operation chain 52 -> 47
		// µs; 1,024 measured the same as 2,048).
		prog.chunkLen = min(prog.chunkLen, 2048)
	}
	prog.temps.New = func() any { return make([]float32, nt*prog.chunkLen) }
	return prog, externals
}

// isLaidBroadcast tells whether n is a broadcast a fused program reads
// through its operand (tiledBroadcast, repeatedBroadcast): one operation
// reading it is worth a program, which saves the broadcast's pass.
func isLaidBroadcast(n *Node) bool {
	if _, ok := tiledBroadcast(n); ok {
		return true
	}
	_, _, ok := repeatedBroadcast(n)
	return ok
}

// repeatsOutput tells whether an operand of dimensions in, of the output's
// rank, is broadcast implicitly along trailing axes only (the output's
// leading dimensions, then ones: a row statistic [b, t, 1] of [b, t, d]),
// so that element i of the output reads element i / rep of the operand,
// and returns rep (more than 1).
func repeatsOutput(in, out []int) (int, bool) {
	if len(in) != len(out) {
		return 0, false
	}
	a := 0
	for a < len(in) && in[a] == out[a] {
		a++
	}
	rep := 1
	for ; a < len(in); a++ {
		if in[a] != 1 {
			return 0, false
		}
		rep *= out[a]
	}
	return rep, rep > 1
}

// repeatedBroadcast reports whether n is a float32 or bfloat16
// BroadcastInDim that repeats each element of its operand x along the
// trailing axes of its output (a row statistic of a softmax or a layer norm,
// [b, t, 1] to [b, t, d]), so that element i of the output is element
// i / rep of x, and returns x and rep (more than 1).
func repeatedBroadcast(n *Node) (*Node, int, bool) {
	if n.opType != backends.OpTypeBroadcastInDim || (n.shape.DType != dtypes.Float32 && n.shape.DType != dtypes.BFloat16) || len(n.inputs) != 1 {
		return nil, 0, false
	}
	x := n.inputs[0]
	axes, ok := n.data.([]int)
	if !ok || x.shape.DType != n.shape.DType || len(axes) != x.shape.Rank() || x.shape.Size() == 0 {
		return nil, 0, false
	}
	out := n.shape.Dimensions
	src := make([]int, len(out)) // x's dimension along each output axis (1 where x has none)
	for a := range src {
		src[a] = 1
	}
	for i, a := range axes {
		if a < 0 || a >= len(out) || (i > 0 && a <= axes[i-1]) {
			return nil, 0, false
		}
		src[a] = x.shape.Dimensions[i]
	}
	// Leading axes taken whole from x, then only axes x does not vary along.
	a, lead := 0, 1
	for ; a < len(out) && src[a] == out[a]; a++ {
		lead *= out[a]
	}
	rep := 1
	for ; a < len(out); a++ {
		if src[a] != 1 {
			return nil, 0, false
		}
		rep *= out[a]
	}
	return x, rep, rep > 1 && lead == x.shape.Size()
}

// tiledBroadcast reports whether n is a float32 BroadcastInDim that repeats
// its operand x along the leading axes of its output, so that element i of
// the output is element i mod x.Size() of x (a bias broadcast over a batch),
// and returns x.
func tiledBroadcast(n *Node) (*Node, bool) {
	if n.opType != backends.OpTypeBroadcastInDim || (n.shape.DType != dtypes.Float32 && n.shape.DType != dtypes.BFloat16) || len(n.inputs) != 1 {
		return nil, false
	}
	x := n.inputs[0]
	axes, ok := n.data.([]int)
	if !ok || x.shape.DType != n.shape.DType || len(axes) != x.shape.Rank() || x.shape.Size() == 0 {
		return nil, false
	}
	out := n.shape.Dimensions
	mapped := make([]int, len(out))
	for a := range mapped {
		mapped[a] = -1
	}
	for i, a := range axes {
		if a < 0 || a >= len(out) || (i > 0 && a <= axes[i-1]) {
			return nil, false
		}
		mapped[a] = i
	}
	// A suffix of the output's axes taken whole from x, then only axes x
	// does not vary along.
	tile, a := 1, len(out)-1
	for ; a >= 0; a-- {
		if out[a] == 1 {
			continue
		}
		if i := mapped[a]; i < 0 || x.shape.Dimensions[i] != out[a] {
			break
		}
		tile *= out[a]
	}
	for ; a >= 0; a-- {
		if i := mapped[a]; i >= 0 && x.shape.Dimensions[i] != 1 {
			return nil, false
		}
	}
	return x, tile == x.shape.Size()
}

// execFused runs node's fused program.
func execFused(backend *Backend, node *Node, inputs []*Buffer, inputsOwned []bool) (*Buffer, error) {
	if node.fused.sums {
		flats := make([][]float32, len(inputs))
		for k, in := range inputs {
			flats[k] = in.flat.([]float32)
		}
		output := backend.getBuffer(dtypes.Float32, 1)
		output.shape = node.shape
		output.flat.([]float32)[0] = node.fused.sum(flats)
		return output, nil
	}
	out, _, err := execFusedSides(backend, node, inputs, inputsOwned)
	return out, err
}

// fusedOutputs returns the buffers of a fused node's output and side
// outputs, which take over owned inputs of their shape where there are
// some (each element of the output is written after every read of its
// index, and the side outputs after the whole chunk): taken[k] is j+1 when
// input k became buffer j (and inputs[k] is then nil), else 0.
func fusedOutputs(backend *Backend, node *Node, inputs []*Buffer, inputsOwned []bool) (bufs []*Buffer, taken []int) {
	bufs = make([]*Buffer, 1+len(node.fused.sides))
	taken = make([]int, len(inputs))
	for j := range bufs {
		shape := node.shape
		if j > 0 { // a side output may differ from the output in dtype (a mixed-precision chain)
			shape = node.fused.sideNodes[j-1].shape
		}
		for k, in := range inputs {
			if inputsOwned[k] && in != nil && taken[k] == 0 && in.shape.Equal(shape) {
				bufs[j], taken[k] = in, j+1
				inputs[k] = nil
				break
			}
		}
		if bufs[j] == nil {
			bufs[j] = backend.getBufferForShape(shape)
		}
	}
	return bufs, taken
}

// execFusedSides runs node's fused program and returns its output and its
// side outputs (Node.fused.sideNodes' values).
func execFusedSides(backend *Backend, node *Node, inputs []*Buffer, inputsOwned []bool) (*Buffer, []*Buffer, error) {
	prog := node.fused
	if prog.bf16 {
		return execFusedSidesBF16(backend, node, inputs, inputsOwned)
	}
	bufs, taken := fusedOutputs(backend, node, inputs, inputsOwned)
	output := bufs[0]
	flats := make([][]float32, len(node.inputs))
	for k, in := range inputs {
		if in == nil { // taken over as an output
			flats[k] = bufs[taken[k]-1].flat.([]float32)
			continue
		}
		flats[k] = in.flat.([]float32)
	}
	out := output.flat.([]float32)
	var sides [][]float32
	for _, b := range bufs[1:] {
		sides = append(sides, b.flat.([]float32))
	}
	// Chunks are independent: large outputs are split over the CPUs, each
	// part with its own temporaries (the values do not depend on it).
	chunks := (prog.size + prog.chunkLen - 1) / prog.chunkLen
	parts := min(runtime.GOMAXPROCS(0), prog.size/fusedParallelMin)
	if parts < 2 {
		prog.run(flats, out, sides, 0, chunks)
		return output, bufs[1:], nil
	}
	parallel.For(parts, parts, func(p int) {
		prog.run(flats, out, sides, p*chunks/parts, (p+1)*chunks/parts)
	})
	return output, bufs[1:], nil
}

// fusedParallelMin is the output size per goroutine below which a fused
// program runs on one goroutine. With internal/parallel's spinning helpers
// 8,192 floats a part pay (the LSTM's [64, 512] cell updates, 32,768
// floats, on both cores: its step 1-3 % faster, the transformer's 2 %).
const fusedParallelMin = 1 << 13

// run executes the program over chunks [c0, c1) of the output, writing the
// side outputs' chunks to sides (in prog.sides' order).
func (prog *fusedProgram) run(flats [][]float32, out []float32, sides [][]float32, c0, c1 int) {
	temps := prog.temps.Get().([]float32)
	defer prog.temps.Put(temps)
	for c := c0; c < c1; c++ {
		prog.chunk(c, temps, flats, out, sides)
	}
}

// sum returns the sum of the program's output as sumBlocked sums a slice:
// each block of sumBlock elements (whole chunks, which are whole groups of
// 32) summed chunk by chunk with 32 running sums over the positions i mod
// 32, in order, combined pairwise, the blocks on all the CPUs and their
// sums added in order. The sums see the values in the unfused ReduceSum's
// order, so the result is its, bit for bit.
func (prog *fusedProgram) sum(flats [][]float32) float32 {
	chunks := (prog.size + prog.chunkLen - 1) / prog.chunkLen
	per := max(1, sumBlock/prog.chunkLen) // chunks a block
	block := func(b int) float32 {
		temps := prog.temps.Get().([]float32)
		defer prog.temps.Put(temps)
		var s [32]float32
		for c := b * per; c < min(chunks, (b+1)*per); c++ {
			sum32Add(&s, prog.chunk(c, temps, flats, nil, nil))
		}
		return sum32Finish(&s)
	}
	nb := (chunks + per - 1) / per
	if nb <= 1 {
		return block(0)
	}
	partials := make([]float32, nb)
	parallel.For(nb, parallel.Workers(), func(b int) { partials[b] = block(b) })
	return addInOrder(partials)
}

// chunk runs the program over chunk c and returns its result there: in out,
// or with out nil in the last instruction's temporary slot.
func (prog *fusedProgram) chunk(c int, temps []float32, flats [][]float32, out []float32, sides [][]float32) []float32 {
	last := len(prog.instrs) - 1
	var result []float32
	cl := prog.chunkLen
	lo := c * cl
	hi := min(lo+cl, prog.size)
	n := hi - lo
	for _, o := range prog.tiled {
		x := flats[o.idx]
		dst := temps[(prog.slots+o.slot)*cl : (prog.slots+o.slot)*cl+n]
		if o.rep > 0 {
			fillRepeated(dst, lo, o.rep, func(i int) float32 { return x[i] })
			continue
		}
		// Element i of the output reads element i mod len(x) of x.
		pos := lo % len(x)
		for len(dst) > 0 {
			m := copy(dst, x[pos:])
			dst, pos = dst[m:], 0
		}
	}
	// A scalar operand is passed as a pointer to its input's element,
	// which lives on the heap already: a pointer to a local would be
	// allocated on every call (the vector loops are called through
	// function values, so escape analysis lets every argument escape).
	slice := func(o fusedOperand) ([]float32, *float32, bool) {
		switch o.kind {
		case fromInput:
			return flats[o.idx][lo:hi], nil, false
		case fromScalar:
			return nil, &flats[o.idx][0], true
		case fromTiled:
			t := prog.slots + o.slot
			return temps[t*cl : t*cl+n], nil, false
		}
		return temps[o.idx*cl : o.idx*cl+n], nil, false
	}
	for t, ins := range prog.instrs {
		dst := temps[ins.dst*cl : ins.dst*cl+n]
		if t == last {
			if out != nil {
				dst = out[lo:hi]
			}
			result = dst
		}
		a, as, aScalar := slice(ins.a)
		if ins.unary {
			if aScalar { // a one-element operand of a unary op: broadcast it
				a = dst
				fill(a, *as)
			}
			unaryChunk(ins.op, dst, a)
			continue
		}
		b, bs, bScalar := slice(ins.b)
		binaryChunk(ins.op, dst, a, as, aScalar, b, bs, bScalar)
	}
	for j, t := range prog.sides {
		copy(sides[j][lo:hi], temps[t*cl:t*cl+n])
	}
	return result
}

// unaryChunk computes dst = op(a) as simplego's float32 executors do.
func unaryChunk(op backends.OpType, dst, a []float32) {
	a = a[:len(dst)]
	switch op {
	case backends.OpTypeNeg:
		for j, x := range a {
			dst[j] = -x
		}
	case backends.OpTypeAbs:
		for j, x := range a {
			if x < 0 {
				dst[j] = -x
			} else {
				dst[j] = x
			}
		}
	case backends.OpTypeSign:
		signFloat32(dst, a)
	case backends.OpTypeSqrt:
		// Correctly rounded either way: the AVX-512 loop gives the same bits.
		k := vecSqrt(dst, a)
		for j, x := range a[k:] {
			dst[k+j] = float32(math.Sqrt(float64(x)))
		}
	case backends.OpTypeRsqrt:
		for j, x := range a {
			dst[j] = float32(1.0 / math.Sqrt(float64(x)))
		}
	case backends.OpTypeExp:
		expFloat32(dst, a)
	case backends.OpTypeLog:
		for j, x := range a {
			dst[j] = float32(math.Log(float64(x)))
		}
	case backends.OpTypeTanh:
		tanhFloat32(dst, a)
	case backends.OpTypeLogistic:
		logisticFloat32(dst, a)
	default:
		panicf("cpubackend: fused unary op %s", op)
	}
}

// binaryChunk computes dst = a op b, where either operand may be a scalar
// (*asp, *bsp, read when aScalar or bScalar), as simplego's float32 executors
// do. The scalars are pointers so that calls allocate nothing: callers pass
// the address of a buffer's element.
func binaryChunk(op backends.OpType, dst, a []float32, asp *float32, aScalar bool, b []float32, bsp *float32, bScalar bool) {
	n := len(dst)
	var as, bs float32
	if aScalar {
		as = *asp
	} else {
		a = a[:n]
	}
	if bScalar {
		bs = *bsp
	} else {
		b = b[:n]
	}
	// The AVX-512 or AVX2 loops (same IEEE operations) take the multiples of
	// 16; the Go loops below finish.
	if k := vecBinary(op, dst, a, asp, aScalar, b, bsp, bScalar); k > 0 {
		dst = dst[k:]
		if !aScalar {
			a = a[k:]
		}
		if !bScalar {
			b = b[k:]
		}
	}
	switch op {
	case backends.OpTypeAdd:
		switch {
		case aScalar && bScalar:
			fill(dst, as+bs)
		case bScalar:
			for j, x := range a {
				dst[j] = x + bs
			}
		case aScalar:
			for j, y := range b {
				dst[j] = as + y
			}
		default:
			for j, x := range a {
				dst[j] = x + b[j]
			}
		}
	case backends.OpTypeSub:
		switch {
		case aScalar && bScalar:
			fill(dst, as-bs)
		case bScalar:
			for j, x := range a {
				dst[j] = x - bs
			}
		case aScalar:
			for j, y := range b {
				dst[j] = as - y
			}
		default:
			for j, x := range a {
				dst[j] = x - b[j]
			}
		}
	case backends.OpTypeMul:
		switch {
		case aScalar && bScalar:
			fill(dst, as*bs)
		case bScalar:
			for j, x := range a {
				dst[j] = x * bs
			}
		case aScalar:
			for j, y := range b {
				dst[j] = as * y
			}
		default:
			for j, x := range a {
				dst[j] = x * b[j]
			}
		}
	case backends.OpTypeDiv:
		switch {
		case aScalar && bScalar:
			fill(dst, as/bs)
		case bScalar:
			for j, x := range a {
				dst[j] = x / bs
			}
		case aScalar:
			for j, y := range b {
				dst[j] = as / y
			}
		default:
			for j, x := range a {
				dst[j] = x / b[j]
			}
		}
	case backends.OpTypeMax:
		switch {
		case aScalar && bScalar:
			fill(dst, max(as, bs))
		case bScalar:
			for j, x := range a {
				dst[j] = max(x, bs)
			}
		case aScalar:
			for j, y := range b {
				dst[j] = max(as, y)
			}
		default:
			for j, x := range a {
				dst[j] = max(x, b[j])
			}
		}
	case backends.OpTypeMin:
		switch {
		case aScalar && bScalar:
			fill(dst, min(as, bs))
		case bScalar:
			for j, x := range a {
				dst[j] = min(x, bs)
			}
		case aScalar:
			for j, y := range b {
				dst[j] = min(as, y)
			}
		default:
			for j, x := range a {
				dst[j] = min(x, b[j])
			}
		}
	default:
		panicf("cpubackend: fused binary op %s", op)
	}
}

// signFloat32 sets dst[j] to −1, 0 or +1 as x is negative, zero (or NaN)
// or positive — simplego's Sign — without branches, which random signs
// (ReLU gradients) would mispredict half of the time.
func signFloat32(dst, a []float32) {
	a = a[:len(dst)]
	k := vecSign(dst, a) // the same bits, 16 lanes at a time with AVX-512
	for j, x := range a[k:] {
		j += k
		b := math.Float32bits(x)
		r := b&0x80000000 | 0x3f800000 // ±1
		if (b&0x7fffffff)-1 >= 0x7f800000 {
			r = 0 // ±0 (the subtraction wraps) or NaN
		}
		dst[j] = math.Float32frombits(r)
	}
}

// fillRepeated sets dst[j], element lo+j of a repeated operand, to
// at((lo+j) / rep): runs of rep equal values.
func fillRepeated(dst []float32, lo, rep int, at func(int) float32) {
	for j := 0; j < len(dst); {
		run := min(len(dst)-j, rep-(lo+j)%rep)
		fill(dst[j:j+run], at((lo+j)/rep))
		j += run
	}
}

// fill sets every element of dst to v: 16 at a time with AVX-512 (a
// repeated operand's runs of 64 took 5 % of the transformer's step in the
// Go loop), eight stores a step in Go. A function of its own: inlined in
// broadcastFloat32's loop, the loop's counter lived on the stack, about 4
// ns a store.
//
//go:noinline
func fill(dst []float32, v float32) {
	dst = dst[vecFill(dst, v):]
	for len(dst) >= 8 {
		e := (*[8]float32)(dst)
		e[0], e[1], e[2], e[3], e[4], e[5], e[6], e[7] = v, v, v, v, v, v, v, v
		dst = dst[8:]
	}
	for j := range dst {
		dst[j] = v
	}
}
