package train

import (
	stdcontext "context"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/gotrain/gotrain/internal/pngplot"
)

// The learning-rate range test (Smith, "Cyclical Learning Rates for
// Training Neural Networks", 2017; the form fastai's lr_find made usual):
// starting from the model's initial weights, step i (0-based) of at most
// FindLRSteps trains with the learning rate
//
//	lr_i = FindLRMin · (FindLRMax / FindLRMin)^(i / (FindLRSteps − 1))
//
// (an exponential ramp; the schedule, warm-up and cosine, is not used).
// The loss is smoothed by an exponential moving average, bias-corrected:
// s_i = β·s_{i−1} + (1−β)·loss_i, smoothed_i = s_i / (1 − β^(i+1)), β =
// LRSmoothing. The test stops early when the loss diverges: a loss that
// is not finite, or a smoothed loss above LRDivergence times the lowest
// so far.
//
// The suggestion is the learning rate where the smoothed loss falls
// fastest: the most negative slope d(smoothed)/d(ln lr), by central
// differences (one-sided at the ends), among the steps from the first
// counted to the lowest smoothed loss. The first min(LRSkipStart, n/4) of
// the n steps done are not counted (the average of a few batches is
// mostly their noise: a lucky second batch would otherwise be the
// lowest). When fewer than 3 counted steps lead to the lowest (a loss
// that rises from the start), the suggestion is the learning rate of the
// lowest smoothed loss divided by 10. Both figures are reported.
//
// The test writes no checkpoint, log or TensorBoard file, and never
// resumes or changes a run: it trains a throw-away copy of the model.

// LRSmoothing is β, the smoothing of the range test's loss.
const LRSmoothing = 0.98

// LRSkipStart is the most steps at the start of the range test that its
// suggestion leaves out (a quarter of the steps done, at most).
const LRSkipStart = 10

// LRDivergence is the factor over the lowest smoothed loss at which the
// range test stops.
const LRDivergence = 4.0

// LRPoint is one step of the range test.
type LRPoint struct {
	Step     int     `json:"step"`
	LR       float64 `json:"lr"`
	Loss     float64 `json:"loss"`
	Smoothed float64 `json:"smoothed_loss"`
}

// LRRangeTest is the outcome of the learning-rate range test
// (Config.FindLR).
type LRRangeTest struct {
	MinLR float64 `json:"min_lr"`
	MaxLR float64 `json:"max_lr"`
	// Steps is the number of steps planned; Points the steps done.
	Steps  int       `json:"steps"`
	Points []LRPoint `json:"points"`
	// Stopped says why the test ended.
	Stopped string `json:"stopped"`
	// SteepestLR is the learning rate of the steepest descent of the
	// smoothed loss (0 when fewer than 3 steps lead to its lowest).
	SteepestLR float64 `json:"steepest_lr"`
	// MinLossLR is the learning rate of the lowest smoothed loss.
	MinLossLR float64 `json:"min_loss_lr"`
	// SuggestedLR is SteepestLR, or MinLossLR/10 without it.
	SuggestedLR float64 `json:"suggested_lr"`
	// Rule names the rule that gave SuggestedLR.
	Rule string `json:"rule"`
	// Plot is the PNG of the smoothed loss against the learning rate
	// (Config.PlotsDir/lr_range_test.png), if written.
	Plot string `json:"plot,omitempty"`
}

// LRRangeTestPlot is the file name of the range test's plot in
// Config.PlotsDir.
const LRRangeTestPlot = "lr_range_test.png"

// LRFound is the error RunContext returns, instead of training, when
// Config.FindLR is set: the range test is done and Test holds it. The
// models' wrapping keeps it (errors.As).
type LRFound struct{ Test *LRRangeTest }

func (e *LRFound) Error() string {
	return fmt.Sprintf("train: learning-rate range test done (FindLR, no training): suggested LearningRate %.3g", e.Test.SuggestedLR)
}

