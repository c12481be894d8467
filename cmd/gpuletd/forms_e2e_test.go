package main

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/kserve"
	"github.com/gpulet/gpuletd/modelzoo"
)

// formCase is one request to a form model: the inputs as a client sends
// them (the configured dims) and as the model file takes them (after
// reshape), and the shape each output reaches the client in.
type formCase struct {
	model   string
	version int // 0: the model's newest, at /v2/models/<model>

	request   []tensor.Tensor
	file      map[string]tensor.Tensor
	outShapes map[string][]int64
}

// TestTritonFormsServe serves a Triton repository of the modelzoo's form
// models (no batching, a scalar input and output via reshape, a dynamic
// dimension that is not first, an image of any size whose model does not
// run at 1x1, FP16, BF16, INT64 and strings) with only
// config.pbtxt files and GPULETD_DEFAULT_SLO, and checks that every answer,
// as JSON and as binary data, equals ONNX Runtime's on the same inputs.
func TestTritonFormsServe(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	repo := filepath.Join(t.TempDir(), "models")
	require.NoError(t, modelzoo.WriteRepository(repo, modelzoo.FormModels(), 3, modelzoo.AsTriton()))
	// mlp16 in two versions (other weights), both served.
	v2, err := modelzoo.BuildBytes("mlp16", 4)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(repo, "mlp16", "2"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(repo, "mlp16", "2", "model.onnx"), v2, 0o644))
	appendFile(t, filepath.Join(repo, "mlp16", "config.pbtxt"), "version_policy: { all: { } }\n")
	addr, logs := startDaemon(t, daemonEnv(t, "GPULETD_MODEL_REPOSITORY="+repo, "GPULETD_DEVICES=cpu", "GPULETD_DEFAULT_SLO=200ms"))
	base := "http://" + addr
	require.Eventually(t, func() bool {
		for _, m := range modelzoo.FormModels() {
			if do(t, "GET", base+"/v2/models/"+m+"/ready", nil, nil).code != 200 {
				return false
			}
		}
		return true
	}, 2*time.Minute, 200*time.Millisecond, "logs:\n%s", logs)
	lib, err := onnxrt.FindLibrary("")
	require.NoError(t, err)
	require.NoError(t, onnxrt.Init(lib))

	for _, tc := range formCases(t) {
		t.Run(fmt.Sprintf("%s%v@%d", tc.model, tc.request[0].Shape, tc.version), func(t *testing.T) {
			version, url := tc.version, base+"/v2/models/"+tc.model+"/infer"
			if version == 0 {
				version = 1
				if tc.model == "mlp16" {
					version = 2
				}
			} else {
				url = fmt.Sprintf("%s/v2/models/%s/versions/%d/infer", base, tc.model, version)
			}
			ref, err := onnxrt.Run(filepath.Join(repo, tc.model, strconv.Itoa(version), "model.onnx"), tc.file, 1)
			require.NoError(t, err)
			for i := range ref {
				ref[i].Shape = tc.outShapes[ref[i].Name]
			}
			want := jsonOutputs(t, ref)

			r := do(t, "POST", url, jsonRequest(t, tc.request), nil)
			require.Equal(t, 200, r.code, string(r.body))
			var ans struct {
				Name    string           `json:"model_name"`
				Version string           `json:"model_version"`
				Outputs []map[string]any `json:"outputs"`
			}
			require.NoError(t, json.Unmarshal(r.body, &ans))
			require.Equal(t, tc.model, ans.Name)
			require.Equal(t, strconv.Itoa(version), ans.Version)
			requireSameOutputs(t, want, ans.Outputs)

			body, n := binaryRequest(t, tc.request)
			r = do(t, "POST", url, body,
				map[string]string{"Inference-Header-Content-Length": strconv.Itoa(n)})
			require.Equal(t, 200, r.code, string(r.body))
			requireSameOutputs(t, want, jsonOutputs(t, binaryOutputs(t, r)))
		})
	}

	// Both versions of mlp16 are served, and say so.
	r := do(t, "GET", base+"/v2/models/mlp16", nil, nil)
	require.Equal(t, 200, r.code, string(r.body))
	var meta struct {
		Name     string   `json:"name"`
		Versions []string `json:"versions"`
	}
	require.NoError(t, json.Unmarshal(r.body, &meta))
	require.Equal(t, "mlp16", meta.Name)
	require.Equal(t, []string{"1", "2"}, meta.Versions)
	require.Equal(t, 200, do(t, "GET", base+"/v2/models/mlp16/versions/1/ready", nil, nil).code)
	r = do(t, "POST", base+"/v2/models/mlp16/versions/7/infer", []byte(`{"inputs":[]}`), nil)
	require.Equal(t, 404, r.code, string(r.body))
	require.Contains(t, string(r.body), "versions [1 2] are served")
	// gpuletd infer and load ask the version given (perf_analyzer's -x).
	for _, v := range []string{"1", "2"} {
		code, out, stderr := runCLI(t, "infer", "mlp16", "--url", base, "--model-version", v)
		require.Equal(t, 0, code, stderr)
		require.Regexp(t, `^model +mlp16 \(version `+v+`\), answered in `, out)
	}
	code, _, stderr := runCLI(t, "infer", "mlp16", "--url", base, "-x", "7")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "versions [1 2] are served")
	stats := func(v string) int64 {
		var s kserve.StatisticsResponse
		require.NoError(t, json.Unmarshal(do(t, "GET", base+"/v2/models/mlp16/versions/"+v+"/stats", nil, nil).body, &s))
		require.Len(t, s.ModelStats, 1)
		return s.ModelStats[0].InferenceCount
	}
	before1, before2 := stats("1"), stats("2")
	code, out, stderr := runCLI(t, "load", "mlp16", "--url", base, "--model-version", "1", "--rate", "30", "--duration", "1s")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "target        mlp16 version 1 at ")
	require.Greater(t, stats("1"), before1+10, "version 1 answered the load")
	require.Equal(t, before2, stats("2"), "version 2 answered none of it")
	code, out, stderr = runCLI(t, "models", "show", "mlp16:1", "--url", base)
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `(?m)^batches +\d+ rows? ×\d+`, out, "the batches of version 1, not of the newest")
	code, _, stderr = runCLI(t, "load", "mlp16", "vad", "--url", base, "--model-version", "1", "--rate", "30")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "--model-version 1 is a version of one model, and 2 are given")

	// Wrong forms are the client's error, naming the tensor.
	for _, bad := range []struct{ model, body, want string }{
		{"vad", `{"inputs":[{"name":"input","shape":[1,2],"datatype":"FP32","data":[1,2]},` +
			`{"name":"state","shape":[2,1,16],"datatype":"FP32","data":[` + zeros(32) + `]},` +
			`{"name":"sr","shape":[],"datatype":"INT64","data":[16000]}]}`, `input \"sr\" has shape [], the model takes [1]`},
		{"mlp16", `{"inputs":[{"name":"input","shape":[1,16],"datatype":"FP32","data":[` + zeros(16) + `]}]}`, `input \"input\" is FP32, the model takes FP16`},
		{"words", `{"inputs":[{"name":"text","shape":[1],"datatype":"BYTES","data":["a\u0000b"]}]}`, `zero byte`},
		{"words", `{"inputs":[{"name":"text","shape":[2],"datatype":"BYTES","data":["a", 1]}]}`, `BYTES data holds strings`},
	} {
		r := do(t, "POST", base+"/v2/models/"+bad.model+"/infer", []byte(bad.body), nil)
		require.Equal(t, 400, r.code, "%s: %s", bad.model, r.body)
		require.Contains(t, string(r.body), bad.want)
	}

	// gpuletd load generates every form, strings included, as JSON and
	// as binary tensors.
	for _, args := range [][]string{{"--model", "words,mlp16,vad"}, {"--model", "words", "--binary"}} {
		code, out, stderr := runCLI(t, append([]string{"load", "--url", base, "--rate", "30", "--duration", "1s", "--json"}, args...)...)
		require.Equal(t, 0, code, stderr)
		type counts struct {
			Sent   int64            `json:"sent"`
			OK     int64            `json:"ok"`
			Failed map[string]int64 `json:"failed"`
		}
		var got struct{ Report, Total *counts }
		require.NoError(t, json.Unmarshal([]byte(out), &got))
		c := cmp.Or(got.Total, got.Report)
		require.NotNil(t, c, out)
		require.Positive(t, c.Sent)
		require.Empty(t, c.Failed, "every request answered: %s", out)
		require.Equal(t, c.Sent, c.OK)
	}
}

