package main

import (
	"fmt"
	"slices"
	"strings"

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
--repository-poll-secs; explicit with --load-model). A repeated
--model-repository adds extra_model_repositories: a model name more than one
repository holds is served from none, as Triton does. --model-config-name
sets model_config_name (configs/<name>.pbtxt over config.pbtxt),
--allow-client-shm allow_client_shm (off, as in Triton),
--http-max-input-size limits.max_request_body, --exit-timeout-secs
limits.shutdown_timeout and
--backend-config=[onnxruntime,]default-max-batch-size=N default_max_batch_size.
Also read:
--http-restricted-api and --grpc-restricted-protocol (auth.restricted_apis),
--cache-config local,size=N, --grpc-use-ssl with --grpc-server-cert,
--grpc-server-key, --grpc-use-ssl-mutual and --grpc-root-cert (tls, for REST
too), --trace-config (level=, rate=, count=, log-frequency=, file=, mode=,
opentelemetry,url=, resource= and bsp_*=; and the older --trace-level,
--trace-rate, --trace-count, --trace-log-frequency, --trace-file), --metrics-config
(summary_latencies, summary_quantiles, counter_latencies; Triton's metric names
are on, metrics.triton_names), --log-verbose, --log-info, --log-warning, and
--response-cache-byte-size (as --cache-config local,size=). Flags that tune
Triton's own machinery (thread counts, memory pools, backends) are taken and
said to be ignored, and those for what gpuletd does its own way
(--exit-on-error, --strict-model-config, --rate-limit…) with what it does
instead; a flag whose meaning gpuletd cannot give is refused with why.
--print-config prints the configuration the flags make, each field with the
flag that set it (as gpuletd config), instead of serving. Each
model still needs an SLO: the parameter slo in its config.pbtxt, or
default_slo (GPULETD_DEFAULT_SLO) for all. gpuletd config shows each field
with the flag that set it. For example:

  gpuletd tritonserver --model-repository=/models --strict-readiness=false`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if slices.Contains(args, "--help") || slices.Contains(args, "-h") {
				return cmd.Help()
			}
			args, err := takeGpuletdFlags(cmd, args)
			if err != nil {
				return &exitError{code: 2, msg: "tritonserver: " + err.Error()}
			}
			printOnly := slices.Contains(args, printConfigFlag)
			args = slices.DeleteFunc(args, func(a string) bool { return a == printConfigFlag })
			t, err := parseTritonArgs(args)
			if err != nil {
				return &exitError{code: 2, msg: "tritonserver: " + err.Error()}
			}
			g.overrides, g.notes = t.overrides, t.notes
			if printOnly {
				config := newConfigCmd(g)
				config.SetOut(cmd.OutOrStdout())
				config.SetErr(cmd.ErrOrStderr())
				return config.RunE(config, nil)
			}
			serve := newServeCmd(g)
			serve.SetContext(cmd.Context())
			serve.SetOut(cmd.OutOrStdout())
			serve.SetErr(cmd.ErrOrStderr())
			return serve.RunE(serve, nil)
		},
	}
}

// printConfigFlag has tritonserver print the configuration its flags make,
// as gpuletd config does, instead of serving: the start of a gpuletd.yaml.
const printConfigFlag = "--print-config"

// takeGpuletdFlags sets gpuletd's own global flags found among args
// (--config, --log-level: cobra leaves them there when it does not parse a
// command's flags) and returns the rest, tritonserver's; --log-format is
// tritonserver's there.
func takeGpuletdFlags(cmd *cobra.Command, args []string) ([]string, error) {
	var rest []string
	for i := 0; i < len(args); i++ {
		name, value, hasValue := strings.Cut(strings.TrimPrefix(args[i], "--"), "=")
		f := cmd.InheritedFlags().Lookup(name)
		if !strings.HasPrefix(args[i], "--") || f == nil || tritonFlags[name] != nil {
			rest = append(rest, args[i])
			continue
		}
		if !hasValue {
			if i+1 == len(args) {
				return nil, fmt.Errorf("--%s needs a value", name)
			}
			i++
			value = args[i]
		}
		if err := f.Value.Set(value); err != nil {
			return nil, fmt.Errorf("--%s=%s: %w", name, value, err)
		}
	}
	return rest, nil
}
