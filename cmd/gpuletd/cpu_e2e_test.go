package main

import (
	"cmp"
	"encoding/base64"
	le "encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/modelzoo"
	"github.com/stretchr/testify/require"
)

// cpuZooDaemon serves the modelzoo's lenet5 and mlp on the CPU device with
// generous SLOs (the tests using it check answers, not timing, on a loaded
// machine) and waits until both are ready. It returns the repository and
// the REST base URL.
func cpuZooDaemon(t *testing.T, extra ...string) (repo, base string) {
	return zooDaemon(t, false, extra...)
}

// zooDaemon is cpuZooDaemon with the repository in gpuletd's layout
// (config.yaml) or, with triton, in Triton's: config.pbtxt files without an
// SLO, served with GPULETD_DEFAULT_SLO.
func zooDaemon(t *testing.T, triton bool, extra ...string) (repo, base string) {
	t.Helper()
	repo = filepath.Join(t.TempDir(), "models")
	env := []string{"GPULETD_MODEL_REPOSITORY=" + repo, "GPULETD_DEVICES=cpu"}
	if triton {
		require.NoError(t, modelzoo.WriteRepository(repo, []string{"lenet5", "mlp"}, 3, modelzoo.AsTriton()))
		writeReshapedMLP(t, repo)
		env = append(env, "GPULETD_DEFAULT_SLO=200ms", "GPULETD_RESPONSE_CACHE_SIZE=1MiB")
	} else {
		require.NoError(t, modelzoo.WriteRepository(repo, []string{"lenet5", "mlp"}, 3))
		setProfile(t, repo, "lenet5", "alexnet", "200ms")
		setProfile(t, repo, "mlp", "alexnet", "200ms")
	}
	addr, logs := startDaemon(t, daemonEnv(t, append(env, extra...)...))
	base = "http://" + addr
	require.Eventually(t, func() bool {
		return do(t, "GET", base+"/v2/models/lenet5/ready", nil, nil).code == 200 &&
			do(t, "GET", base+"/v2/models/mlp/ready", nil, nil).code == 200
	}, 2*time.Minute, 200*time.Millisecond, "logs:\n%s", logs)
	return repo, base
}

// TestCPUServingMatchesONNXRuntime serves modelzoo models on the CPU device
// (the daemon profiles them first, since it has no profile yet) and checks
// that answers through JSON and binary requests equal running the same
// inputs through ONNX Runtime directly.
func TestCPUServingMatchesONNXRuntime(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	repo, base := cpuZooDaemon(t)
	checkZooAnswers(t, repo, base)
}