// rangeLR is the learning rate of step i of n of the ramp from lo to hi.
func rangeLR(i, n int, lo, hi float64) float64 {
	if n <= 1 {
		return lo
	}
	return lo * math.Pow(hi/lo, float64(i)/float64(n-1))
}

// findLR runs the range test on h (fresh: before its first step, without
// logs or checkpoints) and returns it.
func (h *Harness) findLR(ctx stdcontext.Context) (*LRRangeTest, error) {
	cfg := h.cfg
	r := &LRRangeTest{MinLR: cfg.FindLRMin, MaxLR: cfg.FindLRMax, Steps: cfg.FindLRSteps}
	h.opt.fixedLR = true // the graph, built at the first step, leaves the learning rate to the ramp
	lrVar := optimizers.LearningRateVar(h.ctx, dtypes.Float32, cfg.FindLRMin)
	var avg float64
	best := math.Inf(1)
	r.Stopped = fmt.Sprintf("reached MaxLR %g after %d steps", cfg.FindLRMax, cfg.FindLRSteps)
	for i := range cfg.FindLRSteps {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("train: learning-rate range test: %w after %d steps: %w", ErrInterrupted, i, stdcontext.Cause(ctx))
		}
		lr := rangeLR(i, cfg.FindLRSteps, cfg.FindLRMin, cfg.FindLRMax)
		if err := lrVar.SetValue(tensors.FromScalar(float32(lr))); err != nil {
			return nil, fmt.Errorf("train: learning-rate range test: %w", err)
		}
		loss, err := h.TrainStep()
		if err != nil && !errors.Is(err, ErrNonFiniteLoss) {
			return nil, fmt.Errorf("train: learning-rate range test: %w", err)
		}
		if err != nil || math.IsNaN(loss) || math.IsInf(loss, 0) {
			r.Stopped = fmt.Sprintf("diverged at step %d (lr %.3g): the loss is not finite", i+1, lr)
			break
		}
		avg = LRSmoothing*avg + (1-LRSmoothing)*loss
		s := avg / (1 - math.Pow(LRSmoothing, float64(i+1)))
		r.Points = append(r.Points, LRPoint{Step: i + 1, LR: lr, Loss: loss, Smoothed: s})
		best = math.Min(best, s)
		if s > LRDivergence*best {
			r.Stopped = fmt.Sprintf("diverged at step %d (lr %.3g): smoothed loss %.4g is above %g x the lowest, %.4g", i+1, lr, s, LRDivergence, best)
			break
		}
	}
	if len(r.Points) == 0 {
		return nil, fmt.Errorf("train: learning-rate range test: %s", r.Stopped)
	}
	r.suggest()
	return r, nil
}

// suggest fills SteepestLR, MinLossLR, SuggestedLR and Rule from Points.
func (r *LRRangeTest) suggest() {
	skip := min(LRSkipStart, len(r.Points)/4)
	lo := skip
	for i := skip; i < len(r.Points); i++ {
		if r.Points[i].Smoothed < r.Points[lo].Smoothed {
			lo = i
		}
	}
	r.MinLossLR = r.Points[lo].LR
	if lo-skip+1 >= 3 {
		steepest, at := math.Inf(1), -1
		for i := skip; i <= lo; i++ {
			a, b := max(i-1, skip), min(i+1, lo)
			dx := math.Log(r.Points[b].LR) - math.Log(r.Points[a].LR)
			if dx <= 0 {
				continue
			}
			if g := (r.Points[b].Smoothed - r.Points[a].Smoothed) / dx; g < steepest {
				steepest, at = g, i
			}
		}
		if at >= 0 && steepest < 0 {
			r.SteepestLR = r.Points[at].LR
		}
	}
	if r.SteepestLR > 0 {
		r.SuggestedLR = r.SteepestLR
		r.Rule = fmt.Sprintf("steepest descent of the smoothed loss (most negative slope against ln lr, from step %d to its lowest)", skip+1)
	} else {
		r.SuggestedLR = r.MinLossLR / 10
		r.Rule = fmt.Sprintf("learning rate of the lowest smoothed loss (from step %d) / 10: fewer than 3 steps lead to it", skip+1)
	}
}

