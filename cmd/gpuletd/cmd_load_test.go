package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/modelzoo"
	"github.com/gpulet/gpuletd/sim/loadgen"
	"github.com/stretchr/testify/require"
)

func TestWriteLoadReport(t *testing.T) {
	r := &loadgen.Report{
		Model: "lenet5", URL: "http://127.0.0.1:8700", Rate: 200, Window: 10 * time.Second,
		Scheduled: 2003, Sent: 2001, Dropped: 2, OK: 1990, Failed: map[string]int64{"503": 9, "error": 2},
		FirstError: "503: lenet5: the deadline cannot be met (deadline_unreachable)",
		SLO:        5 * time.Millisecond, WithinSLO: 1985, Goodput: 198.5, Attainment: 0.992, SendRate: 200.1,
		Latency:     loadgen.Percentiles{Count: 1990, P50: 850 * time.Microsecond, P90: 1100 * time.Microsecond, P99: 2300 * time.Microsecond, Max: 5100 * time.Microsecond},
		Lag:         loadgen.Percentiles{Count: 2001, P50: 70 * time.Microsecond, P99: 1100 * time.Microsecond, Max: 2 * time.Millisecond},
		MaxInFlight: 7, RequestBytes: 8402,
		Seconds: []loadgen.Second{{Due: 200, OK: 200, Within: 200}, {Due: 210, Dropped: 2, OK: 197, Within: 192, Failed: 11}, {Due: 190, OK: 190, Within: 189}},
	}
	var b strings.Builder
	require.NoError(t, writeLoadReport(&b, "poisson", r))
	out := b.String()
	require.LessOrEqual(t, widest(out), 80, out)
	for _, want := range []string{
		"target        lenet5 at http://127.0.0.1:8700",
		"arrivals      poisson, 200/s for 10s, JSON tensors (8402-byte requests)",
		"requests      2003 scheduled, 2001 sent, 2 dropped by this client, 1990 ok",
		"failed        9 503, 2 error",
		"first error   503: lenet5: the deadline cannot be met (deadline_unreachable)",
		"slo 5.00ms    1985 within, attainment 99.2%, goodput 198/s",
		"latency       p50 850µs, p90 1.10ms, p99 2.30ms, max 5.10ms",
		"worst second  1s–2s: 91.4% within the SLO (210 due, 11 failed, 2 dropped)",
		"send rate     200/s (target 200/s), 7 in flight at most",
		"schedule lag  p50 70µs, p99 1.10ms, max 2.00ms",
	} {
		require.Contains(t, out, want)
	}
	require.NotContains(t, out, "warning", "a lag of 1.1ms at p99 is no burst")

	// A client that fell behind its schedule says so.
	late := *r
	late.Lag.P99, late.Lag.Max = 3*time.Millisecond, 40*time.Millisecond
	b.Reset()
	require.NoError(t, writeLoadReport(&b, "poisson", &late))
	require.Contains(t, b.String(), "warning: this client fell behind its schedule (1% of its requests left 3.00ms or more late, up to 40.0ms)")
	late.SLO = 20 * time.Millisecond // 3ms late is within a quarter of it
	b.Reset()
	require.NoError(t, writeLoadReport(&b, "poisson", &late))
	require.NotContains(t, b.String(), "warning")

	b.Reset()
	require.NoError(t, writeLoadReport(&b, "gamma:cv=2", &loadgen.Report{Model: "m", Binary: true}))
	require.Contains(t, b.String(), "failed        none")
	require.Contains(t, b.String(), "latency       no answer")
	require.Contains(t, b.String(), "binary tensors")
	require.NotContains(t, b.String(), "worst second", "no second to name")
	b.Reset()
	require.NoError(t, writeLoadReport(&b, "poisson", &loadgen.Report{Model: "m", Binary: true, Compression: "gzip", RequestBytes: 310}))
	require.Contains(t, b.String(), "binary tensors, gzip-compressed (310-byte requests)")
	b.Reset()
	require.NoError(t, writeLoadReport(&b, "poisson", &loadgen.Report{Model: "m", Binary: true, Priority: 1, RequestBytes: 330}))
	require.Contains(t, b.String(), "binary tensors, priority 1 (330-byte requests)")

	// Requests of several rows: the report says the rows, and the
	// goodput in rows too.
	rows := *r
	rows.BatchSize = 8
	b.Reset()
	require.NoError(t, writeLoadReport(&b, "poisson", &rows))
	require.Contains(t, b.String(), "rows          8 in every request\nrequests      2003 scheduled")
	require.Contains(t, b.String(), "slo 5.00ms    1985 within, attainment 99.2%, goodput 198/s (1588 rows/s)")
	require.LessOrEqual(t, widest(b.String()), 80, b.String())

	// A closed loop: no target rate, no schedule lag.
	b.Reset()
	r.Closed, r.Rate = 4, 0
	require.NoError(t, writeLoadReport(&b, "closed", r))
	require.Contains(t, b.String(), "arrivals      closed loop, 4 in flight, for 10s, JSON tensors (8402-byte requests)")
	require.Contains(t, b.String(), "send rate     200/s, 7 in flight at most")
	require.NotContains(t, b.String(), "schedule lag")
}

func TestClosedShares(t *testing.T) {
	got, err := closedShares([]string{"a", "b"}, 0)
	require.NoError(t, err)
	require.Equal(t, []loadgen.Share{{Model: "a"}, {Model: "b"}}, got)
	for _, tc := range []struct {
		models []string
		rate   float64
		err    string
	}{
		{[]string{"a"}, 10, "give --concurrency, not --rate"},
		{[]string{"a=5"}, 0, "takes no rate per model (a=5)"},
		{[]string{"a", "a"}, 0, "model a is listed twice"},
	} {
		_, err := closedShares(tc.models, tc.rate)
		require.ErrorContains(t, err, tc.err)
	}
}

