package sim

import (
	"time"

	"github.com/gpulet/gpuletd/executor/sched"
)

// Result is what a simulation measured. Goodput counts requests that
// finished within their SLO; every generated request is counted exactly
// once: good, late (its batch ended after its deadline) or rejected (by
// reason: it could not finish in time, a queue was full, it was dropped by
// head dropping, no gpu-let served its model, …).
type Result struct {
	Policy string `json:"policy"`
	Algo   string `json:"algo"`
	Seed   uint64 `json:"seed"`
	// DurationS is the offered time, seconds: arrivals come in [0, DurationS).
	DurationS float64 `json:"duration_s"`
	// EndS is the virtual time of the last event (after the offered time,
	// the node finishes what it holds).
	EndS     float64           `json:"end_s"`
	Requests uint64            `json:"requests"`
	Good     uint64            `json:"good"`
	Late     uint64            `json:"late"`
	Rejected map[string]uint64 `json:"rejected"`
	// OfferedRate is Requests / DurationS; Goodput is Good / DurationS.
	OfferedRate float64 `json:"offered_rate"`
	Goodput     float64 `json:"goodput"`
	// SLOAttainment is Good / Requests; BadRate is 1 − SLOAttainment.
	SLOAttainment float64 `json:"slo_attainment"`
	BadRate       float64 `json:"bad_rate"`
	// MeanBusy is the GPUs' mean busy fraction over the offered time
	// (a GPU is busy while any of its gpu-lets runs a batch).
	MeanBusy float64 `json:"mean_busy"`
	// MeanSizeSum is the mean sum of the sizes of the gpu-lets in use
	// (serving or draining), percent: 100 is one whole GPU.
	MeanSizeSum float64 `json:"mean_size_sum"`
	// MeanBatch is the mean size of completed batches.
	MeanBatch float64 `json:"mean_batch"`
	// Reorganizations counts the applied plans after the first that
	// changed what runs (control.Outcome.Changed), as the daemon counts
	// them.
	Reorganizations int           `json:"reorganizations"`
	Plans           []PlanEvent   `json:"plans"`
	Models          []ModelResult `json:"models"`
	// Pipelines are the workload's pipelines (pipeline.go); Requests, Good
	// and the other counts above then count their task requests.
	Pipelines []PipelineResult `json:"pipelines,omitempty"`
	// GPUs names the GPUs, in the order of Busy.
	GPUs []string `json:"gpus"`
	// IntervalS is the width of the time series' buckets, seconds.
	IntervalS float64 `json:"interval_s"`
	// Busy[g][i] is GPU g's busy fraction in bucket i; BusyTotal[i] the
	// mean over the GPUs.
	Busy      [][]float64 `json:"busy"`
	BusyTotal []float64   `json:"busy_total"`
	// SizeSum[i] is the mean sum of the sizes of the gpu-lets in use in
	// bucket i, percent.
	SizeSum []float64 `json:"size_sum"`
	// WindowS is the width of the violation windows, seconds.
	WindowS float64  `json:"window_s"`
	Windows []Window `json:"windows"`
	// PhysicsMisses counts co-locations the physics could not answer
	// (taken as no slowdown).
	PhysicsMisses uint64 `json:"physics_misses"`
}

// ModelResult is one model's share of a Result.
type ModelResult struct {
	Name     string            `json:"name"`
	SLOMS    float64           `json:"slo_ms"`
	Requests uint64            `json:"requests"`
	Good     uint64            `json:"good"`
	Late     uint64            `json:"late"`
	Rejected map[string]uint64 `json:"rejected"`
	Goodput  float64           `json:"goodput"`
	// SLOAttainment is Good / Requests (1 without requests).
	SLOAttainment float64 `json:"slo_attainment"`
	// P50MS and P99MS are end-to-end latencies of served requests (good or
	// late), arrival to batch end; 0 without any.
	P50MS float64 `json:"p50_ms"`
	P99MS float64 `json:"p99_ms"`
	// Batches[b] counts completed batches of b requests.
	Batches   []uint64 `json:"batches"`
	MeanBatch float64  `json:"mean_batch"`
}

