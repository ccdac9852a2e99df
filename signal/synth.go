package signal

import (
	"encoding/json"
	"fmt"
	"math"
	"math/cmplx"
	"slices"
	"strconv"
	"strings"

	"github.com/gotrain/gotrain/rng"
)

// Modulation names a waveform that [Synthesizer] generates.
type Modulation string

// The modulations. PSK, QAM, APSK, ASK and OOK are root-raised-cosine
// shaped constellations, and OQPSK is RRC-shaped QPSK whose Q rail is half
// a symbol late; FSK, GFSK and GMSK are continuous-phase; FM and the AM
// family (AM is AM-DSB-WC) carry a single tone; OFDM carries QPSK on its
// active subcarriers.
const (
	BPSK  Modulation = "bpsk"
	QPSK  Modulation = "qpsk"
	PSK8  Modulation = "8psk"
	QAM16 Modulation = "16qam"
	QAM64 Modulation = "64qam"
	FSK2  Modulation = "2fsk"
	FSK4  Modulation = "4fsk"
	GFSK  Modulation = "gfsk"
	FM    Modulation = "fm"
	AM    Modulation = "am"
	OFDM  Modulation = "ofdm"
	Tone  Modulation = "tone"
	Chirp Modulation = "chirp"
	// Added for the RadioML 2018 class set (docs/SIGNAL.md).
	OOK    Modulation = "ook"
	ASK4   Modulation = "4ask"
	ASK8   Modulation = "8ask"
	PSK16  Modulation = "16psk"
	PSK32  Modulation = "32psk"
	QAM32  Modulation = "32qam"
	QAM128 Modulation = "128qam"
	QAM256 Modulation = "256qam"
	// The rest of the RadioML 2018.01A classes (docs/SIGNAL.md): DVB-S2 and
	// DVB-S2X APSK, analog AM with and without carrier, GMSK and OQPSK.
	APSK16  Modulation = "16apsk"
	APSK32  Modulation = "32apsk"
	APSK64  Modulation = "64apsk"
	APSK128 Modulation = "128apsk"
	AMSSBWC Modulation = "am-ssb-wc"
	AMSSBSC Modulation = "am-ssb-sc"
	AMDSBWC Modulation = "am-dsb-wc"
	AMDSBSC Modulation = "am-dsb-sc"
	GMSK    Modulation = "gmsk"
	OQPSK   Modulation = "oqpsk"
)

// Modulations lists every modulation in a stable order (new ones are
// appended: data sets derive each record's stream from the position).
var Modulations = []Modulation{BPSK, QPSK, PSK8, QAM16, QAM64, FSK2, FSK4, GFSK, FM, AM, OFDM, Tone, Chirp,
	OOK, ASK4, ASK8, PSK16, PSK32, QAM32, QAM128, QAM256,
	APSK16, APSK32, APSK64, APSK128, AMSSBWC, AMSSBSC, AMDSBWC, AMDSBSC, GMSK, OQPSK}

// ParseModulation returns the modulation with the given name (case-insensitive).
func ParseModulation(s string) (Modulation, error) {
	m := Modulation(strings.ToLower(strings.TrimSpace(s)))
	for _, v := range Modulations {
		if v == m {
			return m, nil
		}
	}
	return "", fmt.Errorf("signal: unknown modulation %q (want one of %s)", s, ModulationNames())
}

// ModulationNames returns the names of [Modulations], comma-separated.
func ModulationNames() string {
	names := make([]string, len(Modulations))
	for i, v := range Modulations {
		names[i] = string(v)
	}
	return strings.Join(names, ", ")
}

// Digital reports whether m is a digital modulation, with a symbol rate
// (SynthOptions.SymbolRate) and so an Es/N0.
func (m Modulation) Digital() bool {
	return m.linear() || m == FSK2 || m == FSK4 || m == GFSK || m == GMSK || m == OQPSK
}

// linear reports whether m is a root-raised-cosine shaped constellation.
func (m Modulation) linear() bool {
	switch m {
	case BPSK, QPSK, PSK8, QAM16, QAM64, OOK, ASK4, ASK8, PSK16, PSK32, QAM32, QAM128, QAM256,
		APSK16, APSK32, APSK64, APSK128:
		return true
	}
	return false
}

