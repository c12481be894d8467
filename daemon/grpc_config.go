package daemon

import (
	"context"
	"maps"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor/tensor"
	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
	"github.com/gpulet/gpuletd/kserve/tritonpb"
	"google.golang.org/protobuf/proto"
)

// ModelConfig gives a model's configuration as Triton's ModelConfig message,
// for Triton's clients: perf_analyzer, for one, reads max_batch_size and the
// tensors from it before it sends anything. Dims leave out the batch
// dimension when the model batches (max_batch_size > 0), as a config.pbtxt
// does; a batching model says dynamic_batching, which gpuletd's scheduler
// does. gpuletd's own settings (the SLO, the profile, profile_shapes…) are
// the parameters a config.pbtxt gives them in, so that the answer written
// out as a model folder's config.pbtxt serves the model as it is served
// now. A pipeline says platform "ensemble" and its steps
// (ensemble_scheduling), as written, and the profile_shapes its inputs
// take from its steps when it gives none of its own, as REST's
// configuration does (gpuletd load and infer send at them).
func (s *grpcServer) ModelConfig(_ context.Context, r *pb.ModelConfigRequest) (*pb.ModelConfigResponse, error) {
	m, ierr := s.n.lookupModel(r.Name, r.Version)
	if ierr != nil {
		return nil, grpcError(ierr)
	}
	c := tritonConfig(m)
	if _, own := c.Parameters[repository.ParamProfileShapes]; !own {
		if shapes := s.n.profileShapes(m); len(shapes) > 0 {
			c.Parameters[repository.ParamProfileShapes] = &tritonpb.ModelParameter{StringValue: tensor.FormatShapes(shapes)}
		}
	}
	return &pb.ModelConfigResponse{Config: c}, nil
}

// tritonConfig describes m as Triton's ModelConfig.
func tritonConfig(m *repository.Model) *tritonpb.ModelConfig {
	c := &tritonpb.ModelConfig{Name: m.Family, Platform: platformName(m.Platform), Backend: repository.TritonBackend(m.Platform),
		Parameters: repository.TritonParameters(m.Config)}
	if m.Config.MaxBatchSize > 0 { // 0 left out, as Triton's answer leaves it
		c.MaxBatchSize = proto.Int32(int32(m.Config.MaxBatchSize))
	}
	for _, t := range repository.RequestTensors(m.Inputs) {
		c.Input = append(c.Input, &tritonpb.ModelInput{Name: t.Name, DataType: repository.TritonDataType(t.DataType), Dims: t.Dims,
			Reshape: tritonReshape(t)})
	}
	for _, t := range repository.RequestTensors(m.Outputs) {
		c.Output = append(c.Output, &tritonpb.ModelOutput{Name: t.Name, DataType: repository.TritonDataType(t.DataType), Dims: t.Dims,
			Reshape: tritonReshape(t), LabelFilename: m.Config.LabelFiles[t.Name]})
	}
	switch {
	case m.Config.Ensemble != nil:
		c.SchedulingChoice = &tritonpb.ModelConfig_EnsembleScheduling{EnsembleScheduling: m.Config.Ensemble.TritonScheduling()}
	case m.Config.Sequence != nil:
		c.SchedulingChoice = &tritonpb.ModelConfig_SequenceBatching{SequenceBatching: m.Config.Sequence.Triton()}
	case m.Config.MaxBatchSize > 0 && m.Platform != repository.PlatformEnsemble:
		db := &tritonpb.ModelDynamicBatching{}
		db.DefaultQueuePolicy = m.Config.Queue.Triton(m.Config.MaxQueue) // nil without a bound or timeout of its own
		for level, p := range m.Config.LevelQueues {
			if db.PriorityQueuePolicy == nil {
				db.PriorityQueuePolicy = map[uint64]*tritonpb.ModelQueuePolicy{}
			}
			qp := p.Triton(p.MaxQueue)
			if qp == nil {
				qp = &tritonpb.ModelQueuePolicy{}
			}
			db.PriorityQueuePolicy[uint64(level)] = qp
		}
		if m.Config.PriorityLevels > 0 {
			db.PriorityLevels, db.DefaultPriorityLevel = uint64(m.Config.PriorityLevels), uint64(m.Config.DefaultPriority)
		}
		c.SchedulingChoice = &tritonpb.ModelConfig_DynamicBatching{DynamicBatching: db}
	}
	if m.Config.ResponseCache {
		c.ResponseCache = &tritonpb.ModelResponseCache{Enable: true}
	}
	c.ModelRepositoryAgents = repository.TritonAgents(m.Config.Checksums)
	c.DefaultModelFilename, c.CcModelFilenames = m.Config.ModelFilename, maps.Clone(m.Config.CCModelFilenames)
	if len(m.Config.OpLibraries) > 0 {
		c.ModelOperations = &tritonpb.ModelOperations{OpLibraryFilename: m.Config.OpLibraries}
	}
	if m.Config.GraphLevel != repository.GraphLevelAll { // as configured, 3 included
		c.Optimization = &tritonpb.ModelOptimizationPolicy{Graph: &tritonpb.ModelOptimizationPolicy_Graph{Level: int32(m.Config.GraphLevel)}}
	}
	return c
}

// tritonReshape gives t's reshape (the shape the model file takes or gives
// where it differs from the dims), nil when it has none.
func tritonReshape(t repository.TensorSpec) *tritonpb.ModelTensorReshape {
	if t.Reshape == nil {
		return nil
	}
	return &tritonpb.ModelTensorReshape{Shape: t.Reshape}
}
