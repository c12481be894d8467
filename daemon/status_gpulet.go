package daemon

import (
	"sort"
	"time"

	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/mps"
)

// statusGpulet is one running gpu-let in the admin status.
type statusGpulet struct {
	ID        string  `json:"id"`
	Device    string  `json:"device"`
	Size      int     `json:"size"`
	State     string  `json:"state"`
	PID       int     `json:"pid,omitempty"`
	Restarts  int     `json:"restarts"`
	BusyRatio float64 `json:"busy_ratio"`
	Cores     []int32 `json:"cores,omitempty"`
	SMCount   int32   `json:"sm_count,omitempty"`
	// Policy is the batch scheduling policy its executor runs: the one it
	// started with, or the one a reload switched it to (an executor that
	// could not switch keeps its own, and the events say why).
	Policy string `json:"policy,omitempty"`
	// Memory is what its executor holds; nil while it has no process.
	Memory *gpuletMemory `json:"memory,omitempty"`
	// NextTry is when its dead executor is started again, while it waits
	// for that (restarts back off, for minutes after an out-of-memory kill).
	NextTry *time.Time `json:"next_try,omitempty"`
	// StalledSince is when its executor went silent (the deadline of the
	// request that found it so), while its state is "stalled" (stall.go).
	StalledSince *time.Time        `json:"stalled_since,omitempty"`
	Models       []statusPlacement `json:"models"`
}

// statusPlacement is one model on a gpu-let, as planned and as measured.
type statusPlacement struct {
	Name      string  `json:"name"`
	Batch     int     `json:"batch"`
	Rate      float64 `json:"rate"`
	LatencyMS float64 `json:"latency_ms"`
	WorstMS   float64 `json:"worst_ms"`
	SLOMS     float64 `json:"slo_ms"`
	MeanBatch float64 `json:"mean_batch"`
	Requests  int64   `json:"requests"`
	// Received is the model's requests the gpu-let's executor received
	// since it started; Failed, those it answered with an error (dropped
	// or expired by its scheduler, refused, failed runs): which gpu-let
	// misses a model's requests.
	Received int64 `json:"received"`
	Failed   int64 `json:"failed"`
	// BatchTimeFactor is how much longer than profiled the model's batches
	// ran there lately: the executor's calibration, a high quantile of
	// measured over profiled time over its last 64 batches, at least 1. Its
	// scheduler plans batches with ℓ(b) times it, so a large one means
	// smaller batches and requests refused sooner: a busy host, or a device
	// slower than when the model was profiled. Absent before the executor
	// pushed a state.
	BatchTimeFactor float64 `json:"batch_time_factor,omitempty"`
	// SlowBatches says that BatchTimeFactor is past slowBatches: the
	// status and the page say so.
	SlowBatches bool `json:"slow_batches,omitempty"`
}

// slowBatches is the batch time factor from which a placement's batches
// count as running slower than profiled: batch times of 2% jitter, which
// the scheduler is built for, give about 1.04 (docs/BENCHMARKS.md,
// symphony-table2).
const slowBatches = 1.5

// status is g as the admin status shows it: its state and executor, and
// each model on it as planned (the placement of the plan gpu-let g runs,
// not another of the same size on its device, which may hold the same
// model at another batch and rate) and as its executor last pushed. It
// never waits on the executor.
func (g *gpuletRun) status(inv mps.Inventory) statusGpulet {
	sg := statusGpulet{ID: g.id, Device: g.device.ID, Size: g.size, State: "ready", Models: []statusPlacement{}}
	since := g.stalledSince()
	switch {
	case g.draining.Load():
		sg.State = "draining"
	case g.down.Load():
		sg.State = "restarting"
		if at := g.nextTry.Load(); at > 0 {
			next := time.Unix(0, at)
			sg.NextTry = &next
		}
	case !since.IsZero():
		sg.State, sg.StalledSince = "stalled", &since
	}
	g.mu.Lock()
	sg.Restarts, sg.Policy = g.restarts, g.policy
	if g.proc != nil {
		sg.PID = g.proc.Pid()
	}
	if g.health != nil {
		sg.Cores, sg.SMCount = g.health.CpuCores, g.health.SmCount
	}
	planned := make(map[string]gpulet.Placement, len(g.planned.Models))
	for _, p := range g.planned.Models {
		planned[p.Name] = p
	}
	g.mu.Unlock()
	sg.Memory = g.memory(inv)
	sg.BusyRatio, _ = g.recentBusy(time.Now())
	perModel := g.served()
	for _, name := range g.modelNames() {
		p := statusPlacement{Name: name}
		if pl, ok := planned[name]; ok {
			p.Batch, p.Rate, p.LatencyMS, p.WorstMS, p.SLOMS = pl.Batch, pl.Rate, pl.LatencyMS, pl.WorstMS, pl.SLOMS
		}
		c := perModel[name]
		if c.batches > 0 {
			p.MeanBatch, p.Requests = float64(c.batched)/float64(c.batches), c.batched
		}
		p.Received, p.Failed, p.BatchTimeFactor = c.received, c.failed, c.factor
		p.SlowBatches = c.factor >= slowBatches
		sg.Models = append(sg.Models, p)
	}
	sort.Slice(sg.Models, func(i, j int) bool { return sg.Models[i].Name < sg.Models[j].Name })
	return sg
}