// SynthOptions describes one record. Zero values take the documented
// defaults, so SynthOptions{Mod: QPSK, SampleRate: 200e3, Samples: 200000,
// SNRdB: 10} is the peer benchmark's QPSK record apart from its carrier
// offset (set CarrierOffset to 25e3 for that).
type SynthOptions struct {
	Mod        Modulation `json:"mod"`
	SampleRate float64    `json:"sample_rate"` // samples per second; required
	Samples    int        `json:"samples"`     // record length; required

	// SymbolRate is the symbol rate of digital modes in symbols per second
	// (default SampleRate/8). SampleRate/SymbolRate must be an integer.
	SymbolRate float64 `json:"symbol_rate,omitempty"`
	// RollOff is the root-raised-cosine roll-off β in (0, 1] (default 0.35).
	RollOff float64 `json:"roll_off,omitempty"`
	// SpanSymbols is the RRC filter span in symbols, even (default 8): the
	// filter has SpanSymbols·sps+1 taps, normalised to unit energy.
	SpanSymbols int `json:"span_symbols,omitempty"`

	// CarrierOffset shifts the signal by this many Hz; for Tone it is the
	// tone's frequency and for Chirp the centre of the sweep.
	CarrierOffset float64 `json:"carrier_offset,omitempty"`
	// Phase is the carrier phase at the first sample, in radians.
	Phase float64 `json:"phase,omitempty"`

	// SNRdB is the signal-to-noise ratio of the added white Gaussian noise,
	// over the full sampled band: the signal is scaled to unit power and
	// complex noise of total power 10^(−SNRdB/10) is added. With EsN0 set,
	// SNRdB is Es/N0 instead (digital modes only), which is the full-band
	// SNR plus 10·log10(SampleRate/SymbolRate).
	SNRdB    float64 `json:"snr_db"`
	EsN0     bool    `json:"esn0,omitempty"`
	NoNoise  bool    `json:"no_noise,omitempty"` // no noise at all (SNRdB is ignored)
	Unscaled bool    `json:"unscaled,omitempty"` // keep the modulator's own power instead of unit power

	// ModIndex is the FSK/GFSK modulation index h (default 1 for 2FSK and
	// 4FSK, 0.5 for GFSK; the tone spacing is h·SymbolRate) or the AM depth
	// of AM, AM-DSB-WC and AM-SSB-WC (default 0.5). GMSK ignores it: its h
	// is 0.5.
	ModIndex float64 `json:"mod_index,omitempty"`
	// BT is the GFSK Gaussian filter's bandwidth-time product (default
	// 0.5). GMSK ignores it: its BT is 0.3.
	BT float64 `json:"bt,omitempty"`
	// ModFreq is the message tone of FM and the AM family in Hz (default 1000).
	ModFreq float64 `json:"mod_freq,omitempty"`
	// Deviation is the FM peak deviation in Hz (default 10000).
	Deviation float64 `json:"deviation,omitempty"`
	// Subcarriers and CyclicPrefix set the OFDM FFT size (a power of two,
	// default 64) and prefix length in samples (default Subcarriers/4). The
	// active subcarriers are the middle three quarters of the band, less DC.
	Subcarriers  int `json:"subcarriers,omitempty"`
	CyclicPrefix int `json:"cyclic_prefix,omitempty"`
	// Bandwidth is the chirp's sweep in Hz (default SampleRate/4) and
	// ChirpPeriod its duration in seconds (default the whole record).
	Bandwidth   float64 `json:"bandwidth,omitempty"`
	ChirpPeriod float64 `json:"chirp_period,omitempty"`

	// Multipath, when set, is a tapped delay line with one complex tap per
	// sample of delay, applied before the noise: y[n] = Σ_k Multipath[k]·x[n−k].
	Multipath Taps `json:"multipath,omitempty"`
	// IQGainDB and IQPhaseDeg model receiver IQ imbalance, applied last
	// (to signal and noise): I' = I, Q' = g·(Q·cos φ − I·sin φ) with
	// g = 10^(IQGainDB/20) and φ = IQPhaseDeg.
	IQGainDB   float64 `json:"iq_gain_db,omitempty"`
	IQPhaseDeg float64 `json:"iq_phase_deg,omitempty"`

	// Seed selects the random streams (symbols and noise are drawn from
	// separate streams, so the symbols do not depend on the SNR).
	Seed uint64 `json:"seed"`
}

