package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	neturl "net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpulet/gpuletd/daemon"
	"github.com/gpulet/gpuletd/internal/fsperm"
	"github.com/gpulet/gpuletd/sim/loadgen"
)

// traceWriteHint says when the daemon writes the traces it holds.
const traceWriteHint = ": the daemon writes the traces it holds to trace_file when trace_count reaches 0, " +
	"when tracing is turned off (gpuletd trace set trace_level=OFF), every log_frequency traces when that is set, " +
	"and as it stops; gpuletd trace shows the settings and the file's path"

// traceFiles lists the trace files in dir, the daemon's traces folder, in
// name order; none is an error that says when they are written.
func traceFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("trace summary: %w", fsperm.ExplainRead(err, dir))
	}
	var out []string
	for _, e := range entries {
		if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") { // .NAME.tmp-*: a file being written
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("trace summary: no trace file in %s yet%s", dir, traceWriteHint)
	}
	return out, nil
}

func newTraceCmd(g *globalFlags) *cobra.Command {
	var url, token, model string
	var tensors bool
	cmd := &cobra.Command{
		Use:   "trace",
		Short: "Read or change which requests a running daemon traces; summarize trace files",
		Long: `Print a running daemon's trace settings (Triton's trace extension; with
--model, that model's). gpuletd trace set changes them, gpuletd trace summary
reads the trace files the daemon writes under <state_dir>/traces/.`,
		Args: noArgsBut(func(cmd *cobra.Command, args []string) string {
			if s := nearCommands(cmd, args[0]); len(s) > 0 {
				return "did you mean gpuletd trace " + s[0] + "?"
			}
			return "for one model's settings: gpuletd trace --model " + args[0]
		}),
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, err := g.daemonOf(cmd, url)
			if err != nil {
				return err
			}
			return traceSettings(cmd.Context(), cmd.OutOrStdout(), d, model, "", nil)
		},
	}
	set := &cobra.Command{
		Use:   "set NAME=VALUE...",
		Short: "Change a running daemon's trace settings",
		Long: `Change a running daemon's trace settings, globally or, with --model, that
model's own, and print them: trace_level (OFF, TIMESTAMPS, TENSORS, or
TIMESTAMPS,TENSORS; TENSORS writes each traced request's inputs and outputs
after its trace, their values as text), trace_rate (one request traced in so
many; with trace.mode opentelemetry, 0 traces only the requests that bring a
sampled traceparent, which are traced at any rate), trace_count (traces still to take; -1 no limit), log_frequency (write
every so many traces; 0 when tracing stops) and trace_file (a file name under
the daemon's <state_dir>/traces/). A model's setting given as NAME= (no value)
follows the global one again. For example:

  gpuletd trace set --model resnet trace_level=TIMESTAMPS trace_rate=100 log_frequency=50`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := g.daemonOf(cmd, url)
			if err != nil {
				return err
			}
			changes, err := traceChanges(args)
			if err != nil {
				return err
			}
			return traceSettings(cmd.Context(), cmd.OutOrStdout(), d, model, adminToken(g, token), changes)
		},
	}
	summary := &cobra.Command{
		Use:   "summary [FILE...]",
		Short: "Summarize trace files: where each model's traced requests spent their time",
		Long: `Read trace files the daemon wrote (JSON arrays of traces) and print, per model,
the traced requests and the median and 99th percentile of their time end to
end, waiting in the executor's queue (QUEUE_START to COMPUTE_START), in their
batch (COMPUTE_START to COMPUTE_END) and outside the executor (the rest: the
request's decoding, routing, the hop and the answer's encoding). With
--tensors it prints instead the tensors traced at trace_level TENSORS, trace by
trace: what each request brought and was answered with (a pipeline's step
requests under it), the first values of each. Without FILE it reads every
trace file under the configured state_dir's traces/ folder.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			files := args
			if len(files) == 0 {
				l, err := g.loadConfig()
				if err != nil {
					return err
				}
				if files, err = traceFiles(daemon.TracesDir(l.Config.StateDir)); err != nil {
					return err
				}
			}
			var all []traceRecord
			for _, f := range files {
				data, err := os.ReadFile(f)
				if errors.Is(err, fs.ErrNotExist) {
					return fmt.Errorf("trace summary: %s does not exist (yet)%s", f, traceWriteHint)
				}
				if err != nil {
					return fmt.Errorf("trace summary: %w", fsperm.ExplainRead(err, f))
				}
				var recs []traceRecord
				if err := json.Unmarshal(data, &recs); err != nil {
					return fmt.Errorf("trace summary: %s is not a trace file (a JSON array of traces): %w", f, err)
				}
				all = append(all, recs...)
			}
			if tensors {
				return writeTraceTensors(cmd.OutOrStdout(), all)
			}
			return writeTraceSummary(cmd.OutOrStdout(), all)
		},
	}
	summary.Flags().BoolVar(&tensors, "tensors", false, "print the traced tensors (trace_level TENSORS), trace by trace")
	for _, c := range []*cobra.Command{cmd, set} {
		addURLFlag(c.Flags(), &url)
		c.Flags().StringVar(&model, "model", "", "a model's own settings instead of the global ones")
		_ = c.RegisterFlagCompletionFunc("model", g.completeModelFlag)
	}
	set.Flags().StringVar(&token, "token", "", tokenUsage)
	cmd.AddCommand(set, summary)
	return cmd
}

// traceChanges reads NAME=VALUE arguments: trace_level's value is a list
// (comma-separated), the others one value; an empty value is null.
func traceChanges(args []string) (map[string]any, error) {
	out := map[string]any{}
	for _, a := range args {
		name, value, ok := strings.Cut(a, "=")
		switch {
		case !ok || name == "":
			return nil, fmt.Errorf("trace set: %q: give NAME=VALUE, such as trace_level=TIMESTAMPS", a)
		case value == "":
			out[name] = nil
		case name == "trace_level":
			out[name] = strings.Split(value, ",")
		default:
			out[name] = value
		}
	}
	return out, nil
}

// traceSettings reads (changes nil) or changes the trace settings of model
// ("" the global ones) and prints them.
func traceSettings(ctx context.Context, w io.Writer, d *daemonAPI, model, token string, changes map[string]any) error {
	path := "/v2/trace/setting"
	if model != "" {
		path = "/v2/models/" + neturl.PathEscape(model) + "/trace/setting"
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	method, body := http.MethodGet, []byte(nil)
	if changes != nil {
		method = http.MethodPost
		var err error
		if body, err = json.Marshal(changes); err != nil {
			return err
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, d.base+path, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	defer d.client.CloseIdleConnections()
	code, got, msg, err := loadgen.Call(ctx, d.client, req, 1<<20)
	switch {
	case errors.Is(err, loadgen.ErrUnreachable):
		return d.fail(err)
	case err != nil:
		return err
	case code != http.StatusOK:
		return &exitError{code: 1, msg: "gpuletd: trace: " + msg}
	}
	var settings map[string]any
	if err := json.Unmarshal(got, &settings); err != nil {
		return fmt.Errorf("trace: decode the settings: %w", err)
	}
	tw := newTable(w)
	for _, k := range slices.Sorted(maps.Keys(settings)) {
		v := settings[k]
		if list, ok := v.([]any); ok {
			parts := make([]string, len(list))
			for i, x := range list {
				parts[i] = fmt.Sprint(x)
			}
			v = strings.Join(parts, ",")
		}
		fmt.Fprintf(tw, "%s\t%v\n", k, v)
	}
	return tw.Flush()
}

// traceRecord is one trace as the daemon writes it.
type traceRecord struct {
	// Activity is set on a traced tensor's entry (level TENSORS), which
	// the summary leaves out; Tensor is the tensor.
	Activity string `json:"activity"`
	Tensor   struct {
		Name  string `json:"name"`
		Data  string `json:"data"`
		Shape string `json:"shape"`
		DType string `json:"dtype"`
	} `json:"tensor"`
	ID         uint64 `json:"id"`
	Model      string `json:"model_name"`
	Version    int    `json:"model_version"`
	ParentID   uint64 `json:"parent_id"`
	Error      string `json:"error"`
	Timestamps []struct {
		Name string `json:"name"`
		NS   int64  `json:"ns"`
	} `json:"timestamps"`
}

// at is the trace's timestamp of name, and whether it has one.
func (r traceRecord) at(name string) (int64, bool) {
	for _, ts := range r.Timestamps {
		if ts.Name == name {
			return ts.NS, true
		}
	}
	return 0, false
}

// writeTraceSummary prints, per model, the traced requests and where they
// spent their time (median / 99th percentile, failed requests left out of
// the times).
func writeTraceSummary(w io.Writer, recs []traceRecord) error {
	type spans struct {
		n, failed                      int
		total, queue, compute, outside []time.Duration
	}
	by := map[string]*spans{}
	for _, r := range recs {
		if r.Activity != "" || (len(r.Timestamps) == 0 && r.Error == "") {
			continue // a tensor, or a trace at level TENSORS alone
		}
		s := by[r.Model]
		if s == nil {
			s = &spans{}
			by[r.Model] = s
		}
		s.n++
		start, ok1 := r.at("REQUEST_START")
		end, ok2 := r.at("REQUEST_END")
		if r.Error != "" || !ok1 || !ok2 {
			s.failed++
			continue
		}
		total := time.Duration(end - start)
		s.total = append(s.total, total)
		q, okq := r.at("QUEUE_START")
		cs, okc := r.at("COMPUTE_START")
		ce, oke := r.at("COMPUTE_END")
		if okq && okc && oke {
			s.queue = append(s.queue, time.Duration(cs-q))
			s.compute = append(s.compute, time.Duration(ce-cs))
			s.outside = append(s.outside, total-time.Duration(ce-q))
		}
	}
	if len(by) == 0 {
		return errors.New("trace summary: the files hold no traces with timestamps (trace_level TIMESTAMPS)")
	}
	tw := newTable(w)
	fmt.Fprintln(tw, "MODEL\tTRACES\tFAILED\tTOTAL p50/p99\tQUEUE p50/p99\tBATCH p50/p99\tOUTSIDE p50/p99")
	for _, m := range slices.Sorted(maps.Keys(by)) {
		s := by[m]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\n", m, s.n, s.failed, spread(s.total), spread(s.queue), spread(s.compute), spread(s.outside))
	}
	return tw.Flush()
}

// spread is a sample's median and 99th percentile ("-" for none).
func spread(d []time.Duration) string {
	if len(d) == 0 {
		return "-"
	}
	slices.Sort(d)
	p := func(q int) time.Duration { return d[(len(d)*q+99)/100-1] }
	return fmt.Sprintf("%s / %s", d[(len(d)-1)/2].Round(time.Microsecond), p(99).Round(time.Microsecond))
}
