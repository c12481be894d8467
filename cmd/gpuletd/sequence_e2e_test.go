package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"

	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/executor/tensor"
	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
	"github.com/gpulet/gpuletd/modelzoo"
)

// sequenceBody is a REST request of the running sum in sequence id.
func sequenceBody(id any, start, end bool, vals [4]float32) []byte {
	b, _ := json.Marshal(map[string]any{
		"parameters": map[string]any{"sequence_id": id, "sequence_start": start, "sequence_end": end},
		"inputs":     []map[string]any{{"name": "INPUT", "shape": []int{1, 4}, "datatype": "FP32", "data": vals[:]}},
	})
	return b
}

// sequenceAnswer is a REST answer's running sum and correlation ID.
func sequenceAnswer(t *testing.T, r httpResult) ([]float32, uint64) {
	t.Helper()
	require.Equal(t, 200, r.code, string(r.body))
	var resp struct {
		Outputs []struct {
			Name string            `json:"name"`
			Data []json.RawMessage `json:"data"`
		} `json:"outputs"`
	}
	require.NoError(t, json.Unmarshal(r.body, &resp))
	require.Len(t, resp.Outputs, 2, "the state output is kept, not answered: %s", r.body)
	var sum []float32
	var id uint64
	for _, o := range resp.Outputs {
		switch o.Name {
		case "OUTPUT":
			for _, d := range o.Data {
				var v float32
				require.NoError(t, json.Unmarshal(d, &v))
				sum = append(sum, v)
			}
		case "SEQUENCE":
			require.NoError(t, json.Unmarshal(o.Data[0], &id))
		default:
			t.Fatalf("unexpected output %q", o.Name)
		}
	}
	return sum, id
}

