package daemon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/executor"
	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/mps"
	"github.com/gpulet/gpuletd/profiler/store"
)

// Stand-ins for `gpuletd executor` (shell scripts; $0 is the script).
const (
	// crashThenHang exits at once with status 3 (a crash) the first time;
	// every later start records its pid in $0.relaunched and never answers
	// (an executor still loading).
	crashThenHang = "if [ -e \"$0.ran\" ]; then echo $$ > \"$0.relaunched\"; exec sleep 600; fi\n" +
		": > \"$0.ran\"\n" +
		"exit 3\n"
	// alwaysCrash exits at once with status 3, adding a line to $0.runs.
	alwaysCrash = "echo run >> \"$0.runs\"\nexit 3\n"
	// neverAnswers records its pid in $0.first the first time, in
	// $0.relaunched after, and never answers (a wedged executor).
	neverAnswers = "if [ -e \"$0.first\" ]; then echo $$ > \"$0.relaunched\"; else echo $$ > \"$0.first\"; fi\n" +
		"exec sleep 600\n"
)

// fakeExecutor writes a stand-in for `gpuletd executor` into dir.
func fakeExecutor(t *testing.T, dir, body string) string {
	t.Helper()
	script := filepath.Join(dir, "executor.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\n"+body), 0o755))
	return script
}

// testSupervisor supervises executors run from binary on one core of the
// CPU, recording events in a store of its own.
func testSupervisor(t *testing.T, binary string) (*supervisor, *store.Store) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(ctx, filepath.Join(dir, "g.db"))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	devices, err := mps.New(mps.Options{Spec: mps.Spec{Mode: mps.ModeCPU}, CPUs: []int{0}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, devices.Close(ctx)) })
	return &supervisor{devices: devices, events: newEvents(st, zap.NewNop()), log: zap.NewNop(),
		sockDir: filepath.Join(dir, "run"), binary: binary, running: map[string]*gpuletRun{}}, st
}

// fakeSupervisor supervises the fake executor body (testSupervisor).
func fakeSupervisor(t *testing.T, body string) (*supervisor, *store.Store) {
	t.Helper()
	return testSupervisor(t, fakeExecutor(t, t.TempDir(), body))
}

// supervisedNode is a node around s, with its router and an empty catalog,
// for the supervisor's calls into the node.
func supervisedNode(t *testing.T, s *supervisor) *node {
	t.Helper()
	return &node{sup: s, router: newRouter(), log: zap.NewNop(), events: s.events,
		catalog: newCatalog([]string{t.TempDir()}, testRepositoryOptions(0), nil, s.events, zap.NewNop())}
}

// fakePID waits for a fake executor that writes its PID to "$0.pid" to
// have written it, and returns it.
func fakePID(t *testing.T, s *supervisor) int {
	t.Helper()
	var pid int
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(s.binary + ".pid")
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	}, 30*time.Second, 10*time.Millisecond)
	return pid
}

// firstEvent waits for st's first event, retires g and returns the event.
func firstEvent(t *testing.T, s *supervisor, st *store.Store, g *gpuletRun) store.Event {
	t.Helper()
	ctx := context.Background()
	require.Eventually(t, func() bool { return len(eventKinds(t, st)) > 0 }, 30*time.Second, 10*time.Millisecond)
	require.NoError(t, s.retire(ctx, g))
	evs, err := st.Events(ctx, 0, 0)
	require.NoError(t, err)
	return evs[0]
}

// eventKinds lists the store's events as kind/severity.
func eventKinds(t *testing.T, st *store.Store) []string {
	t.Helper()
	evs, err := st.Events(context.Background(), 0, 0)
	require.NoError(t, err)
	var kinds []string
	for _, e := range evs {
		kinds = append(kinds, e.Kind+"/"+string(e.Severity))
	}
	return kinds
}

// cpuRun is a gpu-let of the whole CPU supervised by s, serving models,
// leased and not started.
func cpuRun(t *testing.T, s *supervisor, models ...*pb.LoadModelRequest) *gpuletRun {
	t.Helper()
	dev, err := s.devices.Inventory().Device("cpu")
	require.NoError(t, err)
	sp := gpuletSpec{device: dev, size: 100}
	id := s.newID(dev, sp.size)
	lease, err := s.lease(id, sp)
	require.NoError(t, err)
	return s.newRun(id, sp, lease, models)
}

// monitoredRun is a CPU gpu-let supervised by s, serving models, whose
// executor is the fake one, already started (and about to crash), watched
// by monitor.
func monitoredRun(t *testing.T, s *supervisor, models ...*pb.LoadModelRequest) *gpuletRun {
	t.Helper()
	return monitorRun(t, s, cpuRun(t, s, models...))
}

// monitorRun starts g's executor, the fake one, and watches it by monitor.
func monitorRun(t *testing.T, s *supervisor, g *gpuletRun) *gpuletRun {
	t.Helper()
	spawnFake(t, s, g)
	go g.monitor()
	return g
}

