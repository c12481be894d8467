package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/modelzoo"
)

// extra_model_repositories (tritonserver's repeated --model-repository)
// serves the folders of every repository; a name two of them hold is
// served from neither and says why in the index, and once one copy leaves
// the poll loads the other.
func TestSeveralModelRepositories(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	extra := filepath.Join(t.TempDir(), "more")
	require.NoError(t, modelzoo.WriteRepository(extra, []string{"lenet5", "mlp"}, 1))
	setProfile(t, extra, "lenet5", "alexnet", "200ms")
	setProfile(t, extra, "mlp", "alexnet", "200ms")
	repo, env := emulatedMLP(t, "GPULETD_EXTRA_MODEL_REPOSITORIES="+extra, "GPULETD_REPOSITORY_POLL=1s")
	addr, logs, _ := startDaemonUnder(t, env)
	base := "http://" + addr
	require.Eventually(t, func() bool { return do(t, "GET", base+"/v2/models/lenet5/ready", nil, nil).code == 200 },
		60*time.Second, 100*time.Millisecond, "logs:\n%s", logs)
	r := do(t, "POST", base+"/v2/models/lenet5/infer", []byte(`{"inputs":[{"name":"input","shape":[1,1,28,28],"datatype":"FP32","data":[`+strings.Repeat("0,", 783)+`0]}]}`), nil)
	require.Equal(t, 200, r.code, string(r.body))

	// mlp is in both: it never served, and everywhere says why.
	both := filepath.Join(repo, "mlp") + " and " + filepath.Join(extra, "mlp")
	ready := do(t, "GET", base+"/v2/models/mlp/ready", nil, nil)
	require.Equal(t, 503, ready.code)
	require.Contains(t, string(ready.body), "model folder in more than one model repository: "+both)
	index := string(do(t, "POST", base+"/v2/repository/index", nil, nil).body)
	require.Contains(t, index, `"name":"mlp","state":"UNAVAILABLE","reason":"invalid model: model folder in more than one model repository: `+both)
	require.Contains(t, index, `"name":"lenet5","version":"1","state":"READY"`)
	require.Contains(t, eventMessages(t, base), "model repository entry skipped: invalid model: model folder in more than one model repository")

	// One copy leaves: the poll serves the other.
	require.NoError(t, os.RemoveAll(filepath.Join(repo, "mlp")))
	require.Eventually(t, func() bool { return do(t, "GET", base+"/v2/models/mlp/ready", nil, nil).code == 200 },
		30*time.Second, 200*time.Millisecond, "events:\n%s", eventMessages(t, base))
	require.Contains(t, string(do(t, "POST", base+"/v2/repository/index", nil, nil).body), `"name":"mlp","version":"1","state":"READY"`)

	// A copy appearing again while it serves: the load fails, saying why,
	// and mlp serves on the files it was loaded from, as with any folder
	// broken while served.
	require.NoError(t, os.CopyFS(filepath.Join(repo, "mlp"), os.DirFS(filepath.Join(extra, "mlp"))))
	require.Eventually(t, func() bool {
		return strings.Contains(eventMessages(t, base), "loading mlp failed: invalid model: model folder in more than one model repository")
	}, 30*time.Second, 200*time.Millisecond, "events:\n%s", eventMessages(t, base))
	require.Equal(t, 200, do(t, "GET", base+"/v2/models/mlp/ready", nil, nil).code)
}

// Triton's --model-config-name: a model folder's configs/<name>.pbtxt
// serves over its configuration while it is there, and the poll follows
// it leaving, as Triton picks the file anew at each load.
func TestCustomModelConfiguration(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	repo, env := emulatedMLP(t, "GPULETD_MODEL_CONFIG_NAME=h100", "GPULETD_REPOSITORY_POLL=1s")
	custom := filepath.Join(repo, "mlp", "configs", "h100.pbtxt")
	require.NoError(t, os.MkdirAll(filepath.Dir(custom), 0o755))
	require.NoError(t, os.WriteFile(custom, []byte(`platform: "onnxruntime_onnx" max_batch_size: 32
dynamic_batching { default_queue_policy { max_queue_size: 7 } }`), 0o644))
	addr, logs, _ := startDaemonUnder(t, env)
	base := "http://" + addr
	require.Eventually(t, func() bool { return do(t, "GET", base+"/v2/models/mlp/ready", nil, nil).code == 200 },
		60*time.Second, 100*time.Millisecond, "logs:\n%s", logs)
	config := func() string { return string(do(t, "GET", base+"/v2/models/mlp/config", nil, nil).body) }
	require.Contains(t, config(), `"max_queue_size":7`, "the custom configuration, under config.yaml's SLO")
	require.Contains(t, config(), `"slo_ms":200`)
	code, out, stderr := runCLI(t, "models", "show", "mlp", "--url", base)
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `config +configs/h100.pbtxt, config.yaml\n`, out)

	require.NoError(t, os.RemoveAll(filepath.Dir(custom)))
	require.Eventually(t, func() bool { return !strings.Contains(config(), `"max_queue_size":7`) },
		30*time.Second, 200*time.Millisecond, "events:\n%s", eventMessages(t, base))
	require.Contains(t, eventMessages(t, base), "max_queue 7 → none")

	// A folder sent with a load serves the daemon's custom configuration,
	// though the command's own configuration names none.
	from := filepath.Join(t.TempDir(), "mlp")
	require.NoError(t, os.CopyFS(from, os.DirFS(filepath.Join(repo, "mlp"))))
	require.NoError(t, os.MkdirAll(filepath.Join(from, "configs"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(from, "configs", "h100.pbtxt"), []byte(`platform: "onnxruntime_onnx" max_batch_size: 32
dynamic_batching { default_queue_policy { max_queue_size: 9 } }`), 0o644))
	code, out, stderr = runCLI(t, "models", "load", "mlp", "--from", from, "--url", base)
	require.Equal(t, 0, code, "%s%s", out, stderr)
	require.Contains(t, config(), `"max_queue_size":9`, "the daemon's model_config_name picked the file sent")
}