// TestTritonRepositoryServes serves a repository in Triton's layout, with
// only config.pbtxt files and no SLO in them, under GPULETD_DEFAULT_SLO:
// the answers equal ONNX Runtime's, and the models say where their SLO
// came from and which of Triton's fields took no effect.
func TestTritonRepositoryServes(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	repo, base := zooDaemon(t, true)
	checkZooAnswers(t, repo, base)
	checkClassification(t, repo, base)

	// Reshape: 28x28 images in, 2x5 answers out, the model file seeing
	// [N,784] and [N,10].
	require.Eventually(t, func() bool { return do(t, "GET", base+"/v2/models/mlpimage/ready", nil, nil).code == 200 },
		2*time.Minute, 200*time.Millisecond)
	vals := make([]float32, 2*784)
	strs := make([]string, len(vals))
	for i := range vals {
		vals[i] = float32(i%97)/50 - 1
		strs[i] = strconv.FormatFloat(float64(vals[i]), 'g', -1, 32)
	}
	want, err := onnxrt.RunFloat32(filepath.Join(repo, "mlp", "1", "model.onnx"),
		map[string]onnxrt.Float32Tensor{"input": {Shape: []int64{2, 784}, Data: vals}}, 1)
	require.NoError(t, err)
	r := do(t, "POST", base+"/v2/models/mlpimage/infer",
		[]byte(`{"inputs":[{"name":"input","shape":[2,1,28,28],"datatype":"FP32","data":[`+strings.Join(strs, ",")+`]}]}`), nil)
	requireImageAnswer(t, r, want["output"].Data)
	r = do(t, "POST", base+"/v2/models/mlpimage/infer", []byte(`{"inputs":[{"name":"input","shape":[1,784],"datatype":"FP32","data":[`+strings.Join(strs[:784], ",")+`]}]}`), nil)
	require.Equal(t, 400, r.code, "the model's own shape is not the configured one: %s", r.body)
	checkResponseCache(t, base, `{"inputs":[{"name":"input","shape":[2,1,28,28],"datatype":"FP32","data":[`+strings.Join(strs, ",")+`]}]}`, want["output"].Data)

	var models []adminModel
	r = do(t, "GET", base+"/api/v1/models", nil, nil)
	require.Equal(t, 200, r.code, string(r.body))
	require.NoError(t, json.Unmarshal(r.body, &models))
	require.Len(t, models, 3)
	for _, m := range models {
		require.Equal(t, 200.0, m.SLOMS, m.Name)
		require.Equal(t, "default_slo", m.SLOFrom, m.Name)
		require.Equal(t, []string{"config.pbtxt"}, m.ConfigFiles, m.Name)
		if m.Name == "mlpimage" {
			require.Empty(t, m.ConfigNotes)
			continue
		}
		notes := strings.Join(m.ConfigNotes, "\n")
		require.Contains(t, notes, "dynamic_batching ignored", m.Name)
		require.Contains(t, notes, "instance_group ignored", m.Name)
	}
	var meta struct {
		Inputs []struct {
			Name  string  `json:"name"`
			Shape []int64 `json:"shape"`
		} `json:"inputs"`
	}
	r = do(t, "GET", base+"/v2/models/lenet5", nil, nil)
	require.Equal(t, 200, r.code, string(r.body))
	require.NoError(t, json.Unmarshal(r.body, &meta))
	require.Equal(t, []int64{-1, 1, 28, 28}, meta.Inputs[0].Shape, "max_batch_size from config.pbtxt: a batch dimension")
	r = do(t, "GET", base+"/v2/models/mlpimage", nil, nil)
	require.Equal(t, 200, r.code, string(r.body))
	require.NoError(t, json.Unmarshal(r.body, &meta))
	require.Equal(t, []int64{-1, 1, 28, 28}, meta.Inputs[0].Shape, "metadata gives the configured dims, not the reshape")

	// Triton's load API with a configuration override: a bad one is
	// refused naming the field and the model keeps serving; a good one
	// replaces config.pbtxt.
	load := func(config string) httpResult {
		body, err := json.Marshal(map[string]any{"parameters": map[string]string{"config": config}})
		require.NoError(t, err)
		return do(t, "POST", base+"/v2/repository/models/lenet5/load", body, nil)
	}
	r = load(`{"max_batch": 8}`)
	require.Equal(t, 400, r.code, string(r.body))
	require.Contains(t, string(r.body), `unknown field \"max_batch\"`)
	require.Equal(t, 200, do(t, "GET", base+"/v2/models/lenet5/ready", nil, nil).code)
	r = load(`{"name": "lenet5", "backend": "onnxruntime", "max_batch_size": 16, "parameters": {"slo": {"string_value": "150ms"}}}`)
	require.Equal(t, 200, r.code, string(r.body))
	r = do(t, "GET", base+"/api/v1/models", nil, nil)
	require.NoError(t, json.Unmarshal(r.body, &models))
	i := slices.IndexFunc(models, func(m adminModel) bool { return m.Name == "lenet5" })
	require.GreaterOrEqual(t, i, 0)
	require.Equal(t, 150.0, models[i].SLOMS)
	require.Equal(t, "load request parameters", models[i].SLOFrom)
	require.Equal(t, 16, models[i].MaxBatchSize)

	checkUploadedModel(t, repo, base, vals[:784], want["output"].Data[:10])
}

