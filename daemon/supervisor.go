package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpulet/gpuletd/control"
	"github.com/gpulet/gpuletd/executor"
	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/executor/sched"
	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/internal/bytefmt"
	"github.com/gpulet/gpuletd/internal/memcg"
	"github.com/gpulet/gpuletd/internal/monoclock"
	"github.com/gpulet/gpuletd/mps"
	"github.com/gpulet/gpuletd/profiler/store"
	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
)

// Supervision timings.
const (
	readyTimeout    = 2 * time.Minute // spawn, load and warm up
	healthInterval  = 2 * time.Second
	healthTimeout   = 2 * time.Second
	healthFailures  = 3 // missed health checks before an executor is killed
	restartBackoff0 = 100 * time.Millisecond
	restartBackoffN = 10 * time.Second
	stopGrace       = 10 * time.Second
)

// supervisor starts, watches, restarts and stops the executor processes of
// the node's gpu-lets.
type supervisor struct {
	devices  *mps.Manager
	events   *events
	log      *zap.Logger
	sockDir  string
	tmpSock  string // a private socket directory made by socketPath; removed by retireAll
	sockHome string // the runtime socket directory, which records tmpSock (privateSockRecord)
	binary   string // gpuletd binary; empty: this one
	argsMu   sync.Mutex
	args     []string // flags for every executor
	env      []string // added to every executor's environment (LD_LIBRARY_PATH)
	onState  func(*gpuletRun, *pb.ExecutorState)
	// onModelsLost hears of an executor restarted without some of its
	// models (each with why it did not load again).
	onModelsLost func(*gpuletRun, map[string]error)
	// onRestart hears of each try to start a dead executor again: nil when
	// it serves again, else why it did not start.
	onRestart func(*gpuletRun, error)
	// onExit hears of each executor's end: its generation, how it ended
	// (crashed or a run of it did not end, a kernel of its run faulted
	// the GPU, or otherwise: its restart event's cause), and the requests
	// its engine was running then (executor.Process.Running).
	onExit   func(g *gpuletRun, gen uint64, cause endCause, running []uint64)
	nextID   atomic.Uint64
	sockSeq  atomic.Uint64
	mu       sync.Mutex
	running  map[string]*gpuletRun
	restarts atomic.Int64
	// healthEvery is how often monitor asks each executor for its health;
	// 0: healthInterval.
	healthEvery time.Duration
	// healthMisses is how many missed health checks in a row kill an
	// executor; 0: healthFailures. One is enough for an executor already
	// found silent with requests waiting (stall.go).
	healthMisses int
	// oomHolds keeps gpu-lets whose start the kernel killed for memory
	// from starting again at once.
	oomHolds oomHolds
	// retry wakes executors waiting to be started again (an operator
	// asked for a new plan).
	retry retryNow
	// memGroup is the memory cgroup the daemon runs in, and its executors
	// with it (nil: none to read).
	memGroup *memcg.Group
	// oomLook reads the kernel's counts of out-of-memory kills; nil:
	// /proc/vmstat and memGroup (lookOOM).
	oomLook func() oomCounts
}

// gpuletRun is one running gpu-let: its lease on the device, its executor
// process (replaced when it dies) and the models loaded on it.
type gpuletRun struct {
	id     string
	device mps.Device
	size   int
	lease  *mps.Lease
	sup    *supervisor
	log    *zap.Logger

	mu       sync.Mutex
	proc     *executor.Process
	out      *childLog     // where proc's output goes: its last error, should it end
	planned  gpulet.GPULet // the plan gpu-let it runs
	models   map[string]*pb.LoadModelRequest
	loaded   map[string]*pb.LoadModelResponse
	restarts int
	oomAt    oomCounts // the kernel's out-of-memory kills when its executor started
	health   *pb.HealthResponse
	policy   string // the batch scheduling policy its executor runs (started with, or switched to by a reload)

	nextTry  atomic.Int64                     // when a dead executor is tried again (Unix ns); 0: not waiting
	lastRSS  atomic.Int64                     // its executor's resident memory at the last health check
	pushed   atomic.Pointer[pb.ExecutorState] // the executor's last published state
	busy     busyHistory                      // its executors' busy time of late (busy_window.go)
	down     atomic.Bool                      // no executor answers now: the router skips it
	stall    atomic.Pointer[stallMark]        // its executor went silent with requests in flight: the router skips it (stall.go)
	gen      atomic.Uint64                    // counts its executors: a restart's is another (stall.go)
	draining atomic.Bool                      // being retired: the router skips it
	requests inflight                         // requests routed here and not yet answered
	// life ends when the gpu-let is retired (end): monitor stops, and a
	// restart it has under way (spawn, load, warm-up) is abandoned.
	life context.Context
	end  context.CancelFunc
	done chan struct{} // closed when monitor has returned
}

