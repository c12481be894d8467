package daemon

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/mps"
	"github.com/gpulet/gpuletd/profiler"
	"github.com/gpulet/gpuletd/profiler/store"
	"go.uber.org/zap"
)

// quickRule is the stop rule of the daemon's own profile jobs: enough for a
// first plan in seconds, not the precision of `gpuletd profile`, whose
// measurement replaces it when run (with --force).
var quickRule = profiler.StopRule{
	Warmup: 2, MinSamples: 10, MaxSamples: 200, MaxTime: 2 * time.Second, CapMinSamples: 5,
	MedianCI: 0.05, P99CI: 0.25, Z: 1.96,
}

// quickBatches are the batches of a quick profile of a model whose largest
// batch is maxB: 1 and its doublings, then maxB. Each gpu-let size stops at
// the first batch that takes half the model's SLO or more
// (profiler.Job.SkipPastMS): a batch must fit twice in the SLO to be
// planned, and a larger one would take longer still.
func quickBatches(maxB int) []int {
	var out []int
	for b := 1; b < maxB; b *= 2 {
		out = append(out, b)
	}
	return append(out, maxB)
}

// startProfileBudget bounds how long a first start profiles before the
// models measured so far serve. A quick profile takes seconds on the CPU
// (27 models in 95 s on a 2-core VM) and a minute or two on a GPU, so a
// repository of many models left every one of them unserved for minutes.
// A model whose profile would end past the budget is not begun
// (pastBudget): the first plan places the profiled ones and the rest are
// measured beside them (profile_live.go), each placed once measured; with
// no traffic yet their gpu-lets are idle, so the measurement loses little.
const startProfileBudget = 30 * time.Second

// profileJob is one model to profile on one device.
type profileJob struct {
	m *repository.Model
	d mps.Device
	// again says why a model that has a profile on d is measured again
	// (measureAgain), and held is that profile, which plans place it on
	// meanwhile; "" and nil for a model without a profile there.
	again string
	held  *gpulet.Profile
}

// profileMissing measures the models that have no profile on the node's
// measured device types (CPU, NVIDIA GPUs: once per type, on one of its
// devices), so that they can be placed. On a node
// none of whose models could be placed yet (a first start) it measures them
// before any executor serves, while the devices are free. On one where some
// can (a restart with a model added to the repository), those serve at
// once and the others are measured beside them (profile_live.go), as a
// model loaded while the node serves is: a restart then takes no model
// out of service for the new one's profile. Models it cannot profile stay
// unplaced with the reason said.
func (n *node) profileMissing(ctx context.Context, binary string) {
	var jobs []profileJob
	var lacking []*repository.Model
	models := n.catalog.all()
	for _, m := range smallestFirst(models) {
		if js := n.missingProfiles(ctx, m); len(js) > 0 {
			jobs = append(jobs, js...)
			lacking = append(lacking, m)
		}
	}
	if len(jobs) == 0 {
		return
	}
	if len(lacking) < len(models) && n.live != nil {
		n.profileAllLater(lacking, "the profiled models serve at once")
		return
	}
	var until time.Time
	if n.live != nil {
		until = time.Now().Add(startProfileBudget)
	}
	rest := n.runProfileJobs(ctx, jobs, until, func(ctx context.Context, j profileJob) error { return n.profileModel(ctx, j, binary, false) })
	var left []*repository.Model
	for _, j := range rest {
		left = append(left, j.m)
	}
	n.profileAllLater(left, fmt.Sprintf("profiled at start within %s: the profiled models serve now", startProfileBudget))
}

// smallestFirst orders models (by name) for the start's profiles: the
// smaller files first, as a profile's time grows with the model's work,
// which its weights roughly say, so that as many models as can serve
// within the budget (startProfileBudget).
func smallestFirst(models []*repository.Model) []*repository.Model {
	return slices.SortedStableFunc(slices.Values(models), func(a, b *repository.Model) int { return cmp.Compare(a.Bytes, b.Bytes) })
}

// profileAllLater queues the models ms (once each) for a live profile and
// says so in an event, after what the start did (done).
func (n *node) profileAllLater(ms []*repository.Model, done string) {
	var later []string
	for _, m := range ms {
		if !slices.Contains(later, m.Name) && n.queueLive(m) {
			later = append(later, m.Name)
		}
	}
	if len(later) == 0 {
		return
	}
	n.events.add(EventProfileJob, store.SeverityInfo, fmt.Sprintf("%s; %s will be profiled beside them, each placed once measured",
		done, names(later, 8)), map[string]string{"models": strings.Join(later, ",")})
}

