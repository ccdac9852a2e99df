package main

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gotrain/gotrain/bench"
	"github.com/gotrain/gotrain/device"
)

func newBenchCmd(g *globals) *cobra.Command {
	var size, devices, mdFile, pngFile string
	var repeats int
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Time every workload on the native CPU path and on every available device",
		Long: `bench runs each workload (matmul, forest fit, forest predict, and more as they
land) on the native CPU path and on every available device (or --devices), the
first call (graph building and compilation) apart from the median, min and max of
--repeats steady calls, each ending with its results copied back to the host. It
reports throughput, the speed-up against the CPU, parity with the CPU's output
and host memory. A workload a device cannot run is listed with the reason.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sz, err := bench.ParseSize(size)
			if err != nil {
				return err
			}
			devs, err := benchDevices(devices)
			if err != nil {
				return err
			}
			ws, err := bench.Workloads(sz)
			if err != nil {
				return err
			}
			results, err := bench.Run(ws, bench.Options{Repeats: repeats, Devices: devs, Progress: func(w, d string) {
				slog.Info("bench: measuring", "workload", w, "device", d)
			}})
			if err != nil {
				return err
			}
			if mdFile != "" {
				hdr := fmt.Sprintf("`gotrain bench --size %s --repeats %d` on %s", size, repeats, device.HostInfo())
				if err := bench.WriteMarkdownFile(mdFile, results, hdr); err != nil {
					return err
				}
			}
			if pngFile != "" {
				if err := bench.WritePNG(pngFile, results); err != nil {
					return err
				}
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), map[string]any{"host": device.HostInfo(), "size": size, "results": results})
			}
			return bench.WriteTable(cmd.OutOrStdout(), results)
		},
	}
	cmd.Flags().StringVar(&size, "size", "small", "workload sizes: small (seconds) or seed (the seed systems' sizes)")
	cmd.Flags().StringVar(&devices, "devices", "all", "devices to run on: all (every available one) or a comma list of --device forms; cpu always runs first as the reference")
	cmd.Flags().IntVar(&repeats, "repeats", 5, "timed calls after the first")
	cmd.Flags().StringVar(&mdFile, "md", "", "also write the table as Markdown to this file")
	cmd.Flags().StringVar(&pngFile, "png", "", "also write a bar chart of speed-ups to this PNG file")
	return cmd
}

// benchDevices returns the native CPU followed by the requested devices. An
// explicit device that is not available is an error with the reason.
func benchDevices(list string) ([]device.Device, error) {
	inv := device.Discover(device.DiscoverOptions{Probe: true})
	cpu, err := device.Resolve(device.Spec{Kind: device.CPU, Index: device.AnyIndex}, inv, device.Options{})
	if err != nil {
		return nil, err
	}
	out := []device.Device{cpu.Device}
	if list == "all" {
		for _, e := range device.List(inv) {
			if e.Available && e.Device.Kind != device.Native {
				out = append(out, *e.Device)
			}
		}
		return out, nil
	}
	seen := map[string]bool{"cpu": true}
	for _, s := range strings.Split(list, ",") {
		spec, err := device.ParseSpec(strings.TrimSpace(s))
		if err != nil {
			return nil, err
		}
		res, err := device.Resolve(spec, inv, device.Options{})
		if err != nil {
			return nil, err
		}
		if !seen[res.Device.Name] {
			seen[res.Device.Name] = true
			out = append(out, res.Device)
		}
	}
	return out, nil
}