// busyRatio is the share of its executor's uptime the gpu-let ran batches,
// and that uptime, from the state the executor last pushed; false before
// the first.
func (g *gpuletRun) busyRatio(now time.Time) (ratio float64, up time.Duration, ok bool) {
	st := g.pushed.Load()
	if st == nil || st.StartedMonoNs == 0 {
		return 0, 0, false
	}
	up = now.Sub(monoclock.Time(st.StartedMonoNs))
	if up <= 0 {
		return 0, 0, false
	}
	return min(1, float64(time.Duration(st.BusyUs)*time.Microsecond)/float64(up)), up, true
}

// tookState keeps st, a state the executor pushed.
func (g *gpuletRun) tookState(st *pb.ExecutorState) {
	if started, s, ok := busyOfState(st); ok {
		g.busy.add(started, s.at, s.busy)
	}
	g.pushed.Store(st)
}

// recentBusy is the share of the last busyWindow the gpu-let ran batches,
// from the states its executor pushed; false before the first.
func (g *gpuletRun) recentBusy(now time.Time) (float64, bool) {
	if _, s, ok := busyOfState(g.pushed.Load()); ok {
		return g.busy.ratio(now, s)
	}
	return 0, false
}

// busyOfState is when the executor that pushed st started and what it had
// run by when; false for no state, or one that does not say.
func busyOfState(st *pb.ExecutorState) (started time.Time, s busySample, ok bool) {
	if st == nil || st.StartedMonoNs == 0 || st.AtMonoNs == 0 {
		return time.Time{}, busySample{}, false
	}
	return monoclock.Time(st.StartedMonoNs), busySample{at: monoclock.Time(st.AtMonoNs), busy: time.Duration(st.BusyUs) * time.Microsecond}, true
}

// servedOn is what one model's requests came to on a gpu-let since its
// executor started.
type servedOn struct {
	// batched is the requests its batches ran; batches, how many ran.
	batched, batches int64
	// received is the requests the executor received; failed, those it
	// answered with an error. (batched counts rows: a request of several
	// rows runs as several.)
	received, failed int64
	// factor is how much longer than profiled its batches ran lately (the
	// executor's calibration; at least 1).
	factor float64
}

// served is what each model's requests came to on the gpu-let, from the
// state its executor last pushed.
func (g *gpuletRun) served() map[string]servedOn {
	out := map[string]servedOn{}
	if st := g.pushed.Load(); st != nil {
		for _, ms := range st.Models {
			out[ms.Name] = servedOn{batched: ms.BatchedRequests, batches: ms.Batches, received: ms.Requests, failed: ms.Failed,
				factor: max(ms.LatencyFactor, 1)}
		}
	}
	return out
}

// maxRows is the most rows a request of model may carry on the gpu-let:
// the max batch size it was loaded with, the largest batch measured at the
// gpu-let's size when that is below the model's own (loadRequest); 0 when
// the model does not batch or is not loaded here.
func (g *gpuletRun) maxRows(model string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if req := g.models[model]; req != nil {
		return int(req.MaxBatchSize)
	}
	return 0
}

// healthNow is the executor's last Health answer (nil before the first).
func (g *gpuletRun) healthNow() *pb.HealthResponse {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.health
}

// client returns the current executor's client (nil while down).
func (g *gpuletRun) client() *executor.Client {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.proc == nil {
		return nil
	}
	return g.proc.Client
}

// gpuletSpec is a gpu-let to start: its device and size, and on NVIDIA
// GPUs the engine's memory cap and, on MIG, its instance.
type gpuletSpec struct {
	device      mps.Device
	size        int
	memLimitMB  int
	migInstance string
	takeOver    []string // mps.Gpulet.TakeOver
}