// servingDaemon starts the real daemon on emulated V100s serving the
// modelzoo's lenet5 and mlp, and waits until both are ready.
func servingDaemon(t *testing.T) (base, addr, repo string) {
	t.Helper()
	repo = filepath.Join(t.TempDir(), "models")
	require.NoError(t, modelzoo.WriteRepository(repo, []string{"lenet5", "mlp"}, 1))
	addr, logs := startDaemon(t, daemonEnv(t, "GPULETD_MODEL_REPOSITORY="+repo,
		"GPULETD_DEVICES=[{kind: emulated, profiles: igniter-v100, count: 2}]"))
	base = "http://" + addr
	require.Eventually(t, func() bool {
		var s adminStatus
		if err := adminGet(t.Context(), plainAPI(base), "/api/v1/status", &s); err != nil {
			return false
		}
		for _, m := range s.Models {
			if !m.Ready {
				return false
			}
		}
		return len(s.Models) == 2
	}, time.Minute, 100*time.Millisecond, "models ready; logs:\n%s", logs)
	return base, addr, repo
}

// TestCLIAgainstDaemon runs status, models list|show and load against a
// real daemon.
func TestCLIAgainstDaemon(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	base, addr, repo := servingDaemon(t)

	code, out, stderr := runCLI(t, "status", "--url", base)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "gpuletd dev at "+base+": ready")
	require.Regexp(t, `(?m)^emu0 +emulated +igniter-v100`, out)
	require.Regexp(t, `(?m)^lenet5 +5\.00ms .* emu\d-\d+-\d+$`, out)
	// The daemon's gRPC listener took any free port (127.0.0.1:0): status
	// says the port it bound, which --protocol grpc then reaches.
	require.Regexp(t, `(?m)^gRPC on 127\.0\.0\.1:[1-9]\d* \(`, out)
	// 80 columns but for the memory cgroup's path, which is this machine's
	// and may be wider than any line.
	require.LessOrEqual(t, widest(regexp.MustCompile(`(cgroup\s+)/\S+`).ReplaceAllString(out, "$1/")), 80, out)

	// One request and its answer, then its classes (a 5 ms SLO on a loaded
	// machine may refuse one for its deadline: tried again then).
	infer := func(args ...string) string {
		t.Helper()
		var stderr string
		for range 5 {
			var code int
			var out string
			if code, out, stderr = runCLI(t, append([]string{"infer", "--url", base}, args...)...); code == 0 {
				return out
			}
			require.Contains(t, stderr, "deadline")
		}
		t.Fatalf("infer %v: %s", args, stderr)
		return ""
	}
	out = infer("mlp")
	require.Regexp(t, `(?m)^model +mlp \(version 1\), answered in \S+$`, out)
	require.Regexp(t, `(?m)^output +FP32 \[1 10\]  (\S+ ){8}… \(10 values\)$`, out)
	out = infer("mlp", "--top", "2")
	require.Regexp(t, `(?m)^output +BYTES \[1 2\]\n +row 0: [-\d.e]+:\d+, [-\d.e]+:\d+$`, out)
	out = infer("mlp", "-i", "grpc", "--top", "2")
	require.Regexp(t, `(?m)^output +BYTES \[1 2\]\n +row 0: [-\d.e]+:\d+, [-\d.e]+:\d+$`, out, "the same over the gRPC listener the daemon said")
	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"inputs":[{"name":"input","shape":[1,3],"datatype":"FP32","data":[1,2,3]}]}`), 0o600))
	code, _, stderr = runCLI(t, "infer", "mlp", "--url", base, "--request", bad)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, `gpuletd: mlp refused the request: 400 Bad Request: mlp: input "input" has shape [1 3], the model takes [-1 784]`)

	code, out, _ = runCLI(t, "status", "--url", base, "--json")
	require.Equal(t, 0, code)
	var raw map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &raw))
	require.Contains(t, raw, "plan", "--json passes the whole document through")

	code, out, _ = runCLI(t, "models", "list", "--url", base)
	require.Equal(t, 0, code)
	require.Len(t, strings.Split(strings.TrimSpace(out), "\n"), 3, out)

	code, out, _ = runCLI(t, "models", "show", "mlp", "--url", base)
	require.Equal(t, 0, code)
	require.Contains(t, out, "model        mlp (version 1)")
	require.Regexp(t, `(?m)^input +input +FP32 +\[-1 784\]$`, out)
	require.Regexp(t, `(?m)^igniter-v100 +\d+ +`, out)
	require.Contains(t, out, "emulated as  alexnet", "an emulated node names the reference curve (the zoo stands mlp in for alexnet)")
	require.Regexp(t, `(?s)\nEVENTS \(the newest; all: gpuletd events --model mlp\)\n.* executor_start: executor started \(.*models=[a-z0-9,]*mlp`, out,
		"it ends with the model's events, its executor's start among them")
	require.Regexp(t, `(?m)^requests +[2-9]\d* answered(, \d+ failed)? since the start; the last \d+s ago, at \d\d:\d\d:\d\d$`, out,
		"the requests infer sent, and when the last ended")
	require.Regexp(t, `(?m)^batches +1 row ×[1-9]\d* \(\S+\)(, \d+ rows ×\d+ \(\S+\))* since loaded$`, out, "the batches it ran, by size")
	code, out, _ = runCLI(t, "models", "show", "lenet5", "--url", base)
	require.Equal(t, 0, code)
	require.Regexp(t, `(?m)^requests +none since the start$`, out, "no request yet")

	code, _, stderr = runCLI(t, "models", "show", "nope", "--url", base)
	require.Equal(t, 1, code)
	require.Equal(t, "gpuletd: unknown model \"nope\": it is not in the repository or not loaded\n", stderr)

	// What a re-plan would apply, at the daemon's estimates and at a rate
	// asked for; nothing is applied.
	code, out, stderr = runCLI(t, "plan", "--url", base)
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `(?m)^plan \(gpulet-int\): schedulable, \d of \d GPUs used$`, out)
	require.Regexp(t, `(?m)^for lenet5 [\d.]+ req/s estimated, mlp [\d.]+ req/s estimated;`, out)
	var before struct {
		Plan gpulet.Plan `json:"plan"`
	}
	require.NoError(t, adminGet(t.Context(), plainAPI(base), "/api/v1/plan", &before))
	code, out, stderr = runCLI(t, "plan", "--url", base, "--rate", "mlp=300")
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `(?m) mlp +\d+ +360\.0 `, out, "planned for 300 req/s with the headroom")
	require.Contains(t, out, "mlp 300 req/s asked")
	require.Regexp(t, `(?m)^capacity \(planner's estimate\): [\d.]+× the \d+ req/s planned for`, out)
	require.Regexp(t, `(?m)^applying it would, in this order:\n  (start|resize|retune|load) `, out)
	var now struct {
		Plan gpulet.Plan `json:"plan"`
	}
	require.NoError(t, adminGet(t.Context(), plainAPI(base), "/api/v1/plan", &now))
	require.Equal(t, before.Plan.Assigned(), now.Plan.Assigned(), "the preview applied nothing")
	code, _, stderr = runCLI(t, "plan", "--url", base, "--rate", "mpl=300")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, `gpuletd: bad preview request: rates: unknown model "mpl": the node plans for lenet5, mlp`)

	// Load through the configured address (no --url).
	t.Setenv("GPULETD_LISTEN", addr)
	code, out, stderr = runCLI(t, "load", "--model", "lenet5", "--rate", "50", "--duration", "1s", "--binary", "--json")
	require.Equal(t, 0, code, stderr)
	var load struct {
		Binary bool `json:"binary"`
		Report struct {
			Scheduled, Sent, OK int64
			Failed              map[string]int64 `json:"failed"`
			SLOMS               float64          `json:"slo_ms"`
		} `json:"report"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &load))
	require.True(t, load.Binary)
	require.Positive(t, load.Report.Sent)
	require.Equal(t, load.Report.Scheduled, load.Report.Sent)
	failed := int64(0)
	for _, n := range load.Report.Failed {
		failed += n
	}
	require.Equal(t, load.Report.Sent, load.Report.OK+failed, "every request is answered: %s", out)
	require.Equal(t, 5.0, load.Report.SLOMS, "the SLO comes from the daemon")

	// A command line written for perf_analyzer runs as written: even
	// gaps, the report in perf_analyzer's CSV, over the gRPC listener the
	// daemon names.
	csvFile := filepath.Join(t.TempDir(), "perf.csv")
	code, out, stderr = runCLI(t, "load", "-m", "lenet5", "-i", "grpc", "--request-distribution", "constant", "--rate", "50", "--duration", "1s", "-f", csvFile, "--csv-format", "perf_analyzer")
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `(?m)^target +lenet5 at grpc 127\.0\.0\.1:[1-9]\d*$`, out)
	require.Regexp(t, `(?m)^arrivals +constant, 50\.0/s for 1s`, out)
	require.Regexp(t, `(?m)^requests +(49|50) scheduled, `, out, "50 a second, evenly")
	written, err := os.ReadFile(csvFile)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(written)), "\n")
	require.Len(t, lines, 2, "a header and lenet5's row: %s", written)
	require.Equal(t, "Request Rate,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,Server Compute Input,Server Compute Infer,Server Compute Output,Client Recv,p50 latency,p90 latency,p95 latency,p99 latency", lines[0])
	// The answers a second (a loaded machine may refuse one or two for
	// their deadline), then the model's run in Server Compute Infer, from
	// the daemon's statistics.
	require.Regexp(t, `^50,[1-9]\d*\.\d,0,\d+,\d+,\d+,[1-9]\d*,\d+,0,[1-9]\d*,[1-9]\d*,[1-9]\d*,[1-9]\d*$`, lines[1])
	// A sweep read with --collect-metrics and --verbose-csv: the server's
	// metrics at every step (the emulated GPUs' memory: they report no
	// utilization or power), and perf_analyzer's verbose columns.
	code, out, stderr = runCLI(t, "load", "-m", "lenet5", "--concurrency-range", "1:2", "-p", "300", "--warmup", "0s", "--collect-metrics",
		"-f", csvFile, "--csv-format", "perf_analyzer", "--verbose-csv", "--whole-range")
	require.Equal(t, 0, code, stderr)
	require.Len(t, regexp.MustCompile(`(?m)^ +server metrics, [1-9]\d* reads of http://\S+/metrics:\n +emu0: memory .+ at most of 16 GiB\n`).FindAllString(out, -1), 2, out)
	written, err = os.ReadFile(csvFile)
	require.NoError(t, err)
	lines = strings.Split(strings.TrimSpace(string(written)), "\n")
	require.Len(t, lines, 3, "a header and a row a step: %s", written)
	require.True(t, strings.HasSuffix(lines[0], ",p99 latency,Avg latency,request/response,response wait,Avg GPU Utilization,Avg GPU Power Usage,Max GPU Memory Usage,Total GPU Memory"), lines[0])
	require.Regexp(t, `,[1-9]\d*,0,[1-9]\d*,,,emu0:\d+;emu1:\d+;,emu0:17179869184;emu1:17179869184;$`, lines[1])
	code, out, stderr = runCLI(t, "load", "-m", "lenet5", "--concurrency-range", "1:2", "-p", "300", "--warmup", "0s", "--collect-metrics", "--whole-range", "--json")
	require.Equal(t, 0, code, stderr)
	var swept struct {
		ServerMetrics []struct {
			At      float64 `json:"at"`
			Samples int     `json:"samples"`
			GPUs    []struct {
				GPU string `json:"gpu"`
			} `json:"gpus"`
		} `json:"server_metrics"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &swept))
	require.Len(t, swept.ServerMetrics, 2, "a step's each: %s", out)
	require.Equal(t, 2.0, swept.ServerMetrics[1].At)
	require.Positive(t, swept.ServerMetrics[1].Samples)
	require.Equal(t, "emu0", swept.ServerMetrics[1].GPUs[0].GPU)
	// perf_analyzer's intervals file: a request 10 ms after the last, then
	// 30 ms, again and again: 50 a second.
	gaps := filepath.Join(t.TempDir(), "gaps.txt")
	require.NoError(t, os.WriteFile(gaps, []byte("10000\n30000\n"), 0o600))
	code, out, stderr = runCLI(t, "load", "-m", "lenet5", "--request-intervals", gaps, "-p", "1000")
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `(?m)^arrivals +intervals:\S+gaps\.txt, 50\.0/s for 1s`, out)
	require.Regexp(t, `(?m)^requests +(49|50|51) scheduled, `, out)
	// perf_analyzer's --request-count: the run ends with its 30th request,
	// not after --duration's default 10 s.
	code, out, stderr = runCLI(t, "load", "-m", "lenet5", "--request-count", "30", "--rate", "100")
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `(?m)^requests +30 scheduled, 30 sent, `, out)
	require.Regexp(t, `(?m)^arrivals +poisson, 100/s for [\d.]+m?s`, out)
	require.NotContains(t, out, "for 10s", "about 300 ms, not --duration's 10 s")
	// perf_analyzer -m MODEL alone: one request always in flight.
	code, out, stderr = runCLI(t, "load", "-m", "lenet5", "-p", "500")
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `(?m)^arrivals +closed loop, 1 in flight, for \d+ms`, out)
	require.NotContains(t, out, "windows", "-p alone measures one window")
	// perf_analyzer's -l alone bounds the mean latency: each step holds
	// while it is within a second, whatever the share within the SLO.
	code, out, stderr = runCLI(t, "load", "-m", "lenet5", "--concurrency-range", "1:2", "-p", "200", "--warmup", "0s", "-l", "1000")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "a step holds when every model's mean latency is within 1000ms\n")
	require.Regexp(t, `(?m)^2 \(.*yes .*\n\nevery step held, up to concurrency 2`, out)
	// perf_analyzer's trace options set the model's trace settings before
	// the run, over REST, and over gRPC with -i grpc (here back to OFF).
	code, _, stderr = runCLI(t, "load", "-m", "lenet5", "-p", "200", "--trace-level", "TIMESTAMPS", "--trace-rate", "7", "--log-frequency", "3")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stderr, "trace settings of lenet5, set before the run and left so after it: log_frequency=3 ")
	code, out, stderr = runCLI(t, "trace", "--model", "lenet5")
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `(?m)^trace_level +TIMESTAMPS\n(?s:.*)^trace_rate +7$`, out)
	code, _, stderr = runCLI(t, "load", "-m", "lenet5", "-p", "200", "-i", "grpc", "--trace-level", "OFF", "--trace-rate", "1000", "--log-frequency", "0")
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `trace settings of lenet5, .*: log_frequency=0 .*trace_level=OFF .*trace_rate=1000`, stderr)
	code, _, stderr = runCLI(t, "load", "-m", "lenet5", "-p", "200", "--trace-file", "/elsewhere/trace.json")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, `load: set lenet5's trace settings (--trace-*): 400: trace setting refused: trace_file "/elsewhere/trace.json": give a file name`)
	// perf_analyzer's stability: windows until the last three agree, here
	// within 1000% (any three that have answers), and the report counts
	// those three; within 0.001% none agree, and the command fails as
	// perf_analyzer does, after its report.
	code, out, stderr = runCLI(t, "load", "-m", "lenet5", "-p", "200", "-s", "1000", "--warmup-request-count", "20", "-v", "--max-threads", "4")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stderr, "note: --max-threads is taken and ignored")
	require.Regexp(t, `(?m)^WINDOW +LASTED +DUE +OK +THROUGHPUT +MEAN\n1 +200ms +\d+ +\d+ +\d+/s +\S+\n2 +200ms .*\n3 +200ms `, out, "-v: every window")
	require.Regexp(t, `(?m)^arrivals +closed loop, 1 in flight, for 600ms,`, out)
	require.Regexp(t, `(?m)^windows +\d+ measured \(200ms each\); the last 3 agree within 1000%: \d+, \d+, \d+ req/s, mean `, out,
		"three, unless a stall left a window without an answer")
	// perf_analyzer's profile export: the three windows' requests, each
	// with its times, and their bounds.
	exported := filepath.Join(t.TempDir(), "export.json")
	code, out, stderr = runCLI(t, "load", "-m", "lenet5", "-p", "200", "-s", "1000", "--profile-export-file", exported, "--json")
	require.Equal(t, 0, code, stderr)
	var counted struct {
		Report struct {
			Sent int `json:"sent"`
		} `json:"report"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &counted))
	b, err := os.ReadFile(exported)
	require.NoError(t, err)
	var export exportFile
	require.NoError(t, json.Unmarshal(b, &export))
	require.Len(t, export.Experiments, 1)
	ex := export.Experiments[0]
	require.Equal(t, "concurrency", ex.Experiment.Mode)
	require.Equal(t, 1.0, ex.Experiment.Value)
	require.Len(t, ex.Requests, counted.Report.Sent)
	require.Len(t, ex.WindowBoundaries, 4)
	require.Equal(t, int64(600*time.Millisecond), ex.WindowBoundaries[3]-ex.WindowBoundaries[0])
	code, out, stderr = runCLI(t, "load", "-m", "lenet5", "-p", "100", "-s", "0.001", "-r", "4", "--json")
	require.Equal(t, 1, code, out)
	require.Contains(t, stderr, "no 3 windows in a row agreed within 0.001% in 4")
	var unsettled struct {
		Report struct {
			Stable bool              `json:"stable"`
			Trials []json.RawMessage `json:"trials"`
			Window float64           `json:"window_s"`
		} `json:"report"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &unsettled))
	require.False(t, unsettled.Report.Stable)
	require.Len(t, unsettled.Report.Trials, 4)
	require.InDelta(t, 0.3, unsettled.Report.Window, 1e-9, "the last three windows")
	// More of perf_analyzer's spellings, and a parameter every request
	// carries.
	code, out, stderr = runCLI(t, "load", "-m", "lenet5", "-i", "grpc", "--service-kind=triton", "--grpc-compression-algorithm", "gzip", "-z",
		"--request-parameter", "tag:smoke:string", "-p", "500")
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `(?m)^arrivals +closed loop, 1 in flight, for \d+ms, gRPC raw tensors, gzip-compressed, tag=smoke \(`, out)
	require.Regexp(t, `(?m)^requests +\d+ scheduled, \d+ sent, 0 dropped by this client, [1-9]\d* ok$`, out)
	// perf_analyzer's data file: two requests, one as values, one as
	// base64 bytes, sent in turn over gRPC.
	values := make([]string, 784)
	for i := range values {
		values[i] = strconv.Itoa(i % 7)
	}
	dataFile := filepath.Join(t.TempDir(), "data.json")
	require.NoError(t, os.WriteFile(dataFile, []byte(`{"data": [{"input": [`+strings.Join(values, ",")+`]}, {"input": {"b64": "`+
		base64.StdEncoding.EncodeToString(make([]byte, 4*784))+`"}}]}`), 0o600))
	code, out, stderr = runCLI(t, "load", "-m", "lenet5", "-i", "grpc", "--input-data", dataFile, "--rate", "50", "--duration", "1s", "--json")
	require.Equal(t, 0, code, stderr)
	var fromData struct {
		Report struct {
			Sent, OK int64
			Failed   map[string]int64 `json:"failed"`
		} `json:"report"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &fromData))
	require.Positive(t, fromData.Report.OK)
	refused := int64(0)
	for reason, n := range fromData.Report.Failed {
		require.Contains(t, reason, "deadline", "the file's requests are the model's: only a loaded machine's deadline refuses one: %s", out)
		refused += n
	}
	require.Equal(t, fromData.Report.Sent, fromData.Report.OK+refused, "every request of the file answered: %s", out)
	code, out, stderr = runCLI(t, "load", "-m", "lenet5", "--input-data", dataFile, "--input-data", dataFile, "--request-count", "8", "--rate", "100")
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `(?m)^requests +8 scheduled, 8 sent, `, out, "two data files, four requests in turn")
	out = infer("lenet5", "--input-data", dataFile)
	require.Regexp(t, `(?m)^model +lenet5 \(version 1\), answered in \S+$`, out, "gpuletd infer sends the file's first request")
	// perf_analyzer's folder: a file named after the input, one request's
	// 784 floats as they lie in memory, sent as a binary tensor.
	dataDir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dataDir, "input"), make([]byte, 4*784), 0o600))
	code, out, stderr = runCLI(t, "load", "-m", "lenet5", "--input-data", dataDir, "--rate", "50", "--duration", "1s")
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `(?m)^arrivals +poisson, 50\.0/s for 1s, binary tensors`, out)
	require.Regexp(t, `(?m)^requests +\d+ scheduled, \d+ sent, 0 dropped by this client, [1-9]\d* ok$`, out)
	code, _, stderr = runCLI(t, "infer", "lenet5", "--input-data", dataDir)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "is a folder of binary tensors (perf_analyzer's --input-data DIR); gpuletd infer sends JSON")
	code, _, stderr = runCLI(t, "load", "-m", "lenet5", "--input-data", dataFile, "--inputs", "3", "--rate", "50")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "--input-data FILE gives the requests; --inputs asks for generated ones")
	code, _, stderr = runCLI(t, "load", "-m", "lenet5", "--request-distribution", "uniform", "--rate", "50")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, `--request-distribution "uniform": give constant or poisson (other processes: --arrival)`)

	// A run given a floor exits 1 when a model falls short of it, and says
	// which; one that holds it exits 0, its JSON saying so.
	code, out, stderr = runCLI(t, "load", "--model", "lenet5", "--rate", "50", "--duration", "1s", "--slo", "1ns", "--min-attainment", "0.5")
	require.Equal(t, 1, code, out)
	require.Regexp(t, `(?m)^slo \S+ +0 within, attainment 0\.0%`, out, "the report is printed first")
	require.Regexp(t, `(?m)^lenet5 on the server: [1-9]\d* answers, [1-9]\d* inferences in [1-9]\d* batches; a request ran \S+ queued, then \S+ readying its batch's inputs, \S+ in the model, \S+ on its outputs$`, out,
		"what the server's statistics say of the run, as perf_analyzer's server-side lines")
	require.Contains(t, stderr, "gpuletd load: lenet5 answered 0.0% of its requests due within its SLO, under --min-attainment 50.0%")
	code, out, stderr = runCLI(t, "load", "--model", "lenet5", "--rate", "50", "--duration", "1s", "--slo", "10s", "--min-attainment", "0.5", "--json")
	require.Equal(t, 0, code, stderr)
	var held struct {
		MinAttainment float64 `json:"min_attainment"`
		Holds         bool    `json:"holds"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &held))
	require.Equal(t, 0.5, held.MinAttainment)
	require.True(t, held.Holds, out)
	// The same floor as perf_analyzer writes it: p50 within 10 s.
	code, out, stderr = runCLI(t, "load", "-m", "lenet5", "--rate", "50", "--duration", "1s", "--latency-threshold", "10000", "--percentile", "50", "--json")
	require.Equal(t, 0, code, stderr)
	held.MinAttainment, held.Holds = 0, false
	require.NoError(t, json.Unmarshal([]byte(out), &held))
	require.Equal(t, 0.5, held.MinAttainment)
	require.True(t, held.Holds, out)
	code, _, stderr = runCLI(t, "load", "--model", "lenet5", "--rate", "50", "--min-attainment", "99")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "--min-attainment 99 is not a share in (0, 1]")

	// A closed loop of two (perf_analyzer's concurrency mode), its bodies
	// deflate-compressed.
	code, out, stderr = runCLI(t, "load", "--model", "mlp", "--arrival", "closed", "--concurrency", "2", "--duration", "1s", "--compression", "deflate", "--json")
	require.Equal(t, 0, code, stderr)
	var closed struct {
		Report struct {
			Closed  int              `json:"closed_loop"`
			Sent    int64            `json:"sent"`
			Dropped int64            `json:"dropped_by_client"`
			Max     int64            `json:"max_in_flight"`
			OK      int64            `json:"ok"`
			Failed  map[string]int64 `json:"failed"`
			Bytes   int              `json:"request_bytes"`
		} `json:"report"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &closed))
	require.Equal(t, 2, closed.Report.Closed)
	require.Positive(t, closed.Report.Sent)
	require.Positive(t, closed.Report.OK)
	for key := range closed.Report.Failed {
		require.NotContains(t, key, "bad_request", "the daemon reads every compressed body: %s", out)
	}
	require.Less(t, closed.Report.Bytes, 4000, "the report gives the compressed size of mlp's 8 KiB JSON request")

	// Requests of four rows each (perf_analyzer's -b 4); more than the
	// model's max_batch_size is refused before any is sent.
	code, out, stderr = runCLI(t, "load", "--model", "lenet5", "-b", "4", "--rate", "20", "--duration", "1s", "--json")
	require.Equal(t, 0, code, stderr)
	var batched struct {
		Report struct {
			BatchSize int              `json:"batch_size"`
			OK        int64            `json:"ok"`
			Failed    map[string]int64 `json:"failed"`
		} `json:"report"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &batched))
	require.Equal(t, 4, batched.Report.BatchSize)
	require.Positive(t, batched.Report.OK, out)
	for key := range batched.Report.Failed {
		require.NotContains(t, key, "bad_request", "the daemon takes requests of four rows: %s", out)
	}
	code, _, stderr = runCLI(t, "load", "--model", "lenet5", "--batch-size", "100000", "--rate", "20", "--duration", "1s")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "lenet5 takes at most")
	require.Zero(t, closed.Report.Dropped)
	require.LessOrEqual(t, closed.Report.Max, int64(2), out)

	// A sweep of a mix: under an SLO every answer meets, each step holds;
	// under one none can, the first step does not, and the sweep ends there.
	code, out, stderr = runCLI(t, "load", "--model", "lenet5,mlp", "--rate-range", "20:40:20", "--duration", "1s", "--warmup", "0s",
		"--slo", "10s", "--min-attainment", "0.5")
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `(?m)^sweep of lenet5, mlp at http://\S+: poisson arrivals at each total rate for 1s, JSON tensors$`, out)
	require.Contains(t, out, "a step holds when every model answers 50.0% of its requests due within its SLO")
	require.Regexp(t, `(?m)^RATE +SENT +IN SLO +GOODPUT +LOWEST +HOLDS +FAILED$`, out)
	require.Regexp(t, `(?m)^20\.0/s +[1-9]\d* +\d+\.\d% +\S+/s +(lenet5|mlp) \d+\.\d% +yes `, out)
	require.Regexp(t, `(?m)^40\.0/s +[1-9]\d* .* yes `, out)
	require.Contains(t, out, "\nevery step held, up to 40.0/s (goodput ")
	code, out, stderr = runCLI(t, "load", "--model", "lenet5", "--rate-range", "20:40:20", "--duration", "1s", "--warmup", "0s", "--slo", "1ns")
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `(?m)^20\.0/s +[1-9]\d* +0\.0% +0\.00/s +\S+ +\S+ +no `, out)
	require.NotContains(t, out, "40.0/s")
	require.Contains(t, out, "no step held: at 20.0/s, the lowest, 0.0% within the SLO\n1 more steps above it not run")
	// The whole range, past the step that does not hold, into a CSV file.
	csvPath := filepath.Join(t.TempDir(), "sweep.csv")
	code, out, stderr = runCLI(t, "load", "--model", "lenet5", "--rate-range", "20:40:20", "--whole-range", "--duration", "1s", "--warmup", "0s",
		"--slo", "1ns", "--csv", csvPath)
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `(?m)^40\.0/s +[1-9]\d* +0\.0% .* no `, out)
	require.NotContains(t, out, "not run")
	table, err := os.ReadFile(csvPath)
	require.NoError(t, err)
	rows, err := csv.NewReader(bytes.NewReader(table)).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 3, "a header, then a row per step:\n%s", table)
	require.Equal(t, []string{"step", "holds", "model", "target_rate"}, rows[0][:4])
	require.Equal(t, []string{"20", "no", "lenet5", "20"}, rows[1][:4])
	require.Equal(t, []string{"40", "no", "lenet5", "40"}, rows[2][:4])
	code, _, stderr = runCLI(t, "load", "--model", "lenet5", "--rate-range", "20:40:20", "--whole-range", "--binary-search")
	require.Equal(t, 1, code)
	require.Equal(t, "gpuletd: load: give --binary-search (bisect the range) or --whole-range (run every step), not both\n", stderr)
	code, _, stderr = runCLI(t, "load", "--model", "lenet5", "--rate", "20", "--binary-search")
	require.Equal(t, 1, code)
	require.Equal(t, "gpuletd: load: --binary-search is for a sweep: give --rate-range or --concurrency-range\n", stderr)
	code, _, stderr = runCLI(t, "load", "--model", "lenet5", "--rate", "20", "--csv", filepath.Join(t.TempDir(), "no", "such", "dir", "x.csv"))
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "gpuletd: load: open ")
	require.Contains(t, stderr, "no such file or directory")
	code, out, stderr = runCLI(t, "load", "--model", "mlp", "--concurrency-range", "1:3", "--binary-search", "--duration", "1s", "--warmup", "0s",
		"--slo", "1ns", "--json")
	require.Equal(t, 0, code, stderr)
	var sweep struct {
		Sweep  string `json:"sweep"`
		Result struct {
			Search bool `json:"binary_search"`
			Steps  []struct {
				At    float64 `json:"at"`
				Holds bool    `json:"holds"`
				Run   struct {
					Models []struct {
						Closed int `json:"closed_loop"`
					} `json:"models"`
				} `json:"run"`
			} `json:"steps"`
			Held   *struct{} `json:"highest_held"`
			Failed *struct {
				At     float64 `json:"at"`
				Lowest string  `json:"lowest_model"`
			} `json:"lowest_failed"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &sweep), out)
	require.Equal(t, "concurrency", sweep.Sweep)
	require.True(t, sweep.Result.Search)
	require.Len(t, sweep.Result.Steps, 1, "the range's start failed: nothing above it can hold")
	require.Equal(t, 1, sweep.Result.Steps[0].Run.Models[0].Closed, "a closed loop of one")
	require.Nil(t, sweep.Result.Held)
	require.Equal(t, 1.0, sweep.Result.Failed.At)
	require.Equal(t, "mlp", sweep.Result.Failed.Lowest)
	code, _, stderr = runCLI(t, "load", "--model", "mlp", "--rate-range", "10:20", "--arrival", "closed")
	require.Equal(t, 1, code)
	require.Equal(t, "gpuletd: load: a closed loop has no rate to sweep: give --concurrency-range\n", stderr)

	// The daemon saw them: lenet5 has recent requests.
	var s adminStatus
	require.NoError(t, adminGet(t.Context(), plainAPI(base), "/api/v1/status", &s))
	for _, m := range s.Models {
		if m.Name == "lenet5" {
			require.Positive(t, m.Recent.Requests)
		}
	}
	code, out, _ = runCLI(t, "models", "list")
	require.Equal(t, 0, code)
	require.NotRegexp(t, `(?m)^lenet5 .* - +- +- +`, out, "lenet5 shows attainment and latency now")

	code, _, stderr = runCLI(t, "load", "--model", "nope", "--rate", "5", "--duration", "1s")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, `unknown model "nope"`)

	// Unload and load again, through the configured address.
	code, out, stderr = runCLI(t, "models", "unload", "lenet5")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "lenet5: unloaded\n", out)
	code, out, _ = runCLI(t, "models", "list")
	require.Equal(t, 0, code)
	require.NotContains(t, out, "lenet5")
	code, out, _ = runCLI(t, "status")
	require.Equal(t, 0, code)
	require.Contains(t, out, "\nunloaded (gpuletd models load NAME): lenet5\n")
	code, _, stderr = runCLI(t, "infer", "lenet5")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, `model "lenet5" is not served: unloaded at `)
	code, out, stderr = runCLI(t, "models", "load", "lenet5")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "lenet5: ready\n", out)
	code, out, _ = runCLI(t, "status")
	require.Equal(t, 0, code)
	require.NotContains(t, out, "unloaded")

	// A load the daemon cannot serve fails at once, saying why, rather
	// than waiting out --wait: of a model that serves, the load is refused
	// and the model serves on; of one not served, it is loaded and cannot
	// be served. Mended and loaded again, it serves.
	conf := filepath.Join(repo, "lenet5", "config.yaml")
	good, err := os.ReadFile(conf)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(conf, bytes.Replace(good, []byte("slo: 5ms"), []byte("slo: 50us"), 1), 0o644))
	// --dry-run says so first, and loads nothing.
	code, out, stderr = runCLI(t, "models", "load", "lenet5", "--dry-run")
	require.Equal(t, 1, code, stderr)
	require.Contains(t, out, "lenet5: a load now would fail (400): invalid model: lenet5 as it reads now cannot be served on this node: SLO 0.05 ms")
	require.Contains(t, out, "(dry run: nothing was changed)")
	require.NoError(t, os.WriteFile(conf, bytes.Replace(good, []byte("slo: 5ms"), []byte("slo: 50ms"), 1), 0o644))
	code, out, stderr = runCLI(t, "models", "load", "lenet5", "--dry-run")
	require.Equal(t, 0, code, stderr+out)
	require.Contains(t, out, "lenet5: a load now would serve it (dry run: nothing was changed)\nchanges:\n  version 1: SLO 5ms → 50ms (config.yaml)\n")
	require.Regexp(t, `(?m)^1 +50ms \(config.yaml\) +32 +own +emu0 100%$`, out)
	require.NoError(t, adminGet(t.Context(), plainAPI(base), "/api/v1/status", &s))
	for _, m := range s.Models {
		if m.Name == "lenet5" {
			require.Equal(t, 5.0, m.SLOMS, "nothing loaded")
		}
	}
	require.NoError(t, os.WriteFile(conf, bytes.Replace(good, []byte("slo: 5ms"), []byte("slo: 50us"), 1), 0o644))
	code, _, stderr = runCLI(t, "models", "load", "lenet5", "--wait", "30s")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "lenet5 as it reads now cannot be served on this node: SLO 0.05 ms: no batch meets it")
	require.Contains(t, stderr, "lenet5 serves on as it was loaded before")
	require.Equal(t, 200, do(t, "GET", base+"/v2/models/lenet5/ready", nil, nil).code, "it serves on")
	code, _, stderr = runCLI(t, "models", "unload", "lenet5")
	require.Equal(t, 0, code, stderr)
	code, _, stderr = runCLI(t, "models", "load", "lenet5", "--wait", "30s")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "gpuletd: lenet5 cannot be served: the plan cannot place it: SLO 0.05 ms: no batch meets it", "not: does not serve after 30s")
	require.NoError(t, os.WriteFile(conf, good, 0o644))
	code, out, stderr = runCLI(t, "models", "load", "lenet5")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "lenet5: ready\n  version 1: SLO 50µs → 5ms (config.yaml)\n", out, "the load says what it changed")
	code, _, stderr = runCLI(t, "models", "load", "nope", "--url", base)
	require.Equal(t, 1, code)
	require.Equal(t, "gpuletd: load nope: the repository has no such model\n", stderr)
	code, out, _ = runCLI(t, "models", "load", "nope", "--url", base, "--dry-run")
	require.Equal(t, 1, code)
	require.Equal(t, "nope: a load now would fail (404): load nope: the repository has no such model (dry run: nothing was changed)\n", out)
	code, out, stderr = runCLI(t, "models", "load", "lenet5", "--url", base, "--dry-run", "--json")
	require.Equal(t, 0, code, stderr)
	var check loadCheck
	require.NoError(t, json.Unmarshal([]byte(out), &check), out)
	require.Equal(t, "serves", check.Verdict)
	require.True(t, check.ServesNow)
	require.Empty(t, check.Changes, "the folder as it was loaded")
	code, _, stderr = runCLI(t, "models", "load", "lenet5", "--url", base, "--json")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "--json goes with --dry-run")
	code, _, stderr = runCLI(t, "models", "unload", "nope", "--url", base)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "nope")

	// A misspelt name is answered with the one meant, wherever it is given.
	code, _, stderr = runCLI(t, "models", "load", "lenet", "--url", base)
	require.Equal(t, 1, code)
	require.Equal(t, "gpuletd: load lenet: the repository has no such model (did you mean lenet5?)\n", stderr)
	code, _, stderr = runCLI(t, "models", "unload", "lenet", "--url", base)
	require.Equal(t, 1, code)
	require.Equal(t, "gpuletd: unload lenet: model not found (did you mean lenet5?)\n", stderr)
	code, _, stderr = runCLI(t, "infer", "lenet", "--url", base)
	require.Equal(t, 1, code)
	require.Equal(t, "gpuletd: unknown model \"lenet\": it is not in the repository or not loaded (did you mean lenet5?)\n", stderr)
}

func TestWriteMixReport(t *testing.T) {
	rep := func(model string, rate float64, sent, within int64, failed map[string]int64) *loadgen.Report {
		return &loadgen.Report{Model: model, URL: "http://127.0.0.1:8700", Rate: rate, Window: 10 * time.Second,
			Sent: sent, OK: sent, WithinSLO: within, Attainment: float64(within) / float64(sent), Goodput: float64(within) / 10,
			SLO: 95 * time.Millisecond, Failed: failed, Latency: loadgen.Percentiles{Count: sent, P50: 20 * time.Millisecond, P99: 80 * time.Millisecond}}
	}
	a, b := rep("alexnet-1", 100, 1000, 1000, nil), rep("resnet50", 50, 500, 490, map[string]int64{"503": 10})
	b.OK, b.FirstError = 490, "503: resnet50: the deadline cannot be met"
	a.Binary, b.Binary = true, true
	var sb strings.Builder
	require.NoError(t, writeMixReport(&sb, "poisson", &loadgen.MixReport{Models: []*loadgen.Report{a, b},
		Total: loadgen.Total{Rate: 150, Sent: 1500, OK: 1490, WithinSLO: 1490, Attainment: 1490.0 / 1500, Goodput: 149, Failed: map[string]int64{"503": 10}}}))
	out := sb.String()
	require.LessOrEqual(t, widest(out), 100, out)
	for _, want := range []string{
		"2 models at http://127.0.0.1:8700, poisson arrivals for 10s, binary tensors",
		"MODEL      RATE    SENT  OK    SLO     IN SLO  GOODPUT  P50     P99     FAILED",
		"alexnet-1  100/s   1000  1000  95.0ms  100.0%  100/s    20.0ms  80.0ms  none",
		"resnet50   50.0/s  500   490   95.0ms  98.0%   49.0/s   20.0ms  80.0ms  10 503",
		"total      150/s   1500  1490          99.3%   149/s                    10 503",
		"first error of resnet50: 503: resnet50: the deadline cannot be met",
	} {
		require.Contains(t, out, want)
	}
	require.NotContains(t, out, "warning")

	// The client fell behind: it says so once, by its latest model.
	a.Lag = loadgen.Percentiles{Count: 1000, P99: 30 * time.Millisecond, Max: 70 * time.Millisecond}
	b.Lag = loadgen.Percentiles{Count: 500, P99: 40 * time.Millisecond, Max: 60 * time.Millisecond}
	sb.Reset()
	require.NoError(t, writeMixReport(&sb, "poisson", &loadgen.MixReport{Models: []*loadgen.Report{a, b}}))
	require.Equal(t, 1, strings.Count(sb.String(), "warning: this client fell behind its schedule (1% of its requests left 40.0ms or more late, up to 60.0ms)"), sb.String())
	a.Lag, b.Lag = loadgen.Percentiles{}, loadgen.Percentiles{}

	// Only the large model went binary (AutoBinary): the header says so.
	a.Binary = false
	sb.Reset()
	require.NoError(t, writeMixReport(&sb, "poisson", &loadgen.MixReport{Models: []*loadgen.Report{a, b}}))
	require.Contains(t, sb.String(), "2 models at http://127.0.0.1:8700, poisson arrivals for 10s, JSON tensors, binary for resnet50 (large as JSON)\n")

	// A closed loop's rates are what was answered.
	a.Closed, b.Closed = 2, 2
	sb.Reset()
	mix := &loadgen.MixReport{Models: []*loadgen.Report{a, b}, Total: loadgen.Total{Rate: 0, SendRate: 321}}
	require.NoError(t, writeMixReport(&sb, "closed", mix))
	require.Contains(t, sb.String(), "a closed loop of 2 each for 10s")
	require.Regexp(t, `(?m)^total\s+321/s`, sb.String())
}

func TestLoadShares(t *testing.T) {
	got, err := loadShares([]string{"m"}, 0, "trace:t.csv@2")
	require.NoError(t, err, "one model may leave the rate to its trace")
	require.Equal(t, []loadgen.Share{{Model: "m"}}, got)
	got, err = loadShares([]string{"a=1", "b=3"}, 40, "poisson")
	require.NoError(t, err)
	require.Equal(t, []loadgen.Share{{Model: "a", Rate: 10}, {Model: "b", Rate: 30}}, got)
	_, err = loadShares([]string{"a", "b"}, 0, "poisson")
	require.ErrorContains(t, err, "load: bad load configuration: no rate")
	got, err = loadShares([]string{"m=5"}, 0, "trace:t.csv@2")
	require.NoError(t, err, "one model may replay a trace at a scale of its own rate")
	require.Equal(t, []loadgen.Share{{Model: "m", Rate: 5}}, got)
	_, err = loadShares([]string{"a=1", "b=3"}, 0, "trace:t.csv@2")
	require.ErrorContains(t, err, "give --rate or NAME=RATE and trace:t.csv")
}

// TestLoadInterruptedBeforeSending: an interrupt before the model's
// metadata came back leaves no report to print; the command says so.
func TestLoadInterruptedBeforeSending(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, models := range []string{"m", "a=1,b=2"} {
		var out, errb bytes.Buffer
		code := run(ctx, []string{"load", "--url", srv.URL, "--model", models, "--rate", "10", "--duration", "1s"}, &out, &errb)
		require.Equal(t, 1, code, "%s: %s", models, errb.String())
		require.Contains(t, errb.String(), "interrupted before any request was sent", models)
	}
}