// TestStatefulModelServesSequences serves the modelzoo's running sum, a
// stateful model with Triton's sequence batching (a start control, a
// correlation ID control and a state), and sends sequences over REST and
// gRPC: each answer is the sum of its sequence's inputs so far, as ONNX
// Runtime computes it from the state gpuletd carried, with the sequence's
// correlation ID; sequences sent side by side keep apart; requests that
// do not fit a sequence are refused saying why.
func TestStatefulModelServesSequences(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	repo := filepath.Join(t.TempDir(), "models")
	require.NoError(t, modelzoo.WriteRepository(repo, []string{modelzoo.SequenceModel}, 3, modelzoo.AsTriton()))
	// A generous SLO: the stream below queues each sequence's eight
	// requests behind one another, and this checks answers, not timing.
	cfgFile := filepath.Join(repo, modelzoo.SequenceModel, "config.pbtxt")
	cfgText, err := os.ReadFile(cfgFile)
	require.NoError(t, err)
	require.Contains(t, string(cfgText), `string_value: "20ms"`)
	require.NoError(t, os.WriteFile(cfgFile, []byte(strings.Replace(string(cfgText), `string_value: "20ms"`, `string_value: "1s"`, 1)), 0o644))
	grpcAddr := freeAddr(t)
	addr, logs := startDaemon(t, daemonEnv(t, "GPULETD_MODEL_REPOSITORY="+repo, "GPULETD_GRPC_LISTEN="+grpcAddr))
	base := "http://" + addr
	model := base + "/v2/models/" + modelzoo.SequenceModel
	require.Eventually(t, func() bool { return do(t, "GET", model+"/ready", nil, nil).code == 200 },
		2*time.Minute, 200*time.Millisecond, "logs:\n%s", logs)

	// The metadata and configuration show the request's tensors; the
	// configuration says how the sequence is batched.
	meta := do(t, "GET", model, nil, nil)
	require.Equal(t, 200, meta.code)
	require.Contains(t, string(meta.body), `"inputs":[{"name":"INPUT","datatype":"FP32","shape":[-1,4]}]`)
	require.NotContains(t, string(meta.body), "ACC")
	cfg := do(t, "GET", model+"/config", nil, nil)
	require.Contains(t, string(cfg.body), `"sequence_batching":{`)
	require.Contains(t, string(cfg.body), `"kind":"CONTROL_SEQUENCE_CORRID"`)
	require.NotContains(t, string(cfg.body), "dynamic_batching")

	// The first answer equals ONNX Runtime's with the start set, a zero
	// state and the correlation ID.
	lib, err := onnxrt.FindLibrary("")
	require.NoError(t, err)
	require.NoError(t, onnxrt.Init(lib))
	in, err := tensor.FromFloat32s("INPUT", []int64{1, 4}, []float32{1, 2, 3, 4})
	require.NoError(t, err)
	start, err := tensor.FromFloat32s("START", []int64{1, 1}, []float32{1})
	require.NoError(t, err)
	acc, err := tensor.Zeros("ACC", tensor.FP32, []int64{1, 4})
	require.NoError(t, err)
	corrid, err := tensor.New("CORRID", tensor.Uint64, []int64{1, 1}, []byte{0xe9, 3, 0, 0, 0, 0, 0, 0})
	require.NoError(t, err)
	ref, err := onnxrt.Run(filepath.Join(repo, modelzoo.SequenceModel, "1", "model.onnx"),
		map[string]tensor.Tensor{"INPUT": in, "START": start, "ACC": acc, "CORRID": corrid}, 1)
	require.NoError(t, err)
	want, err := ref[0].Float32s()
	require.NoError(t, err)
	sum, id := sequenceAnswer(t, do(t, "POST", model+"/infer", sequenceBody(1001, true, false, [4]float32{1, 2, 3, 4}), nil))
	require.Equal(t, want, sum)
	require.Equal(t, uint64(1001), id)

	// The sequence goes on over gRPC: the state is the daemon's, not a
	// connection's.
	c, ctx := inferenceClient(t, grpcAddr, time.Minute)
	grpcReq := func(id uint64, start, end bool) *pb.ModelInferRequest {
		r := fp32Request(modelzoo.SequenceModel, "g", []int64{1, 4}, []float32{1, 1, 1, 1}, true)
		r.Inputs[0].Name = "INPUT"
		r.Parameters = map[string]*pb.InferParameter{
			"sequence_id":    {ParameterChoice: &pb.InferParameter_Uint64Param{Uint64Param: id}},
			"sequence_start": {ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: start}},
			"sequence_end":   {ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: end}},
		}
		return r
	}
	res, err := c.ModelInfer(ctx, grpcReq(1001, false, false))
	require.NoError(t, err)
	require.Len(t, res.Outputs, 2)
	require.Equal(t, "OUTPUT", res.Outputs[0].Name)
	require.Equal(t, []float32{2, 3, 4, 5}, fp32s(res.RawOutputContents[0]))
	_, err = c.ModelInfer(ctx, grpcReq(5, false, false))
	requireCode(t, err, codes.InvalidArgument, "sequence 5 is not live")
	noID := grpcReq(0, true, false)
	_, err = c.ModelInfer(ctx, noID)
	requireCode(t, err, codes.InvalidArgument, "give the request's sequence with the parameter sequence_id")

	// On a stream, as tritonclient's async_stream_infer sends them, a
	// sequence's requests go out back to back and run in the order sent.
	checkSequencesOnAStream(ctx, t, c)

	// Its end answers and ends it.
	sum, _ = sequenceAnswer(t, do(t, "POST", model+"/infer", sequenceBody(1001, false, true, [4]float32{10, 10, 10, 10}), nil))
	require.Equal(t, []float32{12, 13, 14, 15}, sum)
	r := do(t, "POST", model+"/infer", sequenceBody(1001, false, false, [4]float32{1, 1, 1, 1}), nil)
	require.Equal(t, 400, r.code)
	require.Contains(t, string(r.body), "sequence 1001 is not live: it never started, ended (sequence_end)")

	// Sequences sent side by side, one request after another in each,
	// batch together and keep their own sums.
	const sequences, steps = 6, 8
	errs := make(chan error, sequences)
	var wg sync.WaitGroup
	for s := range sequences {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := 2000 + s
			var total float32
			for k := range steps {
				v := float32(s*100 + k)
				total += v
				resp, err := http.Post(model+"/infer", "application/json", bytes.NewReader(sequenceBody(id, k == 0, k == steps-1, [4]float32{v, v, v, v})))
				if err != nil {
					errs <- err
					return
				}
				body, err := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				if err != nil || resp.StatusCode != 200 {
					errs <- fmt.Errorf("%d step %d: %d %s %v", id, k, resp.StatusCode, body, err)
					return
				}
				if !strings.Contains(string(body), fmt.Sprintf(`"data":[%g,%g,%g,%g]`, total, total, total, total)) {
					errs <- fmt.Errorf("%d step %d: want the sum %g: %s", id, k, total, body)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	// A sequence left open is counted live; requests that do not fit one
	// are refused saying why.
	sequenceAnswer(t, do(t, "POST", model+"/infer", sequenceBody(7, true, false, [4]float32{1, 1, 1, 1}), nil))
	for _, tc := range []struct{ body, want string }{
		{`{"inputs":[{"name":"INPUT","shape":[1,4],"datatype":"FP32","data":[1,1,1,1]}]}`, "give the request's sequence with the parameter sequence_id"},
		{`{"parameters":{"sequence_id":"call-9","sequence_start":true},"inputs":[{"name":"INPUT","shape":[1,4],"datatype":"FP32","data":[1,1,1,1]}]}`, `sequence_id \"call-9\" is a string, but the model's correlation ID input \"CORRID\" takes a number`},
		{`{"parameters":{"sequence_id":7},"inputs":[{"name":"INPUT","shape":[2,4],"datatype":"FP32","data":[1,1,1,1,1,1,1,1]}]}`, "a request of a sequence is one row"},
		{`{"parameters":{"sequence_id":7},"inputs":[{"name":"INPUT","shape":[1,4],"datatype":"FP32","data":[1,1,1,1]},{"name":"ACC","shape":[1,4],"datatype":"FP32","data":[1,1,1,1]}]}`, `input \"ACC\" is the model's sequence state, which gpuletd gives it`},
	} {
		r := do(t, "POST", model+"/infer", []byte(tc.body), nil)
		require.Equal(t, 400, r.code, string(r.body))
		require.Contains(t, string(r.body), tc.want)
	}
	sum, _ = sequenceAnswer(t, do(t, "POST", model+"/infer", sequenceBody(7, false, false, [4]float32{2, 2, 2, 2}), nil))
	require.Equal(t, []float32{3, 3, 3, 3}, sum, "refused requests leave the state as it was")

	st := do(t, "GET", base+"/api/v1/status", nil, nil)
	require.Contains(t, string(st.body), `"sequences":{"live":1,`)
	metrics := do(t, "GET", base+"/metrics", nil, nil)
	require.Contains(t, string(metrics.body), `gpuletd_model_live_sequences{model="running-sum"} 1`)
	lintMetrics(t, metrics.body)

	// gpuletd infer places its request in a sequence, over either protocol.
	code, out, stderr := runCLI(t, "infer", modelzoo.SequenceModel, "--url", base, "--sequence-id", "77", "--sequence-start", "--input-data", "zero")
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `SEQUENCE +UINT64 \[1 1\] +77\n`, out)
	code, out, stderr = runCLI(t, "infer", modelzoo.SequenceModel, "--url", base, "--grpc", grpcAddr, "--sequence-id", "77", "--sequence-end")
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `SEQUENCE +UINT64 \[1 1\] +77\n`, out)
	code, _, stderr = runCLI(t, "infer", modelzoo.SequenceModel, "--url", base, "--grpc", grpcAddr, "--sequence-id", "77")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "sequence 77 is not live")

	// A pipeline whose step is the running sum runs it in the pipeline
	// request's sequence.
	checkPipelineOfAStatefulModel(t, base, repo)

	// A folder whose state starts from a file (initial_state/), loaded
	// from another place with its files: the start control set to 0 for
	// either value keeps the state the file gives.
	checkInitialStateFromAFile(t, base, repo)

	// gpuletd load sends a stateful model's requests in sequences, over
	// either protocol, and every one is answered: with perf_analyzer's
	// lengths that vary and IDs from a range as small as the sequences
	// live, none taken twice at once.
	for _, via := range [][]string{nil, {"--grpc", grpcAddr}} {
		args := append([]string{"load", modelzoo.SequenceModel, "--url", base, "--arrival", "closed", "--concurrency", "3",
			"--duration", "2s", "--sequence-length", "5", "--sequence-length-variation", "40", "--sequence-id-range", "500:503",
			"--min-attainment", "0.01", "--json"}, via...)
		code, out, stderr := runCLI(t, args...)
		require.Equal(t, 0, code, stderr)
		var doc struct {
			Report struct {
				Sequences      int     `json:"sequences"`
				SequenceLength int     `json:"sequence_length"`
				Variation      float64 `json:"sequence_length_variation"`
				IDStart        uint64  `json:"sequence_id_start"`
				IDEnd          uint64  `json:"sequence_id_end"`
				Sent           int64   `json:"sent"`
				OK             int64   `json:"ok"`
			} `json:"report"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &doc), out)
		rep := doc.Report
		require.Equal(t, 3, rep.Sequences, out)
		require.Equal(t, 5, rep.SequenceLength)
		require.Equal(t, []any{0.4, uint64(500), uint64(503)}, []any{rep.Variation, rep.IDStart, rep.IDEnd})
		require.Positive(t, rep.OK)
		require.Equal(t, rep.Sent, rep.OK, "%v: %s", via, out)
	}

	// perf_analyzer's data streams: each sequence sends the next stream's
	// requests in order, over either protocol, every one answered.
	streams := filepath.Join(t.TempDir(), "streams.json")
	require.NoError(t, os.WriteFile(streams, []byte(`{"data": [[{"INPUT": [1, 1, 1, 1]}, {"INPUT": [2, 2, 2, 2]}, {"INPUT": [3, 3, 3, 3]}], [{"INPUT": [5, 5, 5, 5]}]]}`), 0o600))
	for _, via := range [][]string{nil, {"--grpc", grpcAddr}} {
		args := append([]string{"load", modelzoo.SequenceModel, "--url", base, "--arrival", "closed", "--concurrency", "2",
			"--duration", "1s", "--input-data", streams, "--min-attainment", "0.01", "--json"}, via...)
		code, out, stderr := runCLI(t, args...)
		require.Equal(t, 0, code, stderr)
		var doc struct {
			Report struct {
				Sent int64 `json:"sent"`
				OK   int64 `json:"ok"`
			} `json:"report"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &doc), out)
		require.Positive(t, doc.Report.OK)
		require.Equal(t, doc.Report.Sent, doc.Report.OK, "%v: %s", via, out)
	}
	code, _, stderr = runCLI(t, "load", modelzoo.SequenceModel, "--url", base, "--input-data", streams, "--sequence-length", "4")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "the data file's streams are the sequences")
}