// checkClassification gives lenet5's output a label file with fewer labels
// than classes, loads it again and asks for the top three classes of two
// images (Triton's classification extension): each is "value:index" or
// "value:index:label", in the order of ONNX Runtime's own answer.
func checkClassification(t *testing.T, repo, base string) {
	t.Helper()
	dir := filepath.Join(repo, "lenet5")
	var labels []string
	for i := range 8 {
		labels = append(labels, fmt.Sprintf("digit %d", i))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "labels.txt"), []byte(strings.Join(labels, "\n")+"\n"), 0o644))
	config, err := os.ReadFile(filepath.Join(dir, "config.pbtxt"))
	require.NoError(t, err)
	labelled := strings.Replace(string(config), "dims: [ 10 ]", "dims: [ 10 ]\n    label_filename: \"labels.txt\"", 1)
	require.NotEqual(t, string(config), labelled)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.pbtxt"), []byte(labelled), 0o644))
	r := do(t, "POST", base+"/v2/repository/models/lenet5/load", nil, nil)
	require.Equal(t, 200, r.code, string(r.body))

	vals := make([]float32, 2*784)
	strs := make([]string, len(vals))
	for i := range vals {
		vals[i] = float32(i%89)/40 - 1
		strs[i] = strconv.FormatFloat(float64(vals[i]), 'g', -1, 32)
	}
	want, err := onnxrt.RunFloat32(filepath.Join(dir, "1", "model.onnx"),
		map[string]onnxrt.Float32Tensor{"input": {Shape: []int64{2, 1, 28, 28}, Data: vals}}, 1)
	require.NoError(t, err)
	r = do(t, "POST", base+"/v2/models/lenet5/infer", []byte(`{"inputs":[{"name":"input","shape":[2,1,28,28],"datatype":"FP32","data":[`+
		strings.Join(strs, ",")+`]}],"outputs":[{"name":"output","parameters":{"classification":3}}]}`), nil)
	require.Equal(t, 200, r.code, string(r.body))
	var ans struct {
		Outputs []struct {
			Datatype string   `json:"datatype"`
			Shape    []int64  `json:"shape"`
			Data     []string `json:"data"`
		} `json:"outputs"`
	}
	require.NoError(t, json.Unmarshal(r.body, &ans))
	require.Equal(t, "BYTES", ans.Outputs[0].Datatype)
	require.Equal(t, []int64{2, 3}, ans.Outputs[0].Shape)
	for row := range 2 {
		scores := want["output"].Data[row*10 : (row+1)*10]
		order := make([]int, 10)
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(scores[b], scores[a]) })
		for k, i := range order[:3] {
			got := strings.Split(ans.Outputs[0].Data[row*3+k], ":")
			require.Equal(t, strconv.Itoa(i), got[1], "row %d, class %d: %v", row, k, ans.Outputs[0].Data)
			v, err := strconv.ParseFloat(got[0], 64)
			require.NoError(t, err)
			require.InDelta(t, scores[i], v, 1e-5)
			if i < len(labels) {
				require.Equal(t, []string{got[0], got[1], labels[i]}, got)
			} else {
				require.Len(t, got, 2, "no label past the file's last line")
			}
		}
	}
}

// checkUploadedModel loads the mlp's file as a new model through Triton's
// load API with file overrides (tritonclient's load_model(files=...)):
// it serves the mlp's answers and is in the index until unloaded; a
// broken upload is refused and the model it named serves on.
func checkUploadedModel(t *testing.T, repo, base string, input, want []float32) {
	t.Helper()
	onnx, err := os.ReadFile(filepath.Join(repo, "mlp", "1", "model.onnx"))
	require.NoError(t, err)
	load := func(name string, params map[string]string) httpResult {
		body, err := json.Marshal(map[string]any{"parameters": params})
		require.NoError(t, err)
		return do(t, "POST", base+"/v2/repository/models/"+name+"/load", body, nil)
	}
	config := `{"max_batch_size": 8, "parameters": {"slo": {"string_value": "150ms"}}}`
	file := base64.StdEncoding.EncodeToString(onnx)

	r := load("sent", map[string]string{"file:3/model.onnx": file})
	require.Equal(t, 400, r.code, string(r.body))
	require.Contains(t, string(r.body), "must come with them in the config parameter")
	r = load("-sent", map[string]string{"config": config, "file:3/model.onnx": file})
	require.Equal(t, 400, r.code, string(r.body))
	require.Contains(t, string(r.body), "the name is not allowed for a model folder")
	r = load("sent", map[string]string{"config": config, "file:3/model.onnx": file})
	require.Equal(t, 200, r.code, string(r.body))
	strs := make([]string, len(input))
	for i, v := range input {
		strs[i] = strconv.FormatFloat(float64(v), 'g', -1, 32)
	}
	r = do(t, "POST", base+"/v2/models/sent/infer",
		[]byte(`{"inputs":[{"name":"input","shape":[1,784],"datatype":"FP32","data":[`+strings.Join(strs, ",")+`]}]}`), nil)
	require.Equal(t, 200, r.code, string(r.body))
	var ans struct {
		ModelVersion string `json:"model_version"`
		Outputs      []struct {
			Data []float32 `json:"data"`
		} `json:"outputs"`
	}
	require.NoError(t, json.Unmarshal(r.body, &ans))
	require.Equal(t, "3", ans.ModelVersion)
	requireClose(t, want, ans.Outputs[0].Data)
	r = do(t, "POST", base+"/v2/repository/index", nil, nil)
	require.Contains(t, string(r.body), `{"name":"sent","version":"3","state":"READY"}`)

	// A broken file for a served model: refused, saying why, and the
	// model serves on from the repository.
	r = load("mlp", map[string]string{"config": config, "file:1/model.onnx": base64.StdEncoding.EncodeToString([]byte("not onnx"))})
	require.Equal(t, 400, r.code, string(r.body))
	require.Contains(t, string(r.body), "invalid model: uploaded 1/model.onnx: ", "named as the request named it")
	require.Equal(t, 200, do(t, "GET", base+"/v2/models/mlp/ready", nil, nil).code)

	require.Equal(t, 200, do(t, "POST", base+"/v2/repository/models/sent/unload", nil, nil).code)
	require.Equal(t, 404, do(t, "GET", base+"/v2/models/sent", nil, nil).code)
	require.NotContains(t, string(do(t, "POST", base+"/v2/repository/index", nil, nil).body), `"sent"`)

	// The CLI sends a Triton model folder of this machine the same way.
	dir := filepath.Join(t.TempDir(), "carried")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "2"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "2", "model.onnx"), onnx, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.pbtxt"), []byte(`name: "carried"