// newID names a gpu-let: <device>-<size>-<sequence>.
func (s *supervisor) newID(dev mps.Device, size int) string {
	return fmt.Sprintf("%s-%d-%d", dev.ID, size, s.nextID.Add(1))
}

// lease reserves a gpu-let's device share under id.
func (s *supervisor) lease(id string, sp gpuletSpec) (*mps.Lease, error) {
	g := mps.Gpulet{ID: id, Device: sp.device.ID, Size: sp.size, MemoryLimitMB: sp.memLimitMB, MIGInstance: sp.migInstance, TakeOver: sp.takeOver}
	if sp.migInstance != "" {
		g.Size = 0 // the instance's own size
	}
	lease, err := s.devices.Lease(g)
	if err != nil {
		return nil, fmt.Errorf("start gpu-let %s: %w", id, err)
	}
	return lease, nil
}

// start leases the gpu-let, starts its executor, loads and warms up the
// models and starts watching it. Models the executor refuses to load are
// named in a *control.ModelsNotLoaded returned with the running gpu-let.
func (s *supervisor) start(ctx context.Context, sp gpuletSpec, models []*pb.LoadModelRequest) (*gpuletRun, error) {
	key := startKey(sp, models)
	if err := s.oomHolds.check(key, time.Now(), s.oomNow); err != nil {
		return nil, fmt.Errorf("start gpu-let on %s: %w", sp.device.ID, err)
	}
	id := s.newID(sp.device, sp.size)
	lease, err := s.lease(id, sp)
	if err != nil {
		return nil, err
	}
	g, err := s.startLeased(ctx, id, sp, lease, models)
	if wait := s.oomHolds.done(key, time.Now(), err); wait > 0 {
		s.events.add(EventExecutorStart, store.SeverityError, fmt.Sprintf("gpu-let %s did not start: the kernel killed its executor for memory while it loaded its models; not tried again for %s", id, wait),
			map[string]string{"gpulet": id, "device": sp.device.ID, "size": strconv.Itoa(sp.size), "models": strings.Join(modelNamesOf(models), ","), "error": err.Error(), "cause": "oom", "retry_after": wait.String()})
	}
	return g, err
}

// modelNamesOf lists the names of models, sorted.
func modelNamesOf(models []*pb.LoadModelRequest) []string {
	names := make([]string, 0, len(models))
	for _, m := range models {
		names = append(names, m.Name)
	}
	slices.Sort(names)
	return names
}

// startLeased is start with the lease already taken; it releases the lease
// when the gpu-let does not start.
func (s *supervisor) startLeased(ctx context.Context, id string, sp gpuletSpec, lease *mps.Lease, models []*pb.LoadModelRequest) (*gpuletRun, error) {
	dev, size := sp.device, sp.size
	g := s.newRun(id, sp, lease, models)
	var notLoaded *control.ModelsNotLoaded
	if err := g.launch(ctx); err != nil && !errors.As(err, &notLoaded) {
		g.end()
		lease.Release()
		return nil, fmt.Errorf("start gpu-let %s: %w", id, err)
	}
	s.mu.Lock()
	s.running[id] = g
	s.mu.Unlock()
	attrs := map[string]string{
		"gpulet": id, "device": dev.ID, "size": strconv.Itoa(size), "pid": strconv.Itoa(g.proc.Pid()), "models": g.modelList(),
	}
	if sp.migInstance != "" {
		attrs["mig_instance"] = sp.migInstance
	}
	if h := g.healthNow(); h != nil {
		// What the executor's engine actually got, kept in the store.
		attrs["provider"] = h.Provider
		if h.SmCount > 0 {
			attrs["sm_count"] = strconv.Itoa(int(h.SmCount))
		}
		if h.MemoryBytes > 0 {
			attrs["memory_bytes"] = strconv.FormatInt(h.MemoryBytes, 10)
		}
		if h.MemoryLimitBytes > 0 {
			attrs["memory_limit_bytes"] = strconv.FormatInt(h.MemoryLimitBytes, 10)
		}
		if h.SmCount > 0 && dev.Kind == mps.KindNVIDIA && size == 100 && sp.migInstance == "" {
			if err := s.devices.SetSMCount(dev.ID, int(h.SmCount)); err != nil {
				g.log.Warn("record SM count", zap.Error(err))
			}
		}
	}
	s.events.add(EventExecutorStart, store.SeverityInfo, "executor started", attrs)
	go g.monitor()
	if notLoaded != nil {
		return g, notLoaded
	}
	return g, nil
}