// withDefaults validates o and fills in the defaults. Every size and
// value is checked against the limits below before anything is allocated,
// and each error names the option and the allowed range.
func (o SynthOptions) withDefaults() (SynthOptions, error) {
	if _, err := ParseModulation(string(o.Mod)); err != nil {
		return o, err
	}
	if !(o.SampleRate >= MinSampleRate && o.SampleRate <= MaxSampleRate) {
		return o, fmt.Errorf("signal: SampleRate %v Hz: want %g to %g Hz", o.SampleRate, MinSampleRate, MaxSampleRate)
	}
	if o.Samples <= 0 || o.Samples > MaxSamples {
		return o, fmt.Errorf("signal: Samples %d: want 1 to %d (MaxSamples)", o.Samples, MaxSamples)
	}
	if o.Mod.Digital() {
		if o.SymbolRate == 0 {
			o.SymbolRate = o.SampleRate / 8
		}
		sps := o.SampleRate / o.SymbolRate
		if !(o.SymbolRate > 0) || !(sps >= 1 && sps <= MaxSamplesPerSymbol) || sps != math.Round(sps) {
			return o, fmt.Errorf("signal: SymbolRate %v: want the sample rate %v divided by a whole number of samples per symbol from 1 to %d",
				o.SymbolRate, o.SampleRate, MaxSamplesPerSymbol)
		}
		if o.Mod == OQPSK && int(sps)%2 != 0 {
			return o, fmt.Errorf("signal: SymbolRate %v: OQPSK delays Q by half a symbol, so it needs an even number of samples per symbol, not %v",
				o.SymbolRate, sps)
		}
	} else if o.EsN0 {
		return o, fmt.Errorf("signal: Es/N0 needs a digital modulation, not %s", o.Mod)
	}
	if o.RollOff == 0 {
		o.RollOff = 0.35
	}
	if !(o.RollOff > 0 && o.RollOff <= 1) {
		return o, fmt.Errorf("signal: RollOff %v: want a number in (0, 1]", o.RollOff)
	}
	if o.SpanSymbols == 0 {
		o.SpanSymbols = 8
	}
	if o.SpanSymbols < 2 || o.SpanSymbols%2 != 0 || o.SpanSymbols > 64 {
		return o, fmt.Errorf("signal: SpanSymbols %d: want an even number of symbols from 2 to 64", o.SpanSymbols)
	}
	if o.ModIndex == 0 {
		switch o.Mod {
		case GFSK:
			o.ModIndex = 0.5
		case AM, AMDSBWC, AMSSBWC:
			o.ModIndex = 0.5
		default:
			o.ModIndex = 1
		}
	}
	if !(o.ModIndex > 0 && o.ModIndex <= MaxModIndex) {
		return o, fmt.Errorf("signal: ModIndex %v: want a number in (0, %g]", o.ModIndex, float64(MaxModIndex))
	}
	if o.BT == 0 {
		o.BT = 0.5
	}
	if !(o.BT > 0) || o.BT > 10 {
		return o, fmt.Errorf("signal: BT %v: want a number in (0, 10]", o.BT)
	}
	if o.ModFreq == 0 {
		o.ModFreq = 1000
	}
	if !(o.ModFreq >= MinModFreq && o.ModFreq <= MaxFrequency) {
		return o, fmt.Errorf("signal: ModFreq %v Hz: want %g to %g Hz", o.ModFreq, MinModFreq, MaxFrequency)
	}
	if o.Deviation == 0 {
		o.Deviation = 10000
	}
	if o.Subcarriers == 0 {
		o.Subcarriers = 64
	}
	if o.Subcarriers < 8 || o.Subcarriers > 1<<16 || o.Subcarriers&(o.Subcarriers-1) != 0 {
		return o, fmt.Errorf("signal: Subcarriers %d: want a power of two from 8 to 65536", o.Subcarriers)
	}
	if o.CyclicPrefix == 0 {
		o.CyclicPrefix = o.Subcarriers / 4
	}
	if o.CyclicPrefix < 0 || o.CyclicPrefix > o.Subcarriers {
		return o, fmt.Errorf("signal: CyclicPrefix %d: want 0 to %d (the subcarriers)", o.CyclicPrefix, o.Subcarriers)
	}
	if o.Bandwidth == 0 {
		o.Bandwidth = o.SampleRate / 4
	}
	if o.ChirpPeriod == 0 {
		o.ChirpPeriod = float64(o.Samples) / o.SampleRate
	}
	if !(o.ChirpPeriod >= 1/o.SampleRate) || math.IsInf(o.ChirpPeriod, 0) {
		return o, fmt.Errorf("signal: ChirpPeriod %v s: want a finite number of seconds, at least one sample (%g s)", o.ChirpPeriod, 1/o.SampleRate)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"CarrierOffset", o.CarrierOffset}, {"Deviation", o.Deviation}, {"Bandwidth", o.Bandwidth}} {
		if !(math.Abs(f.v) <= MaxFrequency) {
			return o, fmt.Errorf("signal: %s %v Hz: want -%g to %g Hz", f.name, f.v, MaxFrequency, MaxFrequency)
		}
	}
	if !(o.SNRdB >= MinSNRdB && o.SNRdB <= MaxSNRdB) {
		return o, fmt.Errorf("signal: SNRdB %v: want %g to %g dB", o.SNRdB, MinSNRdB, MaxSNRdB)
	}
	if !(math.Abs(o.IQGainDB) <= MaxIQGainDB) {
		return o, fmt.Errorf("signal: IQGainDB %v: want -%g to %g dB", o.IQGainDB, MaxIQGainDB, MaxIQGainDB)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"Phase", o.Phase}, {"IQPhaseDeg", o.IQPhaseDeg}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return o, fmt.Errorf("signal: %s %v: want a finite number", f.name, f.v)
		}
	}
	if len(o.Multipath) > MaxMultipathTaps {
		return o, fmt.Errorf("signal: Multipath has %d taps: want at most %d", len(o.Multipath), MaxMultipathTaps)
	}
	for i, h := range o.Multipath {
		if !(cmplx.Abs(h) <= MaxTapMagnitude) {
			return o, fmt.Errorf("signal: Multipath tap %d is %v: want a magnitude of at most %g", i+1, h, float64(MaxTapMagnitude))
		}
	}
	return o, nil
}

