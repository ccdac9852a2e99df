package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/gotrain/gotrain/device"
)

func newVersionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the gotrain version and build",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := "(devel)"
			if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
				v = bi.Main.Version
			}
			build := "xla-capable (cgo, PJRT plugins loaded at run time)"
			if inv := device.Discover(device.DiscoverOptions{SkipNVIDIA: true}); !inv.XLACompiled {
				build = "pure Go (noxla)"
			}
			info := map[string]string{"version": v, "go": runtime.Version(), "os_arch": runtime.GOOS + "/" + runtime.GOARCH, "build": build}
			if g.json {
				return printJSON(cmd.OutOrStdout(), info)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "gotrain %s (%s, %s, %s)\n", v, info["go"], info["os_arch"], build)
			return nil
		},
	}
}