// newRun is a gpu-let with its lease and models, before its executor is
// launched and monitored.
func (s *supervisor) newRun(id string, sp gpuletSpec, lease *mps.Lease, models []*pb.LoadModelRequest) *gpuletRun {
	g := &gpuletRun{id: id, device: sp.device, size: sp.size, lease: lease, sup: s, oomAt: oomCounts{host: -1}, log: s.log.With(zap.String("gpulet", id)),
		models: map[string]*pb.LoadModelRequest{}, loaded: map[string]*pb.LoadModelResponse{},
		done: make(chan struct{})}
	g.life, g.end = context.WithCancel(context.Background())
	for _, m := range models {
		g.models[m.Name] = m
	}
	return g
}

// launch spawns an executor, waits for it and loads every model. A model
// the executor refuses to load (its engine cannot take the file, the device
// lacks the memory) is dropped from the gpu-let and named in a
// *control.ModelsNotLoaded, and the others serve; unless none loaded. Any
// other failure stops the executor.
func (g *gpuletRun) launch(ctx context.Context) error {
	s := g.sup
	sock, err := s.socketPath()
	if err != nil {
		return err
	}
	out := newChildLog(g.log.Named("executor"))
	args := s.execArgs()
	if g.device.Kind != mps.KindNVIDIA {
		args = withoutFlag(args, "--provider") // it runs ONNX Runtime's CPU provider there
	}
	oom := s.oomNow()
	var p *executor.Process
	p, err = executor.Spawn(executor.SpawnOptions{Binary: s.binary, Socket: sock, Env: append(g.lease.Env(), s.env...), Args: args, Output: out})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	if err := p.WaitReady(ctx); err != nil {
		return s.failedStart(p, oom, err)
	}
	h, err := p.Client.Health(ctx)
	if err != nil {
		return s.failedStart(p, oom, err)
	}
	g.mu.Lock()
	models := make([]*pb.LoadModelRequest, 0, len(g.models))
	for _, m := range g.models {
		models = append(models, m)
	}
	g.mu.Unlock()
	loaded := map[string]*pb.LoadModelResponse{}
	refused := map[string]error{}
	for _, m := range models {
		resp, err := p.Client.LoadModel(ctx, m)
		if err != nil {
			err = fmt.Errorf("load %s: %w", m.Name, err)
			if !modelRefused(err, p) {
				return s.failedStart(p, oom, err)
			}
			refused[m.Name] = err
			continue
		}
		loaded[m.Name] = resp
	}
	if len(loaded) == 0 && len(refused) > 0 {
		_ = p.Kill()
		return errors.Join(slices.Collect(maps.Values(refused))...)
	}
	g.mu.Lock()
	g.proc, g.out, g.health, g.policy, g.oomAt = p, out, h, flagValue(args, "--policy"), oom
	for k, v := range loaded {
		g.loaded[k] = v
	}
	for name := range refused {
		delete(g.models, name)
	}
	g.mu.Unlock()
	g.gen.Add(1) // a new executor: the old one's silence is over
	g.stall.Store(nil)
	g.down.Store(false)
	g.watchState(p)
	if len(refused) > 0 {
		return &control.ModelsNotLoaded{Errs: refused}
	}
	return nil
}