platform: "onnxruntime_onnx"
max_batch_size: 4
parameters { key: "slo" value { string_value: "150ms" } }
`), 0o644))
	code, out, stderr := runCLI(t, "models", "load", "carried", "--url", base, "--from", dir)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "carried: ready\n", out)
	r = do(t, "GET", base+"/v2/models/carried", nil, nil)
	require.Equal(t, 200, r.code, string(r.body))
	require.Contains(t, string(r.body), `"versions":["2"]`)

	// And a folder of gpuletd's own, its settings in a config.yaml.
	require.NoError(t, os.Rename(filepath.Join(dir, "config.pbtxt"), filepath.Join(dir, "config.yaml")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.yaml"), []byte("slo: 140ms\nmax_batch_size: 2\n"), 0o644))
	code, out, stderr = runCLI(t, "models", "load", "carried", "--url", base, "--from", dir)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "carried: ready\n  version 2: SLO 150ms → 140ms (load request parameters)\n  version 2: max_batch_size 4 → 2\n", out,
		"what the load changed of what served")
	r = do(t, "GET", base+"/v2/models/carried/config", nil, nil)
	require.Equal(t, 200, r.code, string(r.body))
	require.Contains(t, string(r.body), `"max_batch_size":2`)
	require.Contains(t, string(r.body), `"slo_ms":140`)
}

// reshapedMLP is the modelzoo's mlp ([N,784] -> [N,10]) as Triton would
// serve it to clients that send 28x28 images and read a 2x5 answer:
// both reshaped.
const reshapedMLP = `name: "mlpimage"
platform: "onnxruntime_onnx"
max_batch_size: 32
input [ { name: "input", data_type: TYPE_FP32, dims: [ 1, 28, 28 ], reshape: { shape: [ 784 ] } } ]
output [ { name: "output", data_type: TYPE_FP32, dims: [ 2, 5 ], reshape: { shape: [ 10 ] } } ]
response_cache { enable: true }
`

// writeReshapedMLP adds mlpimage, the mlp's file with reshapedMLP.
func writeReshapedMLP(t *testing.T, repo string) {
	t.Helper()
	onnx, err := os.ReadFile(filepath.Join(repo, "mlp", "1", "model.onnx"))
	require.NoError(t, err)
	dir := filepath.Join(repo, "mlpimage")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "1"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "1", "model.onnx"), onnx, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.pbtxt"), []byte(reshapedMLP), 0o644))
}

// checkZooAnswers sends lenet5 and mlp inputs as JSON and as binary data and
// compares the answers with ONNX Runtime's on the same inputs.
func checkZooAnswers(t *testing.T, repo, base string) {
	t.Helper()

	lib, err := onnxrt.FindLibrary("")
	require.NoError(t, err)
	require.NoError(t, onnxrt.Init(lib))
	rng := rand.New(rand.NewPCG(5, 5))
	for _, tc := range []struct {
		model string
		shape []int64
	}{{"lenet5", []int64{2, 1, 28, 28}}, {"mlp", []int64{3, 784}}} {
		n := 1
		for _, d := range tc.shape {
			n *= int(d)
		}
		vals := make([]float32, n)
		for i := range vals {
			vals[i] = rng.Float32()*2 - 1
		}
		want, err := onnxrt.RunFloat32(filepath.Join(repo, tc.model, "1", "model.onnx"),
			map[string]onnxrt.Float32Tensor{"input": {Shape: tc.shape, Data: vals}}, 1)
		require.NoError(t, err)
		expect := want["output"].Data

		// JSON tensors.
		strs := make([]string, len(vals))
		for i, v := range vals {
			strs[i] = strconv.FormatFloat(float64(v), 'g', -1, 32)
		}
		shape := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(tc.shape)), ","), "[]")
		body := []byte(`{"inputs":[{"name":"input","shape":[` + shape + `],"datatype":"FP32","data":[` + strings.Join(strs, ",") + `]}]}`)
		r := do(t, "POST", base+"/v2/models/"+tc.model+"/infer", body, nil)
		require.Equal(t, 200, r.code, string(r.body))
		var out struct {
			Params  map[string]any `json:"parameters"`
			Outputs []struct {
				Shape []int64   `json:"shape"`
				Data  []float32 `json:"data"`
			} `json:"outputs"`
		}
		require.NoError(t, json.Unmarshal(r.body, &out))
		require.Nil(t, out.Params["emulated"], "the CPU engine runs the model")
		require.Equal(t, want["output"].Shape, out.Outputs[0].Shape)
		requireClose(t, expect, out.Outputs[0].Data)

		// Binary tensors both ways.
		raw := make([]byte, 4*len(vals))
		for i, v := range vals {
			le.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
		}
		head := `{"inputs":[{"name":"input","shape":[` + shape + `],"datatype":"FP32","parameters":{"binary_data_size":` + strconv.Itoa(len(raw)) + `}}],"parameters":{"binary_data_output":true}}`
		r = do(t, "POST", base+"/v2/models/"+tc.model+"/infer", append([]byte(head), raw...),
			map[string]string{"Inference-Header-Content-Length": strconv.Itoa(len(head))})
		require.Equal(t, 200, r.code, string(r.body))
		hl, err := strconv.Atoi(r.header.Get("Inference-Header-Content-Length"))
		require.NoError(t, err)
		got := make([]float32, (len(r.body)-hl)/4)
		for i := range got {
			got[i] = math.Float32frombits(le.LittleEndian.Uint32(r.body[hl+4*i:]))
		}
		requireClose(t, expect, got)
	}

	// Outputs JSON cannot carry: a client error that says to ask for
	// binary data, not a server failure; as binary data they arrive.
	huge := `{"inputs":[{"name":"input","shape":[1,784],"datatype":"FP32","data":[` + strings.Repeat("3e38,", 783) + `3e38]}]`
	r := do(t, "POST", base+"/v2/models/mlp/infer", []byte(huge+`}`), nil)
	require.Equal(t, 400, r.code, string(r.body))
	require.Contains(t, string(r.body), `ask for it as binary data (output parameters {\"binary_data\": true})`)
	r = do(t, "POST", base+"/v2/models/mlp/infer", []byte(huge+`,"outputs":[{"name":"output","parameters":{"binary_data":true}}]}`), nil)
	require.Equal(t, 200, r.code, string(r.body))
	hl, err := strconv.Atoi(r.header.Get("Inference-Header-Content-Length"))
	require.NoError(t, err)
	require.Len(t, r.body[hl:], 40, "ten FP32 values")
}

func requireClose(t *testing.T, want, got []float32) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		require.InDelta(t, want[i], got[i], 1e-4*math.Max(1, math.Abs(float64(want[i]))), "value %d", i)
	}
}

