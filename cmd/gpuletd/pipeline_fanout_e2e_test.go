package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/modelzoo"
)

// TestAPipelineFansOutManyRows serves a pipeline whose detector finds
// 20 000 objects in one input, each scored by a classifier whose own SLO
// (50 ms) is far shorter than they take together on the CPU: the
// pipeline's SLO (20 s) is what they are due by, and every row is answered
// in its place. Before, every row went to the executor at once and each
// was refused once it had waited its model's SLO there (503, "dropped at
// step[1] (labeler)"); now either alone would serve them, and the daemon
// unit tests hold each (TestAFanOutKeepsBoundedRowsInFlight, and the
// executor's TestARequestsOwnDeadlineStandsPastTheSLO).
func TestAPipelineFansOutManyRows(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	const objects = 20000
	repo := filepath.Join(t.TempDir(), "models")
	require.NoError(t, modelzoo.WriteCrowdPipeline(repo, 5, "20s"))
	grpcAddr := freeAddr(t)
	addr, logs := startDaemon(t, daemonEnv(t, "GPULETD_MODEL_REPOSITORY="+repo, "GPULETD_DEVICES=cpu", "GPULETD_DEFAULT_SLO=50ms", "GPULETD_GRPC_LISTEN="+grpcAddr))
	url := "http://" + addr + "/v2/models/" + modelzoo.CrowdPipelineName
	require.Eventually(t, func() bool { return do(t, "GET", url+"/ready", nil, nil).code == 200 },
		2*time.Minute, 200*time.Millisecond, "logs:\n%s", logs)

	// Rows repeat every 5: object j is scored as object j%5.
	in := make([]float32, 16*objects)
	for i := range in {
		in[i] = float32(i%5)/5 - 0.3
	}
	image, err := tensor.FromFloat32s("image", []int64{1, 16 * objects}, in)
	require.NoError(t, err)
	five, err := tensor.FromFloat32s("object", []int64{5, 16}, relu(in[:80]))
	require.NoError(t, err)
	lib, err := onnxrt.FindLibrary("")
	require.NoError(t, err)
	require.NoError(t, onnxrt.Init(lib))
	cls, err := onnxrt.Run(filepath.Join(repo, modelzoo.ClassifierModel, "1", "model.onnx"), map[string]tensor.Tensor{"object": five}, 1)
	require.NoError(t, err)
	want, err := cls[0].Float32s()
	require.NoError(t, err)

	body := strings.Replace(string(jsonRequest(t, []tensor.Tensor{image})), `{"inputs"`, `{"outputs":[{"name":"labels"}],"inputs"`, 1)
	r := do(t, "POST", url+"/infer", []byte(body), nil)
	require.Equal(t, 200, r.code, string(r.body))
	var ans struct {
		Outputs []struct {
			Name  string    `json:"name"`
			Shape []int64   `json:"shape"`
			Data  []float32 `json:"data"`
		} `json:"outputs"`
	}
	require.NoError(t, json.Unmarshal(r.body, &ans))
	require.Len(t, ans.Outputs, 1)
	require.Equal(t, []int64{1, objects, 10}, ans.Outputs[0].Shape)
	for j := range objects {
		require.InDeltaSlice(t, want[10*(j%5):10*(j%5)+10], ans.Outputs[0].Data[10*j:10*j+10], 1e-4, "object %d", j)
	}
	// The status and /metrics say how many rows its fan-out held.
	code, out, stderr := runCLI(t, "status", "--url", "http://"+addr)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "crowd -> labeler (fan-out: objects, 20000.0 rows a request)")
	require.Contains(t, string(do(t, "GET", "http://"+addr+"/metrics", nil, nil).body), `gpuletd_pipeline_fanout_rows{pipeline="crowd-and-label"} 20000`+"\n")

	// gpuletd infer sends the pipeline's input at its detector's
	// profile_shapes (64 values: 4 objects), as it does the detector's own,
	// over REST and, from what gRPC's ModelConfig says, over gRPC.
	code, out, stderr = runCLI(t, "infer", modelzoo.CrowdPipelineName, "--url", "http://"+addr)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "labels   FP32 [1 4 10]")
	code, out, stderr = runCLI(t, "infer", modelzoo.CrowdPipelineName, "--url", "http://"+freeAddr(t), "--grpc", grpcAddr)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "labels   FP32 [1 4 10]")

	// An input the detector's graph cannot cut into objects (17 values:
	// its Reshape fails, which ONNX Runtime does not blame on the inputs)
	// is the client's fault: the model runs a zero-filled request of its
	// own after it, and the answer is a 400, counted as no SLO violation.
	odd, err := tensor.FromFloat32s("image", []int64{1, 17}, in[:17])
	require.NoError(t, err)
	r = do(t, "POST", "http://"+addr+"/v2/models/"+modelzoo.CrowdModel+"/infer", jsonRequest(t, []tensor.Tensor{odd}), nil)
	require.Equal(t, 400, r.code, string(r.body))
	require.Contains(t, string(r.body), "Reshape")
	require.Contains(t, string(r.body), "the model then ran a zero-filled request of its own: it cannot take these inputs")
	m := string(do(t, "GET", "http://"+addr+"/metrics", nil, nil).body)
	for _, line := range []string{`gpuletd_request_failures_total{model="crowd",reason="bad_request"} 1`, `gpuletd_slo_violations_total{model="crowd"} 0`} {
		require.True(t, strings.Contains(m, line+"\n"), "/metrics has no line %s", line)
	}
}

// relu is max(v, 0) of each value, as the detector gives its input back.
func relu(vs []float32) []float32 {
	out := make([]float32, len(vs))
	for i, v := range vs {
		out[i] = max(v, 0)
	}
	return out
}
