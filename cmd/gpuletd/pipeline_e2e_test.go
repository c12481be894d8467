package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/modelzoo"
)

// TestPipelineServes serves the modelzoo's pipeline as a Triton ensemble on
// the CPU: a detector-like model finds 4 objects in an input, and each
// object goes to a classifier-like model as a request of its own (the
// fan-out). The answer holds the objects and one row of scores per object,
// equal to running the two models one after the other in ONNX Runtime; the
// pipeline says what it is in its metadata, refuses what it cannot take, and
// says why it cannot be served once a step's model is gone.
func TestPipelineServes(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	repo := filepath.Join(t.TempDir(), "models")
	require.NoError(t, modelzoo.WritePipeline(repo, 5, "400ms", false))
	grpcAddr := freeAddr(t)
	state := t.TempDir()
	addr, logs := startDaemon(t, daemonEnv(t, "GPULETD_MODEL_REPOSITORY="+repo, "GPULETD_DEVICES=cpu", "GPULETD_DEFAULT_SLO=200ms", "GPULETD_GRPC_LISTEN="+grpcAddr,
		"GPULETD_STATE_DIR="+state, "GPULETD_ALLOW_CLIENT_SHM=true"))
	base := "http://" + addr
	url := base + "/v2/models/" + modelzoo.PipelineName
	require.Eventually(t, func() bool { return do(t, "GET", url+"/ready", nil, nil).code == 200 },
		2*time.Minute, 200*time.Millisecond, "logs:\n%s", logs)

	in := make([]float32, 64)
	for i := range in {
		in[i] = float32(i%5) / 5
	}
	image, err := tensor.FromFloat32s("image", []int64{1, 64}, in)
	require.NoError(t, err)

	// What the two models give, one after the other.
	lib, err := onnxrt.FindLibrary("")
	require.NoError(t, err)
	require.NoError(t, onnxrt.Init(lib))
	det, err := onnxrt.Run(filepath.Join(repo, modelzoo.DetectorModel, "1", "model.onnx"), map[string]tensor.Tensor{"image": image}, 1)
	require.NoError(t, err)
	objects := det[0]
	rows := objects
	rows.Name, rows.Shape = "object", []int64{modelzoo.PipelineObjects, 16}
	cls, err := onnxrt.Run(filepath.Join(repo, modelzoo.ClassifierModel, "1", "model.onnx"), map[string]tensor.Tensor{"object": rows}, 1)
	require.NoError(t, err)
	labels := cls[0]
	labels.Name, labels.Shape = "labels", []int64{1, modelzoo.PipelineObjects, 10}
	want := jsonOutputs(t, []tensor.Tensor{objects, labels})

	r := do(t, "POST", url+"/infer", jsonRequest(t, []tensor.Tensor{image}), nil)
	require.Equal(t, 200, r.code, string(r.body))
	var ans struct {
		Name    string           `json:"model_name"`
		Outputs []map[string]any `json:"outputs"`
	}
	require.NoError(t, json.Unmarshal(r.body, &ans))
	require.Equal(t, modelzoo.PipelineName, ans.Name)
	requireSameOutputs(t, want, ans.Outputs)
	checkPipelineTraces(t, url, jsonRequest(t, []tensor.Tensor{image}), filepath.Join(state, "traces", "p.json"))

	// Binary tensors and the gRPC front door take the same path.
	body, n := binaryRequest(t, []tensor.Tensor{image})
	r = do(t, "POST", url+"/infer", body, map[string]string{"Inference-Header-Content-Length": strconv.Itoa(n)})
	require.Equal(t, 200, r.code, string(r.body))
	requireSameOutputs(t, want, jsonOutputs(t, binaryOutputs(t, r)))

	c, ctx := inferenceClient(t, grpcAddr, time.Minute)
	req := fp32Request(modelzoo.PipelineName, "g1", []int64{1, 64}, in, true)
	req.Inputs[0].Name = "image"
	gres, err := c.ModelInfer(ctx, req)
	require.NoError(t, err)
	require.Equal(t, "g1", gres.Id)
	require.Len(t, gres.Outputs, 2)
	require.Equal(t, []int64{1, modelzoo.PipelineObjects, 10}, gres.Outputs[1].Shape)
	wantScores, err := labels.Float32s()
	require.NoError(t, err)
	require.InDeltaSlice(t, wantScores, fp32s(gres.RawOutputContents[1]), 1e-4)

	// One output asked for.
	r = do(t, "POST", url+"/infer", []byte(strings.Replace(string(jsonRequest(t, []tensor.Tensor{image})), `{"inputs"`, `{"outputs":[{"name":"labels"}],"inputs"`, 1)), nil)
	require.Equal(t, 200, r.code, string(r.body))
	require.NoError(t, json.Unmarshal(r.body, &ans))
	require.Len(t, ans.Outputs, 1)
	require.Equal(t, "labels", ans.Outputs[0]["name"])

	// gpuletd load with the tensors in shared memory, REST and gRPC: the
	// labels' size depends on the input (one row per object found), which
	// the metadata cannot say, so the run sizes their place from an answer.
	for _, via := range [][]string{nil, {"--grpc", grpcAddr}} {
		loadAllAnswered(t, append([]string{"--model", modelzoo.PipelineName, "--url", base, "--rate", "20", "--duration", "1s", "--shm"}, via...)...)
	}

	// A plan preview takes the pipeline's rate and shows its plan: each
	// step's load at that rate, the classifier's four objects a request.
	r = do(t, "POST", base+"/api/v1/plan/preview", []byte(`{"rates": {"`+modelzoo.PipelineName+`": 20}}`), nil)
	require.Equal(t, 200, r.code, string(r.body))
	var pv struct {
		Rates     map[string]float64 `json:"rates"`
		Pipelines map[string]struct {
			Plan struct {
				Demand float64 `json:"demand"`
				Tasks  []struct {
					Task string  `json:"task"`
					Load float64 `json:"load"`
				} `json:"tasks"`
			} `json:"plan"`
			Error string `json:"error"`
		} `json:"pipelines"`
	}
	require.NoError(t, json.Unmarshal(r.body, &pv))
	require.Equal(t, 20.0, pv.Rates[modelzoo.PipelineName])
	pp := pv.Pipelines[modelzoo.PipelineName]
	require.Empty(t, pp.Error)
	require.InDelta(t, 24, pp.Plan.Demand, 1e-9, "20 req/s with the headroom")
	require.Len(t, pp.Plan.Tasks, 2)
	require.InDelta(t, 4*pp.Plan.Tasks[0].Load, pp.Plan.Tasks[1].Load, 1e-6)
	code, out, stderr := runCLI(t, "plan", "--url", base, "--rate", modelzoo.PipelineName+"=20")
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `(?m)^pipeline `+modelzoo.PipelineName+`: 24 req/s with the headroom, \w+ scaling on \d+\s+workers, expected accuracy [01]\.\d{3}$`, out)

	// Metadata and configuration say it is a pipeline.
	r = do(t, "GET", url, nil, nil)
	require.Equal(t, 200, r.code, string(r.body))
	require.Contains(t, string(r.body), `"platform":"ensemble"`)
	require.Contains(t, string(r.body), `"name":"labels"`)

	// The admin status lists the pipeline with its steps and its requests,
	// and /metrics counts them under its name.
	r = do(t, "GET", base+"/api/v1/status", nil, nil)
	require.Equal(t, 200, r.code)
	var st struct {
		Pipelines []struct {
			Name   string   `json:"name"`
			Steps  []string `json:"steps"`
			Fanout string   `json:"fanout"`
			Ready  bool     `json:"ready"`
			Recent struct {
				Requests int `json:"requests"`
			} `json:"recent"`
			Scaling struct {
				Scaling  string  `json:"scaling"`
				Accuracy float64 `json:"accuracy"`
				Served   int     `json:"served"`
				Mix      [][]struct {
					Model string `json:"model"`
				} `json:"mix"`
			} `json:"scaling"`
		} `json:"pipelines"`
	}
	require.NoError(t, json.Unmarshal(r.body, &st))
	require.Len(t, st.Pipelines, 1)
	require.Equal(t, modelzoo.PipelineName, st.Pipelines[0].Name)
	require.Equal(t, []string{modelzoo.DetectorModel, modelzoo.ClassifierModel}, st.Pipelines[0].Steps)
	require.Equal(t, "objects", st.Pipelines[0].Fanout)
	require.True(t, st.Pipelines[0].Ready)
	require.GreaterOrEqual(t, st.Pipelines[0].Recent.Requests, 3)
	// At this rate the plan is hardware scaling: every step runs its own
	// model, and every request was served at full accuracy.
	sc := st.Pipelines[0].Scaling
	require.Equal(t, "hardware", sc.Scaling)
	require.Len(t, sc.Mix, 2)
	require.Equal(t, modelzoo.ClassifierModel, sc.Mix[1][0].Model)
	require.GreaterOrEqual(t, sc.Served, 3)
	require.InDelta(t, 1, sc.Accuracy, 1e-9)
	r = do(t, "GET", base+"/metrics", nil, nil)
	require.Contains(t, string(r.body), `model="`+modelzoo.PipelineName+`"`)

	// Each step is a request of its model like any other: the four
	// pipeline requests above show in the steps' models' statistics,
	// status windows and metrics, the classifier's once per object.
	for _, step := range []struct {
		model string
		per   int
	}{{modelzoo.DetectorModel, 1}, {modelzoo.ClassifierModel, modelzoo.PipelineObjects}} {
		s := statsOf(t, base, step.model)
		require.GreaterOrEqual(t, s.InferenceCount, int64(4*step.per), step.model)
		require.Positive(t, s.LastInference, step.model)
	}
	r = do(t, "GET", base+"/api/v1/status", nil, nil)
	var models struct {
		Models []struct {
			Name   string `json:"name"`
			Recent struct {
				Requests   int     `json:"requests"`
				Attainment float64 `json:"slo_attainment"`
			} `json:"recent"`
		} `json:"models"`
	}
	require.NoError(t, json.Unmarshal(r.body, &models))
	seen := map[string]int{}
	for _, m := range models.Models {
		seen[m.Name] = m.Recent.Requests
		if m.Recent.Requests > 0 {
			require.Positive(t, m.Recent.Attainment, m.Name)
		}
	}
	require.GreaterOrEqual(t, seen[modelzoo.ClassifierModel], 4*modelzoo.PipelineObjects, "%v", seen)
	r = do(t, "GET", base+"/metrics", nil, nil)
	require.Contains(t, string(r.body), `gpuletd_requests_total{model="`+modelzoo.ClassifierModel+`"}`)

	// A pipeline whose steps branch, written out of order, loaded live.
	checkBranchingPipeline(t, base, repo, image, labels)
	// One whose detector step is a pipeline of its own.
	checkNestedPipeline(t, base, repo, image, want)
	// One whose rows read the image whole beside their object.
	checkContextPipeline(t, base, repo, image, objects)

	// What a pipeline cannot take is the client's error.
	two, err := tensor.FromFloat32s("image", []int64{2, 64}, append(in, in...))
	require.NoError(t, err)
	r = do(t, "POST", url+"/infer", jsonRequest(t, []tensor.Tensor{two}), nil)
	require.Equal(t, 400, r.code, string(r.body))
	require.Contains(t, string(r.body), "dimension 0 is the batch, 1 to 1")

	// The classifier unloaded: the pipeline cannot run, and says why.
	r = do(t, "POST", base+"/v2/repository/models/"+modelzoo.ClassifierModel+"/unload", nil, nil)
	require.Equal(t, 200, r.code, string(r.body))
	r = do(t, "POST", url+"/infer", jsonRequest(t, []tensor.Tensor{image}), nil)
	require.Equal(t, 503, r.code, string(r.body))
	require.Contains(t, string(r.body), "step[1] ("+modelzoo.ClassifierModel+"): the model is not served")
	r = do(t, "GET", url+"/ready", nil, nil)
	require.Equal(t, 503, r.code, string(r.body))
	require.Contains(t, string(r.body), "step[1]")

	// Unloading the pipeline with its dependents (Triton's
	// unload_dependents) unloads the step models it names too; the one
	// already unloaded is passed over.
	r = do(t, "POST", base+"/v2/repository/models/"+modelzoo.PipelineName+"/unload", []byte(`{"parameters":{"unload_dependent":true}}`), nil)
	require.Equal(t, 400, r.code, "a misspelt parameter is refused: %s", r.body)
	require.Equal(t, 200, do(t, "GET", base+"/v2/models/"+modelzoo.DetectorModel+"/ready", nil, nil).code)
	r = do(t, "POST", base+"/v2/repository/models/"+modelzoo.PipelineName+"/unload", []byte(`{"parameters":{"unload_dependents":true}}`), nil)
	require.Equal(t, 200, r.code, string(r.body))
	for _, gone := range []string{modelzoo.PipelineName, modelzoo.DetectorModel} {
		require.Equal(t, 404, do(t, "GET", base+"/v2/models/"+gone, nil, nil).code, gone)
	}
	require.Contains(t, eventMessages(t, base), "model unloaded with its pipeline "+modelzoo.PipelineName)
}