// TestCPUAndEmulatedDevicesTogether serves on the CPU and an emulated GPU at
// once: both are in the inventory and the plan places every model.
func TestCPUAndEmulatedDevicesTogether(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	repo := filepath.Join(t.TempDir(), "models")
	require.NoError(t, modelzoo.WriteRepository(repo, []string{"lenet5", "mlp"}, 3))
	// The test is about devices, not timing: SLOs a race build on a loaded
	// machine meets (the zoo's are a few ms).
	setProfile(t, repo, "lenet5", "alexnet", "200ms")
	setProfile(t, repo, "mlp", "alexnet", "200ms")
	addr, logs := startDaemon(t, daemonEnv(t, "GPULETD_MODEL_REPOSITORY="+repo,
		"GPULETD_DEVICES=[{kind: cpu}, {kind: emulated, profiles: igniter-v100, count: 1}]"))
	base := "http://" + addr
	require.Eventually(t, func() bool {
		return do(t, "GET", base+"/v2/models/lenet5/ready", nil, nil).code == 200 &&
			do(t, "GET", base+"/v2/models/mlp/ready", nil, nil).code == 200
	}, 2*time.Minute, 200*time.Millisecond, "logs:\n%s", logs)
	var st struct {
		Devices []struct {
			ID   string `json:"id"`
			Kind string `json:"kind"`
		} `json:"devices"`
		Plan struct {
			Schedulable bool `json:"schedulable"`
		} `json:"plan"`
		Gpulets []struct {
			ID     string       `json:"id"`
			Memory *adminMemory `json:"memory"`
		} `json:"gpulets"`
	}
	r := do(t, "GET", base+"/api/v1/status", nil, nil)
	require.NoError(t, json.Unmarshal(r.body, &st))
	require.NotEmpty(t, st.Gpulets)
	for _, g := range st.Gpulets {
		// An executor is a Go process with its models: MiBs at least.
		require.NotNil(t, g.Memory, g.ID)
		require.Greater(t, g.Memory.HostBytes, int64(4<<20), g.ID)
		require.Zero(t, g.Memory.DeviceBytes, "%s: no GPU here", g.ID)
	}
	kinds := map[string]bool{}
	for _, d := range st.Devices {
		kinds[d.Kind] = true
	}
	require.Equal(t, map[string]bool{"cpu": true, "emulated": true}, kinds)
	require.True(t, st.Plan.Schedulable)
	r = do(t, "POST", base+"/v2/models/lenet5/infer", lenetJSON(), nil)
	require.Equal(t, 200, r.code, string(r.body))
}