// Limits of [SynthOptions], checked before a record is allocated. Within
// them every record is finite as complex64 ([Synthesize] also checks the
// samples it made).
const (
	// MaxSamples bounds one record's length (2^28 samples, 2 GiB as cf32).
	MaxSamples = 1 << 28
	// MinSampleRate and MaxSampleRate bound SampleRate, in Hz.
	MinSampleRate = 1e-3
	MaxSampleRate = 1e12
	// MaxSamplesPerSymbol bounds SampleRate/SymbolRate (the RRC filter
	// has SpanSymbols·sps+1 taps).
	MaxSamplesPerSymbol = 1024
	// MaxFrequency bounds the magnitude of CarrierOffset, Deviation,
	// Bandwidth and ModFreq, in Hz; MinModFreq is the lowest ModFreq.
	MaxFrequency = 1e12
	MinModFreq   = 1e-3
	// MinSNRdB and MaxSNRdB bound SNRdB: the noise is at most 10^10 times
	// the signal's power and at least 10^−20 times.
	MinSNRdB = -100.0
	MaxSNRdB = 200.0
	// MaxModIndex bounds ModIndex (the FSK index or the AM depth).
	MaxModIndex = 100
	// MaxIQGainDB bounds the magnitude of IQGainDB.
	MaxIQGainDB = 60.0
	// MaxMultipathTaps and MaxTapMagnitude bound Multipath.
	MaxMultipathTaps = 1024
	MaxTapMagnitude  = 1e6
)

// Taps are the complex taps of a tapped delay line; in JSON each tap is a
// [re, im] pair.
type Taps []complex128

// MarshalJSON encodes the taps as [re, im] pairs.
func (t Taps) MarshalJSON() ([]byte, error) {
	pairs := make([][2]float64, len(t))
	for i, v := range t {
		pairs[i] = [2]float64{real(v), imag(v)}
	}
	return json.Marshal(pairs)
}

