package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/gpulet/gpuletd/sim/loadgen"
	"github.com/spf13/cobra"
)

func newLoadCmd(g *globalFlags) *cobra.Command {
	var (
		url, grpcAddr      string
		model, arrivalSpec string
		rate               float64
		duration, warmup   time.Duration
		drain, timeout     time.Duration
		binary, asJSON     bool
		concurrency        int
		seed               uint64
	)
	cmd := &cobra.Command{
		Use:   "load --model MODEL --rate R",
		Short: "Send an open-loop load to a running daemon and report latency and goodput",
		Long: `Send inference requests to MODEL on a running daemon for --duration, open
loop: requests leave on the schedule of the arrival process whether or not
earlier ones were answered. At most --concurrency are in flight; a request due
while that many are in flight is dropped by this client and counted.

Inputs are random tensors of the shapes the model declares (batch 1), as JSON
or, with --binary, as binary tensors; with --grpc they go to the gRPC
listener's ModelInfer in raw_input_contents (the model's metadata and SLO are
still read over REST). The report gives the requests sent, the
answers by status, goodput (answers within the model's SLO per second), SLO
attainment, latency percentiles, the achieved send rate and the schedule lag.

Arrivals: poisson, gamma:<shape>, gamma:shape=<k>, gamma:cv=<c>,
trace:<file> (replayed at --rate) or trace:<file>@<scale> (at <scale> times
the trace's own rate), such as the Azure LLM traces' CSV files.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			base, err := daemonURL(g, url)
			if err != nil {
				return err
			}
			arr, err := loadgen.OpenArrivals(arrivalSpec, rate, seed)
			if err != nil {
				return err
			}
			rep, err := loadgen.Run(cmd.Context(), loadgen.Config{
				URL: base, GRPC: grpcAddr, Model: model, Rate: rate, Duration: duration, Warmup: warmup, Arrivals: arr,
				Seed: seed, Binary: binary, Concurrency: concurrency, Drain: drain, Timeout: timeout,
			})
			interrupted := errors.Is(err, context.Canceled)
			if err != nil && !interrupted {
				return daemonError(base, err)
			}
			if asJSON {
				err = printJSON(cmd.OutOrStdout(), map[string]any{"arrival": arrivalSpec, "binary": binary, "report": rep, "interrupted": interrupted})
			} else {
				err = writeLoadReport(cmd.OutOrStdout(), arrivalSpec, binary, rep)
			}
			if err != nil {
				return err
			}
			if interrupted {
				return &exitError{code: 1, msg: "gpuletd load: interrupted; the report covers the requests sent until then"}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&url, "url", "", "the daemon's base URL (default http:// and the configured listen address)")
	f.StringVar(&grpcAddr, "grpc", "", "send over gRPC to this host:port (the daemon's grpc_listen) instead of REST")
	f.StringVar(&model, "model", "", "model to send requests to")
	f.Float64Var(&rate, "rate", 0, "mean request rate, requests/s")
	f.DurationVar(&duration, "duration", 10*time.Second, "how long to send requests (after the warm-up)")
	f.DurationVar(&warmup, "warmup", 0, "send this long first, on the same schedule, without recording")
	f.StringVar(&arrivalSpec, "arrival", "poisson", "arrival process: poisson, gamma:<shape>, gamma:cv=<c>, trace:<file>[@<scale>]")
	f.BoolVar(&binary, "binary", false, "send binary tensors and ask for binary outputs")
	f.IntVar(&concurrency, "concurrency", loadgen.DefaultConcurrency, "most requests in flight")
	f.Uint64Var(&seed, "seed", 1, "seed of the arrivals and the inputs")
	f.DurationVar(&drain, "drain", loadgen.DefaultDrain, "how long to wait for answers after the last request")
	f.DurationVar(&timeout, "timeout", loadgen.DefaultTimeout, "longest wait for one answer")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	_ = cmd.MarkFlagRequired("model")
	return cmd
}

// writeLoadReport prints a load run's report as a key-value table.
func writeLoadReport(w io.Writer, spec string, binary bool, r *loadgen.Report) error {
	tensors := "JSON"
	if binary {
		tensors = "binary"
	}
	target := r.URL
	if r.GRPC != "" {
		tensors, target = "gRPC raw", "grpc "+r.GRPC
	}
	tw := newTable(w)
	fmt.Fprintf(tw, "target\t%s at %s\n", r.Model, target)
	fmt.Fprintf(tw, "arrivals\t%s, %s for %s, %s tensors (%d-byte requests)\n",
		spec, perSecond(r.Rate), r.Window.Round(time.Millisecond), tensors, r.RequestBytes)
	fmt.Fprintf(tw, "requests\t%d scheduled, %d sent, %d dropped by this client, %d ok\n", r.Scheduled, r.Sent, r.Dropped, r.OK)
	fmt.Fprintf(tw, "failed\t%s\n", failures(r.Failed))
	if r.FirstError != "" {
		fmt.Fprintf(tw, "first error\t%s\n", clip(r.FirstError, 64))
	}
	fmt.Fprintf(tw, "slo %s\t%d within, attainment %s, goodput %s\n", dur(r.SLO), r.WithinSLO, percent(r.Attainment), perSecond(r.Goodput))
	if r.Latency.Count > 0 {
		fmt.Fprintf(tw, "latency\tp50 %s, p90 %s, p99 %s, max %s\n", dur(r.Latency.P50), dur(r.Latency.P90), dur(r.Latency.P99), dur(r.Latency.Max))
	} else {
		fmt.Fprintf(tw, "latency\tno answer\n")
	}
	fmt.Fprintf(tw, "send rate\t%s (target %s), %d in flight at most\n", perSecond(r.SendRate), perSecond(r.Rate), r.MaxInFlight)
	fmt.Fprintf(tw, "schedule lag\tp50 %s, p99 %s, max %s\n", dur(r.Lag.P50), dur(r.Lag.P99), dur(r.Lag.Max))
	return tw.Flush()
}

// failures writes the failure counts, "none" when there are none.
func failures(m map[string]int64) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d %s", m[k], k)
	}
	return strings.Join(parts, ", ")
}

// dur writes a duration like millis does.
func dur(d time.Duration) string { return millis(float64(d) / float64(time.Millisecond)) }
