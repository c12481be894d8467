package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/gpulet/gpuletd/control"
	"github.com/gpulet/gpuletd/executor/sched"
	"github.com/gpulet/gpuletd/pipeline"
)

// Serving pipelines.
//
// A pipeline's requests arrive at its first task. Each task request is
// routed among the gpu-lets of the task's variants (the real router over
// their targets together, weighted by the plan's rates, so the variants
// take the plan's shares) and served by the real scheduling core against
// its task's deadline (pipeline.TaskDeadline): the plan's budgets split the
// SLO. When a task's batch ends, every request in it makes a number of
// requests of the next task drawn with the serving variant's fanout as mean
// (Poisson: the objects a detector finds in a frame), all due by the same
// end-to-end deadline. A request its gpu-let rejects (it could not finish
// by its task's deadline there) is rerouted once to another gpu-let of the
// task that can still take it, a faster variant's if that is where there is
// room (Loki's opportunistic rerouting); otherwise it is dropped there,
// early, and with it the whole pipeline request. A pipeline request is
// served within SLO when every one of its last-task requests (or requests
// that made none) ends by its deadline; its accuracy is the mean, over
// those, of the product of the accuracies of the variants on their path.
//
// The node plans pipelines with control.PlanPipeline, from the pipeline's
// estimated rate (and, for per-task scaling, each task's measured load),
// every reorganize period and on a surge, and applies the plan with
// control.Reorganize like any other.

// pipe is one pipeline the engine serves.
type pipe struct {
	idx     int
	p       *pipeline.Pipeline
	name    string
	scaling control.PipelineScaling
	// tasks[i] are task i's variants' models; task and variant map a
	// model index to its task and its variant index there.
	tasks   [][]*model
	task    map[int]int
	variant map[int]int
	plan    pipeline.Plan
	shares  []float64
	rng     *rand.Rand

	// rate measurement: requests at the first task, and per task
	count, short control.Count
	shortRate    float64 // over the last surge check
	shortEarly   bool    // too late in the last surge check's window to judge
	est          control.Estimate
	taskCount    []control.Count
	taskEst      []control.Estimate

	st pipeStats
	// workers integrates the plan's workers over time; since is when the
	// plan in force began.
	workers series
	since   time.Duration
}

// pipeStats are a pipeline's counters and time series.
type pipeStats struct {
	requests, good, late, dropped uint64
	served                        uint64  // not dropped
	accuracy                      float64 // sum over served requests
	buckets                       []pipeBucket
}

// pipeBucket is one interval of a pipeline's time series, by arrival.
type pipeBucket struct {
	requests, violations, served uint64
	accuracy                     float64
}

// frame is one pipeline request in flight: its task requests still
// pending and what became of those done.
type frame struct {
	pipe              *pipe
	arrival, deadline time.Duration
	pending           int
	dropped, late     bool
	accSum            float64
	leaves            int
}

// preq is one task request of a pipeline.
type preq struct {
	fr       *frame
	task     int
	acc      float64 // product of the accuracies on its path so far
	rerouted bool
	from     sched.ModelID // the model whose gpu-let rejected it (a reroute)
}

// pending is a task request to route once the current event is done.
type pending struct {
	pr  *preq
	r   sched.Request
	not *glet        // the gpu-let that rejected it (a reroute), nil for a new one
	why sched.Reason // why it rejected it
}