// WriteText writes the test's report: the suggestion, the rule, why it
// stopped, then a table of the steps.
func (r *LRRangeTest) WriteText(w io.Writer) error {
	_, err := fmt.Fprintf(w, "learning-rate range test: %d of %d steps, lr %.3g to %.3g (exponential)\nstopped: %s\nsuggested lr: %.4g (%s)\nlowest smoothed loss at lr %.4g (lr/10 = %.4g)\n",
		len(r.Points), r.Steps, r.MinLR, r.MaxLR, r.Stopped, r.SuggestedLR, r.Rule, r.MinLossLR, r.MinLossLR/10)
	if err != nil {
		return err
	}
	if r.Plot != "" {
		if _, err := fmt.Fprintf(w, "plot: %s\n", r.Plot); err != nil {
			return err
		}
	}
	if _, err := fmt.Fprintf(w, "%6s %12s %12s %12s\n", "step", "lr", "loss", "smoothed"); err != nil {
		return err
	}
	for _, p := range r.Points {
		if _, err := fmt.Fprintf(w, "%6d %12.4g %12.6g %12.6g\n", p.Step, p.LR, p.Loss, p.Smoothed); err != nil {
			return err
		}
	}
	return nil
}

// writePlot draws the loss and the smoothed loss against the learning
// rate (log scale) with the suggestion marked, into dir/LRRangeTestPlot.
func (r *LRRangeTest) writePlot(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("train: range test plot: %w", err)
	}
	var raw, smooth plotter.XYs
	for _, p := range r.Points {
		raw = append(raw, plotter.XY{X: p.LR, Y: p.Loss})
		smooth = append(smooth, plotter.XY{X: p.LR, Y: p.Smoothed})
	}
	p := plot.New()
	p.Title.Text = "Learning-rate range test"
	p.X.Label.Text = "learning rate"
	p.Y.Label.Text = "loss"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Add(plotter.NewGrid())
	rl, err := plotter.NewLine(raw)
	if err != nil {
		return "", err
	}
	rl.Color = color.Gray{Y: 150}
	sl, err := plotter.NewLine(smooth)
	if err != nil {
		return "", err
	}
	sl.Width = vg.Points(1.5)
	mark, err := plotter.NewScatter(plotter.XYs{{X: r.SuggestedLR, Y: r.smoothedAt(r.SuggestedLR)}})
	if err != nil {
		return "", err
	}
	mark.Radius = vg.Points(4)
	p.Add(rl, sl, mark)
	p.Legend.Add("loss", rl)
	p.Legend.Add("smoothed", sl)
	p.Legend.Add(fmt.Sprintf("suggested %.3g", r.SuggestedLR), mark)
	p.Legend.Top = true
	// The loss of the diverging end can be far above the rest: the axis
	// stops at LRDivergence x the lowest smoothed loss.
	lo := math.Inf(1)
	for _, q := range r.Points {
		lo = math.Min(lo, q.Smoothed)
	}
	if lo > 0 && p.Y.Max > LRDivergence*lo {
		p.Y.Max = LRDivergence * lo
	}
	path := filepath.Join(dir, LRRangeTestPlot)
	if err := pngplot.Save(path, [][]*plot.Plot{{p}}, draw.Tiles{}, 6*vg.Inch, 4*vg.Inch); err != nil {
		return "", fmt.Errorf("train: range test plot: %w", err)
	}
	return path, nil
}

// smoothedAt is the smoothed loss at the point whose learning rate is
// nearest lr (in ln lr).
func (r *LRRangeTest) smoothedAt(lr float64) float64 {
	best, d := r.Points[0].Smoothed, math.Inf(1)
	for _, p := range r.Points {
		if e := math.Abs(math.Log(p.LR) - math.Log(lr)); e < d {
			best, d = p.Smoothed, e
		}
	}
	return best
}
