package sim

import (
	"context"
	"fmt"
	"github.com/gpulet/gpuletd/control"
	"math"
	"time"

	"github.com/gpulet/gpuletd/executor/sched"
	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/pipeline"
	"github.com/gpulet/gpuletd/sim/arrival"
	"github.com/gpulet/gpuletd/sim/workload"
)

// never is the time of an event that will not happen.
const never = time.Duration(math.MaxInt64)

// model is one model of the workload.
type model struct {
	idx     int
	id      sched.ModelID
	name    string
	profile string // name inside the sets
	slo     time.Duration
	demand  gpulet.Demand

	// the gpu-lets the router sends the model to, with their targets
	owners  []*glet
	targets []sched.Target

	// rate measurement, as the daemon's rate meter
	count, short control.Count
	est          control.Estimate

	st modelStats
}

// engine is one simulation run.
type engine struct {
	ctx    context.Context
	w      *workload.Workload
	node   *workload.Node
	set    settings
	models []*model
	gpus   []*gpu
	lets   []*glet // not stopped, in creation order
	arr    *arrivals
	jit    *jitterRand
	pairs  map[pairKey]float64

	now     time.Duration
	nextID  uint64
	nextLet int

	// planning
	plan        *gpulet.Plan
	admission   *control.Admission // the plan's hold on models over their share
	misses      control.Misses     // the miss rule's counts and extra headroom
	pending     *pendingPlan
	tickPending bool
	nextTick    time.Duration
	nextSurge   time.Duration
	tick, short control.Window // the period's and the surge check's windows
	lastPlan    time.Duration
	events      []PlanEvent
	reorgs      int

	// metrics
	busy     []series // per GPU
	sizes    series
	sizeSum  int
	sizeAt   time.Duration
	windows  []window
	physMiss uint64
	batches  uint64

	// pipelines (pipeline.go)
	pipes     []*pipe
	preqs     map[uint64]*preq
	queued    []pending
	nextPipes []pipeline.Plan // the pipelines' plans apply is given
}

// Run simulates the node the workload describes serving its demand, in
// virtual time, with the real planner (gpulet.Run), the real router
// (sched.Route) and the real scheduling core (sched.Scheduler) in every
// gpu-let; batch times come from the reference sets' physics with jitter.
// It returns when every request generated in the offered time is answered.
// The same workload and options give the same result.
func Run(ctx context.Context, w *workload.Workload, opts Options) (*Result, error) {
	set, err := resolve(w, opts)
	if err != nil {
		return nil, err
	}
	node, err := w.Resolve()
	if err != nil {
		return nil, fmt.Errorf("simulate: %w", err)
	}
	e := &engine{ctx: ctx, w: w, node: node, set: set, pairs: map[pairKey]float64{}}
	if err := e.build(); err != nil {
		return nil, err
	}
	if err := e.start(); err != nil {
		return nil, err
	}
	if err := e.loop(); err != nil {
		return nil, err
	}
	return e.result(), nil
}

// build makes the models, GPUs, arrival streams and metrics.
func (e *engine) build() error {
	if n := len(e.node.Input.Demands); n > sched.MaxModels {
		return fmt.Errorf("simulate: %w: %d models", ErrBadOptions, n)
	}
	for i, d := range e.node.Input.Demands {
		m := &model{idx: i, id: sched.ModelID(i), name: d.Name, profile: e.node.Profiles[i], demand: d,
			slo: time.Duration(math.Round(d.SLOMS * float64(time.Millisecond))), st: newModelStats()}
		e.models = append(e.models, m)
	}
	for i, g := range e.node.Input.GPUs {
		e.gpus = append(e.gpus, &gpu{idx: i, id: g.ID, typ: g.Type, ph: e.node.Physics[g.Type], mig: g.Backend == gpulet.BackendMIG})
		e.busy = append(e.busy, newSeries(e.set.duration, e.set.interval))
	}
	e.sizes = newSeries(e.set.duration, e.set.interval)
	e.windows = make([]window, (e.set.duration+e.set.window-1)/e.set.window)
	traces, shared := map[string]*arrival.Trace{}, traceUsers(e.w)
	var streams []*stream
	for i := range sources(e.w) {
		s, err := newStream(e.w, i, mix(e.set.seed, uint64(i)+1), traces, shared)
		if err != nil {
			return fmt.Errorf("simulate: %w", err)
		}
		if k := i - len(e.w.Models); k >= 0 {
			s.model = -1 - k // a pipeline's first task (engine.arrive)
		}
		streams = append(streams, s)
	}
	if err := e.buildPipes(); err != nil {
		return err
	}
	e.arr = newArrivals(streams, e.set.duration)
	e.jit = newJitterRand(e.set.jitterCV, mix(e.set.seed, 0))
	return nil
}

