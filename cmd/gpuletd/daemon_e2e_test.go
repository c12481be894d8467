package main

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	le "encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/alerts"
	"github.com/gpulet/gpuletd/internal/testbin"
	"github.com/gpulet/gpuletd/kserve"
	"github.com/gpulet/gpuletd/modelzoo"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
)

// emulatedDaemon starts the real daemon on emulated V100s with modelzoo
// models in its repository, and waits until every one of them serves.
func emulatedDaemon(t *testing.T, models []string, extra ...string) (base string, logs *testbin.SyncBuffer, repo string) {
	t.Helper()
	base, logs, repo = startEmulatedDaemon(t, models, extra...)
	require.Eventually(t, func() bool {
		for _, m := range models {
			resp, err := http.Get(base + "/v2/models/" + m + "/ready")
			if err != nil {
				return false
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return false
			}
		}
		return true
	}, 60*time.Second, 100*time.Millisecond, "models ready; logs:\n%s", logs)
	return base, logs, repo
}

// startEmulatedDaemon is emulatedDaemon without the wait: the daemon is
// live, its models on their way.
func startEmulatedDaemon(t *testing.T, models []string, extra ...string) (base string, logs *testbin.SyncBuffer, repo string) {
	t.Helper()
	repo = filepath.Join(t.TempDir(), "models")
	require.NoError(t, modelzoo.WriteRepository(repo, models, 1))
	var rest []string
	for _, e := range extra {
		spec, ok := strings.CutPrefix(e, "GPULETD_TEST_PROFILES=")
		if !ok {
			rest = append(rest, e)
			continue
		}
		for _, kv := range strings.Split(spec, ",") {
			model, profile, _ := strings.Cut(kv, ":")
			setProfile(t, repo, model, profile, "200ms")
		}
	}
	extra = rest
	env := daemonEnv(t, append([]string{
		"GPULETD_MODEL_REPOSITORY=" + repo,
		"GPULETD_DEVICES=[{kind: emulated, profiles: igniter-v100, count: 2}]",
	}, extra...)...)
	addr, logs := startDaemon(t, env)
	return "http://" + addr, logs, repo
}

type httpResult struct {
	code   int
	header http.Header
	body   []byte
}

func do(t testing.TB, method, url string, body []byte, header map[string]string) httpResult {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	require.NoError(t, err)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return httpResult{code: resp.StatusCode, header: resp.Header, body: b}
}

// statsOf reads one model's statistics from the daemon at base.
func statsOf(t testing.TB, base, model string) kserve.ModelStatistics {
	t.Helper()
	r := do(t, "GET", base+"/v2/models/"+model+"/stats", nil, nil)
	require.Equal(t, 200, r.code, string(r.body))
	var stats kserve.StatisticsResponse
	require.NoError(t, json.Unmarshal(r.body, &stats))
	require.Len(t, stats.ModelStats, 1, string(r.body))
	return stats.ModelStats[0]
}

func mlpJSON(rows int) []byte {
	return []byte(fmt.Sprintf(`{"id":"r1","inputs":[{"name":"input","shape":[%d,784],"datatype":"FP32","data":[%s]}]}`, rows, mlpValues(rows)))
}

// mlpValues are mlpJSON's input values, comma-separated.
func mlpValues(rows int) string {
	vals := make([]string, 784*rows)
	for i := range vals {
		vals[i] = strconv.FormatFloat(float64(i%7)/7, 'f', 3, 32)
	}
	return strings.Join(vals, ",")
}