// checkSequencesOnAStream sends four sequences of eight requests each over
// one ModelStreamInfer stream without waiting for answers, interleaved, and
// checks every answer is its sequence's sum so far.
func checkSequencesOnAStream(ctx context.Context, t *testing.T, c pb.GRPCInferenceServiceClient) {
	t.Helper()
	stream, err := c.ModelStreamInfer(ctx)
	require.NoError(t, err)
	const sequences, steps = 4, 8
	want := map[string]float32{}
	for k := range steps {
		for s := range sequences {
			id := uint64(3000 + s)
			v := float32(k + 1)
			r := fp32Request(modelzoo.SequenceModel, fmt.Sprintf("%d/%d", id, k), []int64{1, 4}, []float32{v, v, v, v}, true)
			r.Inputs[0].Name = "INPUT"
			r.Parameters = map[string]*pb.InferParameter{
				"sequence_id":    {ParameterChoice: &pb.InferParameter_Uint64Param{Uint64Param: id}},
				"sequence_start": {ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: k == 0}},
				"sequence_end":   {ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: k == steps-1}},
			}
			require.NoError(t, stream.Send(r))
			want[r.Id] = float32((k + 1) * (k + 2) / 2)
		}
	}
	require.NoError(t, stream.CloseSend())
	for range sequences * steps {
		res, err := stream.Recv()
		require.NoError(t, err)
		require.Empty(t, res.ErrorMessage)
		sum := fp32s(res.InferResponse.RawOutputContents[0])
		require.Equal(t, []float32{want[res.InferResponse.Id], want[res.InferResponse.Id], want[res.InferResponse.Id], want[res.InferResponse.Id]}, sum, res.InferResponse.Id)
	}
}