// measuredDevices are the healthy devices whose profiles are measured (the
// CPU, NVIDIA GPUs), not taken from a reference set.
func (n *node) measuredDevices() []mps.Device {
	var out []mps.Device
	for _, d := range n.devices.Inventory().Devices {
		if d.Kind != mps.KindEmulated && d.Health != mps.HealthFailed {
			out = append(out, d)
		}
	}
	return out
}

// runProfileJobs runs the jobs in turn with profile, and keeps each
// model's progress (n.progress) up to date for the operator who asks why
// nothing serves yet: a cold start with several models spends minutes here.
// With until set (the zero time: no bound) it starts no further model that
// would end past until (pastBudget): it returns the jobs of the models it
// did not start, a model's jobs on several devices being consecutive.
func (n *node) runProfileJobs(ctx context.Context, jobs []profileJob, until time.Time, profile func(context.Context, profileJob) error) []profileJob {
	var longest time.Duration // the longest model's profiles so far
	var began time.Time       // when the current model's began
	for i, j := range jobs {
		if i == 0 || j.m != jobs[i-1].m {
			now := time.Now()
			if i > 0 {
				longest = max(longest, now.Sub(began))
				if pastBudget(now, until, longest) {
					n.profiling.Store(nil)
					return jobs[i:]
				}
			}
			began = now
		}
		n.noteProfiles(jobs, i, time.Now(), until)
		if err := profile(ctx, j); err != nil {
			if ctx.Err() != nil {
				return nil // stopping: nothing is left for later
			}
			n.unserved.set(j.m.Name, profileFailed(j.m, j.d, err))
			n.events.add(EventProfileJob, store.SeverityError, fmt.Sprintf("profiling %s on %s failed: %v", j.m.Name, j.d.ID, err),
				map[string]string{"model": j.m.Name, "device": j.d.ID})
		}
	}
	n.noteProfiles(jobs, len(jobs), time.Time{}, until)
	return nil
}

// profileFailed is why m is not served after its profile on d failed with
// err, and what to do: a model its executor cannot load or run there is
// checked and mended rather than measured again.
func profileFailed(m *repository.Model, d mps.Device, err error) string {
	if errors.Is(err, profiler.ErrModelLoad) {
		return fmt.Sprintf("profiling on %s failed: %v (the model does not load or run there: `gpuletd models check` reads it as ONNX Runtime does; mended, `gpuletd models load %s` loads it again)",
			d.ID, err, m.Family)
	}
	return fmt.Sprintf("profiling on %s failed: %v (run: %s)", d.ID, err, measureCommand(m, d))
}

// pastBudget tells whether a start's next model, begun now, would end past
// until (zero: no bound): the models go smallest file first, so the next
// takes about as long as the longest so far, or longer. A model begun just
// before the budget ran out held the first plan back by its whole profile
// (a ResNet-18 begun at 28 s of 30: the first plan at 53 s).
func pastBudget(now, until time.Time, longest time.Duration) bool {
	return !until.IsZero() && !now.Add(longest).Before(until)
}

// noteProfiles says where each job's model stands while jobs[running]
// runs (since started; running == len(jobs) once all are done). A model
// with jobs on several devices says its earliest unfinished one. until is
// when the first plan is made at the latest (zero: once all are done).
func (n *node) noteProfiles(jobs []profileJob, running int, started, until time.Time) {
	for k := range min(running, len(jobs)) {
		msg := "profiled; the first plan is being made"
		if left := len(jobs) - running; left > 0 {
			msg = fmt.Sprintf("profiled; the first plan places it once the other models are profiled (%d profile(s) to go)", left)
			if !until.IsZero() {
				msg = fmt.Sprintf("profiled; the first plan places it once the other models are profiled (%d profile(s) to go), by about %s at the latest",
					left, until.Format(time.TimeOnly))
			}
		}
		n.progress.set(jobs[k].m.Name, msg)
	}
	for k := len(jobs) - 1; k > running; k-- {
		n.progress.set(jobs[k].m.Name, fmt.Sprintf("to be profiled on %s after %d other profile(s)", jobs[k].d.ID, k-running))
	}
	if running < len(jobs) {
		j := jobs[running]
		n.progress.set(j.m.Name, fmt.Sprintf("being profiled on %s since %s (profile %d of %d)", j.d.ID, started.Format(time.TimeOnly), running+1, len(jobs)))
		n.profiling.Store(&profilingStatus{Model: j.m.Name, Device: j.d.ID, Since: started, Profile: running + 1, Of: len(jobs)})
	} else {
		n.profiling.Store(nil)
	}
}

