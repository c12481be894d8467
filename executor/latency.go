package executor

import (
	"fmt"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/executor/sched"
)

// SchedPoints turns latency points of the protocol (a profile, a dispatch
// overhead) into the scheduler's.
func SchedPoints(ps []*pb.LatencyPoint) []sched.LatencyPoint {
	out := make([]sched.LatencyPoint, len(ps))
	for i, p := range ps {
		out[i] = sched.LatencyPoint{Batch: int(p.Batch), MS: p.Ms}
	}
	return out
}

// overheadToProto lists an engine's dispatch overhead for the daemon
// (SchedPoints reads it back).
func overheadToProto(o sched.Overhead) []*pb.LatencyPoint {
	out := make([]*pb.LatencyPoint, len(o))
	for i, p := range o {
		out[i] = &pb.LatencyPoint{Batch: int32(p.Batch), Ms: p.MS}
	}
	return out
}

// ScheduledLatency is ℓ(b) as an executor schedules a model that req loads,
// for the executor's scheduler and for the daemon's router alike: pts (the
// gpu-let's profile) times req's interference factor, plus the engine's
// dispatch overhead at each batch size, a batch costing its padded size's
// ℓ when pad is not nil (engine.ORTOptions.FixedShapes). full reaches
// max_batch_size (a raised cap reaches into it); capped stops at req's batch
// cap, where the scheduler's batches stop.
func ScheduledLatency(req *pb.LoadModelRequest, pts []sched.LatencyPoint, overhead sched.Overhead, pad func(int) int) (full, capped sched.Latency, err error) {
	largest := 0
	for _, p := range pts {
		largest = max(largest, p.Batch)
	}
	factor := req.InterferenceFactor
	if factor == 0 {
		factor = 1
	}
	schedMax := max(int(req.MaxBatchSize), 1)
	if len(pts) > 0 && schedMax > largest {
		return full, capped, fmt.Errorf("max batch size %d is beyond the largest profiled batch %d", req.MaxBatchSize, largest)
	}
	if req.BatchCap < 0 {
		return full, capped, fmt.Errorf("batch cap %d is negative", req.BatchCap)
	}
	if full, err = sched.NewLatency(pts, factor, overhead, schedMax); err != nil {
		return full, capped, err
	}
	if pad != nil {
		full = full.Padded(pad)
	}
	capped = full
	if c := int(req.BatchCap); c > 0 {
		capped = full.Truncated(c)
	}
	return full, capped, nil
}