func formCases(t *testing.T) []formCase {
	t.Helper()
	must := func(x tensor.Tensor, err error) tensor.Tensor {
		t.Helper()
		require.NoError(t, err)
		return x
	}
	floats := func(n int, scale float32) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = scale * float32(i%7-3)
		}
		return v
	}
	sr := binary.LittleEndian.AppendUint64(nil, 8000)
	var cases []formCase
	for _, steps := range []int64{5, 9} { // the dynamic dimension is the second
		audio := must(tensor.FromFloat32s("input", []int64{1, steps}, floats(int(steps), 0.1)))
		state := must(tensor.FromFloat32s("state", []int64{2, 1, 16}, floats(32, 0.05)))
		cases = append(cases, formCase{
			model:   "vad",
			request: []tensor.Tensor{audio, state, must(tensor.New("sr", tensor.Int64, []int64{1}, sr))},
			file: map[string]tensor.Tensor{"input": audio, "state": state,
				"sr": must(tensor.New("sr", tensor.Int64, []int64{}, sr))},
			outShapes: map[string][]int64{"output": {1, 1}, "stateN": {2, 1, 16}},
		})
	}
	half := make([]byte, 0, 3*16*2)
	for _, f := range floats(3*16, 0.25) {
		half = binary.LittleEndian.AppendUint16(half, halfOf(f))
	}
	x := must(tensor.New("input", tensor.FP16, []int64{3, 16}, half))
	for _, v := range []int{0, 1, 2} {
		cases = append(cases, formCase{
			model: "mlp16", version: v, request: []tensor.Tensor{x}, file: map[string]tensor.Tensor{"input": x},
			outShapes: map[string][]int64{"output": {3, 4}, "output_bf16": {3, 4}},
		})
	}
	for _, hw := range [][2]int64{{32, 32}, {9, 14}} { // of any height and width, from 5x5
		img := must(tensor.FromFloat32s("frames", []int64{2, 3, hw[0], hw[1]}, floats(int(2*3*hw[0]*hw[1]), 0.1)))
		cases = append(cases, formCase{
			model: "frames", request: []tensor.Tensor{img}, file: map[string]tensor.Tensor{"frames": img},
			outShapes: map[string][]int64{"features": {2, 4}},
		})
	}
	var text []byte
	for _, w := range []string{"hello", "", `a,b "quoted"`, "Grüße", "x"} {
		text = tensor.AppendBytesElement(text, []byte(w))
	}
	words := must(tensor.New("text", tensor.Bytes, []int64{5}, text))
	cases = append(cases, formCase{
		model: "words", request: []tensor.Tensor{words}, file: map[string]tensor.Tensor{"text": words},
		outShapes: map[string][]int64{"upper": {5}, "count": {1}},
	})
	return cases
}

