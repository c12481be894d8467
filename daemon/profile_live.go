package daemon

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/mps"
	"github.com/gpulet/gpuletd/profiler"
	"github.com/gpulet/gpuletd/profiler/store"
)

// Profiling a model loaded while the node serves.
//
// A model loaded through the repository API, or found by following the
// repository (repo_watch.go), that has no latency profile on a measured
// device and cannot borrow one (profile_borrow.go) used to stay unplaced
// until an operator ran `gpuletd profile`. The daemon now measures it
// itself with the quick profile of its first start (autoprofile.go), but
// beside the serving gpu-lets: on a GPU in MPS partitions of its own, on the
// CPU on cores the serving gpu-lets hold (mps.Gpulet.Shared). The profile
// is therefore somewhat pessimistic, and the other models' batches may run
// slower while it lasts (seconds on the CPU, a minute or two on a GPU); an
// event says so, and `gpuletd profile <m> --force` measures it fully when
// the node is quiet. Models are measured one at a time, by one goroutine
// that Run owns (profileLive); each, once measured, is placed by a re-plan.

// liveQueueLen bounds the models waiting for a live profile; a load beyond
// it is told to measure the model by hand. A first start past its budget
// (startProfileBudget) queues the rest of a repository here, so it holds
// more models than a repository is likely to have.
const liveQueueLen = 1024

// liveProfiles is the queue of models waiting for a live profile.
type liveProfiles struct {
	queue     chan *repository.Model
	mu        sync.Mutex
	queued    map[string]bool   // by name, until measured
	measuring map[string]string // the device type each model is being measured on
	// held is the profile a model measured again had when its measure
	// began (profileJob.again), by name: plans place it on that one
	// meanwhile, not on the mix of old and new points the store holds.
	held map[string]*gpulet.Profile
}

func newLiveProfiles() *liveProfiles {
	return &liveProfiles{queue: make(chan *repository.Model, liveQueueLen), queued: map[string]bool{}, measuring: map[string]string{},
		held: map[string]*gpulet.Profile{}}
}

// measure says that name is being measured on deviceType ("": no longer),
// with held its profile there until measured (nil: none, it waits).
func (q *liveProfiles) measure(name, deviceType string, held *gpulet.Profile) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if deviceType == "" {
		delete(q.measuring, name)
		delete(q.held, name)
		return
	}
	q.measuring[name] = deviceType
	if held != nil {
		q.held[name] = held
	}
}