// spawnFake starts g's executor, the fake one, as g's process, and returns
// its socket's path.
func spawnFake(t *testing.T, s *supervisor, g *gpuletRun) string {
	t.Helper()
	sock, err := s.socketPath()
	require.NoError(t, err)
	p, err := executor.Spawn(executor.SpawnOptions{Binary: s.binary, Socket: sock})
	require.NoError(t, err)
	g.proc = p
	s.mu.Lock()
	s.running[g.id] = g
	s.mu.Unlock()
	return sock
}

// Retiring a gpu-let whose executor crashed and is being started again
// (spawned, not yet ready: a model still loading, a TensorRT engine still
// building) abandons that start: the new process is killed, the lease given
// back and no failed restart reported. Before, retire (and so a plan change
// or the daemon's shutdown) waited for the start to finish or to time out
// after two minutes, and a crashed executor's client was never closed: it
// kept redialling the dead executor's socket (goleak sees its goroutines).
func TestRetireAbandonsARestartUnderWay(t *testing.T) {
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) }) // after the cleanups below
	ctx := context.Background()
	s, st := fakeSupervisor(t, crashThenHang)
	script := s.binary
	g := monitoredRun(t, s)
	var pid int
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(script + ".relaunched")
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	}, 30*time.Second, 10*time.Millisecond, "the crashed executor was not started again")
	require.True(t, g.down.Load(), "the router must skip a gpu-let whose executor is down")

	retired := make(chan error, 1)
	go func() { retired <- s.retire(ctx, g) }()
	select {
	case err := <-retired:
		require.NoError(t, err)
	case <-time.After(readyTimeout / 2):
		t.Fatal("retire waited for the restart under way")
	}
	require.ErrorIs(t, syscall.Kill(pid, 0), syscall.ESRCH, "the executor being started must be killed")
	require.Empty(t, s.list())
	again, err := s.lease("again", gpuletSpec{device: g.device, size: 100})
	require.NoError(t, err, "the lease must be given back")
	again.Release()

	require.Equal(t, []string{EventExecutorRestart + "/" + string(store.SeverityWarning), EventExecutorStop + "/" + string(store.SeverityInfo)},
		eventKinds(t, st), "a restart abandoned by retire is not a failure")
}

// An executor that cannot be started again is tried with backoff for as long
// as the gpu-let runs, and its failures are said at the 1st, 2nd, 4th, 8th…
// time (and when the reason changes): before, every try (one per 10 s at
// most) added an error event.
func TestFailedRestartsAreSaidLessAndLessOften(t *testing.T) {
	ctx := context.Background()
	s, st := fakeSupervisor(t, alwaysCrash)
	n := supervisedNode(t, s)
	s.onRestart = n.restartTried
	g := monitoredRun(t, s, &pb.LoadModelRequest{Name: "a"})
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(s.binary + ".runs")
		return err == nil && strings.Count(string(b), "run") >= 6 // the crash and five restarts
	}, time.Minute, 10*time.Millisecond)
	// Its model says why it is not served, so the node's readiness does not
	// wait for it (other models serve).
	require.Equal(t, stateUnservable, n.modelState("a", n.router.models()))
	require.Contains(t, n.notServedReason("a"), "died and does not start again")
	require.NoError(t, s.retire(ctx, g))
	runs, err := os.ReadFile(s.binary + ".runs")
	require.NoError(t, err)
	tries := strings.Count(string(runs), "run") - 1
	failed := 0
	for _, k := range eventKinds(t, st) {
		if k == EventExecutorRestart+"/"+string(store.SeverityError) {
			failed++
		}
	}
	// Failures 1, 2, 4 (and 8 if the eighth try came before retire).
	want := 3
	if tries >= 8 {
		want = 4
	}
	require.Equal(t, want, failed, "%d failed restarts", tries)
}

// An executor that stops answering its health checks (wedged in a driver
// call, stopped) is killed after healthFailures missed checks and started
// again; one already found silent with requests waiting (stalled) at its
// first miss.
func TestAnExecutorThatStopsAnsweringIsKilledAndStartedAgain(t *testing.T) {
	for _, stalled := range []bool{false, true} {
		t.Run(fmt.Sprintf("stalled=%v", stalled), func(t *testing.T) {
			s, st := fakeSupervisor(t, neverAnswers)
			s.healthEvery = 20 * time.Millisecond
			if stalled {
				// Only its stall can have it killed: misses every 20 ms
				// never reach this many within the test.
				s.healthMisses = 1 << 30
			}
			stopsAnswering(t, s, st, stalled)
		})
	}
}

