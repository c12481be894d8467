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
	base  sched.Latency // ℓ(b) as loaded, up to the batch cap; lat is base × calib
	full  sched.Latency // ℓ(b) up to max_batch_size, which a raised cap reaches into
	calib sched.Calibration
	// tunedFrom is the entry a retune replaces (the same runtime); the
	// loop carries its calibration over when it adds this one.
	tunedFrom *modelEntry
	id        sched.ModelID
	retired   bool
	running   int // batches of this model in the engine
	// stats are the model's counters since the executor started: a
	// reload's entry shares its predecessor's, so that the requests it
	// hands over are counted where they fail or succeed.
	stats *modelStats
}

// batchPadder is a model that runs a batch of n rows as one of pad(n) ≥ n
// (engine.ORTOptions.FixedShapes): its ℓ(n) is ℓ(pad(n)).
type batchPadder interface {
	PaddedBatch(n int) int
}

// newModelEntry builds the scheduler's view of a loaded model: ℓ(b)
// (ScheduledLatency) from the profile the daemon sent (the gpu-let's
// L(b,p)) or, without one, from the latencies measured at warm-up.
func newModelEntry(req *pb.LoadModelRequest, rt LoadedModel) (*modelEntry, error) {
	pts := req.Latency
	if len(pts) == 0 {
		pts = rt.Latency()
	}
	if len(pts) == 0 {
		return nil, fmt.Errorf("no latency profile: send one or warm up at least one batch size")
	}
	var pad func(int) int
	if p, ok := rt.(batchPadder); ok {
		pad = p.PaddedBatch
	}
	full, lat, err := ScheduledLatency(req, SchedPoints(pts), rt.DispatchOverhead(), pad)
	if err != nil {
		return nil, err
	}
	outs := map[string]bool{}
	for _, o := range rt.Outputs() {
		outs[o.Name] = true
	}
	return &modelEntry{
		name: req.Name, rt: rt, refs: newRuntimeRefs(), req: req, lat: lat, base: lat, full: full, maxBatch: int(req.MaxBatchSize),
		calib: sched.NewCalibration(sched.CalibrationCeiling(time.Duration(req.SloUs)*time.Microsecond, lat.At(1))),
		slo:   time.Duration(req.SloUs) * time.Microsecond, maxQueue: int(req.MaxQueue),
		outputs: outs, stats: &modelStats{},
	}, nil
}

// modelStats are one model's counters, owned by the loop.
type modelStats struct {
	requests, succeeded, batches, batched int64
	// failures counts the failed requests by code; failed is their sum
	// (the pushed state's).
	failures           map[string]int64
	failed             int64
	queueUS, computeUS int64
	batchSizes         map[int32]int64
}

func (st *modelStats) fail(code pb.Code) {
	if st.failures == nil {
		st.failures = map[string]int64{}
	}
	st.failures[code.String()]++
	st.failed++
}

func (st *modelStats) batch(size int) {
	if st.batchSizes == nil {
		st.batchSizes = map[int32]int64{}
	}
	st.batches++
	st.batched += int64(size)
	st.batchSizes[int32(size)]++
}