// flagValue is the value that follows flag in args ("" when absent).
func flagValue(args []string, flag string) string {
	if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

// modelRefused says whether a load failed for the model's own sake (the
// executor answered that it cannot take it) rather than the executor's (it
// died, stopped answering, or is draining).
func modelRefused(err error, p *executor.Process) bool {
	select {
	case <-p.Done():
		return false
	default:
	}
	switch grpcstatus.Code(err) {
	case codes.InvalidArgument, codes.ResourceExhausted:
		return true
	}
	return false
}

// watchState feeds the router with the executor's scheduler state until the
// executor goes away or the gpu-let stops. The state comes on the framed
// connection the requests use, read by its own reader goroutine.
func (g *gpuletRun) watchState(p *executor.Process) {
	err := p.Client.WatchState(sched.PublishInterval, func(st *pb.ExecutorState) {
		if g.life.Err() != nil {
			return
		}
		g.tookState(st)
		if g.sup.onState != nil {
			g.sup.onState(g, st)
		}
	})
	if err != nil {
		g.log.Warn("executor state not watched: routing predicts without it", zap.Error(err))
	}
}

// monitor health-checks the executor and restarts it when it dies, until
// the gpu-let is retired (its life ends), which also abandons a restart
// under way.
func (g *gpuletRun) monitor() {
	defer close(g.done)
	backoff := restartBackoff0
	missed := 0
	unanswered := false // the executor now dying was killed for its missed health checks
	every := g.sup.healthEvery
	if every <= 0 {
		every = healthInterval
	}
	misses := g.sup.healthMisses
	if misses <= 0 {
		misses = healthFailures
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		g.mu.Lock()
		p := g.proc
		g.mu.Unlock()
		select {
		case <-g.life.Done():
			return
		case <-tick.C:
			g.heardAgain(time.Now())
			if b, err := residentBytes(procFS, p.Pid()); err == nil {
				g.lastRSS.Store(b) // for its restart event, should it die
			}
			ctx, cancel := context.WithTimeout(g.life, healthTimeout)
			_, err := p.Client.Health(ctx)
			cancel()
			if err == nil {
				missed = 0
				backoff = restartBackoff0
				continue
			}
			if g.life.Err() != nil {
				return
			}
			// An executor that also left requests unanswered, saying
			// nothing, is killed at its first miss: two signs agree, and
			// its models may have no other gpu-let.
			if missed++; missed < misses && !g.stalled() {
				continue
			}
			g.log.Warn("executor does not answer health checks; killing it", zap.Error(err), zap.Int("missed", missed), zap.Bool("stalled", g.stalled()))
			unanswered = true
			_ = p.Kill()
			continue
		case <-p.Done():
		}
		// The executor died: in-flight calls already failed (its client saw
		// the stream break). Its client is closed (it would otherwise keep
		// redialling the dead executor's socket), and it is restarted with
		// backoff.
		_ = p.Client.Close()
		g.down.Store(true)
		g.sup.restarts.Add(1)
		g.mu.Lock()
		g.restarts++
		n, oomAt, out := g.restarts, g.oomAt, g.out
		g.proc, g.out = nil, nil
		g.mu.Unlock()
		msg, attrs := exitWords(p.ExitErr(), unanswered, out.lastError(), oomAt, g.sup.oomNow())
		if b := g.lastRSS.Swap(0); b > 0 {
			// Which executor was large, when the kernel chose among them.
			attrs["resident_before"] = bytefmt.Size(b)
		}
		unanswered = false
		attrs["gpulet"], attrs["restarts"], attrs["backoff"], attrs["models"] = g.id, strconv.Itoa(n), backoff.String(), g.modelList()
		g.sup.events.add(EventExecutorRestart, store.SeverityWarning, msg, attrs)
		if g.sup.onExit != nil {
			// A run that crashed the process, never ended or faulted the
			// GPU: what ran then may be the cause.
			running := p.Running()
			g.sup.onExit(g, g.gen.Load(), endCauseOf(attrs["cause"], running), running)
		}
		failures, said := 0, ""
		var killedUnder int64 // the memory limit a start the kernel killed was under
		for {
			g.nextTry.Store(time.Now().Add(backoff).UnixNano())
			woken := g.sup.waitToRestart(g.life, backoff, killedUnder)
			g.nextTry.Store(0)
			if !woken {
				return
			}
			err := g.launch(g.life)
			var lost *control.ModelsNotLoaded
			if errors.As(err, &lost) {
				g.lostModels(lost)
				err = nil
			}
			if g.life.Err() != nil {
				return // retired while restarting: not a failure to report
			}
			if g.sup.onRestart != nil {
				g.sup.onRestart(g, err)
			}
			if err == nil {
				missed = 0
				break
			}
			backoff, killedUnder = nextRestartBackoff(backoff, err), 0
			if killed, ok := asKilledForMemory(err); ok {
				killedUnder = killed.limit
			}
			// Said at the 1st, 2nd, 4th, 8th… failure, and when the
			// reason changes: an executor that cannot start for an hour
			// (backoff at most 10 s) makes a dozen events, not hundreds.
			failures++
			if why := withoutNumbers(err.Error()); why != said || failures&(failures-1) == 0 {
				said = why
				g.sup.events.add(EventExecutorRestart, store.SeverityError, "executor restart failed", map[string]string{
					"gpulet": g.id, "error": err.Error(), "next_backoff": backoff.String(), "failures": strconv.Itoa(failures), "models": g.modelList(),
				})
			}
		}
	}
}

// lostModels reports the models an executor restarted without (their file
// is gone or changed, the device lacks the memory now): the others serve,
// and the next re-plan tries to load them again.
func (g *gpuletRun) lostModels(lost *control.ModelsNotLoaded) {
	g.sup.events.add(EventExecutorRestart, store.SeverityError, "executor restarted without some of its models: "+lost.Error(),
		map[string]string{"gpulet": g.id, "models": strings.Join(slices.Sorted(maps.Keys(lost.Errs)), ",")})
	if g.sup.onModelsLost != nil {
		g.sup.onModelsLost(g, lost.Errs)
	}
}

// loadModel adds a model to a running gpu-let.
func (g *gpuletRun) loadModel(ctx context.Context, m *pb.LoadModelRequest) error {
	c := g.client()
	if c == nil {
		return fmt.Errorf("load %s on %s: executor is restarting", m.Name, g.id)
	}
	resp, err := c.LoadModel(ctx, m)
	if err != nil {
		return fmt.Errorf("load %s on %s: %w", m.Name, g.id, err)
	}
	g.mu.Lock()
	g.models[m.Name], g.loaded[m.Name] = m, resp
	g.mu.Unlock()
	return nil
}

// unloadModel removes a model from a running gpu-let.
func (g *gpuletRun) unloadModel(ctx context.Context, name string) error {
	g.mu.Lock()
	delete(g.models, name)
	delete(g.loaded, name)
	g.mu.Unlock()
	c := g.client()
	if c == nil {
		return nil // relaunch will not load it
	}
	return c.UnloadModel(ctx, name)
}

// modelNames lists the models on the gpu-let, sorted.
func (g *gpuletRun) modelNames() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Sorted(maps.Keys(g.models))
}

