package modclass

import (
	"fmt"
	"math"
	"path/filepath"

	"github.com/gotrain/gotrain/signal"
)

// IQPath returns the SigMF base name of the record of row i of d, as
// [Generate] writes it with IQ: DIR/iq/<label>_<idx>, DIR the folder of
// d's features.csv and idx the row's position among the rows of its label
// in the file (rows are class-major, each class's in index order; the
// rows of a [Data.Subset] keep the positions they had).
func (d *Data) IQPath(i int) (string, error) {
	if i < 0 || i >= d.Rows {
		return "", fmt.Errorf("modclass: row %d of %s: want 0 to %d", i, d.Name, d.Rows-1)
	}
	return filepath.Join(filepath.Dir(d.Name), IQDir, fmt.Sprintf("%s_%d", d.Labels[i], d.iqIndexes()[i])), nil
}

// iqIndexes returns each row's index among the rows of its label in the
// data set as read (a Subset keeps its rows' indices).
func (d *Data) iqIndexes() []int {
	if d.iqIndex == nil {
		d.iqIndex = make([]int, d.Rows)
		seen := map[string]int{}
		for r, l := range d.Labels {
			d.iqIndex[r] = seen[l]
			seen[l]++
		}
	}
	return d.iqIndex
}

// ReadIQ reads the samples of row i's record from its SigMF pair
// ([Data.IQPath]), checking that the file is that record: its label, and
// the SNR of its synthesis options when it has them, must be the row's.
// A data set generated without IQ has no such files; the error says so.
func (d *Data) ReadIQ(i int) ([]complex64, error) {
	p, err := d.IQPath(i)
	if err != nil {
		return nil, err
	}
	rec, err := signal.ReadSigMF(p)
	if err != nil {
		return nil, fmt.Errorf("modclass: %s row %d: %w (the IQ records are written by signal dataset --iq)", d.Name, i+1, err)
	}
	if rec.Meta.Label != d.Labels[i] {
		return nil, fmt.Errorf("modclass: %s: label %q, but row %d of %s is %q", p, rec.Meta.Label, i+1, d.Name, d.Labels[i])
	}
	if s := rec.Meta.Synth; s != nil && math.Abs(s.SNRdB-d.SNR[i]) > 1e-9*(1+math.Abs(d.SNR[i])) {
		return nil, fmt.Errorf("modclass: %s: SNR %g dB, but row %d of %s has %g dB", p, s.SNRdB, i+1, d.Name, d.SNR[i])
	}
	return rec.Samples, nil
}
