package daemon

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
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
// no profile, of its own or borrowed, and those where its profile is
// measured again (measureAgain), holding the profile it has there.
func (n *node) missingProfiles(ctx context.Context, m *repository.Model) []profileJob {
	var jobs []profileJob
	seen := map[string]bool{}
	for _, d := range n.measuredDevices() {
		if seen[d.Type] {
			continue
		}
		seen[d.Type] = true
		p, err := n.book.profile(ctx, m, d)
		switch {
		case errors.Is(err, errNoProfile):
			jobs = append(jobs, profileJob{m: m, d: d})
		case err == nil:
			runs, err := n.st.Runs(ctx, m.SHA256, d.Type, 0)
			if why := measureAgain(runs, m.Config.ProfileShapes); err == nil && why != "" {
				jobs = append(jobs, profileJob{m: m, d: d, again: why, held: p})
			}
		}
	}
	return jobs
}

// measureAgain says why a model that has a profile on a device type is
// measured again there, from its profile runs there (newest first), or ""
// when it is not:
//   - every run stopped midway (the daemon stopped during its first
//     start's profile, an executor died): the points kept miss sizes and
//     batches that plans need;
//   - the newest complete run measured its inputs at other shapes than
//     shapes, its profile_shapes now (a configuration edited and loaded
//     again): the points time other requests than the model serves.
//
// A profile imported without runs, or one a run is measuring now (gpuletd
// profile beside the daemon) with none complete, is left as it is.
func measureAgain(runs []store.ProfileRun, shapes map[string][]int64) string {
	r, ok := newestComplete(runs)
	if !ok {
		if len(runs) == 0 || slices.ContainsFunc(runs, func(r store.ProfileRun) bool { return r.Status == store.RunRunning }) {
			return ""
		}
		return "every earlier profile run of this file stopped midway, and the points it kept miss sizes or batches"
	}
	was, now := profiler.RunShapes(r.Message), tensor.FormatShapes(shapes)
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
	runs, err := n.st.Runs(ctx, m.SHA256, d.Type, 0)
	if r, ok := newestComplete(runs); err == nil && ok {
		return profiler.RunShapes(r.Message)
	}
	return ""
}

// newestComplete is the first complete run of runs (newest first).
func newestComplete(runs []store.ProfileRun) (store.ProfileRun, bool) {
	i := slices.IndexFunc(runs, func(r store.ProfileRun) bool { return r.Status == store.RunComplete })
	if i < 0 {
		return store.ProfileRun{}, false
	}
	return runs[i], true
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
		n.live.measure(m.Name, j.d.Type, j.held) // a model measured again serves on the profile it had meanwhile
		n.profiling.Store(&profilingStatus{Model: m.Name, Device: j.d.ID, Since: time.Now(), Beside: true, Queued: len(n.live.queue)})
		err := n.profileModel(ctx, j, n.sup.binary, true)
		n.profiling.Store(nil)
		n.live.measure(m.Name, "", nil)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			n.unserved.set(m.Name, profileFailed(m, j.d, err))
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