func TestKServeProtocol(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	// The protocol, not timing, is under test: a 200 ms SLO instead of the
	// zoo's 5 ms, which a race-instrumented build on a loaded machine can
	// miss between the socket and the executor (seen once in CI: the first
	// request was refused as deadline_unreachable).
	metricsAddr := freeAddr(t)
	base, logs, _ := emulatedDaemon(t, []string{"mlp", "lenet5"}, "GPULETD_LIMITS_MAX_REQUEST_BODY=128KiB",
		"GPULETD_TEST_PROFILES=mlp:alexnet,lenet5:alexnet", "GPULETD_METRICS_LISTEN="+metricsAddr, "GPULETD_METRICS_TRITON_NAMES=true",
		"GPULETD_METRICS_TRITON_SUMMARIES=true")

	r := do(t, "GET", base+"/v2", nil, nil)
	require.Equal(t, 200, r.code)
	require.Contains(t, string(r.body), `"binary_tensor_data"`)

	// The logging extension: the settings of the configured level, changed
	// while running; a change no level describes is refused.
	r = do(t, "GET", base+"/v2/logging", nil, nil)
	require.Equal(t, 200, r.code)
	require.JSONEq(t, `{"log_file":"","log_info":true,"log_warning":true,"log_error":true,"log_verbose_level":0,"log_format":"default"}`, string(r.body))
	r = do(t, "POST", base+"/v2/logging", []byte(`{"log_verbose_level":1}`), nil)
	require.Equal(t, 200, r.code, string(r.body))
	require.Contains(t, string(r.body), `"log_verbose_level":1`)
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "log level changed through the logging extension") },
		5*time.Second, 50*time.Millisecond)
	r = do(t, "POST", base+"/v2/logging", []byte(`{"log_verbose_level":0,"log_warning":false}`), nil)
	require.Equal(t, 400, r.code, string(r.body))
	require.Contains(t, string(r.body), "gpuletd logs by level")
	require.Contains(t, string(do(t, "GET", base+"/v2/logging", nil, nil).body), `"log_verbose_level":1`, "refused: nothing changed")
	// At verbose level every request is logged as it ends, as Triton's
	// --log-verbose logs them: the refusal above too.
	require.Eventually(t, func() bool {
		return strings.Contains(logs.String(), `"msg":"http request","method":"POST","path":"/v2/logging","status":400`)
	}, 5*time.Second, 50*time.Millisecond, "logs:\n%s", logs)
	require.Equal(t, 200, do(t, "POST", base+"/v2/logging", []byte(`{"log_verbose_level":0}`), nil).code)
	require.Equal(t, 200, do(t, "GET", base+"/v2/health/live", nil, nil).code)
	require.Equal(t, 200, do(t, "GET", base+"/v2/health/ready", nil, nil).code)

	r = do(t, "GET", base+"/v2/models/mlp", nil, nil)
	require.Equal(t, 200, r.code)
	require.JSONEq(t, `{"name":"mlp","versions":["1"],"platform":"onnxruntime_onnx","state":"READY",
	  "inputs":[{"name":"input","datatype":"FP32","shape":[-1,784]}],
	  "outputs":[{"name":"output","datatype":"FP32","shape":[-1,10]}]}`, string(r.body))
	require.Equal(t, 200, do(t, "GET", base+"/v2/models/mlp/versions/1", nil, nil).code)
	require.Equal(t, 404, do(t, "GET", base+"/v2/models/mlp/versions/2", nil, nil).code)
	require.Equal(t, 200, do(t, "GET", base+"/v2/models/mlp/ready", nil, nil).code)
	r = do(t, "GET", base+"/v2/models/mlp/config", nil, nil)
	require.Equal(t, 200, r.code)
	var cfg struct {
		MaxBatchSize int             `json:"max_batch_size"`
		Backend      string          `json:"backend"`
		Batching     json.RawMessage `json:"dynamic_batching"`
		Parameters   map[string]struct {
			StringValue string `json:"string_value"`
		} `json:"parameters"`
		Input []struct {
			Name       string  `json:"name"`
			DataType   string  `json:"datatype"`
			Shape      []int64 `json:"shape"`
			TritonType string  `json:"data_type"`
			Dims       []int64 `json:"dims"`
		} `json:"input"`
	}
	require.NoError(t, json.Unmarshal(r.body, &cfg))
	require.Equal(t, 32, cfg.MaxBatchSize)
	require.Equal(t, "onnxruntime", cfg.Backend, "Triton's backend name")
	require.JSONEq(t, `{}`, string(cfg.Batching), "a batching model says dynamic_batching, as Triton's config does")
	require.Equal(t, "200ms", cfg.Parameters["slo"].StringValue, "gpuletd's settings as a config.pbtxt's parameters, in Triton's JSON")
	require.Len(t, cfg.Input, 1)
	require.Equal(t, "FP32", cfg.Input[0].DataType, "the protocol's datatype")
	require.Equal(t, []int64{-1, 784}, cfg.Input[0].Shape)
	require.Equal(t, "TYPE_FP32", cfg.Input[0].TritonType, "Triton's data_type beside it")
	require.Equal(t, []int64{784}, cfg.Input[0].Dims, "Triton's dims, without the batch")

	// JSON inference, one and three rows; the output echoes the id.
	r = do(t, "POST", base+"/v2/models/mlp/infer", mlpJSON(1), nil)
	require.Equal(t, 200, r.code, string(r.body))
	var out struct {
		ModelName string         `json:"model_name"`
		ID        string         `json:"id"`
		Params    map[string]any `json:"parameters"`
		Outputs   []struct {
			Name  string    `json:"name"`
			Shape []int64   `json:"shape"`
			Data  []float32 `json:"data"`
		} `json:"outputs"`
	}
	require.NoError(t, json.Unmarshal(r.body, &out))
	require.Equal(t, "mlp", out.ModelName)
	require.Equal(t, "r1", out.ID)
	require.Equal(t, true, out.Params["emulated"], "emulated outputs are marked")
	require.Equal(t, []int64{1, 10}, out.Outputs[0].Shape)
	r = do(t, "POST", base+"/v2/models/mlp/infer", mlpJSON(3), nil)
	require.Equal(t, 200, r.code, string(r.body))
	require.NoError(t, json.Unmarshal(r.body, &out))
	require.Equal(t, []int64{3, 10}, out.Outputs[0].Shape)

	// Binary extension in and out.
	head := []byte(`{"inputs":[{"name":"input","shape":[1,784],"datatype":"FP32","parameters":{"binary_data_size":3136}}],"outputs":[{"name":"output","parameters":{"binary_data":true}}]}`)
	body := append(append([]byte{}, head...), make([]byte, 3136)...)
	r = do(t, "POST", base+"/v2/models/mlp/infer", body, map[string]string{"Inference-Header-Content-Length": strconv.Itoa(len(head))})
	require.Equal(t, 200, r.code, string(r.body))
	n, err := strconv.Atoi(r.header.Get("Inference-Header-Content-Length"))
	require.NoError(t, err)
	require.Equal(t, 40, len(r.body)-n, "10 FP32 values follow the JSON header")
	for i := 0; i < 10; i++ {
		require.Equal(t, float32(0), math.Float32frombits(le.LittleEndian.Uint32(r.body[n+4*i:])))
	}

	// Errors.
	const wrongSize = `{"inputs":[{"name":"input","shape":[1,784],"datatype":"FP32","parameters":{"binary_data_size":3000}}]}`
	big := bytes.Repeat([]byte(" "), 130<<10)
	for _, tc := range []struct {
		name, path string
		body       []byte
		header     map[string]string
		code       int
		has        string
	}{
		{"unknown model", "/v2/models/nope/infer", mlpJSON(1), nil, 404, "unknown model"},
		{"malformed json", "/v2/models/mlp/infer", []byte(`{"inputs":[`), nil, 400, "not valid JSON"},
		{"wrong dtype", "/v2/models/mlp/infer", []byte(`{"inputs":[{"name":"input","shape":[1,784],"datatype":"INT32","data":[` + strings.Repeat("1,", 783) + `1]}]}`), nil, 400, "INT32"},
		{"wrong shape", "/v2/models/mlp/infer", []byte(`{"inputs":[{"name":"input","shape":[1,783],"datatype":"FP32","data":[` + strings.Repeat("1,", 782) + `1]}]}`), nil, 400, "[1 783]"},
		{"too many rows", "/v2/models/mlp/infer", []byte(`{"inputs":[{"name":"input","shape":[33,784],"datatype":"FP32","parameters":{"binary_data_size":103488}}]}`), nil, 400, ""},
		{"unknown input", "/v2/models/mlp/infer", []byte(`{"inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":[1]}]}`), nil, 400, `the model has no input "x" (it takes "input")`},
		{"unknown output", "/v2/models/mlp/infer", append(mlpJSON(1)[:len(mlpJSON(1))-1], []byte(`,"outputs":[{"name":"logits"}]}`)...), nil, 400, `"logits"`},
		{"negative shape", "/v2/models/mlp/infer", []byte(`{"inputs":[{"name":"input","shape":[-1,784],"datatype":"FP32","data":[1]}]}`), nil, 400, "dimension 0 is -1"},
		{"overflowing shape", "/v2/models/mlp/infer", []byte(`{"inputs":[{"name":"input","shape":[9223372036854775807,784],"datatype":"FP32","data":[1]}]}`), nil, 400, "more than"},
		{"deep nesting", "/v2/models/mlp/infer", []byte(`{"inputs":[{"name":"input","shape":[1,784],"datatype":"FP32","data":` + strings.Repeat("[", 50) + "1" + strings.Repeat("]", 50) + `}]}`), nil, 400, "deeper than"},
		{"wrong binary size", "/v2/models/mlp/infer", append([]byte(wrongSize), make([]byte, 3000)...),
			map[string]string{"Inference-Header-Content-Length": strconv.Itoa(len(wrongSize))}, 400, "binary_data_size is 3000"},
		{"bad header length", "/v2/models/mlp/infer", mlpJSON(1), map[string]string{"Inference-Header-Content-Length": "abc"}, 400, "not a byte count"},
		{"body over the limit", "/v2/models/mlp/infer", big, nil, 413, "over the limit"},
		{"unreachable deadline", "/v2/models/mlp/infer", append(mlpJSON(1)[:len(mlpJSON(1))-1], []byte(`,"parameters":{"timeout":1}}`)...), nil, 503, "deadline"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, "POST", base+tc.path, tc.body, tc.header)
			require.Equal(t, tc.code, r.code, string(r.body))
			var e struct {
				Error string `json:"error"`
			}
			require.NoError(t, json.Unmarshal(r.body, &e), string(r.body))
			require.NotEmpty(t, e.Error)
			require.Contains(t, e.Error, tc.has)
			if tc.code == 503 {
				require.NotEmpty(t, r.header.Get("Retry-After"))
				require.Equal(t, "deadline", r.header.Get(kserve.HeaderFailureReason), "the reason, for clients that count failures by cause")
			}
		})
	}
	require.Equal(t, 405, do(t, "GET", base+"/v2/models/mlp/infer", nil, nil).code)
	require.Equal(t, 404, do(t, "GET", base+"/v2/nothing", nil, nil).code)

	// Statistics count what happened.
	r = do(t, "GET", base+"/v2/models/stats", nil, nil)
	require.Equal(t, 200, r.code)
	var stats kserve.StatisticsResponse
	require.NoError(t, json.Unmarshal(r.body, &stats))
	require.Contains(t, string(r.body), `"response_stats":{}`, "Triton's field, empty for models that are not decoupled")
	counts, batches := map[string]int64{}, map[string]int64{}
	for _, s := range stats.ModelStats {
		counts[s.Name], batches[s.Name] = s.InferenceCount, s.ExecutionCount
	}
	require.Equal(t, int64(5), counts["mlp"], "the rows that ran, as Triton counts inferences: two requests of one row and one of 3")
	require.Equal(t, int64(3), batches["mlp"], "one after the other, each ran in a batch of its own (one of 3 rows)")
	mlpStats := statsOf(t, base, "mlp")
	bs := mlpStats.BatchStats
	require.Len(t, bs, 2, "Triton's batch_stats: batches of 1 row and of 3: %+v", bs)
	require.Len(t, mlpStats.MemoryUsage, 1, "Triton's memory_usage: the copies on the emulated GPU")
	require.Equal(t, "GPU", mlpStats.MemoryUsage[0].Type)
	require.Equal(t, int64(1), mlpStats.MemoryUsage[0].ID, "emu1, as gpuletd numbers its emulated GPUs")
	require.Positive(t, mlpStats.MemoryUsage[0].ByteSize, "what the planner counts for mlp's copies")
	require.Equal(t, []int64{1, 3, 2, 1}, []int64{bs[0].BatchSize, bs[1].BatchSize, bs[0].ComputeInfer.Count, bs[1].ComputeInfer.Count})
	require.Positive(t, bs[1].ComputeInfer.NS)

	// Metrics pass the client library's linter and count failures by reason.
	r = do(t, "GET", base+"/metrics", nil, nil)
	require.Equal(t, 200, r.code)
	require.Contains(t, string(r.body), `gpuletd_request_failures_total{model="mlp",reason="bad_request"}`)
	require.Contains(t, string(r.body), `gpuletd_gpulet_size_percent`)
	require.Regexp(t, `\ngpuletd_build_info\{goversion="go[^"]+",version="[^"]+"\} 1\n`, string(r.body))
	require.Regexp(t, `\ngpuletd_gpulet_memory_bytes\{device="[^"]+",gpulet="[^"]+",kind="host"\} \d`, string(r.body),
		"each executor's resident memory")
	require.Contains(t, string(r.body), `gpuletd_executor_hop_duration_seconds_count{model="mlp"} 3`, "every answer's hop is measured")
	// And under Triton's names: the failures by Triton's reason (the
	// unreachable deadline REJECTED, the bad requests OTHER), the queue,
	// the host.
	require.Contains(t, string(r.body), `nv_inference_request_failure{model="mlp",reason="REJECTED",version="1"} 1`+"\n")
	require.Regexp(t, `\nnv_inference_request_failure\{model="mlp",reason="OTHER",version="1"\} [1-9][0-9]*\n`, string(r.body))
	require.Contains(t, string(r.body), `nv_inference_request_failure{model="mlp",reason="BACKEND",version="1"} 0`+"\n")
	require.Contains(t, string(r.body), `nv_inference_pending_request_count{model="mlp",version="1"} 0`+"\n", "nothing waits")
	require.Regexp(t, `\nnv_cpu_memory_total_bytes \d`, string(r.body))
	require.Regexp(t, `\nnv_cpu_utilization [01]`, string(r.body))
	// Triton's latency summaries, asked for: as many requests as the
	// counter, and the quantiles.
	success := regexp.MustCompile(`\nnv_inference_request_success\{model="mlp",version="1"\} (\d+)\n`).FindStringSubmatch(string(r.body))
	require.NotNil(t, success)
	require.Contains(t, string(r.body), `nv_inference_request_summary_us_count{model="mlp",version="1"} `+success[1]+"\n")
	for _, family := range []string{"request", "queue", "compute_input", "compute_infer", "compute_output"} {
		require.Regexp(t, `\nnv_inference_`+family+`_summary_us\{model="mlp",version="1",quantile="0.99"\} \d`, string(r.body))
	}
	lintMetrics(t, r.body)
	checkMetricsListener(t, base, metricsAddr)
	// The shipped alerting rules read families this daemon exports (the
	// certificate's only with TLS, checked in TestTLS; the memory cgroup's
	// where there is one, its limit where it has one).
	for _, name := range alerts.Metrics() {
		if name != "gpuletd_tls_certificate_expiry_timestamp_seconds" && !memoryCgroupAbsent(name) {
			require.Contains(t, string(r.body), "\n# TYPE "+name+" ", "alerts/gpuletd.rules.yml reads %s", name)
		}
	}

	checkCompression(t, base)
	checkGenerate(t, base)

	// Clients' shared memory is off unless allow_client_shm turns it on, as
	// Triton's --allow-client-shm: a registration is refused saying so
	// (501, as Triton answers), and gpuletd load --shm stops on it.
	r = do(t, "POST", base+"/v2/systemsharedmemory/region/in/register", []byte(`{"key": "/gpuletd-none", "offset": 0, "byte_size": 8}`), nil)
	require.Equal(t, http.StatusNotImplemented, r.code, string(r.body))
	require.Contains(t, string(r.body), "allow_client_shm (GPULETD_ALLOW_CLIENT_SHM) is off")
	code, _, stderr := runCLI(t, "load", "--url", base, "--model", "mlp", "--rate", "20", "--duration", "1s", "--shm")
	require.NotEqual(t, 0, code)
	require.Contains(t, stderr, "allow_client_shm")

	// Repository API.
	r = do(t, "POST", base+"/v2/repository/index", nil, nil)
	require.Equal(t, 200, r.code)
	require.Contains(t, string(r.body), `"name":"lenet5"`)
	require.Equal(t, 404, do(t, "POST", base+"/v2/repository/models/ghost/load", nil, nil).code)
	require.Equal(t, 200, do(t, "POST", base+"/v2/repository/models/lenet5/unload", nil, nil).code)
	require.Equal(t, 404, do(t, "GET", base+"/v2/models/lenet5", nil, nil).code)
	require.Equal(t, 404, do(t, "POST", base+"/v2/repository/models/lenet5/unload", nil, nil).code)
	// mlp answered requests above: its series leave /metrics with it, as
	// Triton's do.
	require.Contains(t, string(do(t, "GET", base+"/metrics", nil, nil).body), `gpuletd_requests_total{model="mlp"}`)
	require.Equal(t, 200, do(t, "POST", base+"/v2/repository/models/mlp/unload", nil, nil).code)
	require.NotContains(t, string(do(t, "GET", base+"/metrics", nil, nil).body), `model="mlp"`)
}

