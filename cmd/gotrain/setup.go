package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/gotrain/gotrain/device"
)

func newSetupCmd(g *globals) *cobra.Command {
	setup := &cobra.Command{Use: "setup", Short: "Install optional components on request"}
	var opts device.InstallOptions
	xlaCmd := &cobra.Command{
		Use:   "xla",
		Short: "Download and install XLA PJRT plugins (CPU, and with --cuda the CUDA plugin)",
		Long: `setup xla installs the XLA CPU PJRT plugin into ~/.local/lib/go-xla (or --lib-dir),
and with --cuda the CUDA plugin and NVIDIA libraries into its nvidia/ folder.
gotrain downloads nothing except through this command. Offline it fails within
--timeout with a message saying where to put plugin files by hand.`,
		Args: cobra.NoArgs,
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
	setup.AddCommand(xlaCmd)
	return setup
}
