package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gotrain/gotrain/doctor"
)

func newDoctorCmd(g *globals) *cobra.Command {
	var burst time.Duration
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Diagnose why an accelerator is or is not used, and say what to fix",
		Long: `doctor checks the build, the PJRT plugins, the NVIDIA driver, the devices XLA
sees, free GPU memory and the environment variables that hide or redirect devices
(CUDA_VISIBLE_DEVICES, XLA_FLAGS, GOMLX_BACKEND), then resolves --device (default
auto), runs a checked computation on the device chosen and, on an accelerator,
keeps it busy with matmuls for --burst while watching its utilisation.

Each finding is printed as [ok], [warn], [fail] or [skip] with the facts seen and,
when something is wrong, a fix. The exit status is non-zero when --device cannot
be used or any finding fails. doctor never downloads anything; see docs/DOCTOR.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rep, err := doctor.Run(cmd.Context(), doctor.Options{Device: g.device, Fallback: g.fallback, Burst: burst}, doctor.DefaultProbes())
			if err != nil {
				return err
			}
			if g.json {
				err = printJSON(cmd.OutOrStdout(), rep)
			} else {
				err = doctor.WriteText(cmd.OutOrStdout(), rep)
			}
			if err != nil {
				return err
			}
			switch {
			case rep.ResolveError != "":
				return fmt.Errorf("doctor: --device %s cannot be used: %s", rep.Requested, rep.ResolveError)
			case rep.Selected != nil && rep.Selected.FellBack:
				return fmt.Errorf("doctor: --device %s cannot be used (%s)", rep.Requested, rep.Selected.Warning)
			case !rep.OK:
				return fmt.Errorf("doctor: failed: %s", strings.Join(rep.Failed(), ", "))
			}
			return nil
		},
	}
	cmd.Flags().DurationVar(&burst, "burst", time.Second, "how long to keep an accelerator busy with 1024×1024 matmuls while watching its utilisation (0 skips it)")
	return cmd
}
