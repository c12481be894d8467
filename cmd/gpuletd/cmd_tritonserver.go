package main

import (
	"slices"

	"github.com/spf13/cobra"
)

// newTritonServerCmd is serve behind tritonserver's command line, so that
// a container or unit that ran Triton runs gpuletd with its arguments as
// they were.
func newTritonServerCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "tritonserver --model-repository=DIR [tritonserver's flags]",
		Short: "Run the daemon from tritonserver's command line",
		Long: `Run the daemon (as serve does) from tritonserver's command line, so that a
container, unit or manifest that ran Triton runs gpuletd with its arguments as
they were. The flags set the configuration's fields they stand for, over the
configuration file and GPULETD_ variables, with Triton's defaults for what they
cover: REST on 0.0.0.0:8000 (--http-address, --http-port), gRPC on 8001
(--grpc-address, --grpc-port, --allow-grpc), metrics on 8002 (--metrics-address,
--metrics-port, --allow-metrics), --strict-readiness true, and
--model-control-mode none (every model at start; poll with
--repository-poll-secs; explicit with --load-model). Also read:
--http-restricted-api and --grpc-restricted-protocol (auth.restricted_apis),
--cache-config local,size=N, --grpc-use-ssl with --grpc-server-cert,
--grpc-server-key, --grpc-use-ssl-mutual and --grpc-root-cert (tls, for REST
too), --trace-config mode=, opentelemetry,url=, resource= and bsp_*=,
--log-verbose, --log-info and --log-warning. Flags that tune Triton's own
machinery (thread counts, memory pools, backends) are taken and said to be
ignored; a flag whose meaning gpuletd cannot give is refused with why. Each
model still needs an SLO: the parameter slo in its config.pbtxt, or
default_slo (GPULETD_DEFAULT_SLO) for all. gpuletd config shows each field
with the flag that set it. For example:

  gpuletd tritonserver --model-repository=/models --strict-readiness=false`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if slices.Contains(args, "--help") || slices.Contains(args, "-h") {
				return cmd.Help()
			}
			t, err := parseTritonArgs(args)
			if err != nil {
				return &exitError{code: 2, msg: "tritonserver: " + err.Error()}
			}
			g.overrides, g.notes = t.overrides, t.notes
			serve := newServeCmd(g)
			serve.SetContext(cmd.Context())
			serve.SetOut(cmd.OutOrStdout())
			serve.SetErr(cmd.ErrOrStderr())
			return serve.RunE(serve, nil)
		},
	}
}