// UnmarshalJSON decodes [re, im] pairs.
func (t *Taps) UnmarshalJSON(b []byte) error {
	var pairs [][2]float64
	if err := json.Unmarshal(b, &pairs); err != nil {
		return err
	}
	*t = make(Taps, len(pairs))
	for i, p := range pairs {
		(*t)[i] = complex(p[0], p[1])
	}
	return nil
}

// ParseTaps parses a comma-separated list of complex taps, such as
// "1,0.4-0.2i,0.1i" (each as strconv.ParseComplex reads it).
func ParseTaps(s string) (Taps, error) {
	var t Taps
	for i, p := range strings.Split(s, ",") {
		v, err := strconv.ParseComplex(strings.TrimSpace(p), 128)
		if err != nil {
			return nil, fmt.Errorf("signal: tap %d %q: not a complex number", i+1, p)
		}
		t = append(t, v)
	}
	return t, nil
}

// SamplesFor returns the samples of a record of the given seconds at
// rate Hz (rounded to the nearest), or an error outside 1..[MaxSamples].
func SamplesFor(seconds, rate float64) (int, error) {
	n := math.Round(seconds * rate)
	if !(n >= 1 && n <= MaxSamples) {
		return 0, fmt.Errorf("signal: %v s at %v Hz gives %v samples; want 1..%d", seconds, rate, n, MaxSamples)
	}
	return int(n), nil
}

// SNRString describes the noise of o: "no noise", "Es/N0 10 dB" or
// "SNR 10 dB (full band)".
func (o SynthOptions) SNRString() string {
	switch {
	case o.NoNoise:
		return "no noise"
	case o.EsN0:
		return fmt.Sprintf("Es/N0 %g dB", o.SNRdB)
	}
	return fmt.Sprintf("SNR %g dB (full band)", o.SNRdB)
}

// Synthesize returns one record of o.Samples samples. It allocates (after
// checking o); use a [Synthesizer] to generate many records without
// allocation. A record with a sample that is not finite is an error.
func Synthesize(o SynthOptions) ([]complex64, error) {
	var s Synthesizer
	if _, err := o.withDefaults(); err != nil {
		return nil, err // before the record is allocated
	}
	out := make([]complex64, o.Samples)
	if err := s.Generate(out, o); err != nil {
		return nil, err
	}
	if i := nonFinite(out); i >= 0 {
		return nil, fmt.Errorf("signal: sample %d of the %s record is %v: the options give values beyond float32", i, o.Mod, out[i])
	}
	return out, nil
}

// Synthesizer generates records and keeps its work buffers between calls.
// It is not safe for concurrent use; give each goroutine its own.
type Synthesizer struct {
	// Threads is how many goroutines one Generate call uses: 1 (or 0)
	// generates on the caller's goroutine; 2 or more draw the noise on a
	// second goroutine while the clean signal is made, then apply the
	// channel in two halves. The record is the same for any value.
	Threads int

	sym       []complex128 // symbols
	taps      []float64    // RRC taps
	tapsO     SynthOptions // options the taps were made for
	work      []complex128 // generic modulator output
	alphabet  []complex128 // constellation of alphaMod
	alphaMod  Modulation
	phases    [][]float64 // RRC taps per polyphase branch
	phaseTaps int         // len of the taps phases was made from
	phaseSrc  *float64    // and their storage
	symRe     []float64   // symbols, real and imaginary parts apart
	symIm     []float64
	noise     []float64 // one block of noise deviates
	noiseAll  []float64 // the whole record's deviates (Threads ≥ 2)
	noiseSpec []float64 // the caller's deviates from a guessed stream position
	starts    []uint64  // the stream state at the start of each of its first draws
	synced    bool      // whether the last generateSplit used noiseSpec (tests)
	tmp       []complex128
}

// Generate writes one record described by o into out, which must have
// length o.Samples. Options outside their limits are an error naming the
// option and its range.
func (s *Synthesizer) Generate(out []complex64, o SynthOptions) error {
	o, err := o.withDefaults()
	if err != nil {
		return err
	}
	if len(out) != o.Samples {
		return fmt.Errorf("signal: output buffer holds %d samples, want %d", len(out), o.Samples)
	}
	if s.Threads >= 2 && !o.NoNoise {
		return s.generateSplit(out, o)
	}
	if err := s.clean(out, o); err != nil {
		return err
	}
	if s.Threads >= 2 {
		finishParallel(out, o, nil)
	} else {
		s.noise = grow(s.noise, 4*finishBlock)
		finish(out, o, s.noise)
	}
	return nil
}