// TestANewModelFileServesAtOnce replaces a served model's file with one of
// other weights and loads it through the repository API, as an operator
// does with a retrained model: the load answers READY and requests get the
// new file's outputs at once, placed with the old file's profile (which the
// profile API says, with the command that measures the new file). It used
// to take the model out of service: no latency profile for the new file.
func TestANewModelFileServesAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	repo, base := cpuZooDaemon(t)
	outputs := func() []float32 {
		r := do(t, "POST", base+"/v2/models/mlp/infer", mlpJSON(1), nil)
		require.Equal(t, 200, r.code, string(r.body))
		var out struct {
			Outputs []struct {
				Data []float32 `json:"data"`
			} `json:"outputs"`
		}
		require.NoError(t, json.Unmarshal(r.body, &out))
		return out.Outputs[0].Data
	}
	sha := func() string {
		var doc struct {
			SHA256 string `json:"sha256"`
		}
		require.NoError(t, json.Unmarshal(do(t, "GET", base+"/api/v1/models/mlp", nil, nil).body, &doc))
		require.Len(t, doc.SHA256, 64)
		return doc.SHA256
	}
	before, oldSHA := outputs(), sha()

	other := t.TempDir()
	require.NoError(t, modelzoo.WriteRepository(other, []string{"mlp"}, 4))
	b, err := os.ReadFile(filepath.Join(other, "mlp", "1", "model.onnx"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(repo, "mlp", "1", "model.onnx"), b, 0o644))
	r := do(t, "POST", base+"/v2/repository/models/mlp/load", nil, nil)
	require.Equal(t, 200, r.code, string(r.body))
	require.JSONEq(t, `{"name": "mlp", "state": "READY", "changes": ["version 1: a new model file (sha256 `+sha()[:12]+`, was `+oldSHA[:12]+`)"]}`, string(r.body))

	require.NotEqual(t, oldSHA, sha())
	require.NotEqual(t, before, outputs(), "the new weights answer")
	var prof struct {
		Profiles []struct {
			DeviceType string `json:"device_type"`
			Borrowed   *struct {
				FromSHA256 string `json:"from_sha256"`
				Fix        string `json:"fix"`
			} `json:"borrowed"`
		} `json:"profiles"`
	}
	require.NoError(t, json.Unmarshal(do(t, "GET", base+"/api/v1/models/mlp/profile", nil, nil).body, &prof))
	require.Len(t, prof.Profiles, 1)
	require.NotNil(t, prof.Profiles[0].Borrowed)
	require.Equal(t, oldSHA, prof.Profiles[0].Borrowed.FromSHA256)
	require.Equal(t, "gpuletd profile mlp --device cpu", prof.Profiles[0].Borrowed.Fix)
}

