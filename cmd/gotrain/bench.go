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
			engines, err := benchEngines(cmd, g, devices)
			if err != nil {
				return err
			}
			defer func() {
				for _, e := range engines {
					e.Close()
				}
			}()
			ws, err := bench.Workloads(sz)
			if err != nil {
				return err
			}
			results, err := bench.Run(ws, bench.Options{Repeats: repeats, Engines: engines, Progress: func(w, d string) {
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
			return g.print(cmd, &bench.Report{Host: device.HostInfo(), Results: results, Size: size})
		},
	}
	cmd.Flags().StringVar(&size, "size", "small", "workload sizes: small (seconds) or seed (the seed systems' sizes)")
	cmd.Flags().StringVar(&devices, "devices", "all", "devices to run on when --device is not given: all (every available one) or a comma list of --device forms; cpu always runs first as the reference")
	cmd.Flags().IntVar(&repeats, "repeats", 5, "timed calls after the first")
	cmd.Flags().StringVar(&mdFile, "md", "", "also write the table as Markdown to this file")
	cmd.Flags().StringVar(&pngFile, "png", "", "also write a bar chart of speed-ups to this PNG file")
	return cmd
}

// benchEngines returns the native CPU (the reference) followed by the
// devices to time: the global --device when it is given (auto aside),
// else --devices. A device that is not available is an error with the
// reason (unless --fallback).
func benchEngines(cmd *cobra.Command, g *globals, list string) ([]*device.Engine, error) {
	specs := []string{"cpu"}
	deviceSet := cmd.Flags().Changed("device") && !strings.EqualFold(strings.TrimSpace(g.device), "auto")
	switch {
	case deviceSet && cmd.Flags().Changed("devices"):
		return nil, fmt.Errorf("bench: give --device or --devices, not both (--device %s, --devices %s)", g.device, list)
	case deviceSet:
		specs = append(specs, g.device)
	default:
		specs = append(specs, strings.Split(list, ",")...)
	}
	engines, err := device.SelectEach(specs, device.Request{Fallback: g.fallback})
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	for _, e := range engines {
		if w := e.Warning(); w != "" {
			fmt.Fprintln(cmd.ErrOrStderr(), w)
		}
	}
	return engines, nil
}