// lintMetrics runs the exposition through Prometheus's own linters: the
// client library's (testutil) and promtool's when it is installed.
func lintMetrics(t *testing.T, exposition []byte) {
	t.Helper()
	problems, err := testutil.GatherAndLint(prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		p := expfmt.NewTextParser(model.LegacyValidation)
		fams, err := p.TextToMetricFamilies(bytes.NewReader(exposition))
		if err != nil {
			return nil, err
		}
		out := make([]*dto.MetricFamily, 0, len(fams))
		for _, f := range fams {
			out = append(out, f)
		}
		return out, nil
	}))
	require.NoError(t, err)
	for _, p := range problems {
		if strings.HasPrefix(p.Metric, "gpuletd_") {
			t.Errorf("metric lint: %s: %s", p.Metric, p.Text)
		}
	}
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Log("promtool is not installed, so only the client library's linter ran; make test-deps installs it")
		return
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(exposition)
	out, _ := cmd.CombinedOutput()
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "gpuletd_") {
			t.Errorf("promtool: %s", line)
		}
	}
}

// setProfile points a repository model at another curve of the emulated
// reference set and gives it an SLO that curve can meet.
func setProfile(t *testing.T, repo, model, profile, slo string) {
	t.Helper()
	p := filepath.Join(repo, model, "config.yaml")
	require.NoError(t, os.WriteFile(p, []byte("slo: "+slo+"\nmax_batch_size: 32\nprofile: "+profile+"\n"), 0o644))
}