// heldProfile is the profile name had on deviceType before it was measured
// again there, while that measure runs; nil otherwise.
func (q *liveProfiles) heldProfile(name, deviceType string) *gpulet.Profile {
	if q == nil {
		return nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.measuring[name] != deviceType {
		return nil
	}
	return q.held[name]
}

// measuringOn tells whether name is being measured on deviceType: its
// profile there is stored point by point, and a plan must not take the
// points measured so far for the model's profile (it was placed on them
// before the rest were measured, and loaded again as each larger batch
// came in). A nil queue measures nothing.
func (q *liveProfiles) measuringOn(name, deviceType string) bool {
	if q == nil {
		return false
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.measuring[name] == deviceType
}

// ask queues m, unless it is queued already (true then too); false when the
// queue is full.
func (q *liveProfiles) ask(m *repository.Model) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.queued[m.Name] {
		return true
	}
	select {
	case q.queue <- m:
		q.queued[m.Name] = true
		return true
	default:
		return false
	}
}

// pending tells whether name waits for its live profile or is being
// measured; a nil queue has none.
func (q *liveProfiles) pending(name string) bool {
	if q == nil {
		return false
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.queued[name]
}

func (q *liveProfiles) done(name string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.queued, name)
}

// missingProfiles are m's profile jobs: the measured devices where it has
// no profile, of its own or borrowed.
func (n *node) missingProfiles(ctx context.Context, m *repository.Model) []profileJob {
	var jobs []profileJob
	seen := map[string]bool{}
	for _, d := range n.measuredDevices() {
		if seen[d.Type] {
			continue
		}
		seen[d.Type] = true
		_, err := n.book.profile(ctx, m, d)
		switch {
		case errors.Is(err, errNoProfile):
			jobs = append(jobs, profileJob{m: m, d: d})
		case err != nil:
		case n.profileNeverFinished(ctx, m, d):
			jobs = append(jobs, profileJob{m: m, d: d, again: "every earlier profile run of this file stopped midway, and the points it kept miss sizes or batches"})
		default:
			if why := n.profileShapesChanged(ctx, m, d); why != "" {
				jobs = append(jobs, profileJob{m: m, d: d, again: why})
			}
		}
	}
	return jobs
}

// profileNeverFinished tells whether every profile run of m on d's type
// stopped midway (the daemon stopped during its first start's profile, an
// executor died): the points kept then miss sizes and batches that plans
// need, so the model is measured again, as one without a profile is (it
// serves meanwhile on what was kept). A profile imported without runs, or
// one a run is measuring now (gpuletd profile beside the daemon), is left
// as it is.
func (n *node) profileNeverFinished(ctx context.Context, m *repository.Model, d mps.Device) bool {
	runs, err := n.st.Runs(ctx, m.SHA256, d.Type, 0)
	if err != nil || len(runs) == 0 {
		return false
	}
	for _, r := range runs {
		if r.Status == store.RunComplete || r.Status == store.RunRunning {
			return false
		}
	}
	return true
}

// profileShapesChanged says why m is measured again on d's type when its
// newest complete profile run measured its inputs at other shapes than its
// profile_shapes give now (a configuration edited and loaded again): the
// points then time other requests than the model serves. "" when they
// agree, or no complete run says (a profile imported without runs).
func (n *node) profileShapesChanged(ctx context.Context, m *repository.Model, d mps.Device) string {
	r, ok := n.newestCompleteRun(ctx, m, d)
	if !ok {
		return ""
	}
	was, now := profiler.RunShapes(r.Message), tensor.FormatShapes(m.Config.ProfileShapes)
	if was == now {
		return ""
	}
	at := func(s string) string { return cmp.Or(s, "1 in each dynamic dimension") }
	return fmt.Sprintf("its inputs were measured at %s, and profile_shapes gives %s now", at(was), at(now))
}

// inputsAt is what m's newest complete profile run on d's type measured
// its inputs' dynamic dimensions at (profiler.RunShapes); "" when at 1, or
// no complete run says.
func (n *node) inputsAt(ctx context.Context, m *repository.Model, d mps.Device) string {
	r, ok := n.newestCompleteRun(ctx, m, d)
	if !ok {
		return ""
	}
	return profiler.RunShapes(r.Message)
}

// newestCompleteRun is m's newest complete profile run on d's type.
func (n *node) newestCompleteRun(ctx context.Context, m *repository.Model, d mps.Device) (store.ProfileRun, bool) {
	runs, err := n.st.Runs(ctx, m.SHA256, d.Type, 0)
	if err != nil {
		return store.ProfileRun{}, false
	}
	for _, r := range runs {
		if r.Status == store.RunComplete {
			return r, true
		}
	}
	return store.ProfileRun{}, false
}

// profileLater queues m for a live profile when it lacks one on a measured
// device, and says so as its reason for not serving yet; it reports whether
// m is queued.
func (n *node) profileLater(ctx context.Context, m *repository.Model) bool {
	if n.live == nil || m.Config.Ensemble != nil || len(n.missingProfiles(ctx, m)) == 0 {
		return false
	}
	return n.queueLive(m)
}

// queueLive queues m, which lacks a profile, for a live profile and says so
// as its reason for not serving yet; false when the queue is full.
func (n *node) queueLive(m *repository.Model) bool {
	if !n.live.ask(m) {
		return false
	}
	n.liveNotes.set(m.Name, "to be profiled (a quick profile beside the serving gpu-lets); it is placed once measured")
	return true
}

// profileLive measures the queued models in turn until ctx ends.
func (n *node) profileLive(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case m := <-n.live.queue:
			n.measureLive(ctx, m)
			n.live.done(m.Name)
		}
	}
}

// measureLive profiles the model named as queued beside the serving
// gpu-lets on every measured device where it has no profile, then re-plans
// so that it is placed. It measures the model as the catalog holds it now:
// one unloaded meanwhile is not measured, one loaded again with another
// file is measured with that file.
func (n *node) measureLive(ctx context.Context, queued *repository.Model) {
	m, ok := n.catalog.get(queued.Name)
	if !ok {
		n.unserved.clear(queued.Name)
		n.liveNotes.clear(queued.Name)
		return
	}
	defer n.liveNotes.clear(m.Name) // measured, failed, or the daemon stops
	for _, j := range n.missingProfiles(ctx, m) {
		n.liveNotes.set(m.Name, fmt.Sprintf("being profiled on %s since %s (a quick profile beside the serving gpu-lets); it is placed once measured",
			j.d.ID, time.Now().Format(time.TimeOnly)))
		var held *gpulet.Profile
		if j.again != "" {
			held, _ = n.book.profile(ctx, m, j.d) // it serves on this one meanwhile
		}
		n.live.measure(m.Name, j.d.Type, held)
		n.profiling.Store(&profilingStatus{Model: m.Name, Device: j.d.ID, Since: time.Now(), Beside: true, Queued: len(n.live.queue)})
		err := n.profileModel(ctx, j, n.sup.binary, true)
		n.profiling.Store(nil)
		n.live.measure(m.Name, "", nil)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			n.unserved.set(m.Name, fmt.Sprintf("profiling on %s failed: %v (run: %s)", j.d.ID, err, measureCommand(m, j.d)))
			n.events.add(EventProfileJob, store.SeverityError, fmt.Sprintf("profiling %s on %s failed: %v", m.Name, j.d.ID, err),
				map[string]string{"model": m.Name, "device": j.d.ID})
			return
		}
	}
	n.unserved.clear(m.Name)
	if err := n.replan(ctx, "model "+m.Name+" profiled", n.planRates()); err != nil && ctx.Err() == nil {
		n.log.Warn("re-plan", zap.String("reason", "model "+m.Name+" profiled"), zap.Error(err))
	}
}
