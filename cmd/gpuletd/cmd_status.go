package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
)

func newStatusCmd(g *globalFlags) *cobra.Command {
	var (
		url    string
		asJSON bool
		short  bool
		watch  time.Duration
	)
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show a running daemon's devices, gpu-lets and models",
		Long: `Ask a running gpuletd (GET /api/v1/status) for its devices, its gpu-lets with
the models placed on them (batch, planned rate, and how busy each was in the
last 10 s) and its models (measured and assigned rate, SLO, recent attainment
and latency, where placed).
The daemon is found at --url, or where the daemon holding the configured
runtime_dir says it listens, or at the configured listen address.

--watch asks again every 2 s (--watch=5s: every 5 s) until interrupted: on a
terminal the screen is drawn again, as watch(1) does; otherwise each answer
follows the last (with --short, a line each; with --json, a line of JSON
each). A daemon that stops answering meanwhile is said so and asked again.`,
		Args: noArgsBut(func(_ *cobra.Command, args []string) string {
			return "for one model: gpuletd models show " + args[0]
		}),
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, err := g.daemonOf(cmd, url)
			if err != nil {
				return err
			}
			show := func(w io.Writer, compact bool) error {
				var raw json.RawMessage
				if err := adminFetch(cmd.Context(), d, "/api/v1/status", &raw); err != nil {
					return g.failWithLastRun(cmd.Context(), d, url, err)
				}
				if asJSON && compact {
					var b bytes.Buffer
					if err := json.Compact(&b, raw); err != nil {
						return fmt.Errorf("compact JSON: %w", err)
					}
					_, err := fmt.Fprintln(w, b.String())
					return err
				}
				if asJSON {
					return printRaw(w, raw)
				}
				var s adminStatus
				if err := json.Unmarshal(raw, &s); err != nil {
					return fmt.Errorf("decode status: %w", err)
				}
				if short {
					_, err := fmt.Fprintln(w, s.Summary)
					return err
				}
				return writeStatus(w, d.base, &s)
			}
			if watch <= 0 {
				return show(cmd.OutOrStdout(), false)
			}
			return watchStatus(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), watch, isTerminal(cmd.OutOrStdout()), show)
		},
	}
	addDaemonFlags(cmd, &url, &asJSON)
	cmd.Flags().BoolVar(&short, "short", false, "print one line, as systemctl status shows it: readiness, models, gpu-lets, rate, SLO attainment, what to look at")
	cmd.Flags().DurationVar(&watch, "watch", 0, "ask again every interval until interrupted (--watch: every 2s; --watch=5s)")
	cmd.Flags().Lookup("watch").NoOptDefVal = "2s"
	return cmd
}

// watchStatus shows the status every interval until ctx ends (Ctrl-C):
// on a terminal the screen is cleared and headed by the time first, as
// watch(1) draws it; elsewhere each answer follows the last, compact. A
// failed ask is said (in place of the answer on a terminal, on errW
// elsewhere, so that the answers stay parseable) and tried again.
func watchStatus(ctx context.Context, w, errW io.Writer, every time.Duration, terminal bool, show func(w io.Writer, compact bool) error) error {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		var b bytes.Buffer
		if err := show(&b, !terminal); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			b.Reset()
			line := fmt.Sprintf("%v (asking again every %s)\n", err, every)
			if terminal {
				b.WriteString(line)
			} else {
				fmt.Fprint(errW, line)
			}
		}
		if terminal {
			fmt.Fprintf(w, "\x1b[H\x1b[2JEvery %s: gpuletd status%*s\n\n", every, 40, time.Now().Format(time.DateTime))
		}
		if _, err := w.Write(b.Bytes()); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}