// checkCompression sends inference bodies compressed and asks for
// compressed answers, as tritonclient's request_compression_algorithm and
// response_compression_algorithm do: the answers are the uncompressed ones,
// an answer too small to gain goes as it is, a coding gpuletd cannot read is
// refused naming those it reads, and a body that expands past
// limits.max_request_body (128 KiB here) is refused as too large.
func checkCompression(t *testing.T, base string) {
	t.Helper()
	zipped := func(coding string, b []byte) []byte {
		var buf bytes.Buffer
		var w io.WriteCloser = gzip.NewWriter(&buf)
		if coding == "deflate" {
			w = zlib.NewWriter(&buf)
		}
		_, err := w.Write(b)
		require.NoError(t, err)
		require.NoError(t, w.Close())
		return buf.Bytes()
	}
	unzipped := func(coding string, b []byte) []byte {
		var r io.Reader
		var err error
		if coding == "deflate" {
			r, err = zlib.NewReader(bytes.NewReader(b))
		} else {
			r, err = gzip.NewReader(bytes.NewReader(b))
		}
		require.NoError(t, err)
		out, err := io.ReadAll(r)
		require.NoError(t, err)
		return out
	}
	// 32 rows in binary out: 1 280 bytes of outputs behind the JSON
	// header, over the size from which answers are compressed.
	head := []byte(`{"inputs":[{"name":"input","shape":[32,784],"datatype":"FP32","parameters":{"binary_data_size":100352}}],"outputs":[{"name":"output","parameters":{"binary_data":true}}]}`)
	body := append(append([]byte{}, head...), make([]byte, 100352)...)
	for _, tc := range []struct {
		name, coding, format, accept, got string
	}{
		{"gzip both ways", "gzip", "gzip", "gzip", "gzip"},
		{"deflate both ways", "deflate", "deflate", "deflate", "deflate"},
		{"the heavier accepted coding", "gzip", "gzip", "gzip;q=0.5, deflate", "deflate"},
		{"a deflate body in gzip's format, as Triton reads it", "deflate", "gzip", "identity", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sent := zipped(tc.format, body)
			require.Less(t, len(sent), len(body)/10)
			r := do(t, "POST", base+"/v2/models/mlp/infer", sent, map[string]string{
				"Inference-Header-Content-Length": strconv.Itoa(len(head)), "Content-Encoding": tc.coding, "Accept-Encoding": tc.accept})
			require.Equal(t, 200, r.code, string(r.body))
			require.Equal(t, tc.got, r.header.Get("Content-Encoding"))
			require.Contains(t, r.header.Values("Vary"), "Accept-Encoding")
			answer := r.body
			if tc.got != "" {
				answer = unzipped(tc.got, r.body)
			}
			n, err := strconv.Atoi(r.header.Get("Inference-Header-Content-Length"))
			require.NoError(t, err)
			require.Greater(t, len(answer), 1400)
			require.Equal(t, 32*10*4, len(answer)-n, "the header length is the decompressed JSON's, as Triton gives it")
			require.Contains(t, string(answer[:n]), `"shape":[32,10]`)
		})
	}
	// One row's answer is too small to gain: it goes as it is.
	r := do(t, "POST", base+"/v2/models/mlp/infer", zipped("gzip", mlpJSON(1)), map[string]string{"Content-Encoding": "gzip", "Accept-Encoding": "gzip"})
	require.Equal(t, 200, r.code, string(r.body))
	require.Empty(t, r.header.Get("Content-Encoding"))
	require.Contains(t, string(r.body), `"shape":[1,10]`)

	for _, tc := range []struct {
		name     string
		body     []byte
		coding   string
		code     int
		has      string
		accepted string
	}{
		{"a coding gpuletd cannot read", mlpJSON(1), "br", 415, `unsupported content coding "br"`, "gzip, deflate"},
		{"not gzip at all", mlpJSON(1), "gzip", 400, "decompress gzip body", ""},
		{"cut short", func() []byte { b := zipped("gzip", mlpJSON(1)); return b[:len(b)/2] }(), "gzip", 400, "unexpected EOF", ""},
		{"expands past the limit", zipped("gzip", bytes.Repeat([]byte(" "), 1<<20)), "gzip", 413, "over the limit of 131072 bytes", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, "POST", base+"/v2/models/mlp/infer", tc.body, map[string]string{"Content-Encoding": tc.coding})
			require.Equal(t, tc.code, r.code, string(r.body))
			var e struct {
				Error string `json:"error"`
			}
			require.NoError(t, json.Unmarshal(r.body, &e), string(r.body))
			require.Contains(t, e.Error, tc.has)
			require.Equal(t, tc.accepted, r.header.Get("Accept-Encoding"))
			reason := "bad_request"
			if tc.code == 413 {
				reason = "too_large"
			}
			require.Equal(t, reason, r.header.Get(kserve.HeaderFailureReason))
		})
	}
}

