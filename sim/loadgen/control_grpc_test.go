package loadgen

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/gpulet/gpuletd/kserve"
	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
	"github.com/gpulet/gpuletd/kserve/tritonpb"
)

// grpcOnlyServer is a model server reached by gRPC alone: "m" (input x of
// dims [-1, -1, 4], batching up to 8, SLO and profile_shapes in its
// configuration's parameters, as gpuletd gives them), "p" (a pipeline
// whose step "s" is stateful) and nothing else. It keeps what it was
// asked.
type grpcOnlyServer struct {
	pb.UnimplementedGRPCInferenceServiceServer
	params map[string]*tritonpb.ModelParameter // m's configuration's

	mu           sync.Mutex
	shapes       [][]int64                     // of every ModelInfer's first input
	shmNamed     int                           // ModelInfer calls whose input names a region
	lastParams   map[string]*pb.InferParameter // the last ModelInfer's
	registered   map[string]string
	unregistered []string
}

func (s *grpcOnlyServer) ModelMetadata(_ context.Context, r *pb.ModelMetadataRequest) (*pb.ModelMetadataResponse, error) {
	if r.Name != "m" && r.Name != "p" {
		return nil, status.Errorf(codes.NotFound, "no model %q", r.Name)
	}
	return &pb.ModelMetadataResponse{Name: r.Name, Versions: []string{"1"}, Platform: "onnxruntime_onnx",
		Inputs:  []*pb.ModelMetadataResponse_TensorMetadata{{Name: "x", Datatype: "FP32", Shape: []int64{-1, -1, 4}}},
		Outputs: []*pb.ModelMetadataResponse_TensorMetadata{{Name: "y", Datatype: "FP32", Shape: []int64{-1, 3}}}}, nil
}

func (s *grpcOnlyServer) ModelConfig(_ context.Context, r *pb.ModelConfigRequest) (*pb.ModelConfigResponse, error) {
	switch r.Name {
	case "m":
		return &pb.ModelConfigResponse{Config: &tritonpb.ModelConfig{Name: "m", MaxBatchSize: proto.Int32(8), Parameters: s.params}}, nil
	case "p":
		return &pb.ModelConfigResponse{Config: &tritonpb.ModelConfig{Name: "p", Platform: "ensemble", MaxBatchSize: proto.Int32(8),
			SchedulingChoice: &tritonpb.ModelConfig_EnsembleScheduling{EnsembleScheduling: &tritonpb.ModelEnsembling{
				Step: []*tritonpb.ModelEnsembling_Step{{ModelName: "s"}}}}}}, nil
	case "s":
		return &pb.ModelConfigResponse{Config: &tritonpb.ModelConfig{Name: "s",
			SchedulingChoice: &tritonpb.ModelConfig_SequenceBatching{SequenceBatching: &tritonpb.ModelSequenceBatching{}}}}, nil
	}
	return nil, status.Errorf(codes.NotFound, "no model %q", r.Name)
}

func (s *grpcOnlyServer) ModelInfer(_ context.Context, r *pb.ModelInferRequest) (*pb.ModelInferResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shapes = append(s.shapes, r.Inputs[0].Shape)
	s.lastParams = r.Parameters
	if _, ok := r.Inputs[0].Parameters[kserve.ParamShmRegion]; ok {
		s.shmNamed++
	}
	return &pb.ModelInferResponse{ModelName: r.ModelName,
		Outputs: []*pb.ModelInferResponse_InferOutputTensor{{Name: "y", Datatype: "FP32", Shape: []int64{1, 3}}}}, nil
}

func (s *grpcOnlyServer) ModelStatistics(_ context.Context, r *pb.ModelStatisticsRequest) (*pb.ModelStatisticsResponse, error) {
	if r.Name != "m" {
		return nil, status.Errorf(codes.NotFound, "no model %q", r.Name)
	}
	st := kserve.ModelStatistics{Name: "m", Version: "1", InferenceCount: 12, ExecutionCount: 3,
		InferenceStats: map[string]kserve.StatDuration{kserve.StatSuccess: {Count: 12, NS: 1200}}}
	return &pb.ModelStatisticsResponse{ModelStats: []*pb.ModelStatistics{st.Proto()}}, nil
}

func (s *grpcOnlyServer) SystemSharedMemoryRegister(_ context.Context, r *pb.SystemSharedMemoryRegisterRequest) (*pb.SystemSharedMemoryRegisterResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := os.Stat(filepath.Join(shmDir, r.Key)); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "no object %q", r.Key)
	}
	s.registered[r.Name] = r.Key
	return &pb.SystemSharedMemoryRegisterResponse{}, nil
}

func (s *grpcOnlyServer) SystemSharedMemoryUnregister(_ context.Context, r *pb.SystemSharedMemoryUnregisterRequest) (*pb.SystemSharedMemoryUnregisterResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unregistered = append(s.unregistered, r.Name)
	return &pb.SystemSharedMemoryUnregisterResponse{}, nil
}

