package executor

import (
	"fmt"
	"time"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/executor/sched"
)

// modelEntry is one loaded model: its runtime, its timing on this gpu-let
// and its id in the scheduler.
type modelEntry struct {
	name     string
	rt       LoadedModel
	refs     *runtimeRefs         // the entries holding rt (retune.go)
	req      *pb.LoadModelRequest // what loaded it
	lat      sched.Latency
	maxBatch int // 0: the model has no batch dimension
	slo      time.Duration
	maxQueue int
	outputs  map[string]bool

	// Owned by the loop.
	base    sched.Latency // ℓ(b) as loaded, up to the batch cap; lat is base × calib
	full    sched.Latency // ℓ(b) up to max_batch_size, which a raised cap reaches into
	calib   sched.Calibration
	id      sched.ModelID
	retired bool
	running int // batches of this model in the engine
	stats   modelStats
}

// batchPadder is a model that runs a batch of n rows as one of pad(n) ≥ n
// (engine.ORTOptions.FixedShapes): its ℓ(n) is ℓ(pad(n)).
type batchPadder interface {
	PaddedBatch(n int) int
}

// newModelEntry builds the scheduler's view of a loaded model: ℓ(b) from the
// profile the daemon sent (the gpu-let's L(b,p)) or, without one, from the
// latencies measured at warm-up, times the interference factor, plus the
// measured dispatch overhead; a model whose engine pads batches costs its
// padded size's ℓ.
func newModelEntry(req *pb.LoadModelRequest, rt LoadedModel) (*modelEntry, error) {
	pts := req.Latency
	if len(pts) == 0 {
		pts = rt.Latency()
	}
	if len(pts) == 0 {
		return nil, fmt.Errorf("no latency profile: send one or warm up at least one batch size")
	}
	sp := make([]sched.LatencyPoint, len(pts))
	largest := 0
	for i, p := range pts {
		sp[i] = sched.LatencyPoint{Batch: int(p.Batch), MS: p.Ms}
		largest = max(largest, int(p.Batch))
	}
	factor := req.InterferenceFactor
	if factor == 0 {
		factor = 1
	}
	maxB := int(req.MaxBatchSize)
	schedMax := max(maxB, 1)
	if schedMax > largest {
		return nil, fmt.Errorf("max batch size %d is beyond the largest profiled batch %d", maxB, largest)
	}
	if req.BatchCap < 0 {
		return nil, fmt.Errorf("batch cap %d is negative", req.BatchCap)
	}
	full, err := sched.NewLatency(sp, factor, rt.DispatchOverhead(), schedMax)
	if err != nil {
		return nil, err
	}
	if p, ok := rt.(batchPadder); ok {
		full = full.Padded(p.PaddedBatch)
	}
	lat := full
	if c := int(req.BatchCap); c > 0 {
		lat = full.Truncated(c)
	}
	outs := map[string]bool{}
	for _, o := range rt.Outputs() {
		outs[o.Name] = true
	}
	return &modelEntry{
		name: req.Name, rt: rt, refs: newRuntimeRefs(), req: req, lat: lat, base: lat, full: full, maxBatch: maxB,
		calib: sched.NewCalibration(sched.CalibrationCeiling(time.Duration(req.SloUs)*time.Microsecond, lat.At(1))),
		slo:   time.Duration(req.SloUs) * time.Microsecond, maxQueue: int(req.MaxQueue),
		outputs: outs,
	}, nil
}

// modelStats are one model's counters, owned by the loop.
type modelStats struct {
	requests, succeeded, batches, batched int64
	failures                              map[string]int64
	queueUS, computeUS                    int64
	batchSizes                            map[int32]int64
}

func (st *modelStats) fail(code pb.Code) {
	if st.failures == nil {
		st.failures = map[string]int64{}
	}
	st.failures[code.String()]++
}

func (st *modelStats) batch(size int) {
	if st.batchSizes == nil {
		st.batchSizes = map[int32]int64{}
	}
	st.batches++
	st.batched += int64(size)
	st.batchSizes[int32(size)]++
}
