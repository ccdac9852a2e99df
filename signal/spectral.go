package signal

import (
	"math"
	"slices"

	"github.com/gotrain/gotrain/internal/stats"
)

// spectral computes the PSD-based features: the SNR estimates, occupied
// bandwidths and the spectral shape, all on the two-sided fftshifted
// Welch PSD with bin frequencies f_i = (i − M/2)·fs/M.
func (e *Extractor) spectral(f *Features) {
	e.sort = PSDLevels(f, e.cfg, e.sort)
	p := f.PSD
	m := len(p)
	df := e.cfg.SampleRate / float64(m)
	var tot, fsum float64
	for i, v := range p {
		tot += v
		fsum += float64(i-m/2) * df * v
	}
	c := fsum / tot
	var spread, logs float64
	for i, v := range p {
		d := float64(i-m/2)*df - c
		spread += d * d * v
		logs += math.Log(v + 1e-30)
	}
	f.CentroidHz = c
	f.BandwidthHz = math.Sqrt(spread / tot)
	f.Flatness = math.Exp(logs/float64(m)) / (tot / float64(m))
}

// PSDLevels sets the features of f that need a sort or a sequential scan
// of its PSD (f.PSD, two-sided and fftshifted, and f.SampleRate's cfg):
// the noise floor (median bin), the occupied bins above it by
// cfg.SNRThresholdDB, both SNR estimates, the roll-off and the power
// bandwidth. cfg must have its defaults filled in ([Extractor.Config]).
// scratch is reused for the sort and returned; every extraction path (CPU
// and graph) calls this, so the definitions are one.
func PSDLevels(f *Features, cfg Config, scratch []float64) []float64 {
	p := f.PSD
	m := len(p)
	fs := cfg.SampleRate
	df := fs / float64(m)
	scratch = grow(scratch, m)
	copy(scratch, p)
	slices.Sort(scratch)
	n0 := stats.SortedMedian(scratch)
	thr := n0 * math.Pow(10, cfg.SNRThresholdDB/10)
	var sig, tot float64
	occ := 0
	for _, v := range p {
		if v > thr {
			sig += v - n0
			occ++
		}
		tot += v
	}
	sig *= df
	bocc := float64(occ) * df
	f.NoiseFloor = n0
	f.OccupiedBWHz = bocc
	f.SNRdB = 10 * math.Log10(math.Max(sig, 1e-30)/(n0*fs))
	f.SNRInbanddB = 10 * math.Log10(math.Max(sig, 1e-30)/(n0*math.Max(bocc, df)))
	// Roll-off and occupied bandwidth from the cumulative power.
	lo := (1 - cfg.OBWFraction) / 2 * tot
	hi := (1 + cfg.OBWFraction) / 2 * tot
	roll := cfg.RolloffFraction * tot
	iLo, iHi, iRoll := -1, -1, -1
	var cum float64
	for i, v := range p {
		cum += v
		if iLo < 0 && cum >= lo {
			iLo = i
		}
		if iRoll < 0 && cum >= roll {
			iRoll = i
		}
		if iHi < 0 && cum >= hi {
			iHi = i
		}
	}
	if iHi < 0 {
		iHi = m - 1
	}
	if iRoll < 0 {
		iRoll = m - 1
	}
	if iLo < 0 {
		iLo = 0
	}
	f.RolloffHz = float64(iRoll-m/2) * df
	f.OBWHz = float64(iHi-iLo+1) * df
	return scratch
}
