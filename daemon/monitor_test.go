package daemon

import (
	"context"
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
	"github.com/gpulet/gpuletd/mps"
	"github.com/gpulet/gpuletd/profiler/store"
)

// fakeExecutor writes a stand-in for `gpuletd executor` into dir: the first
// start exits at once with status 3 (a crash); every later one records its
// pid in <script>.relaunched and never answers (an executor still loading).
func fakeExecutor(t *testing.T, dir string) string {
	t.Helper()
	script := filepath.Join(dir, "executor.sh")
	body := "#!/bin/sh\n" +
		"if [ -e \"$0.ran\" ]; then echo $$ > \"$0.relaunched\"; exec sleep 600; fi\n" +
		": > \"$0.ran\"\n" +
		"exit 3\n"
	require.NoError(t, os.WriteFile(script, []byte(body), 0o755))
	return script
}

// monitoredRun is a CPU gpu-let supervised by s whose executor is the fake
// one, already started (and about to crash), watched by monitor.
func monitoredRun(t *testing.T, s *supervisor) *gpuletRun {
	t.Helper()
	dev, err := s.devices.Inventory().Device("cpu")
	require.NoError(t, err)
	sp := gpuletSpec{device: dev, size: 100}
	id := s.newID(dev, sp.size)
	lease, err := s.lease(id, sp)
	require.NoError(t, err)
	g := s.newRun(id, sp, lease, nil)
	sock, err := s.socketPath()
	require.NoError(t, err)
	p, err := executor.Spawn(executor.SpawnOptions{Binary: s.binary, Socket: sock})
	require.NoError(t, err)
	g.proc = p
	s.mu.Lock()
	s.running[id] = g
	s.mu.Unlock()
	go g.monitor()
	return g
}

// Retiring a gpu-let whose executor crashed and is being started again
// (spawned, not yet ready: a model still loading, a TensorRT engine still
// building) abandons that start: the new process is killed, the lease given
// back and no failed restart reported. Before, retire (and so a plan change
// or the daemon's shutdown) waited for the start to finish or to time out
// after two minutes, and a crashed executor's client was never closed: it
// kept redialling the dead executor's socket (goleak sees its goroutines).
func TestRetireAbandonsARestartUnderWay(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(ctx, filepath.Join(dir, "g.db"))
	require.NoError(t, err)
	defer func() { require.NoError(t, st.Close()) }()
	devices, err := mps.New(mps.Options{Spec: mps.Spec{Mode: mps.ModeCPU}, CPUs: []int{0}})
	require.NoError(t, err)
	defer func() { require.NoError(t, devices.Close(ctx)) }()
	script := fakeExecutor(t, dir)
	s := &supervisor{devices: devices, events: newEvents(st, zap.NewNop()), log: zap.NewNop(),
		sockDir: filepath.Join(dir, "run"), binary: script, running: map[string]*gpuletRun{}}

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

	evs, err := st.Events(ctx, 0, 100)
	require.NoError(t, err)
	var kinds []string
	for _, e := range evs {
		kinds = append(kinds, e.Kind+"/"+string(e.Severity))
		require.False(t, e.Kind == EventExecutorRestart && e.Severity == store.SeverityError,
			"a restart abandoned by retire is not a failure: %s %v", e.Message, e.Attrs)
	}
	require.Equal(t, []string{EventExecutorRestart + "/" + string(store.SeverityWarning), EventExecutorStop + "/" + string(store.SeverityInfo)}, kinds)
}
