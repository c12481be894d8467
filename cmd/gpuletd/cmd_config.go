package main

import (
	"github.com/spf13/cobra"
)

func newConfigCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "config",
		Short: "Print the effective configuration and where each value came from",
		Long: `Print the effective configuration as YAML: the built-in defaults, then the file
given with --config (or $GPULETD_CONFIG), then GPULETD_<SECTION>_<FIELD>
environment variables. A comment after each value names its source. An invalid
configuration is reported with the field, the bad value and what is allowed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := g.loadConfig()
			if err != nil {
				return err
			}
			out, err := l.YAML()
			if err != nil {
				return err
			}
			if note := g.unreadInstalledNote(); note != "" {
				cmd.PrintErrln(note)
			}
			for _, w := range l.Warnings {
				cmd.PrintErrln("warning: " + w)
			}
			_, err = cmd.OutOrStdout().Write(out)
			return err
		},
	}
}
