package moe

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
)

// EpochsFile is the per-epoch log Train writes to Options.OutDir, one
// JSON EpochRecord per line (a NaN validation figure, for no validation
// data, as -1).
const EpochsFile = "epochs.jsonl"

// maxEpochLog bounds the epochs.jsonl a resumed run reads back.
const maxEpochLog = 256 << 20

// epochOf is the number of the epoch that ends at step, counted from 1:
// epoch k ends at step k·stepsPerEpoch (the last one, at the run's last
// step, may be shorter). A resumed run, whose steps continue from the
// checkpoint's, so continues the numbering.
func epochOf(step int64, stepsPerEpoch int) int {
	spe := int64(max(stepsPerEpoch, 1))
	return int((step + spe - 1) / spe)
}

// epochLog returns the content of epochs.jsonl after a run whose epochs
// are history, and every epoch it holds (for the plots). A fresh run
// (resumed 0) writes only its own epochs. A resumed run continues the log
// at path: it keeps the records of the earlier runs up to the step it
// resumed from (those after it are of steps this run repeats), then adds
// its own. Lines that are not records are kept as they are.
func epochLog(path string, resumed int64, history []EpochRecord) ([]byte, []EpochRecord, error) {
	var (
		buf bytes.Buffer
		all []EpochRecord
	)
	if resumed > 0 {
		old, err := readLimited(path, maxEpochLog)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, nil, err
		}
		for line := range bytes.Lines(old) {
			var r EpochRecord
			if err := json.Unmarshal(line, &r); err == nil {
				if r.Step > resumed {
					continue
				}
				all = append(all, unsanitize(r))
			}
			buf.Write(line)
			if line[len(line)-1] != '\n' {
				buf.WriteByte('\n')
			}
		}
	}
	enc := json.NewEncoder(&buf)
	for _, r := range history {
		if err := enc.Encode(sanitize(r)); err != nil {
			return nil, nil, fmt.Errorf("moe: encoding epoch %d: %w", r.Epoch, err)
		}
		all = append(all, r)
	}
	return buf.Bytes(), all, nil
}

// readLimited reads the file at path, of at most limit bytes.
func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("moe: reading the epoch log: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("moe: reading the epoch log: %w", err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("moe: the epoch log %s is larger than %d bytes", path, limit)
	}
	return b, nil
}

// sanitize replaces NaN (no validation data) by -1 so that JSON can hold it.
func sanitize(r EpochRecord) EpochRecord {
	if math.IsNaN(r.ValLoss) {
		r.ValLoss, r.ValAccuracy = -1, -1
	}
	return r
}

// unsanitize undoes sanitize.
func unsanitize(r EpochRecord) EpochRecord {
	if r.ValLoss == -1 && r.ValAccuracy == -1 {
		r.ValLoss, r.ValAccuracy = math.NaN(), math.NaN()
	}
	return r
}
