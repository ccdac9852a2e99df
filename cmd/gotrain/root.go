package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/gomlx/gomlx/backends"
	"github.com/spf13/cobra"

	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/train"
)

// globals are the flags every command shares.
type globals struct {
	device   string
	fallback bool
	json     bool
	logLevel string
}

func newRootCmd() *cobra.Command {
	g := &globals{}
	root := &cobra.Command{
		Use:   "gotrain",
		Short: "Train models on the device you choose, and know which one did the work",
		Long: `gotrain trains random forests, neural networks and signal pipelines on an
XLA device (NVIDIA GPU, TPU, XLA CPU), GoMLX's pure-Go backend or native Go code.
It never falls back silently: a --device it cannot honour is an error with the
reason, unless --fallback is given.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			var level slog.Level
			if err := level.UnmarshalText([]byte(g.logLevel)); err != nil {
				return fmt.Errorf("--log-level %q: want debug, info, warn or error", g.logLevel)
			}
			slog.SetDefault(slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level})))
			return nil
		},
	}
	pf := root.PersistentFlags()
	pf.StringVar(&g.device, "device", "auto", "device to run on: "+device.ValidForms)
	pf.BoolVar(&g.fallback, "fallback", false, "if --device cannot be used, continue on the next best device (with a warning)")
	pf.BoolVar(&g.json, "json", false, "print the report as JSON on stdout")
	pf.StringVar(&g.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	root.AddCommand(newBenchCmd(g), newDevicesCmd(g), newForestCmd(g), newSetupCmd(g), newVersionCmd(g), newDoctorCmd(g), newSignalCmd(g), newLMCmd(g), newMoECmd(g))
	return root
}

// resolveDevice parses --device, discovers devices and resolves the request.
// A fallback prints its one warning line on stderr; an auto choice is logged.
func (g *globals) resolveDevice(cmd *cobra.Command, opts device.Options) (device.Resolution, error) {
	spec, err := device.ParseSpec(g.device)
	if err != nil {
		return device.Resolution{}, err
	}
	opts.Fallback = opts.Fallback || g.fallback
	needXLA := spec.Kind != device.CPU && spec.Kind != device.Go
	inv := device.Discover(device.DiscoverOptions{Probe: needXLA, SkipNVIDIA: !needXLA})
	res, err := device.Resolve(spec, inv, opts)
	if err != nil {
		return res, err
	}
	if res.FellBack {
		fmt.Fprintln(cmd.ErrOrStderr(), res.Warning)
	} else {
		slog.Debug(res.Summary())
	}
	return res, nil
}

// openTrainBackend resolves --device and opens the backend the training
// harness uses on it (simplego with its safe, fast defaults, or XLA).
func (g *globals) openTrainBackend(cmd *cobra.Command) (device.Resolution, backends.Backend, error) {
	res, err := g.resolveDevice(cmd, device.Options{})
	if err != nil {
		return res, nil, err
	}
	backend, err := train.OpenBackend(res.Device)
	return res, backend, err
}

// printJSON writes v as indented JSON.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// oneLine shortens a reason for a table cell.
func oneLine(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if n > 0 && len(s) > n {
		return s[:n-3] + "..."
	}
	return s
}