// checkInitialStateFromAFile loads the running sum from a copy of its
// folder whose state starts at 100, 200, 300, 400 (initial_state/acc0),
// and whose start control reads 0 either way: a sequence's first answer to
// zeros is that state.
func checkInitialStateFromAFile(t *testing.T, base, repo string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), modelzoo.SequenceModel)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "1"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "initial_state"), 0o755))
	file, err := os.ReadFile(filepath.Join(repo, modelzoo.SequenceModel, "1", "model.onnx"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "1", "model.onnx"), file, 0o644))
	acc, err := tensor.FromFloat32s("ACC", []int64{4}, []float32{100, 200, 300, 400})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "initial_state", "acc0"), acc.Data, 0o644))
	cfg, err := os.ReadFile(filepath.Join(repo, modelzoo.SequenceModel, "config.pbtxt"))
	require.NoError(t, err)
	c := strings.Replace(string(cfg), "fp32_false_true: [ 0, 1 ]", "fp32_false_true: [ 0, 0 ]", 1)
	c = strings.Replace(c, `dims: [ 4 ] } ]`, `dims: [ 4 ], initial_state [ { data_type: TYPE_FP32, dims: [ 4 ], data_file: "acc0" } ] } ]`, 1)
	require.NotEqual(t, string(cfg), c)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.pbtxt"), []byte(c), 0o644))

	code, _, stderr := runCLI(t, "models", "load", modelzoo.SequenceModel, "--from", dir, "--url", base)
	require.Equal(t, 0, code, stderr)
	sum, _ := sequenceAnswer(t, do(t, "POST", base+"/v2/models/"+modelzoo.SequenceModel+"/infer", sequenceBody(11, true, false, [4]float32{}), nil))
	require.Equal(t, []float32{100, 200, 300, 400}, sum)
	sum, _ = sequenceAnswer(t, do(t, "POST", base+"/v2/models/"+modelzoo.SequenceModel+"/infer", sequenceBody(11, false, true, [4]float32{1, 1, 1, 1}), nil))
	require.Equal(t, []float32{101, 201, 301, 401}, sum)
}

