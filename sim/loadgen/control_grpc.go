package loadgen

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/kserve"
	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
)

// gpuletd's settings in a model's configuration, as its config.pbtxt (and
// so gRPC's ModelConfig) carries them in parameters: the SLO as a
// duration ("25ms") and profile_shapes as tensor.FormatShapes writes them.
const (
	paramSLO           = "slo"
	paramProfileShapes = "profile_shapes"
)

// GRPCError is a call the gRPC server answered with an error status: the
// call, its code and message. NotFound matches ErrNotFound.
type GRPCError struct {
	Call    string
	Code    codes.Code
	Message string
}

func (e *GRPCError) Error() string {
	return fmt.Sprintf("%s: %s: %s", e.Call, e.Code, e.Message)
}

// Is makes NotFound match ErrNotFound.
func (e *GRPCError) Is(target error) bool {
	return target == ErrNotFound && e.Code == codes.NotFound
}

// grpcCallError is err of call as a *GRPCError, or, when ctx ended, ctx's
// error.
func grpcCallError(ctx context.Context, call string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	st := status.Convert(err)
	return &GRPCError{Call: call, Code: st.Code(), Message: st.Message()}
}

// grpcControl is control over a gRPC listener.
type grpcControl struct {
	c pb.GRPCInferenceServiceClient
}

func (g grpcControl) model(ctx context.Context, model, version string) (*Model, error) {
	return FetchModelGRPC(ctx, g.c, model, version)
}

func (g grpcControl) register(ctx context.Context, r *shmRegion) error {
	var err error
	if r.gpu != nil {
		_, err = g.c.CudaSharedMemoryRegister(ctx, &pb.CudaSharedMemoryRegisterRequest{Name: r.name, RawHandle: r.handle, DeviceId: 0, ByteSize: uint64(r.size)})
	} else {
		_, err = g.c.SystemSharedMemoryRegister(ctx, &pb.SystemSharedMemoryRegisterRequest{Name: r.name, Key: r.key, Offset: 0, ByteSize: uint64(r.size)})
	}
	if err != nil {
		return grpcCallError(ctx, "register region "+r.name, err)
	}
	return nil
}

func (g grpcControl) unregister(ctx context.Context, r *shmRegion) error {
	var err error
	if r.gpu != nil {
		_, err = g.c.CudaSharedMemoryUnregister(ctx, &pb.CudaSharedMemoryUnregisterRequest{Name: r.name})
	} else {
		_, err = g.c.SystemSharedMemoryUnregister(ctx, &pb.SystemSharedMemoryUnregisterRequest{Name: r.name})
	}
	if err != nil {
		return grpcCallError(ctx, "unregister region "+r.name, err)
	}
	return nil
}

func (g grpcControl) outputSizes(ctx context.Context, model, version string, p *Payload) (map[string]int64, error) {
	req, err := p.GRPCRequest(model)
	if err != nil {
		return nil, err
	}
	req.ModelVersion = version
	res, err := g.c.ModelInfer(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("size the outputs for shared memory: a request was refused: %w", grpcCallError(ctx, "ModelInfer", err))
	}
	out := map[string]int64{}
	for _, o := range res.Outputs {
		if err := sizeOutput(out, o.Name, o.Datatype, o.Shape); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// FetchModelGRPC reads what FetchModel reads, from the gRPC listener c
// talks to: ModelMetadata and ModelConfig (of version, unless ""). The SLO
// and profile_shapes are gpuletd's parameters of that configuration; a
// server that gives none (Triton) gives an SLO of 0.
func FetchModelGRPC(ctx context.Context, c pb.GRPCInferenceServiceClient, model, version string) (*Model, error) {
	md, err := c.ModelMetadata(ctx, &pb.ModelMetadataRequest{Name: model, Version: version})
	if err != nil {
		return nil, fmt.Errorf("fetch model %s: %w", model, grpcCallError(ctx, "ModelMetadata", err))
	}
	tensors := func(ts []*pb.ModelMetadataResponse_TensorMetadata) []kserve.TensorMetadata {
		out := make([]kserve.TensorMetadata, len(ts))
		for i, t := range ts {
			out[i] = kserve.TensorMetadata{Name: t.Name, DataType: t.Datatype, Shape: t.Shape}
		}
		return out
	}
	meta := kserve.ModelMetadata{Name: md.Name, Versions: md.Versions, Platform: md.Platform, Inputs: tensors(md.Inputs), Outputs: tensors(md.Outputs)}
	return newModel(ctx, meta, model, version, func(ctx context.Context, model, version string) (modelSettings, error) {
		return grpcSettings(ctx, c, model, version)
	})
}

// grpcSettings reads a model's settings from its ModelConfig.
func grpcSettings(ctx context.Context, c pb.GRPCInferenceServiceClient, model, version string) (modelSettings, error) {
	res, err := c.ModelConfig(ctx, &pb.ModelConfigRequest{Name: model, Version: version})
	if err != nil {
		return modelSettings{}, grpcCallError(ctx, "ModelConfig", err)
	}
	cfg := res.GetConfig()
	s := modelSettings{maxBatchSize: int(cfg.GetMaxBatchSize()), stateful: cfg.GetSequenceBatching() != nil}
	for _, st := range cfg.GetEnsembleScheduling().GetStep() {
		s.steps = append(s.steps, st.GetModelName())
	}
	params := cfg.GetParameters()
	if p, ok := params[paramSLO]; ok {
		slo, err := time.ParseDuration(p.GetStringValue())
		if err != nil {
			return modelSettings{}, fmt.Errorf("its parameter %s %q: %w", paramSLO, p.GetStringValue(), err)
		}
		s.slo = max(slo, 0)
	}
	if p, ok := params[paramProfileShapes]; ok && p.GetStringValue() != "" {
		if s.shapes, err = tensor.ParseShapes(p.GetStringValue()); err != nil {
			return modelSettings{}, fmt.Errorf("its parameter %s: %w", paramProfileShapes, err)
		}
	}
	return s, nil
}

// FetchStatsGRPC reads the statistics of model over gRPC, as FetchStats
// reads them over REST.
func FetchStatsGRPC(ctx context.Context, c pb.GRPCInferenceServiceClient, model string) (*kserve.StatisticsResponse, error) {
	res, err := c.ModelStatistics(ctx, &pb.ModelStatisticsRequest{Name: model})
	if err != nil {
		return nil, fmt.Errorf("fetch model %s statistics: %w", model, grpcCallError(ctx, "ModelStatistics", err))
	}
	out := &kserve.StatisticsResponse{}
	for _, s := range res.ModelStats {
		out.ModelStats = append(out.ModelStats, kserve.StatisticsFromProto(s))
	}
	return out, nil
}
