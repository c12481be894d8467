package main

import (
	"github.com/gpulet/gpuletd/daemon"
	"github.com/spf13/cobra"
)

func newServeCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "serve",
		Short: "Run the daemon: serve the models of the repository on the configured devices",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := g.loadConfig()
			if err != nil {
				return err
			}
			log, err := g.logger(l)
			if err != nil {
				return err
			}
			defer func() { _ = log.Sync() }()
			return daemon.Run(cmd.Context(), daemon.Options{Config: l, Log: log})
		},
	}
}
