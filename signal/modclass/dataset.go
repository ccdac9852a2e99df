package modclass

import (
	"bytes"
	stdcontext "context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gotrain/gotrain/internal/atomicfile"
	"github.com/gotrain/gotrain/rng"
	"github.com/gotrain/gotrain/signal"
	"github.com/gotrain/gotrain/signal/impair"
)

// DefaultMods are the eight modulations of the classifier floor.
var DefaultMods = []signal.Modulation{signal.BPSK, signal.QPSK, signal.PSK8, signal.QAM16, signal.QAM64, signal.GFSK, signal.FM, signal.AM}

// DatasetOptions describe a labelled data set. Every record is a pure
// function of (Seed, modulation, index), see [DatasetOptions.Record].
type DatasetOptions struct {
	// Mods are the classes, in the order of the CSV rows.
	Mods []signal.Modulation `json:"mods"`
	// PerClass is the number of records of each modulation.
	PerClass int `json:"per_class"`
	// SNRMinDB and SNRMaxDB bound the full-band SNR (as signal.SynthOptions
	// defines it). With SNRStepDB > 0 the SNR of record i of a class is
	// grid[i mod len(grid)], grid = SNRMinDB, SNRMinDB+SNRStepDB, ... ≤
	// SNRMaxDB, so every SNR gets the same number of records; with
	// SNRStepDB = 0 it is uniform in [SNRMinDB, SNRMaxDB].
	SNRMinDB  float64 `json:"snr_min_db"`
	SNRMaxDB  float64 `json:"snr_max_db"`
	SNRStepDB float64 `json:"snr_step_db"`
	// SampleRate (Hz) and Samples (per record) set the record length.
	SampleRate float64 `json:"sample_rate"`
	Samples    int     `json:"samples"`
	// Seed selects every record.
	Seed uint64 `json:"seed"`
	// MaxOffsetHz bounds the carrier offset, uniform in [−MaxOffsetHz,
	// MaxOffsetHz] (default 0: no offset; see docs/SIGNAL.md for why the
	// features need a corrected carrier).
	MaxOffsetHz float64 `json:"max_offset_hz"`
	// SPS lists the samples-per-symbol choices of the digital modes; each
	// record draws one uniformly (default {4, 8, 16}: 50, 25 and 12.5 kBd at 200 kHz).
	SPS []int `json:"sps"`
	// IQ also writes each record as a SigMF pair under iq/.
	IQ bool `json:"iq"`
	// Impairments, when set, impair each record after its synthesis by
	// the recipe's draw for the record (impair.Recipe.Draw with Seed and
	// the record's row), the interferer a record of another of Mods;
	// every record's parameters are written to impairments.jsonl.
	Impairments *impair.Recipe `json:"impairments,omitempty"`
	// Workers is the number of goroutines (0: GOMAXPROCS). The output does
	// not depend on it.
	Workers int `json:"-"`
	// Progress, when set, is called after each record with the number of
	// records done and the total (from the worker goroutines, serialised).
	Progress func(done, total int) `json:"-"`
}

// Nuisance ranges drawn per record (documented in docs/SIGNAL.md). The
// phase is uniform in [0, 2π) for every modulation.
const (
	FMDevMinHz, FMDevMaxHz     = 5000.0, 15000.0 // FM peak deviation
	ModFreqMinHz, ModFreqMaxHz = 500.0, 2000.0   // FM and AM message tone
	AMDepthMin, AMDepthMax     = 0.3, 0.9        // AM modulation depth
)

// defaultSPS are the samples-per-symbol choices when DatasetOptions.SPS is empty.
var defaultSPS = []int{4, 8, 16}

// purposeRecord is the rng purpose of a record's nuisance stream ("MODCLS" 1).
const purposeRecord uint64 = 0x4d4f44434c530001

// maxRecords bounds one data set.
const maxRecords = 1 << 24

// maxWorkers bounds DatasetOptions.Workers (each holds a record's buffers).
const maxWorkers = 1024

