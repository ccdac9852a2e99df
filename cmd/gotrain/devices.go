package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/gotrain/gotrain/device"
)

type devicesReport struct {
	Host      string                `json:"host"`
	Inventory device.Inventory      `json:"inventory"`
	Devices   []device.Entry        `json:"devices"`
	Selected  *device.Resolution    `json:"selected,omitempty"`
	Verify    []device.VerifyResult `json:"verify,omitempty"`
}

func newDevicesCmd(g *globals) *cobra.Command {
	var verify bool
	var repeats int
	cmd := &cobra.Command{
		Use:   "devices",
		Short: "List backends and devices, with why each unavailable one cannot be used",
		Long: `devices lists every backend and device gotrain knows of — native Go, GoMLX's
simplego, and each device of each PJRT plugin found — with availability and the
reason for each that cannot be used. --verify runs a small matmul + reduction on
each available device (or only on --device when it is given), compares it with a
float64 CPU reference and times it, the first call (compilation) apart.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			inv := device.Discover(device.DiscoverOptions{Probe: true})
			rep := devicesReport{Host: device.HostInfo(), Inventory: inv, Devices: device.List(inv)}
			var targets []device.Device
			if cmd.Flags().Changed("device") {
				e, err := g.engine(cmd, device.Request{Inventory: &inv})
				if err != nil {
					return err
				}
				rep.Selected = &e.Resolution
				targets = []device.Device{e.Device()}
			} else {
				for _, e := range rep.Devices {
					if e.Available {
						targets = append(targets, *e.Device)
					}
				}
			}
			failed := 0
			if verify {
				for _, d := range targets {
					r := device.Verify(d, repeats)
					if !r.OK {
						failed++
					}
					rep.Verify = append(rep.Verify, r)
				}
			}
			if g.json {
				if err := printJSON(cmd.OutOrStdout(), rep); err != nil {
					return err
				}
			} else {
				printDevices(cmd, rep)
			}
			if failed > 0 {
				return fmt.Errorf("devices: %d device(s) failed verification", failed)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&verify, "verify", false, "run and time a small computation on each available device, checked against a float64 CPU reference")
	cmd.Flags().IntVar(&repeats, "repeats", 10, "timed repeats per device for --verify (after one warm-up call)")
	return cmd
}

func printDevices(cmd *cobra.Command, rep devicesReport) {
	w := tabwriter.NewWriter(cmd.OutOrStdout(), 2, 4, 2, ' ', 0)
	fmt.Fprintf(w, "host: %s\n", rep.Host)
	if !rep.Inventory.XLACompiled {
		fmt.Fprintf(w, "xla: %s\n", rep.Inventory.NoXLAReason)
	}
	fmt.Fprintln(w, "\nDEVICE\tENGINE\tCLASS\tSTATUS\tDETAIL")
	for _, e := range rep.Devices {
		status, detail := "available", e.Description
		if !e.Available {
			status, detail = "unavailable", e.Reason
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", e.Name, e.Engine, e.Class, status, oneLine(detail, 160))
	}
	if rep.Selected != nil {
		fmt.Fprintf(w, "\nselected: %s\n", rep.Selected.Summary())
	}
	if len(rep.Verify) > 0 {
		fmt.Fprintln(w, "\nVERIFY\tRESULT\tREL ERROR\tFIRST CALL ms\tMEDIAN ms")
		for _, r := range rep.Verify {
			result := "verified"
			if !r.OK {
				result = "FAILED: " + oneLine(r.Err, 100)
			}
			fmt.Fprintf(w, "%s\t%s\t%.2e\t%.3f\t%.3f (n=%d)\n", r.Device, result, r.RelError, r.FirstMS, r.MedianMS, r.Repeats)
		}
	}
	_ = w.Flush()
}
