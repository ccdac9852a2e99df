package forest

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"time"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/forest/internal/core"
)

// Comm is the communicator a distributed fit runs on: this process's rank
// among Size processes and the collective operations the fit needs, each
// called by every rank in the same order. Package dist's communicators
// (dist.World under an MPI launcher, dist.Local for in-process ranks)
// satisfy it.
type Comm interface {
	// Rank is this process's rank, 0 .. Size()-1.
	Rank() int
	// Size is the number of ranks.
	Size() int
	// AllreduceInt64 replaces buf, on every rank, by the element-wise
	// sum of every rank's buf (all of one length).
	AllreduceInt64(buf []int64) error
	// Bcast copies root's buf into every rank's buf (all of one length).
	Bcast(buf []byte, root int) error
	// Gather returns, on root, every rank's buf in rank order (lengths
	// may differ), and nil on the other ranks.
	Gather(buf []byte, root int) ([][]byte, error)
}

// DistStats describes a distributed fit.
type DistStats struct {
	// Mode is "trees" (tree-parallel) or "data" (data-parallel).
	Mode string `json:"mode"`
	// Ranks is the number of processes; Rank this one's.
	Ranks int `json:"ranks"`
	Rank  int `json:"rank"`
	// Trees is the number of trees this rank grew (tree-parallel).
	Trees int `json:"trees_grown_here,omitempty"`
	// BytesSent is the payload this rank handed to the collectives
	// (before any copies the transport makes).
	BytesSent int64 `json:"bytes_sent"`
	// CommSeconds is the time this rank spent in collectives, waiting for
	// the others included.
	CommSeconds float64 `json:"comm_seconds"`
}

// TreeParallel returns the Learner of tree-parallel training on c (see
// FitTrees).
func TreeParallel(c Comm) Learner { return treeParallel{c} }

type treeParallel struct{ c Comm }

func (l treeParallel) Fit(d *data.Dataset, opt Options) (*Forest, FitStats, error) {
	start := time.Now()
	f, ds, err := FitTrees(d, opt, l.c)
	if err != nil {
		return nil, FitStats{}, err
	}
	return f, FitStats{Seconds: time.Since(start).Seconds(), Dist: ds}, nil
}

// myTrees returns the indices of the trees rank grows among size ranks:
// rank, rank+size, ... below trees.
func myTrees(trees, rank, size int) []int {
	var mine []int
	for t := rank; t < trees; t += size {
		mine = append(mine, t)
	}
	return mine
}

// treeBatch is what a rank of a tree-parallel fit sends to rank 0: the
// indices of its trees and the trees, or the error it met.
type treeBatch struct {
	Index []int
	Trees []wideTree // as the model file keeps them: gob sends exported fields
	Err   string
}