// withDefaults validates o and fills in the defaults.
func (o DatasetOptions) withDefaults() (DatasetOptions, error) {
	if o.Impairments != nil {
		if err := o.Impairments.Validate(); err != nil {
			return o, fmt.Errorf("modclass: impairments: %w", err)
		}
	}
	if len(o.Mods) == 0 {
		o.Mods = append([]signal.Modulation(nil), DefaultMods...)
	}
	seen := map[signal.Modulation]bool{}
	for _, m := range o.Mods {
		if _, err := signal.ParseModulation(string(m)); err != nil {
			return o, fmt.Errorf("modclass: %w", err)
		}
		if seen[m] {
			return o, fmt.Errorf("modclass: modulation %s is listed twice", m)
		}
		seen[m] = true
	}
	if len(o.SPS) == 0 {
		o.SPS = slices.Clone(defaultSPS)
	}
	switch {
	case o.PerClass < 1:
		return o, fmt.Errorf("modclass: records per class %d must be at least 1", o.PerClass)
	case o.PerClass > maxRecords/len(o.Mods):
		return o, fmt.Errorf("modclass: PerClass %d: %d modulations of %d records is too many (at most %d records in all)",
			o.PerClass, len(o.Mods), o.PerClass, maxRecords)
	case !finite(o.SNRMinDB) || !finite(o.SNRMaxDB) || !finite(o.SNRStepDB):
		return o, fmt.Errorf("modclass: SNR range %v:%v:%v is not finite", o.SNRMinDB, o.SNRMaxDB, o.SNRStepDB)
	case o.SNRMinDB < signal.MinSNRdB || o.SNRMaxDB > signal.MaxSNRdB:
		return o, fmt.Errorf("modclass: SNR range %v:%v: SNRMinDB and SNRMaxDB must be within %g to %g dB",
			o.SNRMinDB, o.SNRMaxDB, signal.MinSNRdB, signal.MaxSNRdB)
	case o.SNRMinDB > o.SNRMaxDB:
		return o, fmt.Errorf("modclass: SNR range %v:%v: the minimum is above the maximum", o.SNRMinDB, o.SNRMaxDB)
	case o.SNRStepDB < 0:
		return o, fmt.Errorf("modclass: SNR step %v must be positive", o.SNRStepDB)
	case o.SNRStepDB > 0 && (o.SNRMaxDB-o.SNRMinDB)/o.SNRStepDB > 10000:
		return o, fmt.Errorf("modclass: SNR step %v gives more than 10000 SNRs", o.SNRStepDB)
	case !(o.SampleRate >= signal.MinSampleRate && o.SampleRate <= signal.MaxSampleRate):
		return o, fmt.Errorf("modclass: sample rate %v must be %g to %g Hz", o.SampleRate, signal.MinSampleRate, signal.MaxSampleRate)
	case !(o.MaxOffsetHz >= 0) || o.MaxOffsetHz > o.SampleRate/2:
		return o, fmt.Errorf("modclass: carrier offset bound %v Hz must be in [0, %v]", o.MaxOffsetHz, o.SampleRate/2)
	case o.Workers < 0 || o.Workers > maxWorkers:
		return o, fmt.Errorf("modclass: Workers %d: want 0 (GOMAXPROCS) to %d", o.Workers, maxWorkers)
	}
	if min := (signal.Config{SampleRate: o.SampleRate}).MinSamples(); o.Samples < min || o.Samples > signal.MaxSamples {
		return o, fmt.Errorf("modclass: records of %d samples: the features need %d to %d", o.Samples, min, signal.MaxSamples)
	}
	for _, s := range o.SPS {
		if s < 2 || s > 64 {
			return o, fmt.Errorf("modclass: samples per symbol %d must be in [2, 64]", s)
		}
		if r := o.SampleRate / float64(s); r != math.Trunc(r) {
			return o, fmt.Errorf("modclass: samples per symbol %d does not divide the sample rate %v into a whole symbol rate", s, o.SampleRate)
		}
	}
	return o, nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// SNRGrid returns the SNRs of a stepped range (nil when SNRStepDB is 0).
func (o DatasetOptions) SNRGrid() []float64 {
	if o.SNRStepDB <= 0 {
		return nil
	}
	n := int(math.Floor((o.SNRMaxDB-o.SNRMinDB)/o.SNRStepDB+1e-9)) + 1
	g := make([]float64, n)
	for k := range g {
		g[k] = math.Round((o.SNRMinDB+float64(k)*o.SNRStepDB)*1e9) / 1e9
	}
	return g
}

// modIndex is m's position in signal.Modulations: a record's stream does
// not depend on which other modulations the data set holds.
func modIndex(m signal.Modulation) uint64 {
	for i, v := range signal.Modulations {
		if v == m {
			return uint64(i)
		}
	}
	return uint64(len(signal.Modulations))
}

// Record returns the synthesis options of record idx of modulation m. The
// record's random stream is rng.Key(Seed, modIndex<<32 | idx, purpose); it
// gives the synthesis seed, the SNR (unless stepped), the phase, the
// carrier offset, the samples per symbol and the analog parameters. grid
// is [DatasetOptions.SNRGrid] (nil for uniform SNRs). Record does not
// validate o; [Generate] does, and the synthesizer checks the result.
func (o DatasetOptions) Record(m signal.Modulation, idx int, grid []float64) signal.SynthOptions {
	if len(o.SPS) == 0 {
		o.SPS = slices.Clone(defaultSPS)
	}
	st := rng.NewStream(rng.Key(o.Seed, modIndex(m)<<32|uint64(idx), purposeRecord))
	u := func() float64 { return rng.Float64(st.Next()) }
	s := signal.SynthOptions{Mod: m, SampleRate: o.SampleRate, Samples: o.Samples, Seed: st.Next()}
	if len(grid) > 0 {
		s.SNRdB = grid[idx%len(grid)]
		st.Next() // keep the stream positions independent of the SNR mode
	} else {
		s.SNRdB = o.SNRMinDB + u()*(o.SNRMaxDB-o.SNRMinDB)
	}
	s.Phase = 2 * math.Pi * u()
	s.CarrierOffset = (2*u() - 1) * o.MaxOffsetHz
	sps := o.SPS[rng.Below(st.Next(), len(o.SPS))]
	if m.Digital() {
		s.SymbolRate = o.SampleRate / float64(sps)
	}
	switch m {
	case signal.FM:
		s.Deviation = FMDevMinHz + u()*(FMDevMaxHz-FMDevMinHz)
		s.ModFreq = ModFreqMinHz + u()*(ModFreqMaxHz-ModFreqMinHz)
	case signal.AM, signal.AMDSBWC, signal.AMSSBWC:
		s.ModIndex = AMDepthMin + u()*(AMDepthMax-AMDepthMin)
		s.ModFreq = ModFreqMinHz + u()*(ModFreqMaxHz-ModFreqMinHz)
	case signal.AMDSBSC, signal.AMSSBSC:
		s.ModFreq = ModFreqMinHz + u()*(ModFreqMaxHz-ModFreqMinHz)
	}
	return s
}

// Info is the content of dataset.json.
type Info struct {
	Format         string            `json:"format"` // "gotrain-modclass-dataset"
	FormatVersion  int               `json:"format_version"`
	GotrainVersion string            `json:"gotrain_version"`
	Options        DatasetOptions    `json:"options"`
	Classes        []string          `json:"classes"`
	Counts         map[string]int    `json:"counts"`
	Rows           int               `json:"rows"`
	SNRGrid        []float64         `json:"snr_grid_db,omitempty"`
	Columns        []string          `json:"columns"`
	Nuisance       map[string]string `json:"nuisance"`
	Workers        int               `json:"workers"`
	Seconds        float64           `json:"seconds"`
}

// File names inside a data set folder.
const (
	FeaturesFile    = "features.csv"
	InfoFile        = "dataset.json"
	IQDir           = "iq"
	ImpairmentsFile = "impairments.jsonl"
	infoFormat      = "gotrain-modclass-dataset"
)

// Columns returns the CSV header: label, snr_db_true, then
// signal.FeatureNames(13).
func Columns() []string {
	return append([]string{"label", "snr_db_true"}, signal.FeatureNames(13)...)
}

// Generate synthesizes the data set o describes, extracts the features of
// every record on o.Workers goroutines, and writes dir/features.csv,
// dir/dataset.json and, with o.IQ, dir/iq/<label>_<idx>.sigmf-{meta,data}.
// A folder that exists and is not empty is refused unless force is set.
//
// The data set appears all at once (internal/atomicfile's ReplaceDir): it
// is built in a hidden folder beside dir and swapped in when complete,
// with the files of the old folder other than dataset.json, features.csv
// and iq carried over (as hard links). A failed or interrupted run leaves
// dir as it was (an interrupted process may leave the hidden folder
// ".NAME.tmp-…" beside it), and replacing a data set (force) never
// empties the old one before the new one is ready.
func Generate(dir string, o DatasetOptions, force bool) (*Info, error) {
	return GenerateContext(stdcontext.Background(), dir, o, force)
}

// GenerateContext is [Generate] stopping early when ctx is cancelled
// (Ctrl-C): the workers stop after their current record, the hidden folder
// is removed and dir is left as it was; the error wraps ctx's cause.
func GenerateContext(ctx stdcontext.Context, dir string, o DatasetOptions, force bool) (*Info, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	if dir == "" {
		return nil, errors.New("modclass: no output folder")
	}
	if err := checkDir(dir, force); err != nil {
		return nil, err
	}
	var (
		info *Info
		gerr error
	)
	err = atomicfile.ReplaceDirKeeping(dir, notDataSet, func(tmp string) error {
		info, gerr = generate(ctx, tmp, o)
		return gerr
	})
	if gerr != nil {
		return nil, gerr
	}
	if err != nil {
		return nil, fmt.Errorf("modclass: %w", err)
	}
	return info, nil
}

// notDataSet tells the entries of a data set folder that are not part of
// the data set (kept when --force replaces it).
func notDataSet(name string) bool {
	return name != InfoFile && name != FeaturesFile && name != IQDir && name != ImpairmentsFile
}

// generate writes the data set into the (new, empty) folder dir.
func generate(ctx stdcontext.Context, dir string, o DatasetOptions) (*Info, error) {
	if o.IQ {
		if err := os.Mkdir(filepath.Join(dir, IQDir), 0o777); err != nil {
			return nil, fmt.Errorf("modclass: %w", err)
		}
	}
	t0 := time.Now()
	grid := o.SNRGrid()
	n := len(o.Mods) * o.PerClass
	rows := make([][]float64, n)
	var drawn []impair.Params
	if o.Impairments != nil {
		drawn = make([]impair.Params, n)
	}
	workers := o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, n)
	var (
		next, done atomic.Int64
		failed     atomic.Bool
		mu         sync.Mutex
		first      error
		wg         sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		if first == nil {
			first = err
		}
		mu.Unlock()
		failed.Store(true)
	}
	for range workers {
		e, err := signal.NewExtractor(signal.Config{SampleRate: o.SampleRate})
		if err != nil {
			return nil, fmt.Errorf("modclass: %w", err)
		}
		wg.Go(func() {
			var (
				syn signal.Synthesizer
				f   signal.Features
				x   = make([]complex64, o.Samples)
			)
			for !failed.Load() {
				if ctx.Err() != nil {
					fail(fmt.Errorf("modclass: stopped after %d of %d records: %w", done.Load(), n, stdcontext.Cause(ctx)))
					return
				}
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				m, idx := o.Mods[i/o.PerClass], i%o.PerClass
				so := o.Record(m, idx, grid)
				if err := syn.Generate(x, so); err != nil {
					fail(fmt.Errorf("modclass: record %s %d: %w", m, idx, err))
					return
				}
				rx := x
				if o.Impairments != nil {
					p := o.Impairments.Draw(o.Seed, uint64(i))
					var err error
					if rx, err = p.Apply(x, o.SampleRate, o.interferer(m, p)); err != nil {
						fail(fmt.Errorf("modclass: record %s %d: %w", m, idx, err))
						return
					}
					drawn[i] = p
				}
				if err := e.Extract(rx, &f); err != nil {
					fail(fmt.Errorf("modclass: record %s %d: %w", m, idx, err))
					return
				}
				row := make([]float64, 0, 2+22+len(f.MFCC))
				rows[i] = f.Vector(append(row, 0, so.SNRdB))
				if o.IQ {
					rec := &signal.Recording{Samples: rx, Meta: signal.Meta{Datatype: signal.CF32, SampleRate: o.SampleRate, Label: string(m), Synth: &so,
						Description: fmt.Sprintf("gotrain signal dataset: %s record %d, SNR %g dB", m, idx, so.SNRdB)}}
					if err := signal.WriteSigMF(filepath.Join(dir, IQDir, fmt.Sprintf("%s_%d", m, idx)), rec); err != nil {
						fail(fmt.Errorf("modclass: %w", err))
						return
					}
				}
				d := int(done.Add(1))
				if o.Progress != nil {
					mu.Lock()
					o.Progress(d, n)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	info := &Info{Format: infoFormat, FormatVersion: 1, GotrainVersion: buildVersion(), Options: o, Rows: n,
		SNRGrid: grid, Columns: Columns(), Counts: map[string]int{}, Nuisance: nuisanceText(o),
		Workers: workers, Seconds: time.Since(t0).Seconds()}
	for _, m := range o.Mods {
		info.Classes = append(info.Classes, string(m))
		info.Counts[string(m)] = o.PerClass
	}
	if err := writeCSV(filepath.Join(dir, FeaturesFile), o, rows); err != nil {
		return nil, err
	}
	if drawn != nil {
		if err := writeImpairments(filepath.Join(dir, ImpairmentsFile), o, drawn); err != nil {
			return nil, err
		}
	}
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("modclass: %w", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, InfoFile), append(b, '\n')); err != nil {
		return nil, fmt.Errorf("modclass: %w", err)
	}
	return info, nil
}

// checkDir checks that dir may hold a new data set: it does not exist, or
// it is an empty folder, or force is set.
func checkDir(dir string, force bool) error {
	ents, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("modclass: output folder: %w", err)
	case len(ents) > 0 && !force:
		return fmt.Errorf("modclass: output folder %s is not empty (use --force to replace its data set)", dir)
	}
	return nil
}

// writeCSV writes the feature rows, the label column holding the class
// name and every number in the shortest form that reads back exactly.
func writeCSV(path string, o DatasetOptions, rows [][]float64) error {
	cols := Columns()
	buf := []byte(strings.Join(cols, ",") + "\n")
	for i, r := range rows {
		buf = append(buf, o.Mods[i/o.PerClass]...)
		for j, v := range r[1:] {
			if !finite(v) {
				return fmt.Errorf("modclass: record %s %d: feature %s is %v", o.Mods[i/o.PerClass], i%o.PerClass, cols[j+1], v)
			}
			buf = append(buf, ',')
			buf = strconv.AppendFloat(buf, v, 'g', -1, 64)
		}
		buf = append(buf, '\n')
	}
	if err := atomicfile.WriteFile(path, buf); err != nil {
		return fmt.Errorf("modclass: %w", err)
	}
	return nil
}

// nuisanceText documents the per-record draws in dataset.json.
func nuisanceText(o DatasetOptions) map[string]string {
	return map[string]string{
		"phase_rad":      "uniform [0, 2π)",
		"carrier_offset": fmt.Sprintf("uniform [-%g, %g] Hz", o.MaxOffsetHz, o.MaxOffsetHz),
		"symbol_rate":    fmt.Sprintf("sample_rate / sps, sps uniform over %v (digital modes)", o.SPS),
		"fm":             fmt.Sprintf("deviation uniform [%g, %g] Hz, tone uniform [%g, %g] Hz", FMDevMinHz, FMDevMaxHz, ModFreqMinHz, ModFreqMaxHz),
		"am":             fmt.Sprintf("depth uniform [%g, %g] (am, am-dsb-wc, am-ssb-wc), tone uniform [%g, %g] Hz (every am class)", AMDepthMin, AMDepthMax, ModFreqMinHz, ModFreqMaxHz),
		"snr":            "full-band SNR; stepped: grid[index mod len(grid)], else uniform",
	}
}

// buildVersion returns the module version of this build ("(devel)" when
// built from a checkout).
func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// ParseMods parses a comma-separated list of modulation names ("" gives
// [DefaultMods]); an unknown name is reported with the valid ones.
func ParseMods(s string) ([]signal.Modulation, error) {
	if strings.TrimSpace(s) == "" {
		return append([]signal.Modulation(nil), DefaultMods...), nil
	}
	var mods []signal.Modulation
	for _, p := range strings.Split(s, ",") {
		m, err := signal.ParseModulation(strings.TrimSpace(p))
		if err != nil {
			return nil, fmt.Errorf("modclass: %w", err)
		}
		mods = append(mods, m)
	}
	return mods, nil
}

// interferer returns the impair.Params.Apply interferer of a record of
// class m with draw p: a noise-free record of another of o.Mods (or m
// when it is the only one), chosen and seeded by p.Interference.Seed.
func (o DatasetOptions) interferer(m signal.Modulation, p impair.Params) func(n int) ([]complex64, error) {
	return func(n int) ([]complex64, error) {
		if p.Interference == nil {
			return nil, errors.New("no interference drawn")
		}
		others := slices.DeleteFunc(slices.Clone(o.Mods), func(x signal.Modulation) bool { return x == m })
		if len(others) == 0 {
			others = []signal.Modulation{m}
		}
		seed := p.Interference.Seed
		so := o.Record(others[rng.Below(seed, len(others))], int(seed%uint64(max(o.PerClass, 1))), nil)
		so.Samples, so.NoNoise, so.Seed = n, true, seed
		return signal.Synthesize(so)
	}
}

// writeImpairments writes each record's impairments as JSON lines,
// atomically: row (of features.csv), label and the drawn parameters.
func writeImpairments(path string, o DatasetOptions, drawn []impair.Params) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for i, p := range drawn {
		line := struct {
			Row         int            `json:"row"`
			Label       string         `json:"label"`
			Impairments *impair.Params `json:"impairments"`
		}{i, string(o.Mods[i/o.PerClass]), &p}
		if err := enc.Encode(line); err != nil {
			return fmt.Errorf("modclass: %s: %w", path, err)
		}
	}
	if err := atomicfile.WriteFile(path, b.Bytes()); err != nil {
		return fmt.Errorf("modclass: %w", err)
	}
	return nil
}