// TestAModelLoadedWhileServingIsProfiledAndPlaced adds a model the daemon
// has no profile for while it serves others on the CPU, as an operator
// does, and loads it through the repository API: the load answers that it
// is being profiled, the daemon measures it beside the serving gpu-lets and
// places it, and the others serve throughout. It used to stay unplaced
// until an operator ran `gpuletd profile`.
func TestAModelLoadedWhileServingIsProfiledAndPlaced(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	repo, base := cpuZooDaemon(t)
	staging := t.TempDir()
	require.NoError(t, modelzoo.WriteRepository(staging, []string{"lenet5"}, 5)) // other weights: no profile
	setProfile(t, staging, "lenet5", "alexnet", "200ms")
	require.NoError(t, os.Rename(filepath.Join(staging, "lenet5"), filepath.Join(repo, "digits")))

	// An operator's load, waiting until it serves.
	code, out, stderr := runCLI(t, "models", "load", "digits", "--url", base, "--wait", "2m")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s\nevents:\n%s", out, stderr, eventMessages(t, base))
	// Why it does not serve yet, whenever that changes (the quick profile may
	// be over before the first look), then ready.
	require.Regexp(t, `^(digits: waiting for a gpu-let: (to be profiled|being profiled on cpu since [0-9:]+) \(a quick profile beside the serving gpu-lets\)[^\n]*\n)?(digits: [^\n]+\n)*digits: ready\n$`, out)
	require.Equal(t, 200, do(t, "GET", base+"/v2/models/mlp/ready", nil, nil).code, "the others serve on")
	body := []byte(`{"inputs":[{"name":"input","shape":[1,1,28,28],"datatype":"FP32","data":[` + strings.Repeat("0.5,", 783) + `0.5]}]}`)
	r := do(t, "POST", base+"/v2/models/digits/infer", body, nil)
	require.Equal(t, 200, r.code, string(r.body))
	require.Contains(t, eventMessages(t, base), "profiling digits on cpu beside the serving gpu-lets")
	var prof struct {
		Profiles []struct {
			DeviceType string            `json:"device_type"`
			Points     []json.RawMessage `json:"points"`
		} `json:"profiles"`
	}
	require.NoError(t, json.Unmarshal(do(t, "GET", base+"/api/v1/models/digits/profile", nil, nil).body, &prof))
	require.Len(t, prof.Profiles, 1)
	require.NotEmpty(t, prof.Profiles[0].Points, "measured and stored")
}

// TestARestartServesTheProfiledModelsAtOnce restarts the daemon on a
// repository one of whose models has no profile yet (added while it was
// down): the profiled models serve at once and the new one is measured
// beside them. It used to serve nothing until the new model was profiled
// (minutes on a GPU).
func TestARestartServesTheProfiledModelsAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	env, repo, _ := profileEnv(t, "lenet5", "mlp")
	setProfile(t, repo, "lenet5", "alexnet", "200ms")
	setProfile(t, repo, "mlp", "alexnet", "200ms")
	for _, m := range []string{"lenet5", "mlp"} {
		code, _, stderr := gpuletd(t, env, "profile", m, "--device", "cpu", "--batches", "1,2,4,8", "--max-time", "300ms", "--min-samples", "5")
		require.Zero(t, code, stderr)
	}
	staging := t.TempDir()
	require.NoError(t, modelzoo.WriteRepository(staging, []string{"lenet5"}, 5))
	setProfile(t, staging, "lenet5", "alexnet", "200ms")
	require.NoError(t, os.Rename(filepath.Join(staging, "lenet5"), filepath.Join(repo, "digits")))

	addr, logs := startDaemon(t, append(env, "GPULETD_LOG_LEVEL=info", "GPULETD_DEVICES=cpu"))
	base := "http://" + addr
	require.Eventually(t, func() bool { return do(t, "GET", base+"/v2/models/digits/ready", nil, nil).code == 200 },
		2*time.Minute, 250*time.Millisecond, "logs:\n%s", logs)
	evs := eventMessages(t, base)
	require.Contains(t, evs, "the profiled models serve at once; digits will be profiled beside them")
	first := strings.Index(evs, "plan applied: ")
	require.Positive(t, first, evs)
	firstPlan, _, _ := strings.Cut(evs[first:], "\n")
	require.Contains(t, firstPlan, "lenet5")
	require.Contains(t, firstPlan, "mlp")
	require.NotContains(t, firstPlan, "digits")
	require.Greater(t, strings.Index(evs, "profiled digits on cpu"), first, "the others served before digits was measured:\n%s", evs)
	require.NotContains(t, evs, "profiling lenet5", "the profiled models are not measured again")
}

