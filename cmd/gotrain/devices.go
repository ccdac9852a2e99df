package main

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gotrain/gotrain/bench"
	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/doctor"
)

func newDevicesCmd(g *globals) *cobra.Command {
	var verify bool
	var repeats int
	cmd := &cobra.Command{
		Use:   "devices",
		Short: "List backends and devices, with why each unavailable one cannot be used",
		Long: `devices lists every backend and device gotrain knows of (native Go, simplego, each
device of each PJRT plugin found, JAX's CUDA plugin or --plugin included) with the
reason for each that cannot be used, and each plugin's PJRT C API version. --verify
runs a small matmul + reduction on each available device (or only on --device),
compares it with a float64 CPU reference and times it, the first call apart.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts := device.SurveyOptions{Verify: verify, Repeats: repeats, PluginFile: g.plugin}
			if cmd.Flags().Changed("device") {
				opts.Select = &device.Request{Device: g.device, Fallback: g.fallback}
			}
			rep, verr := device.Survey(opts)
			if rep == nil {
				return verr // the selection's
			}
			announce(cmd, rep.Selected)
			if err := g.print(cmd, rep); err != nil {
				return err
			}
			if verr != nil {
				return fmt.Errorf("devices: %w", verr)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&verify, "verify", false, "run and time a small computation on each available device, checked against a float64 CPU reference")
	cmd.Flags().IntVar(&repeats, "repeats", 10, "timed repeats per device for --verify (after one warm-up call)")
	return cmd
}

func newDoctorCmd(g *globals) *cobra.Command {
	var burst time.Duration
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Diagnose why an accelerator is or is not used, and say what to fix",
		Long: `doctor checks the build, the PJRT plugins (JAX's CUDA plugin or --plugin included,
each with its PJRT C API version against the loader's), the NVIDIA driver, the
devices XLA sees, free GPU memory and the variables that hide or redirect devices
(CUDA_VISIBLE_DEVICES, XLA_FLAGS, GOMLX_BACKEND), then resolves --device (default
auto), runs a checked computation on the device chosen and, on an accelerator,
keeps it busy with matmuls for --burst while watching its utilisation.

Each finding is printed as [ok], [warn], [fail] or [skip] with the facts seen and,
when something is wrong, a fix. The exit status is non-zero when --device cannot
be used or any finding fails. doctor never downloads anything; see docs/DOCTOR.md.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rep, err := doctor.Run(cmd.Context(), doctor.Options{Device: g.device, Fallback: g.fallback, Burst: burst, PluginFile: g.plugin}, doctor.DefaultProbes())
			if err != nil {
				return err
			}
			if err := g.print(cmd, &rep); err != nil {
				return err
			}
			return rep.Err()
		},
	}
	cmd.Flags().DurationVar(&burst, "burst", time.Second, "how long to keep an accelerator busy with 1024×1024 matmuls while watching its utilisation (0 skips it)")
	return cmd
}

func newSetupXLACmd(g *globals) *cobra.Command {
	var opts device.InstallOptions
	xlaCmd := &cobra.Command{
		Use:   "xla",
		Short: "Download and install XLA PJRT plugins (CPU, and with --cuda the CUDA plugin)",
		Long: `setup xla installs the XLA CPU PJRT plugin into ~/.local/lib/go-xla (or --lib-dir),
and with --cuda the CUDA plugin and NVIDIA libraries into its nvidia/ folder.
gotrain downloads nothing except through this command. Offline it fails within
--timeout with a message saying where to put plugin files by hand.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dest, err := device.InstallXLA(cmd.Context(), opts)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "installed XLA plugins into %s; run `gotrain devices --verify` to check them\n", dest)
			return nil
		},
	}
	xlaCmd.Flags().BoolVar(&opts.CUDA, "cuda", false, "also install the CUDA PJRT plugin and NVIDIA libraries")
	xlaCmd.Flags().BoolVar(&opts.Force, "force", false, "replace an existing go-xla/nvidia folder")
	xlaCmd.Flags().StringVar(&opts.LibDir, "lib-dir", "", "lib folder under which go-xla/ is created (default ~/.local/lib)")
	xlaCmd.Flags().DurationVar(&opts.Timeout, "timeout", 5*time.Second, "how long to wait for the download hosts before failing")
	return xlaCmd
}

func newVersionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the gotrain version and build",
		RunE: func(cmd *cobra.Command, _ []string) error {
			b := device.BuildInfo()
			return g.print(cmd, &b)
		},
	}
}

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
and host memory. A workload a device cannot run is listed with the reason; one whose
output is beyond its stated tolerance fails bench (after the report) with the error.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := g.outputs(cmd, []string{"md", "png"}, nil, nil); err != nil {
				return err
			}
			engines, err := benchEngines(cmd, g, devices)
			if err != nil {
				return err
			}
			defer device.CloseAll(engines)
			rep, err := bench.Measure(bench.Size(size), bench.Options{Repeats: repeats, Engines: engines, Progress: func(w, d string) {
				slog.Info("bench: measuring", "workload", w, "device", d)
			}, Perturb: benchPerturb})
			if err != nil {
				return err
			}
			hdr := fmt.Sprintf("`gotrain bench --size %s --repeats %d` on %s", size, repeats, rep.Host)
			if err := rep.WriteFiles(mdFile, pngFile, hdr); err != nil {
				return err
			}
			return errors.Join(g.print(cmd, rep), rep.Err()) // the report, then any parity mismatch
		},
	}
	cmd.Flags().StringVar(&size, "size", "small", "workload sizes: small (seconds) or seed (the seed systems' sizes)")
	cmd.Flags().StringVar(&devices, "devices", "all", "devices to run on when --device is not given: all (every available one) or a comma list of --device forms; cpu always runs first as the reference")
	cmd.Flags().IntVar(&repeats, "repeats", 5, "timed calls after the first")
	cmd.Flags().StringVar(&mdFile, "md", "", "also write the table as Markdown to this file")
	cmd.Flags().StringVar(&pngFile, "png", "", "also write a bar chart of speed-ups to this PNG file")
	return cmd
}

// benchPerturb is nil but in TestBenchMismatchFails (a parity fault).
var benchPerturb func(workload, device string, values []float64) []float64

// benchEngines returns the native CPU (the reference) followed by the
// devices to time (device.SelectTimed): the global --device when it is
// given (auto aside), else --devices. A device that is not available is an
// error with the reason (unless --fallback).
func benchEngines(cmd *cobra.Command, g *globals, list string) ([]*device.Engine, error) {
	spec := ""
	if cmd.Flags().Changed("device") && !strings.EqualFold(strings.TrimSpace(g.device), "auto") {
		if spec = g.device; cmd.Flags().Changed("devices") {
			return nil, fmt.Errorf("bench: give --device or --devices, not both (--device %s, --devices %s)", g.device, list)
		}
	}
	engines, err := device.SelectTimed(spec, list, device.Request{Fallback: g.fallback, PluginFile: g.plugin})
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	for _, e := range engines {
		announce(cmd, &e.Resolution)
	}
	return engines, nil
}
