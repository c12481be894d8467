package main

import (
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/modelzoo"
	"github.com/gpulet/gpuletd/mps/cpushare"
)

// A CPU node measures the request path's CPU while it serves, and its plans
// then count the executors' share: the status, the capacity line and the
// metrics say what was measured and what was counted.
func TestTheCPUsPlansCountTheRequestPath(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	repo := filepath.Join(t.TempDir(), "models")
	require.NoError(t, modelzoo.WriteRepository(repo, []string{"lenet5"}, 1))
	// Two cores at most, and gpu-lets of one core each: the executors of
	// larger ones are not measured, and the planner would give lenet5
	// alone the whole CPU.
	taskset, err := exec.LookPath("taskset")
	require.NoError(t, err, "taskset (util-linux)")
	cores, err := cpushare.Online()
	require.NoError(t, err)
	cores = cores[:min(len(cores), 2)]
	oneCore := "100"
	if len(cores) == 2 {
		oneCore = "50"
	}
	env := daemonEnv(t, "GPULETD_MODEL_REPOSITORY="+repo, "GPULETD_SCHEDULER_REORGANIZE_PERIOD=3s", "GPULETD_PARTITIONING_SIZES="+oneCore)
	addr, logs, _ := startDaemonUnder(t, env, taskset, "-c", cpushare.FormatList(cores))
	base := "http://" + addr
	require.Eventually(t, func() bool {
		return do(t, http.MethodGet, base+"/v2/health/ready", nil, nil).code == http.StatusOK
	}, 90*time.Second, 100*time.Millisecond, "ready; logs:\n%s", logs)
	var st adminStatus
	require.NoError(t, adminGet(t.Context(), plainAPI(base), "/api/v1/status", &st))
	require.Nil(t, st.RequestPath, "nothing measured before any request")

	// 700 req/s for 8 s: over 1 000 requests in every 3 s period.
	code, out, stderr := runCLI(t, "load", "--url", base, "--model", "lenet5", "--rate", "700", "--duration", "8s", "--binary")
	require.Equal(t, 0, code, "%s\n%s", out, stderr)
	require.Eventually(t, func() bool {
		st = adminStatus{}
		return adminGet(t.Context(), plainAPI(base), "/api/v1/status", &st) == nil &&
			st.RequestPath != nil && st.Capacity != nil && st.Capacity.ExecutorPathUS > 0
	}, 30*time.Second, 200*time.Millisecond, "a plan counts the measured path; logs:\n%s", logs)
	p := st.RequestPath
	require.Greater(t, p.DaemonUS, 0.0)
	require.NotNil(t, p.ExecutorsUS, "a CPU gpu-let of one core measures its executor")
	require.Greater(t, *p.ExecutorsUS, 0.0)
	require.InDelta(t, p.DaemonUS+*p.ExecutorsUS, p.PerRequestUS, 0.01)
	require.GreaterOrEqual(t, p.Answered, int64(1000))
	// Tens to hundreds of µs each on any host; far below a millisecond
	// unless the periods counted something other than requests.
	require.Less(t, p.PerRequestUS, 5000.0, "%+v", p)

	code, out, stderr = runCLI(t, "status", "--url", base)
	require.Equal(t, 0, code, stderr)
	out = strings.ReplaceAll(out, "\n  ", " ") // lines wrap at 80 columns: read them whole
	d := `[\d.]+(µs|ms)`
	require.Regexp(t, `(?m)^capacity \(planner's estimate\): .* on the CPU it counts the executors' `+d+` of CPU a request; the daemon's `+d+` shares the cores too`, out)
	require.Regexp(t, `(?m)^request path: `+d+` of CPU a request \(daemon `+d+`, executor `+d+`\), over \d+ requests to `, out)

	resp, err := http.Get(base + "/metrics")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Regexp(t, `(?m)^gpuletd_request_path_cpu_seconds\{part="executor"\} [0-9.e-]+$`, string(body))
	require.Regexp(t, `(?m)^gpuletd_request_path_cpu_seconds\{part="daemon"\} [0-9.e-]+$`, string(body))
}
