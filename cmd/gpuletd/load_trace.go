package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	neturl "net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
	"github.com/gpulet/gpuletd/sim/loadgen"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// traceFlags are perf_analyzer's trace options: before the run it sets the
// measured model's trace settings on the server to them (Triton's trace
// extension, which gpuletd serves), over the protocol the run sends with,
// and leaves them so after it, as perf_analyzer does.
type traceFlags struct {
	levels                 []string
	rate, count, frequency int
	file                   string
}

// traceFlagSettings are the flags and the trace settings they set.
var traceFlagSettings = []struct{ flag, setting string }{
	{"trace-level", "trace_level"},
	{"trace-rate", "trace_rate"},
	{"trace-count", "trace_count"},
	{"log-frequency", "log_frequency"},
	{"trace-file", "trace_file"},
}

// register adds the flags to cmd.
func (t *traceFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringArrayVar(&t.levels, "trace-level", nil, "set the model's trace_level on the server before the run, as perf_analyzer's: OFF, TIMESTAMPS or TENSORS (repeat it for both)")
	f.IntVar(&t.rate, "trace-rate", 1000, "set the model's trace_rate (one request traced in so many), as perf_analyzer's")
	f.IntVar(&t.count, "trace-count", -1, "set the model's trace_count (-1: no limit), as perf_analyzer's")
	f.IntVar(&t.frequency, "log-frequency", 0, "set the model's log_frequency (write every so many traces; 0 when tracing stops), as perf_analyzer's")
	f.StringVar(&t.file, "trace-file", "", "set the model's trace_file, as perf_analyzer's (gpuletd: a file name under the daemon's <state_dir>/traces/)")
	_ = cmd.RegisterFlagCompletionFunc("trace-level", cobra.FixedCompletions([]string{"OFF", "TIMESTAMPS", "TENSORS"}, cobra.ShellCompDirectiveNoFileComp))
}

// settings are the trace settings the flags given ask for, nil for none.
func (t *traceFlags) settings(f *pflag.FlagSet) map[string][]string {
	values := map[string][]string{
		"trace_level": t.levels, "trace_rate": {strconv.Itoa(t.rate)}, "trace_count": {strconv.Itoa(t.count)},
		"log_frequency": {strconv.Itoa(t.frequency)}, "trace_file": {t.file},
	}
	var out map[string][]string
	for _, s := range traceFlagSettings {
		if f.Changed(s.flag) {
			if out == nil {
				out = map[string][]string{}
			}
			out[s.setting] = values[s.setting]
		}
	}
	return out
}

// setTraces sets each model's trace settings on the server, over gRPC at
// grpcAddr when given, else over REST (with the admin token, which a daemon
// off loopback asks of these calls), and says on w what each model's are
// now.
func setTraces(ctx context.Context, w io.Writer, d *daemonAPI, grpcAddr, token string, models []string, settings map[string][]string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	set := func(m string) (map[string][]string, error) { return setTraceREST(ctx, d, token, m, settings) }
	if grpcAddr != "" {
		c, err := d.grpcClient(ctx, grpcAddr)
		if err != nil {
			return d.failOver(grpcAddr, err)
		}
		callCtx := ctx
		if token != "" { // the admin token goes with these calls alone
			callCtx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
		}
		set = func(m string) (map[string][]string, error) { return setTraceGRPC(callCtx, c, m, settings) }
	}
	for _, m := range models {
		now, err := set(m)
		if err != nil {
			return fmt.Errorf("load: set %s's trace settings (--trace-*): %w", m, err)
		}
		parts := make([]string, 0, len(now))
		for _, k := range slices.Sorted(maps.Keys(now)) {
			parts = append(parts, k+"="+strings.Join(now[k], ","))
		}
		fmt.Fprintf(w, "trace settings of %s, set before the run and left so after it: %s\n", m, strings.Join(parts, " "))
	}
	return nil
}

// setTraceREST posts settings to model's trace settings and returns them as
// they are now.
func setTraceREST(ctx context.Context, d *daemonAPI, token, model string, settings map[string][]string) (map[string][]string, error) {
	body, err := json.Marshal(settings)
	if err != nil {
		return nil, err
	}
	code, answer, msg, err := adminCall(ctx, d, "POST", "/v2/models/"+neturl.PathEscape(model)+"/trace/setting", token, body)
	switch {
	case err != nil:
		return nil, err
	case code != 200:
		return nil, fmt.Errorf("%d: %s", code, msg)
	}
	var now map[string]any
	if err := json.Unmarshal(answer, &now); err != nil {
		return nil, fmt.Errorf("decode the settings: %w", err)
	}
	out := make(map[string][]string, len(now))
	for k, v := range now {
		switch v := v.(type) {
		case []any:
			for _, x := range v {
				out[k] = append(out[k], fmt.Sprint(x))
			}
		default:
			out[k] = []string{fmt.Sprint(v)}
		}
	}
	return out, nil
}

// setTraceGRPC sets model's trace settings with the TraceSetting call and
// returns them as they are now.
func setTraceGRPC(ctx context.Context, c pb.GRPCInferenceServiceClient, model string, settings map[string][]string) (map[string][]string, error) {
	req := &pb.TraceSettingRequest{ModelName: model, Settings: make(map[string]*pb.TraceSettingRequest_SettingValue, len(settings))}
	for k, v := range settings {
		req.Settings[k] = &pb.TraceSettingRequest_SettingValue{Value: v}
	}
	res, err := c.TraceSetting(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		st := status.Convert(err)
		return nil, &loadgen.GRPCError{Call: "TraceSetting", Code: st.Code(), Message: st.Message()}
	}
	out := make(map[string][]string, len(res.Settings))
	for k, v := range res.Settings {
		out[k] = v.GetValue()
	}
	return out, nil
}