// modelList is modelNames comma-separated, as an executor's events name
// them (the attribute models), so that a model's history (gpuletd events
// --model) holds its executor's starts, exits and stops.
func (g *gpuletRun) modelList() string { return strings.Join(g.modelNames(), ",") }

// retire drains the executor (its queued requests finish), stops it and
// gives the lease back.
func (s *supervisor) retire(ctx context.Context, g *gpuletRun) error {
	g.draining.Store(true)
	wctx, cancel := context.WithTimeout(ctx, stopGrace)
	drainErr := g.requests.closeAndWait(wctx)
	cancel()
	if drainErr != nil {
		drainErr = fmt.Errorf("wait for requests routed to %s: %w", g.id, drainErr)
	}
	if c := g.client(); c != nil {
		dctx, cancel := context.WithTimeout(ctx, stopGrace)
		_, err := c.Drain(dctx)
		drainErr = errors.Join(drainErr, err)
		cancel()
	}
	g.end()
	<-g.done
	g.mu.Lock()
	p := g.proc
	g.proc = nil
	g.mu.Unlock()
	var stopErr error
	if p != nil {
		stopErr = p.Stop(stopGrace)
		if s.onExit != nil && p.ExitErr() != nil {
			// It did not stop cleanly (killed past its grace, or dead of
			// the signal): a run may not have ended, and what ran then
			// may be why (crash_suspects.go).
			s.onExit(g, g.gen.Load(), endStopped, p.Running())
		}
	}
	g.lease.Release()
	s.mu.Lock()
	delete(s.running, g.id)
	s.mu.Unlock()
	s.events.add(EventExecutorStop, store.SeverityInfo, "executor stopped"+failedThere(g.served()), map[string]string{"gpulet": g.id, "models": g.modelList()})
	return errors.Join(drainErr, stopErr)
}