// buildPipes makes the workload's pipelines.
func (e *engine) buildPipes() error {
	e.preqs = map[uint64]*preq{}
	for k, p := range e.node.Pipelines {
		wp := e.w.Pipelines[k]
		sc := control.PipelineScaling(wp.Scaling)
		if sc == "" {
			sc = control.ScaleJointly
		}
		pp := &pipe{idx: k, p: p, name: p.Name, scaling: sc, task: map[int]int{}, variant: map[int]int{},
			rng:       rand.New(rand.NewPCG(mix(e.set.seed, 1<<32+uint64(k)), 0x6a09e667f3bcc909)),
			taskCount: make([]control.Count, len(p.Tasks)), taskEst: make([]control.Estimate, len(p.Tasks))}
		for i, t := range p.Tasks {
			var ms []*model
			for vi, v := range t.Variants {
				mi := e.modelIdx(v.Name)
				if mi < 0 {
					return fmt.Errorf("simulate: pipeline %s: variant %s is no model of the node", p.Name, v.Name)
				}
				if _, twice := pp.task[mi]; twice {
					// Its requests are told apart by model: one task each.
					return fmt.Errorf("simulate: pipeline %s: model %s serves two tasks; a simulated pipeline gives each task models of its own", p.Name, v.Name)
				}
				ms = append(ms, e.models[mi])
				pp.task[mi], pp.variant[mi] = i, vi
			}
			pp.tasks = append(pp.tasks, ms)
		}
		pp.workers = newSeries(e.set.duration, e.set.interval)
		pp.st.buckets = make([]pipeBucket, len(pp.workers.b))
		e.pipes = append(e.pipes, pp)
	}
	return nil
}

// pipeArrives starts a request of p at its first task.
func (e *engine) pipeArrives(p *pipe) error {
	fr := &frame{pipe: p, arrival: e.now, deadline: e.now + p.p.SLO, pending: 1}
	p.count.Add(e.now)
	p.short.Add(e.now)
	p.st.requests++
	if b := p.bucket(e, e.now); b != nil {
		b.requests++
	}
	if w := e.win(e.now); w != nil {
		w.requests++
	}
	e.nextID++
	r := sched.Request{ID: e.nextID, Arrival: e.now, Deadline: pipeline.TaskDeadline(e.now, p.p.SLO, p.shares, 0)}
	return e.routeTask(&preq{fr: fr, task: 0, acc: 1}, r, nil, 0)
}

// routeTask routes a task request among the gpu-lets of its task's
// variants and submits it. A reroute (not, the gpu-let that rejected it
// for why, set) goes to another gpu-let where it can still finish, or its
// rejection stands; a new request no gpu-let serves is Unroutable.
func (e *engine) routeTask(pr *preq, r sched.Request, not *glet, why sched.Reason) error {
	p := pr.fr.pipe
	type cand struct {
		m *model
		j int
	}
	var cands []cand
	var targets []sched.Target
	for _, m := range p.tasks[pr.task] {
		for j, l := range m.owners {
			if l == not {
				continue
			}
			if err := e.publish(m, j); err != nil {
				return err
			}
			cands = append(cands, cand{m, j})
			targets = append(targets, m.targets[j])
		}
	}
	if not == nil {
		p.taskCount[pr.task].Add(e.now)
	}
	e.preqs[r.ID] = pr
	var j int
	var how sched.Routing
	err := sched.ErrNoTarget
	if len(targets) > 0 {
		j, how, err = sched.Route(e.now, r.Deadline, targets)
	}
	switch {
	case err != nil && not != nil:
		// Nowhere else to go: the rejection stands.
		delete(e.preqs, r.ID)
		e.pipeDrop(pr, r, why)
		return nil
	case err != nil:
		r.Model = p.tasks[pr.task][0].id
		p.tasks[pr.task][0].st.requests++
		if e.set.obs != nil {
			e.set.obs.arrived(r)
		}
		e.rejectAt(nil, r, sched.Unroutable)
		return nil
	}
	for k, c := range cands {
		c.m.targets[c.j] = targets[k]
	}
	c := cands[j]
	r.Model = c.m.id
	if not != nil && how == sched.Unreachable {
		// A reroute goes only where the request can still finish.
		r.Model = pr.from
		delete(e.preqs, r.ID)
		e.pipeDrop(pr, r, why)
		return nil
	}
	if not == nil {
		c.m.st.requests++
		if e.set.obs != nil {
			e.set.obs.arrived(r)
		}
	}
	return e.submit(c.m.owners[c.j], c.m, r)
}

// pipeRejected handles a pipeline request a gpu-let (from, nil for the node)
// rejected: it is rerouted once, after the current event, when the task has
// another gpu-let; it reports whether it was.
func (e *engine) pipeRejected(from *glet, pr *preq, r sched.Request, why sched.Reason) bool {
	if from != nil && !pr.rerouted && e.now < r.Deadline {
		switch why {
		case sched.DeadlineUnreachable, sched.Dropped, sched.QueueFull:
			pr.rerouted = true
			pr.from = r.Model
			e.queued = append(e.queued, pending{pr: pr, r: r, not: from, why: why})
			return true
		}
	}
	delete(e.preqs, r.ID)
	e.pipeFail(pr)
	return false
}