func serveGRPCOnly(t *testing.T, s *grpcOnlyServer) string {
	t.Helper()
	s.registered = map[string]string{}
	return serveGRPC(t, s)
}

// noREST is a URL where nothing answers: a run over gRPC must not need it.
const noREST = "http://127.0.0.1:1"

// A run over gRPC reads the model's metadata, batching, SLO and
// profile_shapes from the gRPC listener, and registers its shared memory
// there, asking the REST URL nothing.
func TestGRPCRunAsksTheGRPCListenerOnly(t *testing.T) {
	s := &grpcOnlyServer{params: map[string]*tritonpb.ModelParameter{
		paramSLO: {StringValue: "40ms"}, paramProfileShapes: {StringValue: "x:5,4"}}}
	addr := serveGRPCOnly(t, s)
	cfg := Config{URL: noREST, GRPC: addr, Model: "m", Rate: 200, Duration: 200 * time.Millisecond, Seed: 1, BatchSize: 2}
	rep, err := Run(context.Background(), cfg)
	require.NoError(t, err)
	require.Positive(t, rep.Sent)
	require.Equal(t, rep.Sent, rep.OK)
	require.Equal(t, 40*time.Millisecond, rep.SLO, "the SLO of the configuration's parameters")
	s.mu.Lock()
	require.Equal(t, []int64{2, 5, 4}, s.shapes[0], "rows of --batch-size, dims of profile_shapes")
	s.mu.Unlock()

	cfg.SharedMemory, cfg.BatchSize = true, 0
	rep, err = Run(context.Background(), cfg)
	require.NoError(t, err)
	require.True(t, rep.SharedMemory)
	require.Equal(t, rep.Sent, rep.OK)
	s.mu.Lock()
	defer s.mu.Unlock()
	require.Len(t, s.registered, 1)
	for name, key := range s.registered {
		require.Equal(t, []string{name}, s.unregistered, "the region is taken back at the end")
		require.NoFileExists(t, filepath.Join(shmDir, key), "and its object removed")
	}
	require.EqualValues(t, rep.Sent, s.shmNamed, "every request names the region")
}

// FetchModelGRPC reads a pipeline with a stateful step as stateful, gives
// a server without gpuletd's parameters (Triton) no SLO, and says what is
// wrong with a model it cannot read.
func TestFetchModelGRPC(t *testing.T) {
	tests := []struct {
		name, model string
		params      map[string]*tritonpb.ModelParameter
		check       func(t *testing.T, m *Model, err error)
	}{
		{name: "pipeline with a stateful step", model: "p", check: func(t *testing.T, m *Model, err error) {
			require.NoError(t, err)
			require.True(t, m.Stateful)
			require.Equal(t, 8, m.MaxBatchSize)
		}},
		{name: "no parameters", model: "m", check: func(t *testing.T, m *Model, err error) {
			require.NoError(t, err)
			require.Zero(t, m.SLO)
			require.Nil(t, m.Shapes)
			require.False(t, m.Stateful)
			require.Equal(t, []int64{-1, -1, 4}, m.Metadata.Inputs[0].Shape)
		}},
		{name: "unknown model", model: "nope", check: func(t *testing.T, _ *Model, err error) {
			require.ErrorIs(t, err, ErrNotFound)
			require.ErrorContains(t, err, `no model "nope"`)
		}},
		{name: "bad SLO", model: "m", params: map[string]*tritonpb.ModelParameter{paramSLO: {StringValue: "soon"}}, check: func(t *testing.T, _ *Model, err error) {
			require.ErrorContains(t, err, `its parameter slo "soon"`)
		}},
		{name: "bad profile_shapes", model: "m", params: map[string]*tritonpb.ModelParameter{paramProfileShapes: {StringValue: "x:a,4"}}, check: func(t *testing.T, _ *Model, err error) {
			require.ErrorContains(t, err, "its parameter profile_shapes")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := serveGRPCOnly(t, &grpcOnlyServer{params: tt.params})
			conn, c, err := DialGRPC(context.Background(), addr, nil, nil)
			require.NoError(t, err)
			defer conn.Close()
			m, err := FetchModelGRPC(context.Background(), c, tt.model, "")
			tt.check(t, m, err)
		})
	}
}

// FetchStatsGRPC gives the statistics REST's would.
func TestFetchStatsGRPC(t *testing.T) {
	addr := serveGRPCOnly(t, &grpcOnlyServer{})
	conn, c, err := DialGRPC(context.Background(), addr, nil, nil)
	require.NoError(t, err)
	defer conn.Close()
	st, err := FetchStatsGRPC(context.Background(), c, "m")
	require.NoError(t, err)
	require.Len(t, st.ModelStats, 1)
	require.Equal(t, int64(12), st.ModelStats[0].InferenceStats[kserve.StatSuccess].Count)
	require.Equal(t, int64(3), st.ModelStats[0].ExecutionCount)
	_, err = FetchStatsGRPC(context.Background(), c, "nope")
	require.ErrorIs(t, err, ErrNotFound)
}