// clean writes the record before the channel: the modulated (and
// multipath-filtered) signal.
func (s *Synthesizer) clean(out []complex64, o SynthOptions) error {
	if o.Mod.linear() && len(o.Multipath) == 0 {
		// Fast path: shape straight into out as complex64.
		s.shapeLinear(out, o, 0)
		return nil
	}
	pre := 0
	if len(o.Multipath) > 0 {
		pre = len(o.Multipath) - 1
	}
	s.work = grow(s.work, o.Samples+pre)
	if err := s.modulate(s.work, o, pre); err != nil {
		return err
	}
	src := s.work
	if pre > 0 {
		s.tmp = grow(s.tmp, o.Samples)
		multipath(s.tmp, s.work, o.Multipath)
		src = s.tmp
	}
	for i := range out {
		out[i] = complex64(src[i])
	}
	return nil
}

// generateSplit is Generate on two goroutines with noise. The helper
// draws the noise of the first noiseShare % of the blocks from the start
// of the noise stream, then (once the clean signal exists) measures its
// power for the channel and applies the channel to its part; the caller
// makes the clean signal, then draws the rest of the noise from a guessed stream
// position a little before where the helper will end (each normal deviate
// takes one or more values of the stream, about normDrawRate on average),
// noting where each of its first draws began. The draw that began exactly
// where the helper ended starts the rest of the record's noise: from
// there on both read the same stream, so the deviates are the sequential
// ones. Should no draw begin there (the guess missed by more than its
// margin, or a draw spanned the point), the rest is drawn sequentially
// from the helper's end. The record is the same bit for bit as on one
// goroutine.
func (s *Synthesizer) generateSplit(out []complex64, o SynthOptions) error {
	n := len(out)
	nblk := (n + finishBlock - 1) / finishBlock
	split := min(n, (nblk*noiseShare/100)*finishBlock)
	s.noiseAll = grow(s.noiseAll, 2*n)
	var (
		ch        channel
		failed    bool
		end       uint64 // the helper's stream state after its draws
		noiseDone = make(chan struct{})
		cleanDone = make(chan struct{})
		chReady   = make(chan struct{})
		applyDone = make(chan struct{})
	)
	go func(first []float64) {
		defer close(applyDone)
		r := newStream(o.Seed, streamNoise)
		r.fillNorm(first)
		end = r.state
		close(noiseDone)
		<-cleanDone
		if failed {
			return
		}
		// The channel's power pass (one sequential sum) is the helper's.
		ch = newChannel(out, o)
		close(chReady)
		ch.applyRange(out, 0, split, first)
	}(s.noiseAll[:2*split])
	if err := s.clean(out, o); err != nil {
		failed = true
		close(cleanDone)
		<-applyDone
		return err
	}
	close(cleanDone)
	rest := s.noiseAll[2*split : 2*n]
	if m := 2 * (n - split); m > 0 {
		margin := normDrawMargin(2 * split)
		s.noiseSpec = grow(s.noiseSpec, m+2*margin)
		s.starts = grow(s.starts, 2*margin)
		guess := max(0, int64(math.Round(float64(2*split)*normDrawRate))-int64(margin))
		key := newStream(o.Seed, streamNoise).state
		r := stream{state: key + uint64(guess)*rng.Golden}
		r.fillNormTracked(s.noiseSpec, s.starts)
		<-noiseDone
		j := slices.Index(s.starts, end)
		s.synced = j >= 0
		if j >= 0 {
			rest = s.noiseSpec[j : j+m]
		} else {
			r := stream{state: end}
			r.fillNorm(rest)
		}
	}
	<-chReady
	ch.applyRange(out, split, n, rest)
	<-applyDone
	iqImbalance(out, o)
	return nil
}

// noiseShare is the percentage of the record's blocks whose noise the
// helper goroutine of generateSplit draws (the caller makes the clean
// signal first, the helper then measures its power).
const noiseShare = 50

