package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	neturl "net/url"
	"slices"
	"strings"
	"time"

	"github.com/gpulet/gpuletd/sim/loadgen"
	"github.com/spf13/cobra"
)

func newModelsLoadCmd(g *globalFlags) *cobra.Command {
	var (
		url, token, from string
		configName       string
		wait             time.Duration
		dryRun, asJSON   bool
	)
	cmd := &cobra.Command{
		Use:   "load MODEL",
		Short: "Load (or load again) a model of the repository into a running daemon",
		Long: `Load a model folder of the repository into a running daemon, or load it again
after its files changed (POST /v2/repository/models/MODEL/load, Triton's
repository API), and print what the load changed of the versions that served
(SLO, max_batch_size, inputs and outputs, versions, files). A model without a
latency profile is measured by the daemon first; --wait waits until it
serves, printing why it does not yet whenever that changes (0: do not wait),
and fails at once when the daemon says it cannot be served (an SLO no batch
meets, a profile that failed, no room for it).

With --from DIR the model folder comes from this machine instead of the
daemon's repository: DIR's configuration and files go in the load request
(Triton's file overrides), so a daemon on another host serves them until
the model is unloaded, loaded again without --from, or the daemon restarts.
The configuration is read as the daemon reads a repository folder: its
config.pbtxt (its configs/NAME.pbtxt instead where it has one, NAME being
--config-name, else the daemon's model_config_name) with the settings
of its config.yaml over it (either, both or neither), sent as Triton's
ModelConfig.

With --dry-run nothing is loaded: the daemon reads the folder (or the
--from files) as the load would, checks it the same way, and plans the node
with it at today's rates (POST /api/v1/models/MODEL/check). It prints whether
the load would serve the model, measure it first, place it nowhere or fail,
what it changes of what serves (SLO, max_batch_size, inputs and outputs,
versions, files), where
the plan would put each version, and which other models would lose
gpu-lets. It exits 1 when the load would fail, leave the model on no gpu-let
or take room the others need.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: g.completeModelArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := g.daemonOf(cmd, url)
			if err != nil {
				return err
			}
			name := args[0]
			var body []byte
			if from != "" {
				if !cmd.Flags().Changed("config-name") {
					configName = g.daemonConfigName(cmd.Context(), d)
				}
				if body, err = uploadBody(from, configName); err != nil {
					return err
				}
			}
			if dryRun {
				return dryRunLoad(cmd.Context(), cmd.OutOrStdout(), d, name, adminToken(g, token), body, asJSON)
			}
			if asJSON {
				return usageErrorf("--json goes with --dry-run: a load prints one line")
			}
			code, answer, msg, err := adminCall(cmd.Context(), d, http.MethodPost, "/v2/repository/models/"+neturl.PathEscape(name)+"/load", adminToken(g, token), body)
			switch {
			case err != nil:
				return err
			case code == http.StatusOK:
				writeLoadAnswer(cmd.OutOrStdout(), cmd.ErrOrStderr(), name, answer)
				return nil
			case code != http.StatusServiceUnavailable || wait <= 0:
				return &exitError{code: 1, msg: "gpuletd: " + msg}
			}
			return waitReady(cmd.Context(), cmd.OutOrStdout(), d, name, wait, msg)
		},
	}
	addURLFlag(cmd.Flags(), &url)
	cmd.Flags().StringVar(&token, "token", "", tokenUsage)
	cmd.Flags().DurationVar(&wait, "wait", 5*time.Minute, "how long to wait for the model to serve (0: do not wait)")
	cmd.Flags().StringVar(&from, "from", "", "send this Triton model folder (config.pbtxt, version folders) with the request instead of loading the repository's")
	cmd.Flags().StringVar(&configName, "config-name", "", "with --from: send the folder's configs/NAME.pbtxt in place of its config.pbtxt where it has one (default: the daemon's model_config_name)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "with --dry-run: print the daemon's answer as it is (the exit status as without)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "load nothing: say what a load now would do (serve, measure first, place nowhere, fail), what it changes and where the plan would put it")
	return cmd
}

func newModelsUnloadCmd(g *globalFlags) *cobra.Command {
	var url, token string
	cmd := &cobra.Command{
		Use:   "unload MODEL",
		Short: "Stop serving a model in a running daemon",
		Long: `Stop serving a model (every version of a model folder) in a running daemon
and re-plan without it (POST /v2/repository/models/MODEL/unload). Its folder
stays in the repository; load it again with gpuletd models load.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: g.completeModelArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := g.daemonOf(cmd, url)
			if err != nil {
				return err
			}
			code, msg, err := adminPost(cmd.Context(), d, "/v2/repository/models/"+neturl.PathEscape(args[0])+"/unload", adminToken(g, token), nil)
			if err != nil {
				return err
			}
			if code != http.StatusOK {
				return &exitError{code: 1, msg: "gpuletd: " + msg}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: unloaded\n", args[0])
			return nil
		},
	}
	addURLFlag(cmd.Flags(), &url)
	cmd.Flags().StringVar(&token, "token", "", tokenUsage)
	return cmd
}

