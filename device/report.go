package device

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Report is what `gotrain devices` shows; its JSON is that of `gotrain
// devices --json`.
type Report struct {
	// Host describes the machine (HostInfo).
	Host string `json:"host"`
	// Inventory is what Discover found.
	Inventory Inventory `json:"inventory"`
	// Devices is the device table (List).
	Devices []Entry `json:"devices"`
	// Selected is the resolution of --device, when it was given.
	Selected *Resolution `json:"selected,omitempty"`
	// Verify are the results of Verify, with --verify.
	Verify []VerifyResult `json:"verify,omitempty"`
}

// NewReport returns the report of the inventory inv: the host and the
// device table, nothing selected or verified yet.
func NewReport(inv Inventory) *Report {
	return &Report{Host: HostInfo(), Inventory: inv, Devices: List(inv)}
}

// SurveyOptions say what Survey does besides listing the devices.
type SurveyOptions struct {
	// Inventory is what was discovered about the machine; nil discovers
	// it, probing the plugins.
	Inventory *Inventory
	// PluginFile is an explicit PJRT plugin file, the only one considered
	// when the inventory is discovered (DiscoverOptions.PluginFile).
	PluginFile string
	// Select, when set, is resolved against the inventory (Select; its own
	// Inventory is ignored): the report's Selected is its resolution, and
	// only its device is verified.
	Select *Request
	// Verify runs Verify on every available device (or the selected one).
	Verify bool
	// Repeats is the number of timed calls per device for Verify.
	Repeats int
}

// Survey returns the report of `gotrain devices`: the machine's devices
// (NewReport), the resolution of opts.Select and, with opts.Verify, the
// verification of the devices (VerifyAll). A selection that cannot be
// made is Select's error, with no report; when verification fails, the
// report comes with VerifyAll's error counting the failed devices.
func Survey(opts SurveyOptions) (*Report, error) {
	var inv Inventory
	if opts.Inventory != nil {
		inv = *opts.Inventory
	} else {
		inv = Discover(DiscoverOptions{Probe: true, PluginFile: opts.PluginFile})
	}
	rep := NewReport(inv)
	targets := rep.Available()
	if opts.Select != nil {
		req := *opts.Select
		req.Inventory = &inv
		e, err := Select(req)
		if err != nil {
			return nil, err
		}
		e.Close() // only the resolution is kept: nothing was opened
		rep.Selected, targets = &e.Resolution, []Device{e.Device()}
	}
	if !opts.Verify {
		return rep, nil
	}
	err := rep.VerifyAll(targets, opts.Repeats)
	return rep, err
}

// Available returns the devices of the table that can be used.
func (r *Report) Available() []Device {
	var ds []Device
	for _, e := range r.Devices {
		if e.Available {
			ds = append(ds, *e.Device)
		}
	}
	return ds
}

// VerifyAll runs Verify on each of targets with repeats timed calls,
// appends the results to r.Verify, and returns an error counting the
// devices that failed (nil when none did).
func (r *Report) VerifyAll(targets []Device, repeats int) error {
	failed := 0
	for _, d := range targets {
		v := Verify(d, repeats)
		r.Verify = append(r.Verify, v)
		if !v.OK {
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d device(s) failed verification", failed)
	}
	return nil
}

// WriteText writes r as `gotrain devices` prints it: the host (and why XLA
// is not compiled in), the device table with each device's description or
// the reason it cannot be used, the selected device and the verification
// table.
func (r *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "host: %s\n", r.Host)
	if !r.Inventory.XLACompiled {
		fmt.Fprintf(tw, "xla: %s\n", r.Inventory.NoXLAReason)
	}
	fmt.Fprintln(tw, "\nDEVICE\tENGINE\tCLASS\tSTATUS\tDETAIL")
	for _, e := range r.Devices {
		status, detail := "available", e.Description
		if !e.Available {
			status, detail = "unavailable", e.Reason
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.Name, e.Engine, e.Class, status, oneLine(detail, 160))
	}
	r.writePlugins(tw)
	if r.Selected != nil {
		fmt.Fprintf(tw, "\nselected: %s\n", r.Selected.Summary())
	}
	if len(r.Verify) > 0 {
		fmt.Fprintln(tw, "\nVERIFY\tRESULT\tREL ERROR\tFIRST CALL ms\tMEDIAN ms")
		for _, v := range r.Verify {
			result := "verified"
			if !v.OK {
				result = "FAILED: " + oneLine(v.Err, 100)
			}
			fmt.Fprintf(tw, "%s\t%s\t%.2e\t%.3f\t%.3f (n=%d)\n", v.Device, result, v.RelError, v.FirstMS, v.MedianMS, v.Repeats)
		}
	}
	return tw.Flush()
}

// writePlugins writes the plugins considered, each with where it was
// found and its PJRT C API version against the loader's, then, in full,
// what is wrong with each version that differs and the fix.
func (r *Report) writePlugins(w io.Writer) {
	inv := r.Inventory
	if inv.PluginFile != "" {
		fmt.Fprintf(w, "\nplugin file: %s (only this plugin is considered)\n", inv.PluginFile)
		if inv.PluginFileErr != "" {
			fmt.Fprintf(w, "plugin file cannot be used: %s\n", inv.PluginFileErr)
		}
	}
	if len(inv.Plugins) == 0 {
		return
	}
	fmt.Fprintln(w, "\nPLUGIN\tSOURCE\tPJRT C API\tPATH")
	for _, p := range inv.Plugins {
		api := "not read (not probed)"
		if p.PJRTAPI != nil {
			api = p.PJRTAPI.String()
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", p.Name, p.Source, api, p.Path)
	}
	fmt.Fprintf(w, "gotrain's PJRT loader: C API %s\n", inv.PJRTLoader)
	for _, p := range inv.Plugins {
		if problem := PJRTAPIProblem(p); problem != "" {
			fmt.Fprintf(w, "%s\n  fix: %s\n", problem, PJRTAPIFix(p))
		}
	}
}

// oneLine puts s on one line, shortened to n bytes with "...".
func oneLine(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if n > 0 && len(s) > n {
		return s[:n-3] + "..."
	}
	return s
}
