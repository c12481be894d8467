package main

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/gpulet/gpuletd/daemon"
	"github.com/gpulet/gpuletd/web"
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
			log, level, err := newLeveledLogger(l.Config.Log, os.Stderr)
			if err != nil {
				return err
			}
			defer func() { _ = log.Sync() }()
			for _, w := range l.Warnings {
				log.Warn(w)
			}
			hup := make(chan os.Signal, 1)
			signal.Notify(hup, syscall.SIGHUP)
			defer signal.Stop(hup)
			reload := make(chan struct{}, 1)
			stop := make(chan struct{})
			defer close(stop)
			go func() {
				for {
					select {
					case <-hup:
						select {
						case reload <- struct{}{}:
						default:
						}
					case <-stop:
						return
					}
				}
			}()
			return daemon.Run(cmd.Context(), daemon.Options{
				Config: l, Log: log, Level: &level, Reload: reload, LoadConfig: g.loadConfig,
				Web: web.Handler(log),
			})
		},
	}
}
