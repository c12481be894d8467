package sim

// PipelineResult is one pipeline's share of a Result: its requests are
// counted once each, at the first task, whatever they became downstream.
type PipelineResult struct {
	Name    string `json:"name"`
	Scaling string `json:"scaling"`
	// Requests arrived at the first task; Good were served within the SLO
	// end to end; Late were served but some part ended after the deadline;
	// Dropped lost a task request on the way (dropped early, at a task that
	// could not meet its deadline).
	Requests uint64 `json:"requests"`
	Good     uint64 `json:"good"`
	Late     uint64 `json:"late"`
	Dropped  uint64 `json:"dropped"`
	// SLOAttainment is Good / Requests (1 without requests); Violations is
	// 1 − SLOAttainment.
	SLOAttainment float64 `json:"slo_attainment"`
	Violations    float64 `json:"violations"`
	// Accuracy is the mean end-to-end accuracy of the requests served (not
	// dropped); FullAccuracy the pipeline's with its most accurate variants.
	Accuracy     float64 `json:"accuracy"`
	FullAccuracy float64 `json:"full_accuracy"`
	// MeanWorkers is the mean number of workers (GPUs) the plans in force
	// needed over the offered time (the node gives the rest of its GPUs to
	// the busiest variants as spare room).
	MeanWorkers float64 `json:"mean_workers"`
	// The time series, one value per Result.IntervalS bucket by arrival:
	// the requests' rate, how many arrived and how many of them violated
	// the SLO, that share, the mean accuracy of those served (0 where none
	// was) and the mean workers.
	Demand          []float64 `json:"demand"`
	Arrived         []uint64  `json:"arrived"`
	Violated        []uint64  `json:"violated"`
	ViolationSeries []float64 `json:"violation_series"`
	AccuracySeries  []float64 `json:"accuracy_series"`
	WorkersSeries   []float64 `json:"workers_series"`
}

// pipeResults books the pipelines.
func (e *engine) pipeResults() []PipelineResult {
	d := e.set.duration
	var out []PipelineResult
	for _, p := range e.pipes {
		p.workers.add(p.since, max(e.now, d), float64(p.plan.Needed))
		p.since = max(e.now, d)
		st := p.st
		pr := PipelineResult{Name: p.name, Scaling: string(p.scaling), Requests: st.requests, Good: st.good, Late: st.late,
			Dropped: st.dropped, SLOAttainment: 1, FullAccuracy: p.p.FullAccuracy()}
		if st.requests > 0 {
			pr.SLOAttainment = float64(st.good) / float64(st.requests)
		}
		pr.Violations = 1 - pr.SLOAttainment
		if st.served > 0 {
			pr.Accuracy = st.accuracy / float64(st.served)
		}
		pr.WorkersSeries = p.workers.means(d)
		pr.MeanWorkers = sum(p.workers.b) / float64(d)
		w := e.set.interval.Seconds()
		for _, b := range st.buckets {
			pr.Demand = append(pr.Demand, float64(b.requests)/w)
			pr.Arrived = append(pr.Arrived, b.requests)
			pr.Violated = append(pr.Violated, b.violations)
			v, a := 0.0, 0.0
			if b.requests > 0 {
				v = float64(b.violations) / float64(b.requests)
			}
			if b.served > 0 {
				a = b.accuracy / float64(b.served)
			}
			pr.ViolationSeries = append(pr.ViolationSeries, v)
			pr.AccuracySeries = append(pr.AccuracySeries, a)
		}
		out = append(out, pr)
	}
	return out
}
