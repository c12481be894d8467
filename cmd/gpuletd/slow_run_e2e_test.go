package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/internal/customop"
	"github.com/gpulet/gpuletd/modelzoo"
)

// TestASlowRunRefusesItsTwinsOnlyWhileItRuns: a request whose run goes on
// past its deadline and grace, and then ends (a custom operator slow on
// one value), is answered deadline; the same request sent while that run
// goes on is refused twin_hung, and once it has ended it runs again, long
// before the executor's hang limit; no executor is taken for hung.
func TestASlowRunRefusesItsTwinsOnlyWhileItRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	repo, folder, _ := customOpRepo(t)
	cfg, err := os.OpenFile(filepath.Join(folder, "config.pbtxt"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	// A 50 ms SLO: no answer past 250 ms (its grace is 200 ms), well
	// before the slow run ends and long before the hang limit (5 s).
	_, err = cfg.WriteString(`parameters { key: "slo" value { string_value: "50ms" } }` + "\n")
	require.NoError(t, err)
	require.NoError(t, cfg.Close())

	addr, logs := startDaemon(t, daemonEnv(t, "GPULETD_MODEL_REPOSITORY="+repo, "GPULETD_GRPC_LISTEN=", "GPULETD_SCHEDULER_HANG_TIMEOUT=5s"))
	base := "http://" + addr
	model := base + "/v2/models/" + modelzoo.CustomOpModel
	require.Eventually(t, func() bool { return do(t, "GET", model+"/ready", nil, nil).code == 200 },
		2*time.Minute, 200*time.Millisecond, "logs:\n%s", logs)
	infer := func(v float32) httpResult {
		return do(t, "POST", model+"/infer", []byte(fmt.Sprintf(`{"inputs":[{"name":"INPUT","datatype":"FP32","shape":[1,4],"data":[%g,0,0,0]}]}`, v)), nil)
	}
	require.Equal(t, 200, infer(1).code)

	r := infer(customop.Slow)
	require.Equal(t, http.StatusServiceUnavailable, r.code, string(r.body))
	require.Contains(t, string(r.body), "no answer by the deadline")
	r = infer(customop.Slow)
	require.Equal(t, http.StatusServiceUnavailable, r.code, string(r.body))
	require.Contains(t, string(r.body), "refused for now: the same request (the same inputs) got no answer even well past its deadline",
		"its run goes on for %v", customop.SlowFor)
	sent := time.Now()
	require.Eventually(t, func() bool {
		return !strings.Contains(string(infer(customop.Slow).body), "refused for now")
	}, 3*customop.SlowFor, 50*time.Millisecond, "refused only while its run goes on, not to the hang limit (5 s and a health interval)")
	t.Logf("refused for %v more", time.Since(sent))
	require.Eventually(t, func() bool { return infer(1).code == 200 }, 10*time.Second, 100*time.Millisecond, "the others are answered")

	var restarts []historyEvent
	require.NoError(t, json.Unmarshal(do(t, "GET", base+"/api/v1/events?limit=100&kind=executor_restart", nil, nil).body, &restarts))
	require.Empty(t, restarts, "a slow run is not a hang")
}
