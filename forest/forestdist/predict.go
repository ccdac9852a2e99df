package forestdist

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/forest"
)

// PredictFile is `gotrain forest predict --distributed` on each rank of c:
// every rank loads the model file, reads its shard of the data file
// (data.LoadFileShard: a CSV file's lines by byte ranges) and predicts it;
// rank 0 gathers the predictions in rank order — the file's row order —
// and returns them all (Rows counts every shard's rows; Seconds is the
// time from the first read to the gathered result), the others return
// nil. The values equal those of one process predicting the whole file
// (rows are predicted independently). A rank's error reaches every rank.
func PredictFile(c forest.Comm, model, dataFile string, maxBytes int64, opt forest.PredictOptions) (*forest.Predictions, error) {
	if c == nil {
		return nil, errors.New("forestdist: predict: nil communicator")
	}
	start := time.Now()
	f, err := forest.LoadFile(model)
	var d *data.Dataset
	if err == nil {
		d, err = data.LoadFileShard(dataFile, data.CSVOptions{NoTarget: true, MaxBytes: maxBytes}, c.Rank(), c.Size())
	}
	var p *forest.Predictions
	if err == nil {
		p, err = f.PredictData(d, opt)
	}
	var msg []byte
	if err == nil {
		msg = binary.LittleEndian.AppendUint64(msg, uint64(p.Rows))
		for _, v := range p.Values {
			msg = binary.LittleEndian.AppendUint64(msg, math.Float64bits(v))
		}
	}
	// Every rank learns of any rank's error; rank 0 also gets the values.
	parts, err := allgatherTo0(c, msg, err)
	if err != nil {
		return nil, err
	}
	if c.Rank() != 0 {
		return nil, nil
	}
	all := *p
	all.Rows, all.Values = 0, nil
	for r, part := range parts {
		if len(part) < 8 || (len(part)-8)%8 != 0 {
			return nil, fmt.Errorf("forestdist: predict: rank %d sent %d bytes", r, len(part))
		}
		all.Rows += int(binary.LittleEndian.Uint64(part))
		for i := 8; i < len(part); i += 8 {
			all.Values = append(all.Values, math.Float64frombits(binary.LittleEndian.Uint64(part[i:])))
		}
	}
	if per := len(p.Values) / max(1, p.Rows); p.Rows > 0 && len(all.Values) != all.Rows*per {
		return nil, fmt.Errorf("forestdist: predict: %d values gathered for %d rows", len(all.Values), all.Rows)
	}
	all.Seconds = time.Since(start).Seconds()
	return &all, nil
}

// allgatherTo0 gathers every rank's message at rank 0 and tells every rank
// whether any rank had an error (then every rank returns the errors, naming
// the ranks); only rank 0 gets the messages.
func allgatherTo0(c forest.Comm, msg []byte, err error) ([][]byte, error) {
	parts, gerr := c.Gather(tag(msg, err), 0)
	if gerr != nil {
		return nil, fmt.Errorf("forestdist: gather: %w", gerr)
	}
	var out [][]byte
	var verdict []byte // rank 0's verdict: the errors' text, if any
	if c.Rank() == 0 {
		if out, err = untag(parts); err != nil {
			verdict = []byte(err.Error())
		}
	}
	if verdict, err = bcastBytes(c, verdict); err != nil {
		return nil, err
	}
	if len(verdict) > 0 {
		return nil, errors.New(string(verdict))
	}
	return out, nil
}
