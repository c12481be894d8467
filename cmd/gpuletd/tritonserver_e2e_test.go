package main

import (
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/internal/testbin"
	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
	"github.com/gpulet/gpuletd/modelzoo"
)

// TestTritonServerCommandLine runs the daemon as a container that ran
// Triton would: gpuletd tritonserver with tritonserver's flags over a
// Triton repository. The ports, explicit model control, strict readiness,
// the restricted repository API, tracing from the start and Triton's own
// tuning flags (noted as ignored) all take.
func TestTritonServerCommandLine(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	repo := filepath.Join(t.TempDir(), "models")
	require.NoError(t, modelzoo.WriteRepository(repo, []string{"lenet5", "mlp"}, 3, modelzoo.AsTriton()))
	port := func() string {
		_, p, err := net.SplitHostPort(freeAddr(t))
		require.NoError(t, err)
		return p
	}
	httpPort, grpcPort, metricsPort := port(), port(), port()
	env := daemonEnv(t, "GPULETD_DEFAULT_SLO=200ms", "GPULETD_AUTH_ADMIN_TOKEN=secret")
	logs, _, _ := runDaemonProcess(t, []string{testbin.Gpuletd(t), "tritonserver", "--model-repository=" + repo, "--http-address=127.0.0.1", "--http-port", httpPort,
		"--grpc-address=127.0.0.1", "--grpc-port=" + grpcPort, "--metrics-address=127.0.0.1", "--metrics-port=" + metricsPort,
		"--model-control-mode=explicit", "--load-model=mlp", "--http-restricted-api=model-repository:admin-key=k2",
		"--backend-config=onnxruntime,default-max-batch-size=8", "--backend-config=onnxruntime,enable-global-threadpool=1", "--exit-timeout-secs=30",
		"--trace-config", "level=TIMESTAMPS", "--trace-config=rate=1", "--trace-config=triton,file=/var/log/trace.json"}, env)
	base := "http://127.0.0.1:" + httpPort
	require.Eventually(t, func() bool {
		resp, err := http.Get(base + "/v2/health/ready")
		if err != nil {
			return false // not listening yet
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 2*time.Minute, 200*time.Millisecond,
		"strict readiness: ready once mlp serves; logs:\n%s", logs)
	require.Equal(t, 200, do(t, "POST", base+"/v2/models/mlp/infer", mlpJSON(1), nil).code)
	require.Equal(t, 404, do(t, "GET", base+"/v2/models/lenet5/ready", nil, nil).code, "explicit: lenet5 was not loaded")
	require.Equal(t, 200, do(t, "GET", "http://127.0.0.1:"+metricsPort+"/metrics", nil, nil).code)
	c, ctx := inferenceClient(t, "127.0.0.1:"+grpcPort, time.Minute)
	_, err := c.ServerLive(ctx, &pb.ServerLiveRequest{})
	require.NoError(t, err)

	load := base + "/v2/repository/models/lenet5/load"
	require.Equal(t, 403, do(t, "POST", load, nil, map[string]string{"Authorization": "Bearer secret"}).code, "restricted")
	r := do(t, "POST", load, nil, map[string]string{"admin-key": "k2"})
	require.Contains(t, []int{200, 503}, r.code, "the key stands for the token: loaded (503 while it is profiled): %s", r.body)
	r = do(t, "GET", base+"/v2/trace/setting", nil, nil)
	require.Contains(t, string(r.body), `"trace_level":["TIMESTAMPS"]`, "tracing from the start")
	require.Contains(t, string(r.body), `"trace_rate":"1"`)
	require.Contains(t, string(r.body), `/traces/trace.json"`)
	require.Contains(t, logs.String(), "tritonserver flag --backend-config onnxruntime,enable-global-threadpool=1 ignored")

	// The command line, its configuration saying nothing of port 8000,
	// reaches the daemon where it listens (its record in runtime_dir).
	code, out := runOnce(t, testbin.Gpuletd(t), t.TempDir(), env, "models", "list")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "mlp")

	code, out = runOnce(t, testbin.Gpuletd(t), t.TempDir(), daemonEnv(t), "tritonserver", "--model-repository="+repo, "--allow-http=false")
	require.Equal(t, 2, code)
	require.Contains(t, out, "tritonserver: --allow-http=false: gpuletd always serves REST")
}
