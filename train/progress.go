package train

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Progress display modes (Config.Progress).
const (
	// ProgressAuto shows a bar when the writer is a terminal and plain
	// lines otherwise.
	ProgressAuto = "auto"
	// ProgressBar always shows a bar (ANSI escapes included).
	ProgressBar = "bar"
	// ProgressPlain writes a plain line every Config.ProgressInterval.
	ProgressPlain = "plain"
	// ProgressOff shows nothing.
	ProgressOff = "off"
)

// ProgressStatus is what a progress display shows after an optimizer step.
type ProgressStatus struct {
	// Step is the number of optimizer steps done and Total the number aimed for.
	Step, Total int64
	// Loss is the last step's loss.
	Loss float64
	// SamplesPerSec is the steady throughput (examples per second, from the
	// median step time after the first).
	SamplesPerSec float64
	// Elapsed is the time spent in training steps in this run.
	Elapsed time.Duration
	// ETA is the estimated time to reach Total at the steady step time.
	ETA time.Duration
}

// String formats s as one plain line without escape sequences.
func (s ProgressStatus) String() string {
	pct := 0.0
	if s.Total > 0 {
		pct = 100 * float64(s.Step) / float64(s.Total)
	}
	return fmt.Sprintf("train: step %d/%d (%.1f%%) loss %.6g %.1f samples/s elapsed %s ETA %s",
		s.Step, s.Total, pct, s.Loss, s.SamplesPerSec, s.Elapsed.Round(time.Second), s.ETA.Round(time.Second))
}

// IsTerminal tells whether w is a terminal (a file whose descriptor is a
// TTY).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	if !ok {
		return false
	}
	fd := f.Fd()
	return fd <= math.MaxInt32 && term.IsTerminal(int(fd))
}

// progressReporter shows ProgressStatus values.
type progressReporter interface {
	update(s ProgressStatus)
	finish(s ProgressStatus)
}

// newProgress returns the reporter for mode writing to w: with auto, a bar
// when w is a terminal and plain lines every interval otherwise.
func newProgress(mode string, w io.Writer, interval time.Duration, start, total int64) progressReporter {
	if w == nil || mode == ProgressOff {
		return nil
	}
	if mode == ProgressBar || (mode == ProgressAuto && IsTerminal(w)) {
		bar := progressbar.NewOptions64(total,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetWidth(30),
			progressbar.OptionShowCount(),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionSetPredictTime(false), // the description carries our ETA
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionShowDescriptionAtLineEnd(),
		)
		if start > 0 {
			_ = bar.Set64(start)
		}
		return &barProgress{bar: bar, w: w}
	}
	return &plainProgress{w: w, interval: interval, now: time.Now}
}

// barProgress is a progressbar on a terminal.
type barProgress struct {
	bar *progressbar.ProgressBar
	w   io.Writer
}

func (b *barProgress) update(s ProgressStatus) {
	if s.Total > 0 && s.Total != b.bar.GetMax64() {
		b.bar.ChangeMax64(s.Total) // a time-limited run planned its end
	}
	b.bar.Describe(fmt.Sprintf("loss %.4g | %.1f samples/s | ETA %s", s.Loss, s.SamplesPerSec, s.ETA.Round(time.Second)))
	_ = b.bar.Set64(s.Step)
}

func (b *barProgress) finish(s ProgressStatus) {
	b.update(s)
	_ = b.bar.Exit() // leaves the bar as it is (Finish would fill it on an early stop)
	_, _ = fmt.Fprintln(b.w)
}

// plainProgress writes s.String() lines: after the first step, then at most
// once per interval, and at the end.
type plainProgress struct {
	w        io.Writer
	interval time.Duration
	now      func() time.Time
	last     time.Time
	lastStep int64
	printed  bool
}

func (p *plainProgress) update(s ProgressStatus) {
	t := p.now()
	if p.printed && t.Sub(p.last) < p.interval {
		return
	}
	p.write(s, t)
}

func (p *plainProgress) finish(s ProgressStatus) {
	if p.printed && p.lastStep == s.Step {
		return
	}
	p.write(s, p.now())
}

func (p *plainProgress) write(s ProgressStatus, t time.Time) {
	_, _ = fmt.Fprintln(p.w, s.String())
	p.last, p.lastStep, p.printed = t, s.Step, true
}