// summedPipeline is a pipeline of one step, the running sum.
const summedPipeline = `name: "summed"
platform: "ensemble"
max_batch_size: 8
input [ { name: "x", data_type: TYPE_FP32, dims: [ 4 ] } ]
output [ { name: "sum", data_type: TYPE_FP32, dims: [ 4 ] } ]
parameters { key: "slo" value { string_value: "400ms" } }
ensemble_scheduling {
  step [ { model_name: "running-sum", model_version: -1, input_map { key: "INPUT" value: "x" }, output_map { key: "OUTPUT" value: "sum" } } ]
}
`

// checkPipelineOfAStatefulModel loads summedPipeline into the daemon at
// base serving repo and sends it a sequence: each answer is the sum so far,
// and a request without a sequence is refused. A pipeline that maps the
// running sum's state is refused, saying why.
func checkPipelineOfAStatefulModel(t *testing.T, base, repo string) {
	t.Helper()
	loadPipelineFolder(t, base, repo, "summed", summedPipeline)
	send := func(params string, v float32) httpResult {
		body := fmt.Sprintf(`{%s"inputs":[{"name":"x","shape":[1,4],"datatype":"FP32","data":[%g,%g,%g,%g]}]}`, params, v, v, v, v)
		return do(t, "POST", base+"/v2/models/summed/infer", []byte(body), nil)
	}
	for k, want := range []string{`[1,1,1,1]`, `[3,3,3,3]`, `[6,6,6,6]`} {
		params := fmt.Sprintf(`"parameters":{"sequence_id":4001,"sequence_start":%t,"sequence_end":%t},`, k == 0, k == 2)
		r := send(params, float32(k+1))
		require.Equal(t, 200, r.code, string(r.body))
		require.Contains(t, string(r.body), `"name":"sum","shape":[1,4],"datatype":"FP32","data":`+want)
	}
	r := send("", 1)
	require.Equal(t, 400, r.code, string(r.body))
	require.Contains(t, string(r.body), "give the request's sequence with the parameter sequence_id")

	// gpuletd load finds the stateful step, and sends in sequences.
	code, out, stderr := runCLI(t, "load", "summed", "--url", base, "--arrival", "closed", "--concurrency", "2",
		"--duration", "1s", "--min-attainment", "0.01")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "2 live, 20 requests each")
	require.Regexp(t, `failed +none`, out)

	writePipelineFolder(t, repo, "summed", strings.Replace(summedPipeline, `output_map { key: "OUTPUT" value: "sum" }`,
		`output_map [ { key: "OUTPUT" value: "sum" }, { key: "ACC_NEXT" value: "acc" } ]`, 1))
	r = do(t, "POST", base+"/v2/repository/models/summed/load", nil, nil)
	require.Equal(t, 503, r.code, string(r.body))
	require.Contains(t, string(r.body), `loaded but not served: check pipeline summed: pipeline cannot run: step[0] (running-sum): output_map names \"ACC_NEXT\", the model's sequence state`)
	r = do(t, "POST", base+"/v2/repository/models/summed/unload", nil, nil)
	require.Equal(t, 200, r.code, string(r.body))
}
