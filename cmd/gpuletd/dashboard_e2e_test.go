package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/dashboards"
	"github.com/gpulet/gpuletd/internal/memcg"
	"github.com/gpulet/gpuletd/internal/testbin"
)

// mustFill are the dashboard's queries a node serving requests on
// emulated GPUs answers with series (the miss rule's extra headroom at 0):
// the rest are of what this node does not have (failures, refusals,
// pipelines, a response cache, load the plan could not place, NVML's
// utilisation) or appear after a while (the planned capacity after a plan
// with load).
var mustFill = []string{
	`panel "Models ready" A`, `panel "Requests" A`, `panel "Within SLO" A`, `panel "Version" A`, `panel "Uptime" A`,
	`panel "Database" A`, `panel "Request rate" A`, `panel "Request rate" B`, `panel "Within SLO by model" A`,
	`panel "Latency" A`, `panel "Latency" B`, `panel "Where the time goes (p99)" A`, `panel "Where the time goes (p99)" B`,
	`panel "Where the time goes (p99)" C`, `panel "Mean batch" A`, `panel "Busy" A`, `panel "Executor memory" A`,
	`panel "Device memory used" A`, `panel "GPU-let sizes" A`, `panel "Extra headroom" A`, `panel "Connections" A`, `panel "Connections" B`,
	`panel "Request bytes in flight" A`, `panel "Request bytes in flight" B`, `panel "Daemon CPU" A`, `panel "Host memory" A`,
	`variable instance`, `variable model`,
}

// TestDashboardQueriesRunInPrometheus: a real Prometheus scrapes a real
// daemon serving requests on emulated GPUs; every query of the Grafana
// dashboard runs there without an error, and those of what such a node
// has return series.
func TestDashboardQueriesRunInPrometheus(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	prom, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("prometheus is not installed; make test-deps installs it")
	}
	base, logs, _ := emulatedDaemon(t, []string{"mlp", "lenet5"}, "GPULETD_TEST_PROFILES=mlp:alexnet,lenet5:alexnet")
	stop := sendRequests(base, "mlp", mlpJSON(1), 50*time.Millisecond)
	defer stop()

	promAddr := startPrometheus(t, prom, strings.TrimPrefix(base, "http://"))
	qs, err := dashboards.Queries(map[string]string{"instance": ".*", "model": ".*", "__rate_interval": "20s"})
	require.NoError(t, err)
	// Wait for ten scrapes with requests in them, for rates over 20 s.
	require.Eventually(t, func() bool {
		return promValue(promAddr, `count_over_time(gpuletd_requests_total{model="mlp"}[1m])`) >= 10
	}, 60*time.Second, 500*time.Millisecond, "Prometheus scrapes the daemon; daemon logs:\n%s", logs)

	must := mustFill
	if _, err := memcg.Self(); err == nil { // the daemon's memory cgroup, where there is one to read
		must = append(must, `panel "Host memory" B`)
	}
	filled := map[string]bool{}
	for _, q := range qs {
		n, err := promQuery(promAddr, q.Expr)
		require.NoError(t, err, "%s: %s", q.Where, q.Expr)
		filled[q.Where] = n > 0
	}
	for _, where := range must {
		require.Contains(t, filled, where, "no such query")
		require.True(t, filled[where], "%s returns no series", where)
	}

	// Every family the dashboard reads is one the daemon exports, but
	// those of what this node lacks.
	r := do(t, "GET", base+"/metrics", nil, nil)
	require.Equal(t, 200, r.code)
	for _, name := range dashboards.Metrics() {
		if !absentHere[name] && !memoryCgroupAbsent(name) {
			require.Contains(t, string(r.body), "\n# TYPE "+name+" ", "dashboards/gpuletd.json reads %s", name)
		}
	}
}