// checkMetricsListener: metrics.listen serves the same /metrics as the API's
// listener (HEAD too), and nothing else: the API's paths there are 404s
// that say where the API is. The status names it.
func checkMetricsListener(t *testing.T, base, addr string) {
	t.Helper()
	r := do(t, "GET", "http://"+addr+"/metrics", nil, nil)
	require.Equal(t, 200, r.code, string(r.body))
	require.Contains(t, string(r.body), `gpuletd_request_failures_total{model="mlp",reason="bad_request"}`)
	lintMetrics(t, r.body)
	require.Equal(t, 200, do(t, "HEAD", "http://"+addr+"/metrics", nil, nil).code)
	for _, path := range []string{"/v2/health/ready", "/api/v1/status", "/"} {
		r := do(t, "GET", "http://"+addr+path, nil, nil)
		require.Equal(t, 404, r.code, path)
		require.Contains(t, string(r.body), "serves GET /metrics alone; the API is on listen", path)
	}
	require.Equal(t, 404, do(t, "POST", "http://"+addr+"/v2/models/mlp/infer", []byte(`{}`), nil).code)
	var st struct {
		MetricsListen string `json:"metrics_listen"`
	}
	require.NoError(t, json.Unmarshal(do(t, "GET", base+"/api/v1/status", nil, nil).body, &st))
	require.Equal(t, addr, st.MetricsListen)
}

