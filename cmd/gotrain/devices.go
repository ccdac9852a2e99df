package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gotrain/gotrain/device"
)

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
			rep := &device.Report{Host: device.HostInfo(), Inventory: inv, Devices: device.List(inv)}
			var targets []device.Device
			if cmd.Flags().Changed("device") {
				e, err := g.engine(cmd, device.Request{Inventory: &inv})
				if err != nil {
					return err
				}
				rep.Selected, targets = &e.Resolution, []device.Device{e.Device()}
			} else {
				for _, e := range rep.Devices {
					if e.Available {
						targets = append(targets, *e.Device)
					}
				}
			}
			failed := 0
			for _, d := range targets {
				if verify {
					rep.Verify = append(rep.Verify, device.Verify(d, repeats))
					if !rep.Verify[len(rep.Verify)-1].OK {
						failed++
					}
				}
			}
			if err := g.print(cmd, rep); err != nil {
				return err
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
