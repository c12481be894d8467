package main

import (
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/gpulet/gpuletd/daemon"
	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/web"
	"github.com/spf13/cobra"
)

// serveSettings are the settings serve's help names, with what each is
// for: the ones an operator most often sets.
var serveSettings = []struct{ path, what string }{
	{"model_repository", "the model folders, laid out as Triton's"},
	{"listen", "REST (the KServe v2 API), the admin page and /metrics"},
	{"grpc_listen", `gRPC (inference.GRPCInferenceService); "" turns it off`},
	{"devices", "auto (the NVIDIA GPUs, else the CPU), nvidia, cpu, or a list"},
	{"default_slo", "the SLO of models whose configuration gives none (0s: not served)"},
	{"state_dir", "the database: measured profiles, plans, events"},
	{"runtime_dir", "executor sockets, MPS pipes"},
	{"log.level", "debug, info, warn or error"},
}

// serveLong is serve's help: where the configuration comes from, and the
// settings most often set with their variables and defaults.
func serveLong() string {
	paths := make([]string, len(serveSettings))
	for i, s := range serveSettings {
		paths[i] = s.path
	}
	settings, err := config.Describe(paths...)
	if err != nil {
		panic(err) // a name above the configuration lacks: TestServeHelp
	}
	var b strings.Builder
	b.WriteString(`Run the daemon: profile the repository's models where no profile is stored,
plan gpu-lets for them, start an executor on each and serve the KServe v2 API
over REST and gRPC, with the admin page and Prometheus metrics. It runs until
SIGINT or SIGTERM; SIGHUP (systemctl reload) reads the configuration and the
repository again.

The configuration: the built-in defaults, then the file given with --config
(or $GPULETD_CONFIG), then GPULETD_<SECTION>_<FIELD> environment variables.
The settings most often set, with their defaults:

`)
	for i, s := range settings {
		fmt.Fprintf(&b, "  %s=%s\n      %s\n", s.Env, s.Default, serveSettings[i].what)
	}
	b.WriteString(`
gpuletd config prints every setting, its value and where it came from; the
installed /etc/gpuletd/gpuletd.yaml (systemd/gpuletd.yaml) documents each.
The defaults are the service's folders: run by hand beside it, or as a user,
give it folders of its own, as make run does:

  GPULETD_STATE_DIR=./var GPULETD_RUNTIME_DIR=./var/run \
    GPULETD_MODEL_REPOSITORY=./var/models gpuletd serve`)
	return b.String()
}

func newServeCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "serve",
		Short: "Run the daemon: serve the models of the repository on the configured devices",
		Long:  serveLong(),
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
