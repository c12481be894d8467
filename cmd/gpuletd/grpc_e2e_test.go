package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/kserve"
	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
	"github.com/gpulet/gpuletd/modelzoo"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding/gzip"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
)

// inferenceClient is a client of the daemon's plain gRPC listener at addr
// for the rest of the test, and a context that ends after d.
func inferenceClient(t *testing.T, addr string, d time.Duration) (pb.GRPCInferenceServiceClient, context.Context) {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return pb.NewGRPCInferenceServiceClient(conn), ctx
}

// TestGRPCInferenceService drives the daemon's gRPC listener as a Triton
// gRPC client would (the client is generated from the same .proto): health,
// metadata, Triton's model configuration, typed and raw inference compared
// with ONNX Runtime, batches, bad input, a stream, concurrency, statistics
// and the repository index; and the REST API beside it still answers.
func TestGRPCInferenceService(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	grpcAddr := freeAddr(t)
	state := t.TempDir()
	repo, base := cpuZooDaemon(t, "GPULETD_GRPC_LISTEN="+grpcAddr, "GPULETD_LIMITS_MAX_REQUEST_BODY=256KiB", "GPULETD_STATE_DIR="+state)

	c, ctx := inferenceClient(t, grpcAddr, 3*time.Minute)

	live, err := c.ServerLive(ctx, &pb.ServerLiveRequest{})
	require.NoError(t, err)
	require.True(t, live.Live)
	ready, err := c.ServerReady(ctx, &pb.ServerReadyRequest{})
	require.NoError(t, err)
	require.True(t, ready.Ready, "ready as REST says")
	for _, m := range []string{"lenet5", "mlp"} {
		r, err := c.ModelReady(ctx, &pb.ModelReadyRequest{Name: m})
		require.NoError(t, err)
		require.True(t, r.Ready, m)
	}
	_, err = c.ModelReady(ctx, &pb.ModelReadyRequest{Name: "nosuch"})
	requireCode(t, err, codes.NotFound, "unknown model")
	checkStandardGRPCServices(ctx, t, grpcAddr)
	checkInferOverGRPC(t, base, grpcAddr)

	sm, err := c.ServerMetadata(ctx, &pb.ServerMetadataRequest{})
	require.NoError(t, err)
	require.Equal(t, "gpuletd", sm.Name)
	require.Contains(t, sm.Extensions, "binary_tensor_data")
	logSet, err := c.LogSettings(ctx, &pb.LogSettingsRequest{Settings: map[string]*pb.LogSettingsRequest_SettingValue{
		"log_info": {ParameterChoice: &pb.LogSettingsRequest_SettingValue_BoolParam{BoolParam: false}}}})
	require.NoError(t, err)
	require.False(t, logSet.Settings["log_info"].GetBoolParam())
	require.True(t, logSet.Settings["log_warning"].GetBoolParam())
	_, err = c.LogSettings(ctx, &pb.LogSettingsRequest{Settings: map[string]*pb.LogSettingsRequest_SettingValue{
		"log_file": {ParameterChoice: &pb.LogSettingsRequest_SettingValue_StringParam{StringParam: "/tmp/gpuletd.log"}}}})
	requireCode(t, err, codes.InvalidArgument, "standard error")
	logSet, err = c.LogSettings(ctx, &pb.LogSettingsRequest{Settings: map[string]*pb.LogSettingsRequest_SettingValue{
		"log_info": {ParameterChoice: &pb.LogSettingsRequest_SettingValue_BoolParam{BoolParam: true}}}})
	require.NoError(t, err)
	require.True(t, logSet.Settings["log_info"].GetBoolParam())
	checkTraces(ctx, t, c, base, filepath.Join(state, "traces"))
	require.Contains(t, sm.Extensions, "model_configuration")
	md, err := c.ModelMetadata(ctx, &pb.ModelMetadataRequest{Name: "mlp"})
	require.NoError(t, err)
	require.Equal(t, []string{"1"}, md.Versions)
	require.Equal(t, "onnxruntime_onnx", md.Platform)
	require.Equal(t, "input", md.Inputs[0].Name)
	require.Equal(t, "FP32", md.Inputs[0].Datatype)
	require.Equal(t, []int64{-1, 784}, md.Inputs[0].Shape)
	require.Equal(t, []int64{-1, 10}, md.Outputs[0].Shape)
	_, err = c.ModelMetadata(ctx, &pb.ModelMetadataRequest{Name: "mlp", Version: "2"})
	requireCode(t, err, codes.NotFound, "no version")
	// Triton's ModelConfig, as perf_analyzer reads it before sending.
	mc, err := c.ModelConfig(ctx, &pb.ModelConfigRequest{Name: "mlp"})
	require.NoError(t, err)
	require.Equal(t, "mlp", mc.Config.Name)
	require.Equal(t, "onnxruntime_onnx", mc.Config.Platform)
	require.Positive(t, mc.Config.GetMaxBatchSize())
	require.NotNil(t, mc.Config.GetDynamicBatching())
	require.Equal(t, "input", mc.Config.Input[0].Name)
	require.Equal(t, "TYPE_FP32", mc.Config.Input[0].DataType.String())
	require.Equal(t, []int64{784}, mc.Config.Input[0].Dims, "no batch dimension")
	require.Equal(t, []int64{10}, mc.Config.Output[0].Dims)
	_, err = c.ModelConfig(ctx, &pb.ModelConfigRequest{Name: "nosuch"})
	requireCode(t, err, codes.NotFound, "unknown model")

	// Typed contents (lenet5, a batch of 2) and raw contents (mlp, 3 rows)
	// give what ONNX Runtime gives for the same inputs.
	lib, err := onnxrt.FindLibrary("")
	require.NoError(t, err)
	require.NoError(t, onnxrt.Init(lib))
	rng := rand.New(rand.NewPCG(7, 7))
	for _, tc := range []struct {
		model string
		shape []int64
		raw   bool
	}{{"lenet5", []int64{2, 1, 28, 28}, false}, {"mlp", []int64{3, 784}, true}, {"mlp", []int64{1, 784}, false}} {
		vals := make([]float32, elements(tc.shape))
		for i := range vals {
			vals[i] = rng.Float32()*2 - 1
		}
		want, err := onnxrt.RunFloat32(filepath.Join(repo, tc.model, "1", "model.onnx"),
			map[string]onnxrt.Float32Tensor{"input": {Shape: tc.shape, Data: vals}}, 1)
		require.NoError(t, err)
		req := fp32Request(tc.model, "id-"+tc.model, tc.shape, vals, tc.raw)
		res, err := c.ModelInfer(ctx, req)
		require.NoError(t, err, "%s raw=%v", tc.model, tc.raw)
		require.Equal(t, tc.model, res.ModelName)
		require.Equal(t, "1", res.ModelVersion)
		require.Equal(t, "id-"+tc.model, res.Id, "the id is echoed")
		require.Len(t, res.Outputs, 1)
		require.Equal(t, "output", res.Outputs[0].Name)
		require.Equal(t, "FP32", res.Outputs[0].Datatype)
		require.Equal(t, []int64{tc.shape[0], 10}, res.Outputs[0].Shape)
		requireClose(t, want["output"].Data, fp32s(res.RawOutputContents[0]))

		// The same compressed, as tritonclient's compression_algorithm
		// sends it: the same answer.
		for _, coding := range []string{gzip.Name, kserve.CodingDeflate} {
			zres, err := c.ModelInfer(ctx, req, grpc.UseCompressor(coding))
			require.NoError(t, err, "%s in %s", tc.model, coding)
			require.Equal(t, res.RawOutputContents, zres.RawOutputContents, "%s in %s", tc.model, coding)
		}

		// The same asking for each row's best class (Triton's
		// classification extension): one BYTES element per row.
		req = fp32Request(tc.model, "", tc.shape, vals, tc.raw)
		req.Outputs = []*pb.ModelInferRequest_InferRequestedOutputTensor{{Name: "output", Parameters: map[string]*pb.InferParameter{
			"classification": {ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: 1}}}}}
		res, err = c.ModelInfer(ctx, req)
		require.NoError(t, err)
		require.Equal(t, "BYTES", res.Outputs[0].Datatype)
		require.Equal(t, []int64{tc.shape[0], 1}, res.Outputs[0].Shape)
		best, err := tensor.BytesElements(res.RawOutputContents[0])
		require.NoError(t, err)
		for row, b := range best {
			scores := want["output"].Data[row*10 : (row+1)*10]
			top := slices.Index(scores, slices.Max(scores))
			require.Equal(t, strconv.Itoa(top), strings.Split(string(b), ":")[1], "row %d: %s", row, b)
		}
	}

	// Bad input: INVALID_ARGUMENT naming what is wrong; oversized messages
	// RESOURCE_EXHAUSTED.
	ones := make([]float32, 784)
	for _, tc := range []struct {
		name string
		req  func() *pb.ModelInferRequest
		code codes.Code
		msg  string
		opts []grpc.CallOption
	}{
		{"wrong datatype", func() *pb.ModelInferRequest {
			r := fp32Request("mlp", "", []int64{1, 784}, ones, false)
			r.Inputs[0].Datatype = "INT32"
			r.Inputs[0].Contents = &pb.InferTensorContents{IntContents: make([]int32, 784)}
			return r
		}, codes.InvalidArgument, `input "input" is INT32, the model takes FP32`, nil},
		{"wrong shape", func() *pb.ModelInferRequest {
			return fp32Request("mlp", "", []int64{1, 783}, ones[:783], false)
		}, codes.InvalidArgument, "the model takes [-1 784]", nil},
		{"too few values", func() *pb.ModelInferRequest {
			r := fp32Request("mlp", "", []int64{1, 784}, ones, false)
			r.Inputs[0].Contents.Fp32Contents = ones[:10]
			return r
		}, codes.InvalidArgument, "fp32_contents holds 10 values but the shape needs 784", nil},
		{"raw bytes short", func() *pb.ModelInferRequest {
			r := fp32Request("mlp", "", []int64{1, 784}, ones, true)
			r.RawInputContents[0] = r.RawInputContents[0][:100]
			return r
		}, codes.InvalidArgument, "raw_input_contents holds 100 bytes", nil},
		{"unknown input", func() *pb.ModelInferRequest {
			r := fp32Request("mlp", "", []int64{1, 784}, ones, false)
			r.Inputs[0].Name = "nope"
			return r
		}, codes.InvalidArgument, `the model has no input "nope" (it takes "input")`, nil},
		{"timeout not an integer", func() *pb.ModelInferRequest {
			r := fp32Request("mlp", "", []int64{1, 784}, ones, false)
			r.Parameters = map[string]*pb.InferParameter{"timeout": {ParameterChoice: &pb.InferParameter_StringParam{StringParam: "soon"}}}
			return r
		}, codes.InvalidArgument, "timeout must be a positive number of microseconds", nil},
		{"unknown model", func() *pb.ModelInferRequest {
			return fp32Request("nosuch", "", []int64{1, 784}, ones, false)
		}, codes.NotFound, `unknown model "nosuch"`, nil},
		{"over max_request_body", func() *pb.ModelInferRequest {
			return fp32Request("mlp", "", []int64{100, 784}, make([]float32, 78400), true)
		}, codes.ResourceExhausted, "larger than max", nil},
		{"over max_request_body once decompressed", func() *pb.ModelInferRequest {
			return fp32Request("mlp", "", []int64{100, 784}, make([]float32, 78400), true)
		}, codes.ResourceExhausted, "after decompression larger than max", []grpc.CallOption{grpc.UseCompressor(gzip.Name)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.ModelInfer(ctx, tc.req(), tc.opts...)
			requireCode(t, err, tc.code, tc.msg)
		})
	}

	// Many callers on one connection at once.
	const callers, each = 16, 5
	errs := make(chan error, callers*each)
	var wg sync.WaitGroup
	for g := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				id := fmt.Sprintf("c%d-%d", g, i)
				res, err := c.ModelInfer(ctx, fp32Request("mlp", id, []int64{1, 784}, ones, i%2 == 0))
				switch {
				case err != nil:
					errs <- err
				case res.Id != id:
					errs <- fmt.Errorf("answer %q for request %q", res.Id, id)
				default:
					errs <- nil
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	// A stream: every request answered on it, a bad one with its error.
	stream, err := c.ModelStreamInfer(ctx)
	require.NoError(t, err)
	const streamed = 8
	for i := range streamed {
		req := fp32Request("lenet5", fmt.Sprintf("s%d", i), []int64{1, 1, 28, 28}, ones, i%2 == 0)
		if i == 3 {
			req.Inputs[0].Shape = []int64{1, 1, 28, 27}
			req.Inputs[0].Contents.Fp32Contents = ones[:756]
		}
		require.NoError(t, stream.Send(req))
	}
	require.NoError(t, stream.CloseSend())
	got := map[string]string{}
	for {
		r, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		got[r.InferResponse.Id] = r.ErrorMessage
		require.True(t, r.InferResponse.Parameters[kserve.ParamFinalResponse].GetBoolParam(),
			"each answer is its request's last, as Triton marks it for clients that read until it")
		if r.ErrorMessage == "" {
			require.Equal(t, []int64{1, 10}, r.InferResponse.Outputs[0].Shape)
		}
	}
	require.Len(t, got, streamed, "one answer per request")
	require.Contains(t, got["s3"], "the model takes [-1 1 28 28]")
	require.Empty(t, got["s4"])

	stats, err := c.ModelStatistics(ctx, &pb.ModelStatisticsRequest{Name: "mlp"})
	require.NoError(t, err)
	require.Len(t, stats.ModelStats, 1)
	st := stats.ModelStats[0]
	require.GreaterOrEqual(t, st.InferenceCount, uint64(2+callers*each), "gRPC requests are counted as REST ones are")
	require.NotZero(t, st.InferenceStats.Fail.Count, "the bad ones too")

	idx, err := c.RepositoryIndex(ctx, &pb.RepositoryIndexRequest{Ready: true})
	require.NoError(t, err)
	var names []string
	for _, m := range idx.Models {
		names = append(names, m.Name)
	}
	require.ElementsMatch(t, []string{"lenet5", "mlp"}, names)

	// A load with Triton's configuration override: refused naming the field
	// or the parameter, while the model keeps serving; then taken.
	param := func(s string) *pb.ModelRepositoryParameter {
		return &pb.ModelRepositoryParameter{ParameterChoice: &pb.ModelRepositoryParameter_StringParam{StringParam: s}}
	}
	_, err = c.RepositoryModelLoad(ctx, &pb.RepositoryModelLoadRequest{ModelName: "mlp",
		Parameters: map[string]*pb.ModelRepositoryParameter{"config": param(`{"max_batch_size": "many"}`)}})
	require.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
	require.ErrorContains(t, err, `"many"`)
	_, err = c.RepositoryModelLoad(ctx, &pb.RepositoryModelLoadRequest{ModelName: "mlp",
		Parameters: map[string]*pb.ModelRepositoryParameter{"file:1/model.onnx": param("x")}})
	require.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
	mready, err := c.ModelReady(ctx, &pb.ModelReadyRequest{Name: "mlp"})
	require.NoError(t, err)
	require.True(t, mready.Ready)

	// File overrides go in bytes_param (tritonclient's load_model(files=...)),
	// within limits.max_request_body.
	upload := func(name, model string) error {
		onnx, err := os.ReadFile(filepath.Join(repo, model, "1", "model.onnx"))
		require.NoError(t, err)
		_, err = c.RepositoryModelLoad(ctx, &pb.RepositoryModelLoadRequest{ModelName: name,
			Parameters: map[string]*pb.ModelRepositoryParameter{
				"config":            param(`{"max_batch_size": 4, "parameters": {"slo": {"string_value": "250ms"}}}`),
				"file:7/model.onnx": {ParameterChoice: &pb.ModelRepositoryParameter_BytesParam{BytesParam: onnx}},
			}})
		return err
	}
	err = upload("big", "mlp")
	require.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
	require.NoError(t, upload("copy", "lenet5"))
	copyMeta, err := c.ModelMetadata(ctx, &pb.ModelMetadataRequest{Name: "copy"})
	require.NoError(t, err)
	require.Equal(t, []string{"7"}, copyMeta.Versions)
	require.Equal(t, []int64{-1, 1, 28, 28}, copyMeta.Inputs[0].Shape)
	_, err = c.RepositoryModelUnload(ctx, &pb.RepositoryModelUnloadRequest{ModelName: "copy",
		Parameters: map[string]*pb.ModelRepositoryParameter{"unload_dependents": param("yes")}})
	requireCode(t, err, codes.InvalidArgument, "a bool_param")
	_, err = c.RepositoryModelUnload(ctx, &pb.RepositoryModelUnloadRequest{ModelName: "copy",
		Parameters: map[string]*pb.ModelRepositoryParameter{"unload_dependents": {ParameterChoice: &pb.ModelRepositoryParameter_BoolParam{BoolParam: true}}}})
	require.NoError(t, err, "a model has no dependents: it alone is unloaded")
	_, err = c.ModelMetadata(ctx, &pb.ModelMetadataRequest{Name: "copy"})
	require.Equal(t, codes.NotFound, status.Code(err), "%v", err)
	_, err = c.RepositoryModelLoad(ctx, &pb.RepositoryModelLoadRequest{ModelName: "mlp",
		Parameters: map[string]*pb.ModelRepositoryParameter{"config": param(`{"max_batch_size": 32, "parameters": {"slo": {"string_value": "250ms"}}}`)}})
	require.NoError(t, err)
	meta, err := c.ModelMetadata(ctx, &pb.ModelMetadataRequest{Name: "mlp"})
	require.NoError(t, err)
	require.Equal(t, []int64{-1, 784}, meta.Inputs[0].Shape)

	// gpuletd load drives the gRPC listener, compressed as asked.
	code, out, stderr := runCLI(t, "load", "--url", base, "--grpc", grpcAddr, "--model", "lenet5", "--rate", "50", "--duration", "1s", "--inputs", "3",
		"--compression", "gzip", "--json")
	require.Equal(t, 0, code, stderr)
	var load struct {
		Report struct {
			GRPC        string `json:"grpc"`
			Compression string `json:"compression"`
			Sent        int64  `json:"sent"`
			OK          int64  `json:"ok"`
			Bytes       int    `json:"request_bytes"`
		} `json:"report"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &load))
	require.Equal(t, grpcAddr, load.Report.GRPC)
	require.GreaterOrEqual(t, load.Report.Bytes, 4*784, "a ModelInfer message of 784 raw floats")
	require.Less(t, load.Report.Bytes, 4*784+512, "not the REST JSON it was made from")
	require.Equal(t, "gzip", load.Report.Compression)
	require.Positive(t, load.Report.Sent)
	require.Equal(t, load.Report.Sent, load.Report.OK, "every gRPC request answered: %s", out)
	stats, err = c.ModelStatistics(ctx, &pb.ModelStatisticsRequest{Name: "lenet5"})
	require.NoError(t, err)
	require.GreaterOrEqual(t, stats.ModelStats[0].InferenceCount, uint64(load.Report.OK), "the daemon counted them")
	is := stats.ModelStats[0].InferenceStats
	require.Equal(t, is.ComputeInfer.Count, is.ComputeInput.Count, "every answer's batch readied its inputs")
	require.Equal(t, is.ComputeInfer.Count, is.ComputeOutput.Count, "and split its outputs")
	require.Positive(t, is.ComputeInput.Ns, "joining the requests' rows takes time")
	require.Positive(t, is.ComputeOutput.Ns)
	var ran uint64
	for _, b := range stats.ModelStats[0].BatchStats {
		require.Positive(t, b.BatchSize)
		ran += b.ComputeInfer.Count
	}
	require.InDelta(t, stats.ModelStats[0].ExecutionCount, ran, float64(len(stats.ModelStats[0].BatchStats)), "batch_stats count the batches execution_count counts")
	mu := stats.ModelStats[0].MemoryUsage
	require.NotEmpty(t, mu, "memory_usage: what lenet5's loaded copies hold")
	require.Equal(t, "CPU", mu[0].Type)
	require.Positive(t, mu[0].ByteSize)
	// Over one ModelStreamInfer stream (perf_analyzer's --streaming), four
	// rows a request, to the gRPC listener the daemon says it has (-i
	// grpc, as perf_analyzer's); a request for a model the daemon does not
	// serve counts under its reason.
	code, out, stderr = runCLI(t, "load", "--url", base, "-i", "grpc", "--streaming", "--model", "lenet5", "-b", "4", "--rate", "50", "--duration", "1s")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "target        lenet5 at grpc "+grpcAddr+", one stream")
	require.Regexp(t, `(?m)^requests +(\d+) scheduled, (\d+) sent, 0 dropped by this client, (\d+) ok$`, out)
	sent := regexp.MustCompile(`(\d+) sent`).FindStringSubmatch(out)[1]
	require.Contains(t, out, sent+" ok", "every streamed request answered: %s", out)
	code, _, stderr = runCLI(t, "load", "--url", base, "--streaming", "--model", "lenet5", "--rate", "50", "--duration", "1s")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "--streaming sends over a gRPC stream: give --protocol grpc (the daemon's gRPC listener) or --grpc HOST:PORT too")
	// An address where nothing listens is one clear error before the run,
	// not a run of failures that exits 0.
	free, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := free.Addr().String()
	require.NoError(t, free.Close())
	code, out, stderr = runCLI(t, "load", "--url", base, "--grpc", dead, "--model", "lenet5", "--rate", "50", "--duration", "1s")
	require.Equal(t, 1, code, out)
	require.Contains(t, stderr, "no gpuletd answers over gRPC at "+dead+": is it running, with grpc_listen at that address?")
	require.Empty(t, out)
	// A daemon reached by its gRPC listener alone, as perf_analyzer -i grpc
	// -u reaches one: the model's shapes and SLO and the server's
	// statistics come over gRPC, and REST (--url, where nothing listens)
	// is asked nothing.
	code, out, stderr = runCLI(t, "load", "--url", "http://"+dead, "-i", "grpc", "-u", grpcAddr, "-m", "lenet5", "--rate", "50", "--duration", "1s")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "target        lenet5 at grpc "+grpcAddr)
	sent = regexp.MustCompile(`(\d+) sent`).FindStringSubmatch(out)[1]
	require.Contains(t, out, sent+" ok", "every request answered: %s", out)
	require.Regexp(t, `(?m)^lenet5 on the server: \d+ answers`, out, "statistics read over gRPC")
	code, out, stderr = runCLI(t, "infer", "lenet5", "--url", "http://"+dead, "--grpc", grpcAddr)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "FP32 [1 10]", "random inputs of the shapes gRPC gave")
	code, _, stderr = runCLI(t, "load", "--url", "http://"+dead, "--grpc", grpcAddr, "-m", "nosuch", "--rate", "50", "--duration", "1s")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, `gpuletd: unknown model "nosuch"`)

	// REST beside it.
	r := do(t, "POST", base+"/v2/models/mlp/infer", mlpJSON(1), nil)
	require.Equal(t, 200, r.code, string(r.body))
	r = do(t, "GET", base+"/metrics", nil, nil)
	require.Contains(t, string(r.body), `gpuletd_request_failures_total{model="mlp",reason="bad_request"}`)
}

// TestGRPCRefusalsCarryRetryInfoWhereARetryMayCure: a request refused for
// a reason the next seconds may cure (a deadline that cannot be met now) is
// UNAVAILABLE with RetryInfo, as REST's Retry-After; one for a model that
// cannot be placed at all is UNAVAILABLE with the reason and no RetryInfo.
func TestGRPCRefusalsCarryRetryInfoWhereARetryMayCure(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	repo := filepath.Join(t.TempDir(), "models")
	require.NoError(t, modelzoo.WriteRepository(repo, []string{"mlp", "lenet5"}, 1))
	grpcAddr := freeAddr(t)
	// mlp is never placed: a 1 µs SLO that no emulated gpu-let meets.
	setProfile(t, repo, "mlp", "alexnet", "1us")
	setProfile(t, repo, "lenet5", "alexnet", "200ms")
	_, logs := startDaemon(t, daemonEnv(t, "GPULETD_MODEL_REPOSITORY="+repo,
		"GPULETD_DEVICES=[{kind: emulated, profiles: igniter-v100, count: 1}]", "GPULETD_GRPC_LISTEN="+grpcAddr))
	c, ctx := inferenceClient(t, grpcAddr, time.Minute)
	require.Eventually(t, func() bool {
		ready, err := c.ModelReady(ctx, &pb.ModelReadyRequest{Name: "lenet5"})
		return err == nil && ready.Ready
	}, time.Minute, 100*time.Millisecond, "logs:\n%s", logs)
	retryOf := func(err error) *errdetails.RetryInfo {
		for _, d := range status.Convert(err).Details() {
			if ri, ok := d.(*errdetails.RetryInfo); ok {
				return ri
			}
		}
		return nil
	}

	ready, err := c.ModelReady(ctx, &pb.ModelReadyRequest{Name: "mlp"})
	require.NoError(t, err)
	require.False(t, ready.Ready)
	_, err = c.ModelInfer(ctx, fp32Request("mlp", "", []int64{1, 784}, make([]float32, 784), true))
	requireCode(t, err, codes.Unavailable, "mlp cannot be served")
	require.Nil(t, retryOf(err), "no retry cures a model the planner cannot place")

	r := fp32Request("lenet5", "", []int64{1, 1, 28, 28}, make([]float32, 784), true)
	r.Parameters = map[string]*pb.InferParameter{"timeout": {ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: 1}}}
	_, err = c.ModelInfer(ctx, r)
	requireCode(t, err, codes.Unavailable, "lenet5")
	retry := retryOf(err)
	require.NotNil(t, retry, "RetryInfo, as REST's Retry-After")
	require.Equal(t, time.Second, retry.RetryDelay.AsDuration())
}

func requireCode(t *testing.T, err error, code codes.Code, msg string) {
	t.Helper()
	require.Error(t, err)
	st := status.Convert(err)
	require.Equal(t, code, st.Code(), st.Message())
	require.Contains(t, st.Message(), msg)
}

func elements(shape []int64) int {
	n := 1
	for _, d := range shape {
		n *= int(d)
	}
	return n
}

// fp32Request is one FP32 input named "input", typed or raw.
func fp32Request(model, id string, shape []int64, vals []float32, raw bool) *pb.ModelInferRequest {
	in := &pb.ModelInferRequest_InferInputTensor{Name: "input", Datatype: "FP32", Shape: shape}
	r := &pb.ModelInferRequest{ModelName: model, Id: id, Inputs: []*pb.ModelInferRequest_InferInputTensor{in}}
	if !raw {
		in.Contents = &pb.InferTensorContents{Fp32Contents: vals}
		return r
	}
	b := make([]byte, 0, 4*len(vals))
	for _, v := range vals {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	r.RawInputContents = [][]byte{b}
	return r
}

func fp32s(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// checkTraces traces lenet5's requests through the trace extension, set
// over gRPC: one over REST and one over gRPC are each written, with their
// timestamps, to a file of their own under dir; mlp's are not traced. The
// model's own settings then go, over REST, and it follows the global ones.
func checkTraces(ctx context.Context, t *testing.T, c pb.GRPCInferenceServiceClient, base, dir string) {
	t.Helper()
	set := func(v ...string) *pb.TraceSettingRequest_SettingValue {
		return &pb.TraceSettingRequest_SettingValue{Value: v}
	}
	got, err := c.TraceSetting(ctx, &pb.TraceSettingRequest{ModelName: "lenet5", Settings: map[string]*pb.TraceSettingRequest_SettingValue{
		"trace_level": set("TIMESTAMPS"), "trace_rate": set("1"), "log_frequency": set("1"), "trace_file": set("lenet5.json")}})
	require.NoError(t, err)
	require.Equal(t, []string{"TIMESTAMPS"}, got.Settings["trace_level"].GetValue())
	require.Equal(t, []string{filepath.Join(dir, "lenet5.json")}, got.Settings["trace_file"].GetValue())
	_, err = c.TraceSetting(ctx, &pb.TraceSettingRequest{Settings: map[string]*pb.TraceSettingRequest_SettingValue{"trace_level": set("TENSORS", "OFF")}})
	requireCode(t, err, codes.InvalidArgument, `give ["TIMESTAMPS"], ["TENSORS"], both, or ["OFF"]`)

	r := do(t, "GET", base+"/v2/trace/setting", nil, nil)
	require.Equal(t, 200, r.code, string(r.body))
	require.Contains(t, string(r.body), `"trace_level":["OFF"]`, "the global settings are unchanged")

	image := make([]float32, 784)
	_, err = c.ModelInfer(ctx, fp32Request("mlp", "untraced", []int64{1, 784}, image, true))
	require.NoError(t, err)
	_, err = c.ModelInfer(ctx, fp32Request("lenet5", "over-grpc", []int64{1, 1, 28, 28}, image, true))
	require.NoError(t, err)
	body := `{"id": "over-rest", "inputs": [{"name": "input", "shape": [1, 1, 28, 28], "datatype": "FP32", "data": [` +
		strings.Repeat("0,", 783) + `0]}]}`
	r = do(t, "POST", base+"/v2/models/lenet5/infer", []byte(body), nil)
	require.Equal(t, 200, r.code, string(r.body))

	var ids []string
	for i := range 2 {
		// Written by the daemon's trace writer, after the answer.
		path := filepath.Join(dir, fmt.Sprintf("lenet5.json.%d", i))
		require.Eventually(t, func() bool { _, err := os.Stat(path); return err == nil }, time.Minute, 10*time.Millisecond)
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		var traces []struct {
			Model      string `json:"model_name"`
			RequestID  string `json:"request_id"`
			Timestamps []struct {
				Name string `json:"name"`
				NS   int64  `json:"ns"`
			} `json:"timestamps"`
		}
		require.NoError(t, json.Unmarshal(data, &traces))
		require.Len(t, traces, 1)
		tr := traces[0]
		require.Equal(t, "lenet5", tr.Model)
		ids = append(ids, tr.RequestID)
		var names []string
		for k, ts := range tr.Timestamps {
			names = append(names, ts.Name)
			if k > 0 {
				require.LessOrEqual(t, tr.Timestamps[k-1].NS, ts.NS, "in order: %s", data)
			}
		}
		require.Equal(t, []string{"REQUEST_START", "QUEUE_START", "COMPUTE_START", "COMPUTE_INPUT_END", "COMPUTE_OUTPUT_START", "COMPUTE_END", "REQUEST_END"}, names)
	}
	require.Equal(t, []string{"over-grpc", "over-rest"}, ids)
	require.NoFileExists(t, filepath.Join(dir, "lenet5.json.2"))

	// The CLI reads the settings and sums the files up.
	code, out, stderr := runCLI(t, "trace", "--url", base, "--model", "lenet5")
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `(?m)^trace_level +TIMESTAMPS$`, out)
	code, out, stderr = runCLI(t, "trace", "summary", filepath.Join(dir, "lenet5.json.0"), filepath.Join(dir, "lenet5.json.1"))
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `(?m)^lenet5 +2 +0 +\S+ / \S+ +\S+ / \S+ +\S+ / \S+ +\S+ / \S+$`, out)

	r = do(t, "POST", base+"/v2/models/lenet5/trace/setting",
		[]byte(`{"trace_level": null, "trace_rate": null, "log_frequency": null, "trace_file": null}`), nil)
	require.Equal(t, 200, r.code, string(r.body))
	require.Equal(t, string(do(t, "GET", base+"/v2/trace/setting", nil, nil).body), string(r.body), "lenet5 follows the global settings")
	r = do(t, "GET", base+"/v2/models/nosuch/trace/setting", nil, nil)
	require.Equal(t, 404, r.code, string(r.body))
}

// checkStandardGRPCServices asks the gRPC listener of a ready daemon what
// generic tools ask: gRPC's health protocol (Kubernetes' gRPC probes,
// grpc-health-probe, load balancers) and server reflection (grpcurl list
// and describe).
func checkStandardGRPCServices(ctx context.Context, t *testing.T, addr string) {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	health := healthpb.NewHealthClient(conn)
	for _, service := range []string{"", "readiness", "liveness", "inference.GRPCInferenceService"} {
		res, err := health.Check(ctx, &healthpb.HealthCheckRequest{Service: service})
		require.NoError(t, err, service)
		require.Equal(t, healthpb.HealthCheckResponse_SERVING, res.Status, service)
	}
	_, err = health.Check(ctx, &healthpb.HealthCheckRequest{Service: "nosuch"})
	requireCode(t, err, codes.NotFound, "liveness")
	watch, err := health.Watch(ctx, &healthpb.HealthCheckRequest{})
	require.NoError(t, err)
	first, err := watch.Recv()
	require.NoError(t, err)
	require.Equal(t, healthpb.HealthCheckResponse_SERVING, first.Status)

	info, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	require.NoError(t, err)
	defer func() { _ = info.CloseSend() }()
	require.NoError(t, info.Send(&reflectionpb.ServerReflectionRequest{
		MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}))
	listed, err := info.Recv()
	require.NoError(t, err)
	var services []string
	for _, s := range listed.GetListServicesResponse().GetService() {
		services = append(services, s.Name)
	}
	require.Subset(t, services, []string{"inference.GRPCInferenceService", "grpc.health.v1.Health"})
	require.NoError(t, info.Send(&reflectionpb.ServerReflectionRequest{
		MessageRequest: &reflectionpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: "inference.GRPCInferenceService"}}))
	described, err := info.Recv()
	require.NoError(t, err)
	require.NotEmpty(t, described.GetFileDescriptorResponse().GetFileDescriptorProto(), "the service's .proto, as grpcurl describe reads it")
}

// checkInferOverGRPC: gpuletd infer --grpc sends its request as one
// ModelInfer call and prints the answer as for REST; a refusal prints the
// gRPC code and message and exits 1, a listener that is not there says so.
func checkInferOverGRPC(t *testing.T, base, grpcAddr string) {
	t.Helper()
	var out, stderr string
	for range 5 { // a 5 ms SLO on a loaded machine may refuse one for its deadline
		var code int
		if code, out, stderr = runCLI(t, "infer", "mlp", "--url", base, "--grpc", grpcAddr, "--top", "2"); code == 0 {
			break
		}
		require.Contains(t, stderr, "deadline")
	}
	require.Regexp(t, `(?m)^model +mlp \(version 1\), answered in \S+$`, out, stderr)
	require.Regexp(t, `(?m)^output +BYTES \[1 2\]\n +row 0: [-\d.e]+:\d+, [-\d.e]+:\d+$`, out)
	// --protocol grpc finds the listener through the daemon's status.
	for range 5 {
		var code int
		if code, out, stderr = runCLI(t, "infer", "mlp", "--url", base, "--protocol", "grpc", "--top", "2"); code == 0 {
			break
		}
		require.Contains(t, stderr, "deadline")
	}
	require.Regexp(t, `(?m)^model +mlp \(version 1\), answered in \S+$`, out, stderr)
	code, _, stderr := runCLI(t, "infer", "mlp", "--url", base, "--protocol", "http", "--grpc", grpcAddr)
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "--protocol http sends over REST")

	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"inputs":[{"name":"input","shape":[1,3],"datatype":"FP32","data":[1,2,3]}]}`), 0o600))
	code, _, stderr = runCLI(t, "infer", "mlp", "--url", base, "--grpc", grpcAddr, "--request", bad)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, `gpuletd: mlp refused the request: InvalidArgument: mlp: input "input" has shape [1 3], the model takes [-1 784]`)

	dead := freeAddr(t)
	code, _, stderr = runCLI(t, "infer", "mlp", "--url", base, "--grpc", dead)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "no gpuletd answers over gRPC at "+dead+": is it running, with grpc_listen at that address?")
}
