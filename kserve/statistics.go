package kserve

import (
	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
)

// Triton's statistics extension (GET /v2/models[/{m}[/versions/{v}]]/stats,
// gRPC ModelStatistics): the one form the daemon writes, over REST as JSON
// and over gRPC through Proto, and the load tools read, from gpuletd or
// Triton alike.

// StatisticsResponse is the answer: one entry per model version.
type StatisticsResponse struct {
	ModelStats []ModelStatistics `json:"model_stats"`
}

// Names of InferenceStats' statistics.
const (
	StatSuccess       = "success"
	StatFail          = "fail"
	StatQueue         = "queue"
	StatComputeInput  = "compute_input"
	StatComputeInfer  = "compute_infer"
	StatComputeOutput = "compute_output"
	StatCacheHit      = "cache_hit"
	StatCacheMiss     = "cache_miss"
	// StatEmptyResponse is a statistic of ResponseStats alone.
	StatEmptyResponse = "empty_response"
)

// ModelStatistics is one model version's statistics.
type ModelStatistics struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// LastInference is Unix milliseconds of the last inference; 0 before
	// the first.
	LastInference int64 `json:"last_inference"`
	// InferenceCount is the rows of the requests that ran (not those the
	// response cache answered), ExecutionCount the batches they ran in.
	InferenceCount int64 `json:"inference_count"`
	ExecutionCount int64 `json:"execution_count"`
	// InferenceStats are the statistics by name (the Stat* constants).
	InferenceStats map[string]StatDuration `json:"inference_stats"`
	// BatchStats are the batches run, by size ascending.
	BatchStats []BatchStatistics `json:"batch_stats"`
	// MemoryUsage is what the model's loaded copies hold, by device.
	MemoryUsage []MemoryUsage `json:"memory_usage"`
	// ResponseStats are a decoupled model's answers by their index within
	// a request ("0", "1", …), each by statistic name (compute_infer,
	// compute_output, success, fail, empty_response, cancel), as Triton
	// reports them. gpuletd serves no decoupled models and writes it
	// empty, as Triton does for a model whose backend reports none.
	ResponseStats map[string]map[string]StatDuration `json:"response_stats"`
}

// StatDuration is one statistic: how many, and their total time.
type StatDuration struct {
	Count int64 `json:"count"`
	NS    int64 `json:"ns"`
}

// BatchStatistics are the batches of one size (in rows) a model ran, and
// the time of their inputs, runs and outputs.
type BatchStatistics struct {
	BatchSize     int64        `json:"batch_size"`
	ComputeInput  StatDuration `json:"compute_input"`
	ComputeInfer  StatDuration `json:"compute_infer"`
	ComputeOutput StatDuration `json:"compute_output"`
}

// MemoryUsage is memory held on one device: Type "CPU", "CPU_PINNED" or
// "GPU", ID the device's index.
type MemoryUsage struct {
	Type     string `json:"type"`
	ID       int64  `json:"id"`
	ByteSize uint64 `json:"byte_size"`
}

// Proto is s as gRPC's ModelStatistics carries it.
func (s ModelStatistics) Proto() *pb.ModelStatistics {
	d := func(x StatDuration) *pb.StatisticDuration {
		return &pb.StatisticDuration{Count: uint64(x.Count), Ns: uint64(x.NS)}
	}
	st := func(name string) *pb.StatisticDuration { return d(s.InferenceStats[name]) }
	out := &pb.ModelStatistics{
		Name: s.Name, Version: s.Version, LastInference: uint64(s.LastInference),
		InferenceCount: uint64(s.InferenceCount), ExecutionCount: uint64(s.ExecutionCount),
		InferenceStats: &pb.InferStatistics{Success: st(StatSuccess), Fail: st(StatFail), Queue: st(StatQueue),
			ComputeInput: st(StatComputeInput), ComputeInfer: st(StatComputeInfer), ComputeOutput: st(StatComputeOutput),
			CacheHit: st(StatCacheHit), CacheMiss: st(StatCacheMiss)},
	}
	for _, b := range s.BatchStats {
		out.BatchStats = append(out.BatchStats, &pb.InferBatchStatistics{BatchSize: uint64(b.BatchSize),
			ComputeInput: d(b.ComputeInput), ComputeInfer: d(b.ComputeInfer), ComputeOutput: d(b.ComputeOutput)})
	}
	for _, u := range s.MemoryUsage {
		out.MemoryUsage = append(out.MemoryUsage, &pb.MemoryUsage{Type: u.Type, Id: u.ID, ByteSize: u.ByteSize})
	}
	for k, r := range s.ResponseStats {
		if out.ResponseStats == nil {
			out.ResponseStats = map[string]*pb.InferResponseStatistics{}
		}
		out.ResponseStats[k] = &pb.InferResponseStatistics{ComputeInfer: d(r[StatComputeInfer]), ComputeOutput: d(r[StatComputeOutput]),
			Success: d(r[StatSuccess]), Fail: d(r[StatFail]), EmptyResponse: d(r[StatEmptyResponse])}
	}
	return out
}

// StatisticsFromProto is the ModelStatistics that gRPC's s carries, as
// REST's /v2/models/{m}/stats gives them: Proto read back.
func StatisticsFromProto(s *pb.ModelStatistics) ModelStatistics {
	d := func(x *pb.StatisticDuration) StatDuration {
		return StatDuration{Count: int64(x.GetCount()), NS: int64(x.GetNs())}
	}
	is := s.GetInferenceStats()
	out := ModelStatistics{
		Name: s.GetName(), Version: s.GetVersion(), LastInference: int64(s.GetLastInference()),
		InferenceCount: int64(s.GetInferenceCount()), ExecutionCount: int64(s.GetExecutionCount()),
		InferenceStats: map[string]StatDuration{StatSuccess: d(is.GetSuccess()), StatFail: d(is.GetFail()), StatQueue: d(is.GetQueue()),
			StatComputeInput: d(is.GetComputeInput()), StatComputeInfer: d(is.GetComputeInfer()), StatComputeOutput: d(is.GetComputeOutput()),
			StatCacheHit: d(is.GetCacheHit()), StatCacheMiss: d(is.GetCacheMiss())},
	}
	for _, b := range s.GetBatchStats() {
		out.BatchStats = append(out.BatchStats, BatchStatistics{BatchSize: int64(b.GetBatchSize()),
			ComputeInput: d(b.GetComputeInput()), ComputeInfer: d(b.GetComputeInfer()), ComputeOutput: d(b.GetComputeOutput())})
	}
	for _, u := range s.GetMemoryUsage() {
		out.MemoryUsage = append(out.MemoryUsage, MemoryUsage{Type: u.GetType(), ID: u.GetId(), ByteSize: u.GetByteSize()})
	}
	for k, r := range s.GetResponseStats() {
		if out.ResponseStats == nil {
			out.ResponseStats = map[string]map[string]StatDuration{}
		}
		out.ResponseStats[k] = map[string]StatDuration{StatComputeInfer: d(r.GetComputeInfer()), StatComputeOutput: d(r.GetComputeOutput()),
			StatSuccess: d(r.GetSuccess()), StatFail: d(r.GetFail()), StatEmptyResponse: d(r.GetEmptyResponse())}
	}
	return out
}