// pipeDrop drops a task request the node could not place anywhere: it is
// counted as its last gpu-let's rejection and fails its pipeline request.
func (e *engine) pipeDrop(pr *preq, r sched.Request, why sched.Reason) {
	m := e.models[r.Model]
	m.st.rejected[why]++
	if e.set.obs != nil {
		e.set.obs.rejected(r, why)
	}
	e.pipeFail(pr)
}

// pipeFail ends a task request unserved: its pipeline request is dropped.
func (e *engine) pipeFail(pr *preq) {
	pr.fr.dropped = true
	e.pipeDone(pr.fr)
}

// pipeServed continues a pipeline request whose task request r ended at
// end: the next task's requests are made, or, at the last task, its path
// is done.
func (e *engine) pipeServed(pr *preq, r sched.Request, end time.Duration) {
	delete(e.preqs, r.ID)
	fr := pr.fr
	p := fr.pipe
	v := p.p.Tasks[pr.task].Variants[p.variant[int(r.Model)]]
	acc := pr.acc * v.Accuracy
	next := pr.task + 1
	n := 0
	if next < len(p.p.Tasks) {
		n = poisson(p.rng, v.Fanout)
	}
	if n == 0 {
		fr.accSum += acc
		fr.leaves++
		if end > fr.deadline {
			fr.late = true
		}
	}
	for range n {
		e.nextID++
		child := sched.Request{ID: e.nextID, Arrival: end, Deadline: pipeline.TaskDeadline(fr.arrival, p.p.SLO, p.shares, next)}
		fr.pending++
		e.queued = append(e.queued, pending{pr: &preq{fr: fr, task: next, acc: acc}, r: child})
	}
	e.pipeDone(fr)
}

// pipeDone counts one of fr's task requests done and, when it was the
// last, books the pipeline request.
func (e *engine) pipeDone(fr *frame) {
	fr.pending--
	if fr.pending > 0 {
		return
	}
	p := fr.pipe
	b := p.bucket(e, fr.arrival)
	w := e.win(fr.arrival)
	switch {
	case fr.dropped:
		p.st.dropped++
		if w != nil {
			w.rejected++
		}
	case fr.late:
		p.st.late++
		if w != nil {
			w.late++
		}
	default:
		p.st.good++
		if w != nil {
			w.good++
		}
	}
	if fr.dropped || fr.late {
		if b != nil {
			b.violations++
		}
	}
	if !fr.dropped && fr.leaves > 0 {
		acc := fr.accSum / float64(fr.leaves)
		p.st.served++
		p.st.accuracy += acc
		if b != nil {
			b.served++
			b.accuracy += acc
		}
	}
}

// flushPipes routes the task requests the last event made or rejected.
func (e *engine) flushPipes() error {
	for len(e.queued) > 0 {
		q := e.queued[0]
		e.queued = e.queued[1:]
		if err := e.routeTask(q.pr, q.r, q.not, q.why); err != nil {
			return err
		}
	}
	e.queued = e.queued[:0]
	return nil
}

// bucket is p's time-series bucket at t (nil past the offered time).
func (p *pipe) bucket(e *engine, t time.Duration) *pipeBucket {
	i := int(t / e.set.interval)
	if i < 0 || i >= len(p.st.buckets) {
		return nil
	}
	return &p.st.buckets[i]
}

// poisson draws a Poisson count of mean mu (Knuth's method for small
// means, a rounded normal beyond 30).
func poisson(rng *rand.Rand, mu float64) int {
	if mu <= 0 {
		return 0
	}
	if mu > 30 {
		return max(int(math.Round(mu+math.Sqrt(mu)*rng.NormFloat64())), 0)
	}
	l, k, prod := math.Exp(-mu), 0, rng.Float64()
	for prod > l {
		k++
		prod *= rng.Float64()
	}
	return k
}
