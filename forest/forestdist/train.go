package forestdist

import (
	"context"
	"errors"
	"fmt"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/forest"
)

// Distribution modes (Train's mode).
const (
	// ModeTrees is tree-parallel training (forest.FitTrees): every rank
	// reads all the data and grows its share of the trees.
	ModeTrees = "trees"
	// ModeData is data-parallel training (Fit): every rank grows every
	// tree over its shard of the rows.
	ModeData = "data"
)

// Agree is a collective check that every rank of c got this far without
// an error: each rank passes its own err (nil when it has none), and each
// gets nil when no rank had an error, else the errors of every rank that
// had one, naming the ranks. Ranks call it where one of them may fail
// alone (reading its data), so that none waits for the others forever.
func Agree(c forest.Comm, err error) error {
	if c == nil {
		return errors.New("forestdist: nil communicator")
	}
	_, err = allgather(c, nil, err)
	return err
}

// Train does what `gotrain forest train --distributed MODE` does on each
// rank of c, every rank calling it with the same arguments: it loads the
// data spec names (forest.LoadData; the same split on every rank), takes
// this rank's part of the training set — all of it for ModeTrees; for
// ModeData the shard of a training file it reads alone (a CSV file's
// lines by byte ranges, data.LoadFileShard; no hold-out split then), or
// its even share of an embedded data set's rows — and trains with
// forest.Train on the learner of the mode. Every rank gets the same
// forest; rank 0 alone evaluates the test set and the permutation
// importances, so the other ranks' results have no test scores. A rank's
// error reaches every rank.
func Train(ctx context.Context, c forest.Comm, mode string, spec forest.DataSpec, opt forest.Options, cfg forest.TrainConfig) (*forest.TrainResult, error) {
	if c == nil {
		return nil, errors.New("forestdist: train: nil communicator")
	}
	if mode != ModeTrees && mode != ModeData {
		return nil, fmt.Errorf("forestdist: train: mode %q: want %q or %q", mode, ModeTrees, ModeData)
	}
	// Data-parallel training from a file: each rank reads its shard (a
	// CSV file's lines by byte ranges); only rank 0 reads the test file.
	sharded := mode == ModeData && spec.Train != "" && c.Size() > 1
	if sharded {
		spec.Shard, spec.Shards = c.Rank(), c.Size()
		if c.Rank() != 0 {
			spec.Test = ""
		}
	}
	split, err := forest.LoadData(ctx, spec)
	if err == nil {
		opt, err = split.TrainOptions(opt, cfg)
	}
	var train *data.Dataset
	if err == nil {
		train = split.Train
		if mode == ModeData && !sharded {
			train, err = rankRows(train, c.Rank(), c.Size())
		}
	}
	if err := Agree(c, err); err != nil {
		return nil, err
	}
	test := split.Test
	if c.Rank() != 0 {
		test, cfg.PermutationRepeats = nil, 0
	}
	if mode == ModeTrees {
		cfg.Learner = forest.TreeParallel(c)
	} else {
		cfg.Learner = Learner(c)
	}
	rows := []int64{int64(train.Rows)}
	if mode == ModeData {
		if err := c.AllreduceInt64(rows); err != nil {
			return nil, fmt.Errorf("forestdist: train: counting the rows: %w", err)
		}
	}
	res, err := forest.Train(train, test, opt, cfg)
	if err != nil {
		return nil, err
	}
	res.TrainRows = int(rows[0]) // every shard's
	res.Data, res.Engine, res.Device = split.Name, "native", "cpu"
	return res, nil
}

// rankRows returns rank's even share of d's rows (materialised when d
// reads its columns lazily): rows [n·rank/size, n·(rank+1)/size).
func rankRows(d *data.Dataset, rank, size int) (*data.Dataset, error) {
	if err := d.Materialize(); err != nil {
		return nil, err
	}
	return d.RowShare(rank, size), nil
}