// checkResponseCache sends mlpimage (which enables the response cache) the
// request it answered once already, twice more, and another request: the
// repeats are answered from the cache with the same answer, which its
// statistics and metrics count; the new one is not.
func checkResponseCache(t *testing.T, base, body string, want []float32) {
	t.Helper()
	for range 2 {
		requireImageAnswer(t, do(t, "POST", base+"/v2/models/mlpimage/infer", []byte(body), nil), want)
	}
	other := strings.Replace(body, `"data":[`, `"data":[0.5,`, 1)
	other = other[:strings.LastIndex(other, ",")] + "]}]}" // one value in, the last out
	r := do(t, "POST", base+"/v2/models/mlpimage/infer", []byte(other), nil)
	require.Equal(t, 200, r.code, string(r.body))

	s := statsOf(t, base, "mlpimage")
	require.Equal(t, int64(4), s.InferenceCount, "the two misses' rows ran, 2 each; a hit is no inference, as in Triton")
	require.Equal(t, int64(2), s.InferenceStats["cache_hit"].Count, "%+v", s)
	require.Equal(t, int64(2), s.InferenceStats["cache_miss"].Count, "%+v", s)
	require.Equal(t, int64(2), s.InferenceStats["compute_infer"].Count, "only misses ran: %+v", s)
	require.Equal(t, int64(2), s.InferenceStats["compute_input"].Count, "Triton's compute_input and compute_output, for the misses: %+v", s)
	require.Equal(t, int64(2), s.InferenceStats["compute_output"].Count, "%+v", s)

	r = do(t, "GET", base+"/metrics", nil, nil)
	require.Equal(t, 200, r.code)
	require.Contains(t, string(r.body), `gpuletd_response_cache_hits_total{model="mlpimage"} 2`)
	require.Contains(t, string(r.body), `gpuletd_response_cache_misses_total{model="mlpimage"} 2`)
	require.Contains(t, string(r.body), "gpuletd_response_cache_entries 2")
	require.Contains(t, string(r.body), "gpuletd_response_cache_budget_bytes 1.048576e+06")

	// gpuletd load with four distinct requests in turn: the first of each
	// misses, every later one hits.
	code, out, stderr := runCLI(t, "load", "--url", base, "--model", "mlpimage", "--inputs", "4", "--arrival", "closed", "--duration", "1s", "--json")
	require.Equal(t, 0, code, stderr)
	var load struct {
		Report struct {
			Sent, OK int64
		} `json:"report"`
		CacheHits map[string]int64      `json:"cache_hits"`
		Server    map[string]serverSide `json:"server"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &load))
	require.Greater(t, load.Report.Sent, int64(4), out)
	require.Equal(t, load.Report.Sent, load.Report.OK, out)
	require.Equal(t, map[string]int64{"mlpimage": load.Report.Sent - 4}, load.CacheHits, "the run says the cache answered")
	side := load.Server["mlpimage"]
	require.Equal(t, load.Report.OK, side.Answers, "the server's count of the run's answers")
	require.Equal(t, load.Report.Sent-4, side.CacheHits)
	require.Equal(t, int64(4), side.Inferences, "the four misses ran, a row each")
	require.Positive(t, side.InferNS)

	var models []adminModel
	r = do(t, "GET", base+"/api/v1/models", nil, nil)
	require.Equal(t, 200, r.code)
	require.NoError(t, json.Unmarshal(r.body, &models))
	for _, m := range models {
		if m.Name == "mlpimage" {
			require.NotNil(t, m.Cache)
			require.Equal(t, 2+load.Report.Sent-4, m.Cache.Hits)
			require.Equal(t, int64(2+4), m.Cache.Misses)
		} else {
			require.Nil(t, m.Cache, m.Name)
		}
	}

	r = do(t, "GET", base+"/api/v1/status", nil, nil)
	require.Equal(t, 200, r.code)
	require.Contains(t, string(r.body), `"response_cache":{"budget_bytes":1048576,`)

	// The model's configuration says so, as Triton's does.
	r = do(t, "GET", base+"/v2/models/mlpimage/config", nil, nil)
	require.Equal(t, 200, r.code)
	require.Contains(t, string(r.body), `"response_cache":{"enable":true}`)
}

// requireImageAnswer checks mlpimage's answer to two images: 2x5 scores
// each, close to want.
func requireImageAnswer(t *testing.T, r httpResult, want []float32) {
	t.Helper()
	require.Equal(t, 200, r.code, string(r.body))
	var ans struct {
		Outputs []struct {
			Shape []int64   `json:"shape"`
			Data  []float32 `json:"data"`
		} `json:"outputs"`
	}
	require.NoError(t, json.Unmarshal(r.body, &ans))
	require.Equal(t, []int64{2, 2, 5}, ans.Outputs[0].Shape)
	requireClose(t, want, ans.Outputs[0].Data)
}