// halfOf encodes a float32 that FP16 holds exactly (multiples of 1/4 up to
// ±1 here).
func halfOf(f float32) uint16 {
	if f == 0 {
		return 0
	}
	b := math.Float32bits(f)
	return uint16(b>>31)<<15 | uint16(int((b>>23)&0xff)-127+15)<<10 | uint16((b>>13)&0x3ff)
}

// zeros is n zeros as JSON array elements.
func zeros(n int) string { return strings.Repeat("0,", n-1) + "0" }

// jsonOutputs is the protocol's JSON form of tensors, as "outputs" entries.
func jsonOutputs(t *testing.T, ts []tensor.Tensor) []map[string]any {
	t.Helper()
	outs := make([]kserve.Output, len(ts))
	for i, x := range ts {
		outs[i] = kserve.Output{Tensor: x}
	}
	encoded, err := kserve.EncodeResponse(kserve.InferResponseJSON{ModelName: "m"}, outs)
	require.NoError(t, err)
	body := encoded.Bytes()
	var ans struct {
		Outputs []map[string]any `json:"outputs"`
	}
	require.NoError(t, json.Unmarshal(body, &ans))
	return ans.Outputs
}

// jsonRequest writes tensors as a JSON inference request: a tensor's JSON
// form is the same in requests and answers.
func jsonRequest(t *testing.T, ts []tensor.Tensor) []byte {
	t.Helper()
	body, err := json.Marshal(map[string]any{"inputs": jsonOutputs(t, ts)})
	require.NoError(t, err)
	return body
}