// checkPipelineTraces traces one request of the pipeline at url, at levels
// TIMESTAMPS and TENSORS: its trace, written when tracing stops, and one of
// each step request (the detector, then the classifier once per object),
// each naming the pipeline's, each followed by the tensors it brought and
// was answered with.
func checkPipelineTraces(t *testing.T, url string, body []byte, file string) {
	t.Helper()
	r := do(t, "POST", url+"/trace/setting", []byte(`{"trace_level": ["TIMESTAMPS", "TENSORS"], "trace_rate": "1", "trace_file": "p.json"}`), nil)
	require.Equal(t, 200, r.code, string(r.body))
	r = do(t, "POST", url+"/infer", body, nil)
	require.Equal(t, 200, r.code, string(r.body))
	r = do(t, "POST", url+"/trace/setting", []byte(`{"trace_level": ["OFF"]}`), nil)
	require.Equal(t, 200, r.code, string(r.body))
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	var entries []struct {
		ID         uint64            `json:"id"`
		ParentID   uint64            `json:"parent_id"`
		Model      string            `json:"model_name"`
		Timestamps []json.RawMessage `json:"timestamps"`
		Activity   string            `json:"activity"`
		Tensor     struct {
			Name, Data, Shape, DType string
		} `json:"tensor"`
	}
	require.NoError(t, json.Unmarshal(data, &entries))
	byModel := map[string]int{}
	model := map[uint64]string{}
	tensors := map[string][]string{} // by model: "activity name shape"
	var parent uint64
	for _, e := range entries {
		if e.Activity != "" {
			m := model[e.ID]
			require.NotEmpty(t, m, "a tensor follows its trace: %s", data)
			tensors[m] = append(tensors[m], e.Activity+" "+e.Tensor.Name+" "+e.Tensor.Shape+" "+e.Tensor.DType)
			if m == modelzoo.PipelineName && e.Tensor.Name == "image" {
				require.True(t, strings.HasPrefix(e.Tensor.Data, "0,0.2,0.4,0.6,0.8,0,"), "the values sent: %.40s", e.Tensor.Data)
			}
			continue
		}
		model[e.ID] = e.Model
		byModel[e.Model]++
		if e.Model == modelzoo.PipelineName {
			parent = e.ID
			require.Len(t, e.Timestamps, 2, "a pipeline's trace has its start and end")
		}
	}
	require.Equal(t, map[string]int{modelzoo.PipelineName: 1, modelzoo.DetectorModel: 1, modelzoo.ClassifierModel: modelzoo.PipelineObjects}, byModel, "%s", data)
	for _, e := range entries {
		if e.Activity == "" && e.Model != modelzoo.PipelineName {
			require.Equal(t, parent, e.ParentID, "%s names the pipeline's trace", e.Model)
			require.Len(t, e.Timestamps, 7, e.Model)
		}
	}
	require.Equal(t, []string{"TENSOR_QUEUE_INPUT image 1,64 FP32", "TENSOR_BACKEND_OUTPUT objects 1,4,16 FP32",
		"TENSOR_BACKEND_OUTPUT labels 1,4,10 FP32"}, tensors[modelzoo.PipelineName])
	require.Len(t, tensors[modelzoo.DetectorModel], 2, "%v", tensors)
	require.Len(t, tensors[modelzoo.ClassifierModel], 2*modelzoo.PipelineObjects, "%v", tensors)
}
