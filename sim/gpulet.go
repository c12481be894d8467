package sim

import (
	"fmt"
	"time"

	"github.com/gpulet/gpuletd/control"
	"github.com/gpulet/gpuletd/executor/sched"
	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/profiler/refset"
)

// letState is where a simulated gpu-let is in its life.
type letState uint8

const (
	// starting: its process is being started and its models loaded; it
	// takes no requests and uses no GPU time.
	starting letState = iota
	// active: routed to.
	active
	// draining: no longer routed to; it finishes what it holds.
	draining
	// stopped: gone.
	stopped
)

// gpu is one simulated GPU.
type gpu struct {
	idx  int
	id   string
	typ  string
	ph   *refset.Physics
	mig  bool
	lets []*glet // not stopped

	running   int           // gpu-lets running a batch
	busySince time.Duration // when running last went from 0 to 1
}

// letModel is one model placed on a simulated gpu-let.
type letModel struct {
	base   sched.Latency // L(b, size) × the plan's interference factor
	factor float64       // the plan's interference factor
	capB   int           // the batch cap, 0 for none
	solo   []float64     // the physics' solo batch time by batch size, ns
	calib  sched.Calibration
	routed bool // the router sends this model here
}

// gpulet is one simulated executor: the real scheduling core on a gpu-let
// whose batches take the physics' time.
type glet struct {
	e     *engine
	idx   int // creation order, names the gpu-let in traces
	gpu   *gpu
	size  int
	state letState
	// planned is the plan gpu-let it runs.
	planned gpulet.GPULet
	s       *sched.Scheduler
	ms      []*letModel // by model index; nil where absent

	// the running batch
	busy  bool
	seq   uint64
	model int
	batch int
	start time.Duration
	work  float64 // solo time left, ns
	slow  float64 // current slowdown factor (≥ 1)
	upd   time.Duration
	end   time.Duration // when it ends at the current slowdown

	wake time.Duration // the scheduler's next timer, never when none

	// published is, per model index, when the router last took the
	// gpu-let's route state (0: never).
	published []time.Duration
}

// newGpulet makes a gpu-let of size on g in the given state.
func (e *engine) newGpulet(g *gpu, size int, st letState) (*glet, error) {
	l := &glet{e: e, idx: e.nextLet, gpu: g, size: size, state: st, ms: make([]*letModel, len(e.models)), wake: never,
		published: make([]time.Duration, len(e.models))}
	s, err := sched.New(sched.Config{Policy: e.set.policy}, letSink{l})
	if err != nil {
		return nil, fmt.Errorf("start gpu-let: %w", err)
	}
	l.s = s
	e.nextLet++
	g.lets = append(g.lets, l)
	e.lets = append(e.lets, l)
	return l, nil
}

// place puts model m on the gpu-let (or updates it) with the plan's
// interference factor: ℓ(b) is L(b, size) × factor, as the daemon gives its
// executors (daemon/plan.go loadRequest), the batch's real time comes from
// the physics.
//
// capB, when positive, caps the model's batches here.
func (l *glet) place(now time.Duration, m *model, factor float64, capB int) error {
	factor = max(factor, 1)
	lm := l.ms[m.idx]
	if lm != nil && lm.factor == factor && lm.capB == capB {
		return nil
	}
	prof := l.e.profileOn(m, l.gpu)
	if prof == nil {
		return fmt.Errorf("place %s on %s: %w", m.name, l.gpu.id, gpulet.ErrNoProfile)
	}
	maxB := prof.MaxBatch(l.size)
	if capB > 0 {
		maxB = min(maxB, capB)
	}
	if maxB < 1 {
		return fmt.Errorf("place %s on %s at %d%%: %w", m.name, l.gpu.id, l.size, gpulet.ErrNoProfile)
	}
	pts := control.LatencyPoints(prof, l.size, maxB)
	solo := make([]float64, len(pts)+1)
	for _, pt := range pts {
		b := pt.Batch
		phys, err := l.gpu.ph.Solo(refset.Placement{Model: m.profile, Batch: b, Size: l.size})
		if err != nil {
			return fmt.Errorf("place %s: %w", m.name, err)
		}
		solo[b] = phys * float64(time.Millisecond)
	}
	base, err := sched.NewLatency(pts, factor*(1+l.e.set.margin), nil, len(pts))
	if err != nil {
		return fmt.Errorf("place %s on %s: %w", m.name, l.gpu.id, err)
	}
	if lm == nil {
		lm = &letModel{calib: sched.NewCalibration(sched.CalibrationCeiling(m.slo, base.At(1)))}
		l.ms[m.idx] = lm
		lm.base, lm.factor, lm.capB, lm.solo = base, factor, capB, solo
		if err := l.s.AddModel(now, m.id, sched.ModelConfig{Latency: base}); err != nil {
			return fmt.Errorf("place %s: %w", m.name, err)
		}
		l.refresh()
		return nil
	}
	lm.base, lm.factor, lm.capB, lm.solo = base, factor, capB, solo
	lm.calib.SetCeiling(sched.CalibrationCeiling(m.slo, base.At(1)))
	if _, err := l.s.Recalibrate(now, m.id, base, &lm.calib); err != nil {
		return fmt.Errorf("place %s: %w", m.name, err)
	}
	l.refresh()
	return nil
}

// refresh caches the scheduler's next timer.
func (l *glet) refresh() {
	if w, ok := l.s.NextWakeup(); ok {
		l.wake = w
	} else {
		l.wake = never
	}
}

// idle reports whether the gpu-let holds no work.
func (l *glet) idle() bool {
	if l.busy {
		return false
	}
	for id := range l.ms {
		if l.ms[id] != nil && l.s.Queued(sched.ModelID(id)) > 0 {
			return false
		}
	}
	return true
}

// letSink turns the scheduler's decisions into simulated GPU work.
type letSink struct{ l *glet }

// Dispatch starts the batch: its solo time from the physics times a jitter
// draw, slowed while a neighbouring gpu-let of the GPU runs too.
func (k letSink) Dispatch(now time.Duration, b sched.Batch) {
	l := k.l
	e := l.e
	lm := l.ms[b.Model]
	n := len(b.Requests)
	l.busy, l.seq, l.model, l.batch = true, b.Seq, int(b.Model), n
	l.start, l.upd = now, now
	l.work = lm.solo[n] * e.jitter()
	l.slow = 1
	l.end = now + workDuration(l.work)
	e.gpuStarts(l.gpu, now)
	e.coRun(l.gpu, now)
	if e.set.obs != nil {
		e.set.obs.dispatched(l.idx, now, b)
	}
}

// Reject answers a request that will not run.
func (k letSink) Reject(now time.Duration, r sched.Request, why sched.Reason) {
	k.l.e.rejectAt(k.l, r, why)
}

// Preempt stops the running batch; the scheduler requeues or rejects its
// requests.
func (k letSink) Preempt(now time.Duration, b sched.Batch) {
	l := k.l
	l.busy = false
	l.e.gpuStops(l.gpu, now)
	l.e.coRun(l.gpu, now)
}
