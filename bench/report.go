package bench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/gotrain/gotrain/internal/atomicfile"
	"github.com/gotrain/gotrain/internal/pngplot"
)

// Report is the report of `gotrain bench`: its JSON is that of --json,
// and WriteText writes the results' table ([WriteTable]).
type Report struct {
	Host    string   `json:"host"` // device.HostInfo
	Results []Result `json:"results"`
	Size    string   `json:"size"` // the workload sizes, as given
}

// Err is the report's parity verdict as an error: nil when every device's
// output matched the CPU's (a device that could not run a workload is
// reported, not failed), else an error wrapping ErrMismatch that names
// each workload and device that did not match and by how much.
func (r *Report) Err() error {
	var bad []string
	for i := range r.Results {
		if res := &r.Results[i]; res.Mismatch() {
			what := strings.TrimPrefix(strings.TrimPrefix(res.Parity, mismatch), ": ")
			bad = append(bad, fmt.Sprintf("%s on %s (%s)", res.Workload, res.Device, what))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("bench: %w: %s", ErrMismatch, strings.Join(bad, "; "))
}

// WriteText writes the results as an aligned terminal table.
func (r *Report) WriteText(w io.Writer) error { return WriteTable(w, r.Results) }

// WriteFiles writes the report's files, each only when its path is not
// empty: the Markdown table under header to md (WriteMarkdownFile) and
// the bar chart of speed-ups to png (WritePNG), both atomically.
func (r *Report) WriteFiles(md, png, header string) error {
	if md != "" {
		if err := WriteMarkdownFile(md, r.Results, header); err != nil {
			return err
		}
	}
	if png != "" {
		if err := WritePNG(png, r.Results); err != nil {
			return err
		}
	}
	return nil
}

// WriteTable prints the results as an aligned terminal table.
func WriteTable(w io.Writer, results []Result) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKLOAD\tDEVICE\tFIRST ms\tMEDIAN ms\tMIN ms\tMAX ms\tTHROUGHPUT\tSPEED-UP\tPARITY\tRSS MiB")
	for _, r := range results {
		if !r.Available {
			fmt.Fprintf(tw, "%s\t%s\t-\t-\t-\t-\t-\t-\tunavailable: %s\t-\n", r.Workload, r.Device, oneLine(r.Reason, 90))
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%.2f\t%.3f\t%.3f\t%.3f\t%.4g %s\t%.2fx\t%s\t%.0f\n",
			r.Workload, r.Device, r.FirstMS, r.MedianMS, r.MinMS, r.MaxMS, r.Throughput, r.Unit, r.SpeedUp, r.Parity, r.RSSMiB)
	}
	return tw.Flush()
}

// WriteMarkdown writes the results as a Markdown table (for docs/BENCHMARKS.md).
func WriteMarkdown(w io.Writer, results []Result, header string) error {
	var b strings.Builder
	if header != "" {
		b.WriteString(header + "\n\n")
	}
	b.WriteString("| workload | what | device | first call ms | median ms | min–max ms | throughput | speed-up vs cpu | parity |\n")
	b.WriteString("|---|---|---|---:|---:|---:|---:|---:|---|\n")
	for _, r := range results {
		if !r.Available {
			fmt.Fprintf(&b, "| %s | %s | %s | – | – | – | – | – | unavailable: %s |\n", r.Workload, r.Description, r.Device, oneLine(r.Reason, 120))
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %.2f | %.3f | %.3f–%.3f | %.4g %s | %.2fx | %s |\n",
			r.Workload, r.Description, r.Device, r.FirstMS, r.MedianMS, r.MinMS, r.MaxMS, r.Throughput, r.Unit, r.SpeedUp, r.Parity)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteMarkdownFile writes WriteMarkdown's table to path, atomically
// (internal/atomicfile: a FIFO or character device is written through).
func WriteMarkdownFile(path string, results []Result, header string) error {
	if err := atomicfile.Write(path, func(w io.Writer) error { return WriteMarkdown(w, results, header) }); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	return nil
}

// WritePNG draws a bar chart of each available result's speed-up against the
// CPU (1.0 for the CPU itself) and saves it as a PNG file, atomically.
func WritePNG(path string, results []Result) error {
	var vals plotter.Values
	var names []string
	for _, r := range results {
		if r.Available {
			vals = append(vals, r.SpeedUp)
			names = append(names, r.Workload+"\n"+r.Device)
		}
	}
	if len(vals) == 0 {
		return fmt.Errorf("bench: no result to plot")
	}
	p := plot.New()
	p.Title.Text = "gotrain bench: speed-up against the native CPU path"
	p.Y.Label.Text = "speed-up (x)"
	bars, err := plotter.NewBarChart(vals, vg.Points(22))
	if err != nil {
		return fmt.Errorf("bench: plotting: %w", err)
	}
	p.Add(bars)
	p.NominalX(names...)
	top := 1.0
	for _, v := range vals {
		top = max(top, v)
	}
	p.Y.Min, p.Y.Max = 0, top*1.15
	width := vg.Length(max(4, len(vals))) * vg.Inch * 0.9
	if err := pngplot.Save(path, [][]*plot.Plot{{p}}, draw.Tiles{}, width, 4*vg.Inch); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	return nil
}

func oneLine(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > n {
		return s[:n-3] + "..."
	}
	return s
}