// profilingStatus is the profile job the start runs now, or the live
// profile beside the serving gpu-lets (profile_live.go), in
// GET /api/v1/status and systemd's status line.
type profilingStatus struct {
	Model   string    `json:"model"`
	Device  string    `json:"device"`
	Since   time.Time `json:"since"`
	Profile int       `json:"profile,omitempty"` // which of the start's jobs, from 1
	Of      int       `json:"of,omitempty"`
	// Beside says that the job is a live profile, with Queued models
	// waiting for theirs.
	Beside bool `json:"beside,omitempty"`
	Queued int  `json:"queued,omitempty"`
}

// profileModel runs a quick profile job for one model on one device (with
// shared, beside the serving gpu-lets: profile_live.go): at each gpu-let
// size, batches doubling until one takes half the SLO (quickBatches), one
// executor per size.
func (n *node) profileModel(ctx context.Context, j profileJob, binary string, shared bool) error {
	m, d := j.m, j.d
	batches := quickBatches(max(m.Config.MaxBatchSize, 1))
	msg := fmt.Sprintf("profiling %s on %s (a quick profile so it can be placed; `%s --force` measures it fully)", m.Name, d.ID, measureCommand(m, d))
	if shared {
		msg = fmt.Sprintf("profiling %s on %s beside the serving gpu-lets (a quick profile so it can be placed): the other models' batches may run slower until it is measured; `%s --force` measures it fully when the node is quiet",
			m.Name, d.ID, measureCommand(m, d))
	}
	if j.again != "" {
		msg += "; measured again: " + j.again
	}
	n.events.add(EventProfileJob, store.SeverityInfo, msg, map[string]string{"model": m.Name, "device": d.ID})
	launcher := n.profileLauncher(binary, shared)
	slo := ms(m.Config.SLO.D())
	at := n.sup.oomNow()
	_, err := profiler.Measure(ctx, profiler.Job{
		Model:  ProfilerModel(m),
		Device: d, Batches: batches, SkipPastMS: slo / 2, Force: true, Rule: quickRule, Store: n.st, Launcher: launcher,
		Log: n.log.Named("profiler"),
	})
	if err != nil {
		return profileKilledForMemory(err, at, n.sup.oomNow(), slices.Max(batches))
	}
	n.events.add(EventProfileJob, store.SeverityInfo, fmt.Sprintf("profiled %s on %s", m.Name, d.ID), map[string]string{"model": m.Name, "device": d.ID})
	return nil
}

// profileLauncher starts the executors of the daemon's profile jobs (with
// shared, beside the serving gpu-lets).
func (n *node) profileLauncher(binary string, shared bool) *profiler.ProcessLauncher {
	return &profiler.ProcessLauncher{Devices: n.devices, Binary: binary, SocketDir: n.sup.sockDirFor(), Library: n.onnxLib,
		Provider: n.conf().ONNXRuntime.Provider, Env: n.engine.env(), Log: n.log.Named("profiler"), Shared: shared}
}

// sockDirFor is a short directory for profiling executors' sockets.
func (s *supervisor) sockDirFor() string {
	p, err := s.socketPath()
	if err != nil {
		s.log.Warn("socket directory", zap.Error(err))
		return s.sockDir
	}
	return filepath.Dir(p)
}

// ProfilerModel is m as the profiler measures it: its file, SLO, batch,
// curve, the shapes requests bring, and how ONNX Runtime opens it (custom
// operator libraries, graph optimization level).
func ProfilerModel(m *repository.Model) profiler.Model {
	return profiler.Model{Name: m.Name, Path: m.File, SHA256: m.SHA256, Platform: m.Platform, SLOMS: ms(m.Config.SLO.D()),
		MaxBatchSize: m.Config.MaxBatchSize, Curve: m.Profile(), Shapes: m.Config.ProfileShapes,
		OpLibraries: m.OpLibraries, GraphLevel: int(m.Config.GraphLevel)}
}