// checkGenerate sends mlp the input of mlpJSON(1) through Triton's generate
// extension, as a flat JSON object: it answers what /infer answers, under
// the output's name, once as JSON and once as a server-sent event; a key
// that names no input is a parameter, and values that do not fill the
// input's shape are refused saying so.
func checkGenerate(t *testing.T, base string) {
	t.Helper()
	r := do(t, "POST", base+"/v2/models/mlp/infer", mlpJSON(1), nil)
	require.Equal(t, 200, r.code, string(r.body))
	var answer struct {
		Outputs []struct {
			Data []float64 `json:"data"`
		} `json:"outputs"`
	}
	require.NoError(t, json.Unmarshal(r.body, &answer))
	body := []byte(`{"id": "g1", "input": [` + mlpValues(1) + `], "temperature": 0.5}`)
	var got struct {
		ID           string    `json:"id"`
		ModelName    string    `json:"model_name"`
		ModelVersion string    `json:"model_version"`
		Output       []float64 `json:"output"`
	}
	r = do(t, "POST", base+"/v2/models/mlp/generate", body, nil)
	require.Equal(t, 200, r.code, string(r.body))
	require.Equal(t, "application/json", r.header.Get("Content-Type"))
	require.NoError(t, json.Unmarshal(r.body, &got))
	require.Equal(t, []string{"g1", "mlp", "1"}, []string{got.ID, got.ModelName, got.ModelVersion})
	require.InDeltaSlice(t, answer.Outputs[0].Data, got.Output, 1e-6, "what /infer answers")

	r = do(t, "POST", base+"/v2/models/mlp/versions/1/generate_stream", body, nil)
	require.Equal(t, 200, r.code, string(r.body))
	require.Equal(t, "text/event-stream; charset=utf-8", r.header.Get("Content-Type"))
	event, ok := strings.CutPrefix(string(r.body), "data: ")
	require.True(t, ok, string(r.body))
	event, ok = strings.CutSuffix(event, "\n\n")
	require.True(t, ok, string(r.body))
	got.Output = nil
	require.NoError(t, json.Unmarshal([]byte(event), &got))
	require.InDeltaSlice(t, answer.Outputs[0].Data, got.Output, 1e-6)

	r = do(t, "POST", base+"/v2/models/mlp/generate", []byte(`{"input": [1, 2, 3]}`), nil)
	require.Equal(t, 400, r.code)
	require.Contains(t, string(r.body), "input: 3 values do not fill the model's shape [-1 784]")
}
