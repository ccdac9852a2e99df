package dist

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// Local returns n ranks of one group in this process, element r being
// rank r, for tests of distributed algorithms under plain go test: run
// each rank's part on a goroutine of its own. A call returns once every
// rank has made it; the last rank to arrive does the work for all, so
// float sums add in rank order whatever the arrival order. Ranks that
// disagree about a call (operations, lengths, roots) all get an error. A
// rank that stops calling leaves the others waiting until its Comm is
// closed: close each rank's Comm when its goroutine ends (defer c.Close()).
// Local returns nil when n < 1.
func Local(n int) []Comm {
	if n < 1 {
		return nil
	}
	g := &group{
		n:       n,
		arrived: make([]bool, n),
		calls:   make([]call, n),
		results: make([]result, n),
		closed:  make([]bool, n),
	}
	g.cond = sync.NewCond(&g.mu)
	out := make([]Comm, n)
	for r := range out {
		out[r] = &local{g: g, rank: r}
	}
	return out
}

// call is one rank's side of a collective call.
type call struct {
	op   op
	root int
	n    int // buffer length in elements
	i64  []int64
	f64  []float64
	f32  []float32
	b    []byte
}

// result is what a rank gets back from a round.
type result struct {
	err      error
	gathered [][]byte
}

// group is the state the ranks of one Local share.
type group struct {
	mu      sync.Mutex
	cond    *sync.Cond
	n       int
	round   uint64 // completed rounds
	count   int    // ranks waiting in the current round
	arrived []bool
	calls   []call
	results []result
	closed  []bool
}

type local struct {
	g    *group
	rank int
	sent atomic.Int64
}

func (c *local) Rank() int        { return c.rank }
func (c *local) Size() int        { return c.g.n }
func (c *local) BytesSent() int64 { return c.sent.Load() }

// do makes this rank's side of a call and waits for the round to end.
func (c *local) do(cl call) ([][]byte, error) {
	g := c.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed[c.rank] {
		return nil, callError(cl.op, c.rank, g.n, ErrClosed)
	}
	for r, closed := range g.closed {
		if closed {
			return nil, callError(cl.op, c.rank, g.n, fmt.Errorf("rank %d of the local group is closed", r))
		}
	}
	g.calls[c.rank] = cl
	g.arrived[c.rank] = true
	g.count++
	if g.count == g.n {
		g.complete()
	} else {
		for round := g.round; g.round == round; {
			g.cond.Wait()
		}
	}
	res := g.results[c.rank]
	g.results[c.rank] = result{}
	if res.err != nil {
		return nil, callError(cl.op, c.rank, g.n, res.err)
	}
	return res.gathered, nil
}

// end finishes the round: every waiting rank gets its result.
func (g *group) end() {
	for r := range g.arrived {
		g.arrived[r] = false
		g.calls[r] = call{}
	}
	g.count = 0
	g.round++
	g.cond.Broadcast()
}

// fail ends the round with err for every waiting rank.
func (g *group) fail(err error) {
	for r, a := range g.arrived {
		if a {
			g.results[r] = result{err: err}
		}
	}
	g.end()
}

// complete checks that the ranks agree and does the call for all of them,
// in rank order. It runs on the last rank to arrive, holding g.mu, while
// the owners of the buffers wait.
func (g *group) complete() {
	c0 := g.calls[0]
	for r := 1; r < g.n; r++ {
		cr := g.calls[r]
		switch {
		case cr.op != c0.op:
			g.fail(fmt.Errorf("rank 0 calls %v, rank %d calls %v: every rank must make the same collective calls in the same order", c0.op, r, cr.op))
			return
		case c0.op.hasRoot() && cr.root != c0.root:
			g.fail(fmt.Errorf("ranks name different roots (rank 0: %d, rank %d: %d)", c0.root, r, cr.root))
			return
		case c0.op.sameLength() && cr.n != c0.n:
			g.fail(fmt.Errorf("buffer lengths differ across ranks (rank 0: length %d, rank %d: length %d)", c0.n, r, cr.n))
			return
		}
	}
	if c0.op.hasRoot() {
		if err := checkRoot(c0.root, g.n); err != nil {
			g.fail(err)
			return
		}
	}
	switch c0.op {
	case opAllreduceInt64:
		sum := append([]int64(nil), c0.i64...)
		for r := 1; r < g.n; r++ {
			for i, v := range g.calls[r].i64 {
				sum[i] += v
			}
		}
		for r := range g.n {
			copy(g.calls[r].i64, sum)
		}
	case opAllreduceFloat64:
		sum := append([]float64(nil), c0.f64...)
		for r := 1; r < g.n; r++ {
			for i, v := range g.calls[r].f64 {
				sum[i] = float64(sum[i] + v)
			}
		}
		for r := range g.n {
			copy(g.calls[r].f64, sum)
		}
	case opAllreduceFloat32:
		sum := append([]float32(nil), c0.f32...)
		for r := 1; r < g.n; r++ {
			for i, v := range g.calls[r].f32 {
				sum[i] = float32(sum[i] + v)
			}
		}
		for r := range g.n {
			copy(g.calls[r].f32, sum)
		}
	case opBcast:
		for r := range g.n {
			if r != c0.root {
				copy(g.calls[r].b, g.calls[c0.root].b)
			}
		}
	case opGather:
		out := make([][]byte, g.n)
		for r := range g.n {
			out[r] = append(make([]byte, 0, len(g.calls[r].b)), g.calls[r].b...)
		}
		g.results[c0.root].gathered = out
	case opBarrier:
	}
	g.end()
}

func (c *local) AllreduceInt64(buf []int64) error {
	if _, err := c.do(call{op: opAllreduceInt64, n: len(buf), i64: buf}); err != nil {
		return err
	}
	c.count(8 * len(buf))
	return nil
}

func (c *local) AllreduceFloat64(buf []float64) error {
	if _, err := c.do(call{op: opAllreduceFloat64, n: len(buf), f64: buf}); err != nil {
		return err
	}
	c.count(8 * len(buf))
	return nil
}

func (c *local) AllreduceFloat32(buf []float32) error {
	if _, err := c.do(call{op: opAllreduceFloat32, n: len(buf), f32: buf}); err != nil {
		return err
	}
	c.count(4 * len(buf))
	return nil
}

func (c *local) Bcast(buf []byte, root int) error {
	if _, err := c.do(call{op: opBcast, root: root, n: len(buf), b: buf}); err != nil {
		return err
	}
	if c.rank == root {
		c.count(len(buf))
	}
	return nil
}

func (c *local) Gather(buf []byte, root int) ([][]byte, error) {
	out, err := c.do(call{op: opGather, root: root, n: len(buf), b: buf})
	if err != nil {
		return nil, err
	}
	if c.rank != root {
		c.count(len(buf))
	}
	return out, nil
}

func (c *local) Barrier() error {
	_, err := c.do(call{op: opBarrier})
	return err
}

// count adds n bytes to BytesSent when there is another rank to send to.
func (c *local) count(n int) {
	if c.g.n > 1 {
		c.sent.Add(int64(n))
	}
}

func (c *local) Close() error {
	g := c.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed[c.rank] {
		return nil
	}
	g.closed[c.rank] = true
	if g.count > 0 {
		g.fail(fmt.Errorf("rank %d of the local group closed while the others waited", c.rank))
	}
	return nil
}