// FitTrees is tree-parallel training: Fit(d, opt)'s forest grown with its
// trees shared among the ranks of c. Every rank holds the whole training
// set d (each reads the file itself); rank r grows trees r, r+Size, ...
// — the trees Fit grows, as each tree's randomness is keyed by its index
// (docs/FOREST.md, "The random stream"); rank 0 gathers them, computes
// the out-of-bag score and the leaf samples as Fit does, and broadcasts
// the finished model, so that every rank returns the same forest, whose
// model file is Fit's byte for byte. opt.Threads is each rank's thread
// count. An error on any rank is returned by every rank (naming the rank
// it happened on), once every rank has reached the gather.
func FitTrees(d *data.Dataset, opt Options, c Comm) (*Forest, *DistStats, error) {
	if c == nil {
		return nil, nil, errors.New("forest: tree-parallel fit: nil communicator")
	}
	rank, size := c.Rank(), c.Size()
	ds := &DistStats{Mode: "trees", Ranks: size, Rank: rank}
	comm := func(fn func() error) error {
		t := time.Now()
		err := fn()
		ds.CommSeconds += time.Since(t).Seconds()
		return err
	}
	// Grow this rank's trees; a failure travels to rank 0 in the batch.
	var batch treeBatch
	f, pr, inbag, err := fitTreesOpt(d, opt, size, rank)
	if err != nil {
		batch.Err = err.Error()
	} else {
		batch.Index = myTrees(len(f.Trees), rank, size)
		for _, t := range batch.Index {
			w, werr := f.Trees[t].widen()
			if werr != nil {
				batch.Err = fmt.Sprintf("tree %d: %v", t, werr)
				break
			}
			batch.Trees = append(batch.Trees, *w)
		}
		ds.Trees = len(batch.Index)
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(&batch); err != nil {
		return nil, nil, fmt.Errorf("forest: tree-parallel fit: encoding rank %d's trees: %w", rank, err)
	}
	var parts [][]byte
	ds.BytesSent += int64(buf.Len())
	if err := comm(func() (e error) { parts, e = c.Gather(buf.Bytes(), 0); return }); err != nil {
		return nil, nil, fmt.Errorf("forest: tree-parallel fit: gathering the trees: %w", err)
	}
	// Rank 0 assembles and finishes the forest, then every rank gets the
	// model file (or rank 0's error).
	var model []byte
	if rank == 0 {
		model, err = assembleTrees(f, pr, inbag, opt, parts)
		if err != nil {
			model = append([]byte{1}, err.Error()...)
		} else {
			model = append([]byte{0}, model...)
		}
	}
	n := make([]byte, 8)
	binary.LittleEndian.PutUint64(n, uint64(len(model)))
	if rank == 0 {
		ds.BytesSent += int64(8 + len(model))
	}
	if err := comm(func() error { return c.Bcast(n, 0) }); err != nil {
		return nil, nil, fmt.Errorf("forest: tree-parallel fit: broadcasting the model's size: %w", err)
	}
	size64 := binary.LittleEndian.Uint64(n)
	if size64 == 0 || size64 > 1<<40 {
		return nil, nil, fmt.Errorf("forest: tree-parallel fit: rank 0 announced a model of %d bytes", size64)
	}
	if rank != 0 {
		model = make([]byte, size64)
	}
	if err := comm(func() error { return c.Bcast(model, 0) }); err != nil {
		return nil, nil, fmt.Errorf("forest: tree-parallel fit: broadcasting the model: %w", err)
	}
	if model[0] != 0 {
		return nil, nil, fmt.Errorf("forest: tree-parallel fit: %s", model[1:])
	}
	if rank == 0 {
		return f, ds, nil
	}
	g, err := Load(bytes.NewReader(model[1:]))
	if err != nil {
		return nil, nil, fmt.Errorf("forest: tree-parallel fit: rank 0's model: %w", err)
	}
	g.Options.Threads = opt.Threads
	if g.Options.Threads <= 0 {
		g.Options.Threads = f.Options.Threads
	}
	return g, ds, nil
}

// fitTreesOpt grows the trees of rank among size (fitTrees); on a rank
// that has no tree (more ranks than trees) it only prepares.
func fitTreesOpt(d *data.Dataset, opt Options, size, rank int) (*Forest, *prepared, [][]uint64, error) {
	if size < 1 || rank < 0 || rank >= size {
		return nil, nil, nil, fmt.Errorf("forest: rank %d of %d ranks", rank, size)
	}
	mine := myTrees(opt.Trees, rank, size)
	if mine == nil {
		mine = []int{}
	}
	return fitTrees(d, opt, mine)
}

// assembleTrees puts every rank's trees (parts, gob-encoded treeBatch in
// rank order) into rank 0's forest f, computes the in-bag masks of the
// trees grown elsewhere, finishes f as Fit does and returns its model
// file. f is nil when rank 0 failed to prepare.
func assembleTrees(f *Forest, pr *prepared, inbag [][]uint64, opt Options, parts [][]byte) ([]byte, error) {
	var errs []error
	batches := make([]treeBatch, len(parts))
	for r, p := range parts {
		if err := gob.NewDecoder(bytes.NewReader(p)).Decode(&batches[r]); err != nil {
			errs = append(errs, fmt.Errorf("rank %d: decoding its trees: %w", r, err))
			continue
		}
		if batches[r].Err != "" {
			errs = append(errs, fmt.Errorf("rank %d: %s", r, batches[r].Err))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	opt = f.Options
	size := len(parts)
	for r, b := range batches {
		want := myTrees(len(f.Trees), r, size)
		if len(b.Index) != len(want) || len(b.Trees) != len(want) {
			return nil, fmt.Errorf("rank %d sent %d trees (%d indices), want %d", r, len(b.Trees), len(b.Index), len(want))
		}
		for i, t := range b.Index {
			if t != want[i] {
				return nil, fmt.Errorf("rank %d sent tree %d, want tree %d", r, t, want[i])
			}
			if r != 0 {
				if err := f.keepTree(t, &b.Trees[i]); err != nil {
					return nil, fmt.Errorf("rank %d: %w", r, err)
				}
			}
		}
	}
	if inbag != nil {
		counts := make([]int32, pr.Rows)
		for t := range f.Trees {
			if inbag[t] != nil {
				continue
			}
			if opt.NoBootstrap {
				for i := range counts {
					counts[i] = 1
				}
			} else {
				core.BootstrapCounts(opt.Seed, t, pr.Draws, counts)
			}
			inbag[t] = core.InBagMask(counts)
		}
	}
	if err := pr.Finish(f, inbag); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := f.Save(&out); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