// stopsAnswering runs the fake executor that never answers under s (marked
// stalled from the start when stalled is set) and checks that it is killed
// and started again, and the event that says so.
func stopsAnswering(t *testing.T, s *supervisor, st *store.Store, stalled bool) {
	t.Helper()
	ctx := context.Background()
	g := cpuRun(t, s)
	if stalled {
		g.stall.Store(&stallMark{client: &silentExecutor{}, gen: g.gen.Load(), since: time.Now()})
	}
	g = monitorRun(t, s, g)
	pidIn := func(file string) int {
		b, err := os.ReadFile(s.binary + file)
		if err != nil {
			return 0
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		return pid
	}
	require.Eventually(t, func() bool { return pidIn(".relaunched") != 0 }, time.Minute, 10*time.Millisecond,
		"the wedged executor was not started again")
	require.ErrorIs(t, syscall.Kill(pidIn(".first"), 0), syscall.ESRCH, "the wedged executor is killed")
	require.NoError(t, s.retire(ctx, g))
	evs, err := st.Events(ctx, 0, 0)
	require.NoError(t, err)
	require.Equal(t, EventExecutorRestart, evs[0].Kind)
	require.Equal(t, "signal: killed", evs[0].Attrs["exit"])
	require.Equal(t, "executor did not answer its health checks and was killed; restarting it", evs[0].Message)
	require.Equal(t, "1", evs[0].Attrs["restarts"])
}

// An executor retired while a run of it does not end cannot stop when
// asked (its worker never returns) and is killed past its grace, or dies
// of the signal, as the fake does; the daemon is then told what it was
// running (its running file), as for an executor that failed, so that a
// request unanswered well past its deadline in that run becomes a suspect
// (crash_suspects.go). One that stops when asked tells nothing.
func TestRetiringAStuckExecutorSaysWhatItRan(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		told       [][]uint64
	}{
		// The running file names request 7; sleep ends on SIGTERM, as a
		// process does whose run holds its loop.
		{"stuck", `printf '\001\000\000\000\000\000\000\000\007\000\000\000\000\000\000\000' > "$3.running"` + "\nexec sleep 600\n", [][]uint64{{7}}},
		// The trap is set before the running file is written, which the
		// test waits for: a TERM before it would kill the shell.
		{"stops cleanly", "trap 'exit 0' TERM\n" + `printf '\001\000\000\000\000\000\000\000\007\000\000\000\000\000\000\000' > "$3.running"` + "\nwhile :; do sleep 0.05; done\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := fakeSupervisor(t, tc.body)
			var told [][]uint64
			s.onExit = func(_ *gpuletRun, _ uint64, cause endCause, running []uint64) {
				require.Equal(t, endStopped, cause, "stopped, not crashed")
				told = append(told, running)
			}
			g := cpuRun(t, s)
			sock := spawnFake(t, s, g)
			close(g.done) // no monitor: retire alone stops it
			waitRunningFile(t, sock)
			err := s.retire(context.Background(), g)
			require.ErrorContains(t, err, "connect", "the fake serves no drain")
			require.Equal(t, tc.told, told)
		})
	}
}

// runs reads what a live executor runs now from its running file: the
// request it names, on the generation asked about.
func TestRunsReadsTheLiveRunningFile(t *testing.T) {
	s, _ := fakeSupervisor(t, `printf '\001\000\000\000\000\000\000\000\007\000\000\000\000\000\000\000' > "$3.running"`+"\nexec sleep 600\n")
	g := cpuRun(t, s)
	sock := spawnFake(t, s, g)
	t.Cleanup(func() { _ = g.proc.Kill() })
	waitRunningFile(t, sock)
	gen := g.gen.Load()
	require.True(t, g.runs(gen, 7), "request 7 runs")
	require.False(t, g.runs(gen, 8), "request 8 does not")
	require.False(t, g.runs(gen+1, 7), "another executor's request 7")

	// What the crash suspects ask: false only where the running file was
	// read and does not name the request.
	n := supervisedNode(t, s)
	require.True(t, n.runsNow(executorGen{g.id, gen}, 7))
	require.False(t, n.runsNow(executorGen{g.id, gen}, 8))
	require.True(t, n.runsNow(executorGen{g.id, gen + 1}, 8), "another executor, which cannot be asked")
	require.True(t, n.runsNow(executorGen{"cpu-100-9", gen}, 8), "a gpu-let no longer served")
	p := g.proc
	g.mu.Lock()
	g.proc = nil // as retire has it while it stops the executor
	g.mu.Unlock()
	require.True(t, n.runsNow(executorGen{g.id, gen}, 8), "an executor being stopped cannot be asked")
	g.mu.Lock()
	g.proc = p
	g.mu.Unlock()
}

// waitRunningFile waits until the fake executor on sock has written its
// running file whole (a count and an id): its shell creates the file
// before it writes it.
func waitRunningFile(t *testing.T, sock string) {
	t.Helper()
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(executor.RunningFilePath(sock))
		return err == nil && len(b) >= 16
	}, 10*time.Second, 10*time.Millisecond)
}
