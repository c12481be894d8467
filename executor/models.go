package executor

import (
	"fmt"
	"slices"
	"time"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/executor/sched"
)

// modelEntry is one loaded model: its runtime, its timing on this gpu-let
// and its id in the scheduler.
type modelEntry struct {
	name     string
	rt       LoadedModel
	lat      sched.Latency
	maxBatch int // 0: the model has no batch dimension
	slo      time.Duration
	maxQueue int
	outputs  map[string]bool

	// Owned by the loop.
	base    sched.Latency // ℓ(b) as loaded; lat is base × calib
	calib   calibration
	id      sched.ModelID
	retired bool
	running int // batches of this model in the engine
	stats   modelStats
}

// newModelEntry builds the scheduler's view of a loaded model: ℓ(b) from the
// profile the daemon sent (the gpu-let's L(b,p)) or, without one, from the
// latencies measured at warm-up, times the interference factor, plus the
// measured dispatch overhead.
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
	lat, err := sched.NewLatency(sp, factor, rt.DispatchOverhead(), schedMax)
	if err != nil {
		return nil, err
	}
	outs := map[string]bool{}
	for _, o := range rt.Outputs() {
		outs[o.Name] = true
	}
	return &modelEntry{
		name: req.Name, rt: rt, lat: lat, base: lat, calib: calibration{factor: 1}, maxBatch: maxB,
		slo: time.Duration(req.SloUs) * time.Microsecond, maxQueue: int(req.MaxQueue),
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

// calibration tracks how long batches really take against ℓ(b): the 90th
// percentile of measured/predicted over the last calibWindow batches, so
// that a slower device (a loaded host, interference the plan did not
// predict) is followed within a few batches while a single late batch (a
// scheduling hiccup) is not. It never goes below the profile: a device
// faster than profiled only leaves some batching unused. When no batch has
// run for calibForget (a factor that makes the scheduler refuse everything
// would never be corrected otherwise) it goes back to the profile. The
// scheduler's ℓ is rescaled when the factor moves by more than calibStep.
type calibration struct {
	factor float64 // current multiplier of the profile
	ratios [calibWindow]float64
	n      int           // ratios recorded (up to calibWindow)
	next   int           // ring position
	last   time.Duration // when the last batch was observed
}

// Calibration settings.
const (
	calibWindow = 64
	calibMinN   = 8 // batches before the factor moves
	calibForget = 2 * time.Second
	calibStep   = 0.05
	calibMax    = 20
)

// idle forgets the window when no batch ran for calibForget and returns the
// factor and whether it changed.
func (c *calibration) idle(now time.Duration) (float64, bool) {
	if c.n > 0 && now-c.last > calibForget {
		c.n, c.next = 0, 0
		if c.factor != 1 {
			c.factor = 1
			return 1, true
		}
	}
	return c.factor, false
}

// observe folds one batch's measured time in.
func (c *calibration) observe(now, measured, predicted time.Duration) (float64, bool) {
	c.idle(now)
	c.last = now
	if predicted <= 0 || measured <= 0 {
		return c.factor, false
	}
	c.ratios[c.next] = float64(measured) / float64(predicted) * c.factor // measured / profile
	c.next = (c.next + 1) % calibWindow
	c.n = min(c.n+1, calibWindow)
	if c.n < calibMinN {
		return c.factor, false
	}
	rs := slices.Clone(c.ratios[:c.n])
	slices.Sort(rs)
	next := min(max(rs[(len(rs)*9)/10], 1), calibMax)
	if next > c.factor*(1+calibStep) || next < c.factor*(1-calibStep) {
		c.factor = next
		return next, true
	}
	return c.factor, false
}