// Window counts the requests that arrived in one violation window and how
// many of them missed their SLO (late or rejected).
type Window struct {
	StartS     float64 `json:"start_s"`
	Requests   uint64  `json:"requests"`
	Violations uint64  `json:"violations"`
	// Share is Violations / Requests (0 without requests).
	Share float64 `json:"share"`
}

// Moves sums what the plans after the first started and loaded: gpu-lets
// started, models loaded on gpu-lets that stayed.
func (r *Result) Moves() (started, loaded int) {
	for i, p := range r.Plans {
		if i > 0 {
			started += p.Started
			loaded += p.Loaded
		}
	}
	return started, loaded
}

// Rejections is the number of rejected requests, every reason.
func (r *Result) Rejections() uint64 {
	var n uint64
	for _, v := range r.Rejected {
		n += v
	}
	return n
}

// Violations is the number of requests that missed their SLO.
func (r *Result) Violations() uint64 { return r.Late + r.Rejections() }

func (e *engine) result() *Result {
	d := e.set.duration
	res := &Result{
		Policy: e.set.policy.String(), Algo: string(e.set.algo), Seed: e.set.seed,
		DurationS: d.Seconds(), EndS: e.now.Seconds(), Rejected: map[string]uint64{},
		Reorganizations: max(e.reorgs-1, 0), Plans: e.events,
		IntervalS: e.set.interval.Seconds(), WindowS: e.set.window.Seconds(), PhysicsMisses: e.physMiss,
	}
	var batched uint64
	for _, m := range e.models {
		mr := ModelResult{Name: m.name, SLOMS: float64(m.slo) / float64(time.Millisecond), Requests: m.st.requests,
			Good: m.st.good, Late: m.st.late, Rejected: map[string]uint64{}, Batches: m.st.batches, SLOAttainment: 1}
		for why, n := range m.st.rejected {
			if n > 0 {
				mr.Rejected[sched.Reason(why).String()] += n
				res.Rejected[sched.Reason(why).String()] += n
			}
		}
		if mr.Requests > 0 {
			mr.SLOAttainment = float64(mr.Good) / float64(mr.Requests)
		}
		mr.Goodput = float64(mr.Good) / d.Seconds()
		if m.st.hist.TotalCount() > 0 {
			mr.P50MS = float64(m.st.hist.ValueAtQuantile(50)) / 1000
			mr.P99MS = float64(m.st.hist.ValueAtQuantile(99)) / 1000
		}
		var n, reqs uint64
		for b, c := range m.st.batches {
			n += c
			reqs += uint64(b) * c
		}
		if n > 0 {
			mr.MeanBatch = float64(reqs) / float64(n)
		}
		batched += reqs
		res.Requests += mr.Requests
		res.Good += mr.Good
		res.Late += mr.Late
		res.Models = append(res.Models, mr)
	}
	if e.batches > 0 {
		res.MeanBatch = float64(batched) / float64(e.batches)
	}
	res.OfferedRate = float64(res.Requests) / d.Seconds()
	res.Goodput = float64(res.Good) / d.Seconds()
	res.SLOAttainment = 1
	if res.Requests > 0 {
		res.SLOAttainment = float64(res.Good) / float64(res.Requests)
	}
	res.BadRate = 1 - res.SLOAttainment
	e.sizesChange(max(e.now, d), 0)
	res.SizeSum = e.sizes.means(d)
	res.MeanSizeSum = sum(e.sizes.b) / float64(d)
	if len(e.gpus) > 0 {
		res.BusyTotal = make([]float64, len(res.SizeSum))
		var busy float64
		for i, g := range e.gpus {
			res.GPUs = append(res.GPUs, g.id)
			s := e.busy[i].means(d)
			res.Busy = append(res.Busy, s)
			for j, v := range s {
				res.BusyTotal[j] += v / float64(len(e.gpus))
			}
			busy += sum(e.busy[i].b) / float64(d)
		}
		res.MeanBusy = busy / float64(len(e.gpus))
	}
	res.Pipelines = e.pipeResults()
	for i, w := range e.windows {
		v := w.late + w.rejected
		win := Window{StartS: (time.Duration(i) * e.set.window).Seconds(), Requests: w.requests, Violations: v}
		if w.requests > 0 {
			win.Share = float64(v) / float64(w.requests)
		}
		res.Windows = append(res.Windows, win)
	}
	return res
}

func sum(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}