// normDrawRate is the mean number of stream values one normal deviate of
// fillNorm takes (measured: 1.0409 over many records); normDrawMargin(k)
// is the margin, in stream values, of the guess of where k deviates end:
// about ten standard deviations of that count (0.072·k its variance).
var normDrawRate = 1.0409 // a variable so that tests can make the guess miss

func normDrawMargin(k int) int { return 64 + int(10*math.Sqrt(0.072*float64(k))) }

// nonFinite returns the index of the first sample of x with an infinite
// or NaN part, or −1.
func nonFinite(x []complex64) int {
	for i, v := range x {
		// v−v is 0 for a finite part and NaN otherwise.
		if d := v - v; d != 0 {
			return i
		}
	}
	return -1
}

// grow returns b resized to n, reusing its storage when it is large enough.
func grow[T any](b []T, n int) []T {
	if cap(b) >= n {
		return b[:n]
	}
	return make([]T, n)
}

// modulate writes len(out) samples of the non-fast-path modulations; the
// first pre samples precede the record (they feed the multipath filter).
func (s *Synthesizer) modulate(out []complex128, o SynthOptions, pre int) error {
	fs := o.SampleRate
	switch {
	case o.Mod.linear():
		tmp := make([]complex64, len(out))
		s.shapeLinear(tmp, o, -pre)
		for i, v := range tmp {
			out[i] = complex128(v)
		}
	case o.Mod == OQPSK:
		// QPSK shaped as usual, its Q rail delayed by half a symbol:
		// tmp[j] is the QPSK signal at sample j − pre − half.
		half := int(math.Round(o.SampleRate/o.SymbolRate)) / 2
		tmp := make([]complex64, len(out)+half)
		s.shapeLinear(tmp, o, -pre-half)
		for i := range out {
			out[i] = complex(float64(real(tmp[i+half])), float64(imag(tmp[i])))
		}
	case o.Mod == FSK2 || o.Mod == FSK4 || o.Mod == GFSK || o.Mod == GMSK:
		s.fsk(out, o)
	case o.Mod == FM:
		beta := o.Deviation / o.ModFreq
		for i := range out {
			t := float64(i-pre) / fs
			out[i] = cis(beta * math.Sin(2*math.Pi*o.ModFreq*t))
		}
	case o.Mod == AM:
		for i := range out {
			t := float64(i-pre) / fs
			out[i] = complex(1+o.ModIndex*math.Cos(2*math.Pi*o.ModFreq*t), 0)
		}
	case o.Mod == AMDSBWC || o.Mod == AMDSBSC || o.Mod == AMSSBWC || o.Mod == AMSSBSC:
		// The message m(t) = cos(2π·fm·t), as AM's; its Hilbert transform
		// is sin(2π·fm·t). DSB carries m, SSB (upper) m + i·H{m}; WC adds
		// the carrier 1 and scales the message by the depth.
		carrier, depth := 0.0, 1.0
		if o.Mod == AMDSBWC || o.Mod == AMSSBWC {
			carrier, depth = 1, o.ModIndex
		}
		ssb := o.Mod == AMSSBWC || o.Mod == AMSSBSC
		for i := range out {
			t := float64(i-pre) / fs
			sn, cs := math.Sincos(2 * math.Pi * o.ModFreq * t)
			var hil float64
			if ssb {
				hil = sn
			}
			out[i] = complex(carrier+depth*cs, depth*hil)
		}
	case o.Mod == OFDM:
		return s.ofdm(out, o)
	case o.Mod == Tone:
		for i := range out {
			out[i] = 1
		}
	case o.Mod == Chirp:
		// Frequency sweeps linearly from −B/2 to +B/2 over each period;
		// the carrier offset is applied later with the other modes'.
		period := o.ChirpPeriod
		k := o.Bandwidth / period
		for i := range out {
			t := float64(i-pre) / fs
			tp := t - period*math.Floor(t/period)
			out[i] = cis(2 * math.Pi * (-o.Bandwidth/2*tp + 0.5*k*tp*tp))
		}
	}
	return nil
}

func cis(theta float64) complex128 {
	sn, cs := math.Sincos(theta)
	return complex(cs, sn)
}