// failedThere says, for a retired gpu-let's event, which models' requests
// failed on it (its executor's last pushed counts, which the status no
// longer shows once it is gone): "" when none did.
func failedThere(served map[string]servedOn) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(served)) {
		if c := served[name]; c.failed > 0 {
			parts = append(parts, fmt.Sprintf("%s %d of %d", name, c.failed, c.received))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "; requests that failed on it: " + strings.Join(parts, ", ")
}

// retireAll stops every gpu-let (daemon shutdown).
func (s *supervisor) retireAll(ctx context.Context) error {
	s.mu.Lock()
	all := make([]*gpuletRun, 0, len(s.running))
	for _, g := range s.running {
		all = append(all, g)
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	errs := make([]error, len(all))
	for i, g := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.retire(ctx, g)
		}()
	}
	wg.Wait()
	s.argsMu.Lock()
	if s.tmpSock != "" {
		errs = append(errs, os.RemoveAll(s.tmpSock))
		if err := os.Remove(filepath.Join(s.sockHome, privateSockRecord)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	s.argsMu.Unlock()
	return errors.Join(errs...)
}

// list returns the running gpu-lets.
func (s *supervisor) list() []*gpuletRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*gpuletRun, 0, len(s.running))
	for _, g := range s.running {
		out = append(out, g)
	}
	return out
}

func (s *supervisor) execArgs() []string {
	s.argsMu.Lock()
	defer s.argsMu.Unlock()
	return append([]string(nil), s.args...)
}

// withoutFlag is args less a flag given as "--name value".
func withoutFlag(args []string, name string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		if args[i] == name {
			i++ // and its value
			continue
		}
		out = append(out, args[i])
	}
	return out
}

func (s *supervisor) setArgs(args []string) {
	s.argsMu.Lock()
	s.args = args
	s.argsMu.Unlock()
}

// maxSocketPath is the longest Unix socket path Linux accepts (sun_path is
// 108 bytes with its terminating NUL), with a margin.
const maxSocketPath = 100

// privateSockRecord is the file in the runtime socket directory that names
// the private socket directory in use, so that a daemon started after one
// that was killed (and could not clean up) removes it.
const privateSockRecord = "private-socket-dir"

func recordPrivateDir(home, dir string) error {
	if err := os.MkdirAll(home, 0o750); err != nil {
		return fmt.Errorf("record private socket directory: %w", err)
	}
	if err := os.WriteFile(filepath.Join(home, privateSockRecord), []byte(dir), 0o600); err != nil {
		return fmt.Errorf("record private socket directory: %w", err)
	}
	return nil
}

// removeStalePrivateDir removes the private socket directory a previous
// daemon recorded in home, when it is one of ours: gpuletd-* right in the
// temporary directory.
func removeStalePrivateDir(home string) {
	b, err := os.ReadFile(filepath.Join(home, privateSockRecord))
	if err != nil {
		return
	}
	dir := filepath.Clean(strings.TrimSpace(string(b)))
	if filepath.Dir(dir) == filepath.Clean(os.TempDir()) && strings.HasPrefix(filepath.Base(dir), "gpuletd-") {
		_ = os.RemoveAll(dir)
	}
}

// socketPath names a new executor socket: short names in the runtime
// directory, or in a private temporary directory when the runtime directory
// is too deep for a socket path.
func (s *supervisor) socketPath() (string, error) {
	name := fmt.Sprintf("x%d.sock", s.sockSeq.Add(1))
	s.argsMu.Lock()
	defer s.argsMu.Unlock()
	if len(filepath.Join(s.sockDir, name)) > maxSocketPath {
		removeStalePrivateDir(s.sockDir)
		dir, err := os.MkdirTemp("", "gpuletd-")
		if err != nil {
			return "", fmt.Errorf("make a socket directory: %w", err)
		}
		if err := recordPrivateDir(s.sockDir, dir); err != nil {
			s.log.Warn("record the private socket directory; a killed daemon would leave it behind", zap.Error(err))
		}
		s.sockHome = s.sockDir
		s.log.Warn("runtime directory is too deep for Unix sockets; executor sockets go to a private temporary directory",
			zap.String("runtime_dir", s.sockDir), zap.String("sockets", dir))
		s.sockDir, s.tmpSock = dir, dir
	}
	return filepath.Join(s.sockDir, name), nil
}
