package forest

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteText writes r as `gotrain forest train` prints it: the data, the
// device and engine, the forest's size, the fit and prediction times, the
// test and out-of-bag scores, the importances in feature order and the
// model file, one aligned "name value" line each. r.Forest must be set (as
// Train sets it).
func (r *TrainResult) WriteText(w io.Writer) error {
	f := r.Forest
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "data\t%s (%d train rows, %d test rows, %d features)\n", r.Data, r.TrainRows, r.TestRows, r.Features)
	fmt.Fprintf(tw, "device\t%s (%s)\n", r.Device, r.Engine)
	if len(r.Categorical) > 0 {
		fmt.Fprintf(tw, "categorical\t%s\n", strings.Join(r.Categorical, ", "))
	}
	fmt.Fprintf(tw, "forest\t%s, %d trees, %d nodes, deepest leaf %d\n", r.Task, r.Trees, r.Nodes, r.MaxDepth)
	if g := r.GraphStats; g != nil {
		fmt.Fprintf(tw, "fit\t%.3f s + %.3f s compiling graphs (%d trees per batch, peak histogram %d bytes)\n", r.FitSeconds, g.CompileSeconds, g.TreesPerBatch, g.PeakHistogramBytes)
	} else {
		fmt.Fprintf(tw, "fit\t%.3f s (%d threads)\n", r.FitSeconds, r.Threads)
	}
	if d := r.Distributed; d != nil {
		fmt.Fprintf(tw, "distributed\t%s-parallel, %d processes; rank %d sent %d bytes, %.3f s in collectives\n", d.Mode, d.Ranks, d.Rank, d.BytesSent, d.CommSeconds)
	}
	if r.PredictSeconds != nil {
		fmt.Fprintf(tw, "predict\t%.4f s for %d rows\n", *r.PredictSeconds, r.TestRows)
	}
	if r.TestMSE != nil {
		fmt.Fprintf(tw, "test MSE\t%.2f\ntest R²\t%.4f\n", *r.TestMSE, *r.TestR2)
	}
	if r.TestAccuracy != nil {
		fmt.Fprintf(tw, "test accuracy\t%.4f\n", *r.TestAccuracy)
	}
	if r.OOBScore != nil {
		what := map[Task]string{Regression: "R²", Classification: "accuracy"}[r.Task]
		fmt.Fprintf(tw, "OOB %s\t%.4f (%d rows)\n", what, *r.OOBScore, f.OOBRows)
	}
	for j := 0; j < f.NumFeatures && r.Importances != nil; j++ {
		fmt.Fprintf(tw, "importance %s\t%.4f\n", f.FeatureName(j), r.Importances[f.FeatureName(j)])
	}
	for j := 0; j < f.NumFeatures && r.PermImport != nil; j++ {
		n := f.FeatureName(j)
		fmt.Fprintf(tw, "permutation importance %s\t%.4f ± %.4f\n", n, r.PermImport[n], r.PermImportSD[n])
	}
	if r.Model != "" {
		fmt.Fprintf(tw, "model\t%s\n", r.Model)
	}
	return tw.Flush()
}