// binaryRequest writes tensors as binary data and asks for binary answers.
func binaryRequest(t *testing.T, ts []tensor.Tensor) ([]byte, int) {
	t.Helper()
	ins := make([]map[string]any, len(ts))
	var data []byte
	for i, x := range ts {
		ins[i] = map[string]any{"name": x.Name, "shape": x.Shape, "datatype": x.DataType,
			"parameters": map[string]any{"binary_data_size": len(x.Data)}}
		data = append(data, x.Data...)
	}
	head, err := json.Marshal(map[string]any{"inputs": ins, "parameters": map[string]any{"binary_data_output": true}})
	require.NoError(t, err)
	return append(head, data...), len(head)
}

// binaryOutputs reads an answer whose outputs are all binary data.
func binaryOutputs(t *testing.T, r httpResult) []tensor.Tensor {
	t.Helper()
	n, err := strconv.Atoi(r.header.Get("Inference-Header-Content-Length"))
	require.NoError(t, err)
	var head struct {
		Outputs []struct {
			Name       string         `json:"name"`
			Shape      []int64        `json:"shape"`
			DataType   string         `json:"datatype"`
			Parameters map[string]int `json:"parameters"`
		} `json:"outputs"`
	}
	require.NoError(t, json.Unmarshal(r.body[:n], &head))
	rest := r.body[n:]
	out := make([]tensor.Tensor, len(head.Outputs))
	for i, o := range head.Outputs {
		size := o.Parameters["binary_data_size"]
		x, err := tensor.New(o.Name, tensor.DataType(o.DataType), o.Shape, rest[:size])
		require.NoError(t, err)
		out[i], rest = x, rest[size:]
	}
	require.Empty(t, rest)
	return out
}

// requireSameOutputs compares JSON outputs: names, shapes and types
// exactly, numbers to float rounding, strings exactly.
func requireSameOutputs(t *testing.T, want, got []map[string]any) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		require.Equal(t, want[i]["name"], got[i]["name"])
		require.Equal(t, want[i]["shape"], got[i]["shape"], want[i]["name"])
		require.Equal(t, want[i]["datatype"], got[i]["datatype"], want[i]["name"])
		wd, gd := want[i]["data"].([]any), got[i]["data"].([]any)
		require.Len(t, gd, len(wd), want[i]["name"])
		for k := range wd {
			if w, ok := wd[k].(float64); ok {
				require.InDelta(t, w, gd[k], 1e-3*math.Max(1, math.Abs(w)), "%s[%d]", want[i]["name"], k)
				continue
			}
			require.Equal(t, wd[k], gd[k], "%s[%d]", want[i]["name"], k)
		}
	}
}

func appendFile(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(text)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}