// absentHere are the families a daemon on emulated GPUs (no CPU device, no
// NVIDIA GPU's power, no Xid error) with no pipeline, no response cache, no failed request, no TLS,
// no answer its client abandoned, no stateful model and no reorganize period of 1 000 requests
// does not export.
var absentHere = map[string]bool{
	"gpuletd_model_live_sequences":     true,
	"gpuletd_device_utilization_ratio": true, "gpuletd_request_failures_total": true,
	"gpuletd_response_cache_hits_total": true, "gpuletd_response_cache_misses_total": true,
	"gpuletd_pipeline_accuracy_ratio": true, "gpuletd_pipeline_planned_accuracy_ratio": true,
	"gpuletd_pipeline_variant_share_ratio": true, "gpuletd_cpu_models_memory_bytes": true,
	"gpuletd_request_path_cpu_seconds": true, "gpuletd_device_xid_errors_total": true,
	"gpuletd_device_power_watts": true, "gpuletd_http_answers_abandoned_total": true,
	"gpuletd_grpc_answers_abandoned_total": true,
}

// memoryCgroupAbsent says whether the daemon's memory cgroup family name
// may be absent from a daemon started by the tests here: all of them
// where this machine gives the tests no memory cgroup, its limit where
// the cgroup has none (TestMemoryCgroupStatusAndMetrics checks it).
func memoryCgroupAbsent(name string) bool {
	if !strings.HasPrefix(name, "gpuletd_memory_cgroup_") {
		return false
	}
	g, err := memcg.Self()
	if err != nil {
		return true
	}
	c, err := g.Read()
	return err != nil || (name == "gpuletd_memory_cgroup_limit_bytes" && c.Limit == 0)
}

// sendRequests posts body to model's infer endpoint every period until the
// returned stop is called.
func sendRequests(base, model string, body []byte, period time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			resp, err := http.Post(base+"/v2/models/"+model+"/infer", "application/json", bytes.NewReader(body))
			if err == nil {
				resp.Body.Close()
			}
		}
	})
	return func() { cancel(); wg.Wait() }
}

// startPrometheus runs Prometheus scraping target's /metrics every second
// until the test ends, and returns its address.
func startPrometheus(t *testing.T, bin, target string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf("global: {scrape_interval: 1s, evaluation_interval: 1s}\nscrape_configs:\n  - job_name: gpuletd\n    static_configs: [{targets: [%q]}]\n", target)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o600))
	addr := freeAddr(t)
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	logs := &testbin.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	startChild(t, cmd, func() { _ = cmd.Process.Signal(os.Interrupt) })
	require.Eventually(t, func() bool {
		resp, err := http.Get("http://" + addr + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 30*time.Second, 200*time.Millisecond, "Prometheus ready; its logs:\n%s", logs)
	return addr
}

// promQuery runs an instant query and returns how many series it
// answered, or Prometheus's error.
func promQuery(addr, expr string) (int, error) {
	res, err := promResult(addr, expr)
	return len(res), err
}

// promValue is the first sample's value of an instant query; 0 when it
// answers none.
func promValue(addr, expr string) float64 {
	res, err := promResult(addr, expr)
	if err != nil || len(res) == 0 {
		return 0
	}
	var v float64
	if s, ok := res[0].Value[1].(string); ok {
		_, _ = fmt.Sscan(s, &v)
	}
	return v
}

// promSeries is one series of an instant query's vector.
type promSeries struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

func promResult(addr, expr string) ([]promSeries, error) {
	resp, err := http.Get("http://" + addr + "/api/v1/query?query=" + url.QueryEscape(expr))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, err
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("prometheus: %s", body.Error)
	}
	if body.Data.ResultType != "vector" {
		return nil, fmt.Errorf("prometheus answered a %s, not a vector", body.Data.ResultType)
	}
	var out []promSeries
	err = json.Unmarshal(body.Data.Result, &out)
	return out, err
}

// startChild starts cmd and, when the test ends, asks it to end with stop
// and waits for it, killing it after 10 s.
func startChild(t *testing.T, cmd *exec.Cmd, stop func()) {
	t.Helper()
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		stop()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
}