// writeChangeLines prints what a load changes (or would, a load check's),
// a line each under the line before, wrapped at 80 columns.
func writeChangeLines(w io.Writer, changes []string) {
	for _, c := range changes {
		writeWrappedLine(w, "  "+c)
	}
}

// writeLoadAnswer prints a load's answer for name: that it is ready and
// what the load changed of what served (to out), and a warning for each
// model or pipeline the answer says the plan made with it no longer serves
// (to errw).
func writeLoadAnswer(out, errw io.Writer, name string, answer []byte) {
	fmt.Fprintf(out, "%s: ready\n", name)
	var a struct {
		Changes   []string          `json:"changes"`
		Displaced map[string]string `json:"displaced"`
	}
	if json.Unmarshal(answer, &a) != nil {
		return
	}
	writeChangeLines(out, a.Changes)
	for _, m := range slices.Sorted(maps.Keys(a.Displaced)) {
		fmt.Fprintf(errw, "gpuletd: warning: the plan made with %s no longer serves %s: %s\n", name, m, a.Displaced[m])
	}
}

// adminToken is flag, or the configuration's admin token when there is a
// configuration to read.
func adminToken(g *globalFlags, flag string) string {
	if flag != "" {
		return flag
	}
	if l, err := g.loadConfig(); err == nil {
		return l.Config.Auth.AdminToken
	}
	return ""
}

// adminPost posts body (JSON; nil: none) to a daemon's API and returns the
// status and the daemon's message (its error, for a failure). A daemon that
// does not answer is one clear line and exit status 1.
func adminPost(ctx context.Context, d *daemonAPI, path, token string, body []byte) (code int, msg string, err error) {
	code, _, msg, err = adminCall(ctx, d, http.MethodPost, path, token, body)
	return code, msg, err
}

// adminCall is adminPost with the method given, and the answer's body.
func adminCall(ctx context.Context, d *daemonAPI, method, path, token string, body []byte) (code int, answer []byte, msg string, err error) {
	ctx, cancel := context.WithTimeout(ctx, loadTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, d.base+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, "", fmt.Errorf("build request: %w", err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	defer d.client.CloseIdleConnections()
	code, answer, msg, err = loadgen.Call(ctx, d.client, req, 16<<20)
	if errors.Is(err, loadgen.ErrUnreachable) {
		return 0, nil, "", d.fail(err)
	}
	if err != nil {
		return 0, nil, "", fmt.Errorf("%s %s: %w", strings.ToLower(method), path, err)
	}
	return code, answer, msg, nil
}

// loadTimeout bounds one load or unload call: it re-plans, which may start
// executors and warm models up.
const loadTimeout = 2 * time.Minute

// waitReady polls the model's ready endpoint until it serves or wait
// passes, printing why it does not serve yet whenever that changes (msg,
// the load's own answer, until the endpoint gives one).
func waitReady(ctx context.Context, w io.Writer, d *daemonAPI, name string, wait time.Duration, msg string) error {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	defer d.client.CloseIdleConnections()
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	said := ""
	for {
		ready, why, unservable, err := readiness(ctx, d.client, d.base+"/v2/models/"+neturl.PathEscape(name)+"/ready")
		switch {
		case ready:
			fmt.Fprintf(w, "%s: ready\n", name)
			return nil
		case err == nil && unservable:
			// No wait mends it: the load failed, as Triton's would.
			return &exitError{code: 1, msg: fmt.Sprintf("gpuletd: %s cannot be served: %s", name, why)}
		case err == nil && why != said:
			fmt.Fprintf(w, "%s: %s\n", name, why)
			said = why
		case err != nil && ctx.Err() == nil:
			return d.fail(err)
		}
		select {
		case <-ctx.Done():
			return &exitError{code: 1, msg: fmt.Sprintf("gpuletd: %s does not serve after %s: %s", name, wait, cmp.Or(said, msg))}
		case <-tick.C:
		}
	}
}

// readiness reads a model's ready endpoint: ready, or the reason it gives
// for not being ready, and whether it says that the model cannot be served
// (gpuletd_model_state's unservable) rather than that it is on its way.
func readiness(ctx context.Context, client *http.Client, url string) (ready bool, why string, unservable bool, err error) {
	var doc struct {
		Ready  bool   `json:"ready"`
		State  string `json:"state"`
		Reason string `json:"reason"`
	}
	err = loadgen.GetJSON(ctx, client, url, &doc)
	var he *loadgen.HTTPError
	if errors.As(err, &he) && he.Code == http.StatusServiceUnavailable {
		if json.Unmarshal([]byte(he.Message), &doc) == nil && doc.Reason != "" {
			return false, doc.Reason, doc.State == "unservable", nil
		}
		return false, he.Message, false, nil
	}
	return err == nil && doc.Ready, "", false, err
}