// mix derives a seed from a seed and a stream number (splitmix64).
func mix(seed, n uint64) uint64 {
	z := seed + n*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// The kinds of events; at the same instant they go in this order: batch
// completions (so a gpu-let freed at t serves what arrives at t), control
// (plan switches and the planner's periods: a plan applied at t routes the
// arrivals at t), arrivals, then the schedulers' timers (so that an arrival
// at a batch's frontrun joins it). Among gpu-lets, the lower creation index
// goes first.
const (
	evDone = iota
	evControl
	evArrival
	evTimer
	evEnd
)

// next picks the next event: its kind, time and, for batch completions
// and timers, the gpu-let.
func (e *engine) next() (kind int, at time.Duration, who *glet) {
	kind, at = evEnd, never
	for _, l := range e.lets {
		if l.busy && l.end < at {
			kind, at, who = evDone, l.end, l
		}
	}
	if t := e.nextControl(); t != never && (t < at || (t == at && kind > evControl)) {
		kind, at, who = evControl, t, nil
	}
	if t, _, ok := e.arr.peek(); ok && t < at {
		kind, at, who = evArrival, t, nil
	}
	for _, l := range e.lets {
		if w := max(l.wake, e.now); w < at {
			kind, at, who = evTimer, w, l
		}
	}
	return kind, at, who
}

// loop runs events until none is left.
func (e *engine) loop() error {
	for {
		if err := e.ctx.Err(); err != nil {
			return fmt.Errorf("simulate: %w", err)
		}
		kind, at, who := e.next()
		if kind == evEnd {
			return nil
		}
		e.now = at
		var err error
		switch kind {
		case evDone:
			err = e.complete(who)
		case evControl:
			err = e.control()
		case evArrival:
			err = e.arrive()
		case evTimer:
			who.s.Advance(at)
			who.refresh()
			e.retireIfDone(who)
		}
		if err != nil {
			return err
		}
		if err := e.flushPipes(); err != nil {
			return err
		}
	}
}

// arrive routes the next request to a gpu-let serving its model (or,
// for a pipeline, starts a pipeline request at its first task).
func (e *engine) arrive() error {
	_, mi, _ := e.arr.peek()
	e.arr.pop()
	if mi < 0 {
		return e.pipeArrives(e.pipes[-1-mi])
	}
	m := e.models[mi]
	e.nextID++
	r := sched.Request{ID: e.nextID, Model: m.id, Arrival: e.now, Deadline: e.now + m.slo}
	m.st.requests++
	m.count.Add(e.now)
	m.short.Add(e.now)
	if w := e.win(r.Arrival); w != nil {
		w.requests++
	}
	if e.set.obs != nil {
		e.set.obs.arrived(r)
	}
	if !e.admission.Admit(m.name, e.now) {
		e.reject(r, sched.OverShare)
		return nil
	}
	var to *glet
	switch len(m.owners) {
	case 0:
	case 1:
		to = m.owners[0]
	default:
		for j := range m.owners {
			if err := e.publish(m, j); err != nil {
				return err
			}
		}
		j, _, err := sched.Route(e.now, r.Deadline, m.targets)
		if err == nil {
			to = m.owners[j]
		}
	}
	if to == nil {
		e.reject(r, sched.Unroutable)
		return nil
	}
	return e.submit(to, m, r)
}

// publish refreshes the router's view of gpu-let j of m when it is older
// than PublishInterval: the router sees what the gpu-lets published, at
// most every PublishInterval and with every batch's answers (answered),
// with its own predictions in between, as the daemon's router does.
func (e *engine) publish(m *model, j int) error {
	l := m.owners[j]
	if l.published[m.idx] != 0 && e.now-l.published[m.idx] < sched.PublishInterval {
		return nil
	}
	st, err := l.s.RouteState(e.now, m.id)
	if err != nil {
		return fmt.Errorf("simulate: route %s: %w", m.name, err)
	}
	m.targets[j].RouteState = st
	l.published[m.idx] = max(e.now, 1)
	return nil
}

// submit hands r, a request of m, to gpu-let to.
func (e *engine) submit(to *glet, m *model, r sched.Request) error {
	// As the executor does on each request: forget a calibration that has
	// seen no batch for a while.
	if lm := to.ms[m.idx]; e.set.calibrate && lm != nil {
		if _, _, err := to.s.CalibrationIdle(e.now, m.id, lm.base, &lm.calib); err != nil {
			return fmt.Errorf("simulate: gpu-let %d: %w", to.idx, err)
		}
	}
	if err := to.s.Submit(e.now, r); err != nil {
		return fmt.Errorf("simulate: submit to gpu-let %d: %w", to.idx, err)
	}
	to.refresh()
	return nil
}

// complete ends gpu-let l's running batch.
func (e *engine) complete(l *glet) error {
	b, ok := l.s.Running()
	if !ok || b.Seq != l.seq {
		return fmt.Errorf("simulate: gpu-let %d: batch %d is not running", l.idx, l.seq)
	}
	m := e.models[l.model]
	for _, r := range b.Requests {
		e.served(r, l, l.start, e.now)
	}
	if n := len(b.Requests); n < len(m.st.batches) {
		m.st.batches[n]++
	} else {
		grown := make([]uint64, n+1)
		copy(grown, m.st.batches)
		grown[n]++
		m.st.batches = grown
	}
	e.batches++
	l.busy = false
	e.gpuStops(l.gpu, e.now)
	e.coRun(l.gpu, e.now)
	var (
		base  sched.Latency
		calib *sched.Calibration
	)
	if lm := l.ms[m.idx]; e.set.calibrate && lm != nil {
		base, calib = lm.base, &lm.calib
	}
	if _, _, err := l.s.BatchEnded(e.now, l.seq, e.now-b.Start, base, calib); err != nil {
		return fmt.Errorf("simulate: gpu-let %d: %w", l.idx, err)
	}
	l.refresh()
	if err := e.answered(l); err != nil {
		return err
	}
	e.retireIfDone(l)
	return nil
}

// answered hands the router gpu-let l's state as a batch's answers leave
// it: the executor attaches its state, taken after the next batch started,
// to the last answer of every batch (executor/state.go), and the daemon's
// router takes it from there. Without this the router would keep sending
// requests, until the next publish, to a batch that had already started
// because the one before it ended early (TestRouterSeesABatchEnd).
func (e *engine) answered(l *glet) error {
	for _, m := range e.models {
		if len(m.owners) < 2 || l.ms[m.idx] == nil {
			continue // the router does not choose among one
		}
		for j, o := range m.owners {
			if o != l {
				continue
			}
			l.published[m.idx] = 0
			if err := e.publish(m, j); err != nil {
				return err
			}
		}
	}
	return nil
}

// retireIfDone stops a draining gpu-let that holds no more work.
func (e *engine) retireIfDone(l *glet) {
	if l.state != draining || !l.idle() {
		return
	}
	l.state = stopped
	e.sizesChange(e.now, -l.size)
	e.lets = remove(e.lets, l)
	l.gpu.lets = remove(l.gpu.lets, l)
}

func remove(ls []*glet, l *glet) []*glet {
	for i, x := range ls {
		if x == l {
			return append(ls[:i], ls[i+1:]...)
		}
	}
	return ls
}

// profileOn is m's profile on g's device type (nil when it has none).
func (e *engine) profileOn(m *model, g *gpu) *gpulet.Profile { return profileOf(m.demand, g.typ) }
