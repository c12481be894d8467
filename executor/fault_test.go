package executor

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/executor/cudart"
	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/executor/sched"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

// A failed run is followed by the device check. A device that still runs
// work fails that batch alone and serving goes on; one that failed for good
// answers the batch INTERNAL and every request held UNAVAILABLE, naming the
// fault, and ends Serve with ErrDeviceFault, for the daemon to start a new
// process.
func TestADeviceFaultAnswersEverythingAndEndsServe(t *testing.T) {
	illegal := &cudart.ContextError{Code: 700, Name: "cudaErrorIllegalAddress", Text: "an illegal memory access was encountered"}
	for _, tc := range []struct {
		name  string
		fault error
		named bool // the running file names the batch that found it
	}{
		{name: "the device still runs", fault: nil},
		{name: "the context failed for good: a kernel's illegal address", fault: illegal, named: true},
		{name: "the context failed for good: another process's fault", fault: &cudart.ContextError{Code: 810,
			Name: "cudaErrorMpsClientTerminated", Text: "the MPS client has been terminated by the server; an illegal memory access was encountered"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ex.sock.running")
			rf, err := CreateRunningFile(path)
			require.NoError(t, err)
			t.Cleanup(func() { _ = rf.Close(path) })
			// The failing run takes 100 ms: the second request, sent
			// 5 ms after the first, is queued behind it.
			f := &fakeRuntime{base: 100 * time.Millisecond, failNext: true}
			var checks atomic.Int32
			fs := serveFaulting(t, f, Options{DeviceCheck: func() error { checks.Add(1); return tc.fault }, Running: rf}, 1)
			c := fs.c

			// The first request's batch fails; the second waits behind
			// it (batches of one).
			resps := make([]*pb.InferResponse, 2)
			errs := make([]error, 2)
			reqs := make([]*pb.InferRequest, 2)
			var wg sync.WaitGroup
			for i := range 2 {
				if i == 1 {
					time.Sleep(5 * time.Millisecond)
				}
				reqs[i] = &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(1, 0)}}
				wg.Go(func() {
					resps[i], errs[i] = c.Infer(context.Background(), reqs[i])
				})
			}
			wg.Wait()
			require.NoError(t, errs[0])
			require.NoError(t, errs[1])
			require.EqualValues(t, 1, checks.Load(), "one check, after the failed run")

			if tc.fault == nil {
				require.Equal(t, pb.Code_INTERNAL, resps[0].Code)
				require.Equal(t, pb.Code_OK, resps[1].Code)
				fs.stop()
				require.NoError(t, <-fs.served)
				return
			}
			require.Equal(t, pb.Code_INTERNAL, resps[0].Code, "its run failed")
			require.False(t, resps[0].NotRun)
			require.True(t, resps[0].DeviceFault, "for the daemon, which matches it with the running file")
			require.False(t, resps[1].DeviceFault)
			require.Equal(t, pb.Code_UNAVAILABLE, resps[1].Code, "held: to be sent again")
			require.True(t, resps[1].NotRun, "another gpu-let may take it")
			for i, r := range resps {
				require.Contains(t, r.Error, "an illegal memory access was encountered", "request %d", i)
			}
			require.Contains(t, resps[0].Error, "run double batch of 1: the device can run nothing more in this process")
			require.Contains(t, resps[0].Error, "(found when a batch of 1 of double failed: cuda error: illegal memory access); the executor restarts")
			require.Contains(t, resps[1].Error, "executor restarting: ")
			err = fs.ended(t)
			require.ErrorIs(t, err, ErrDeviceFault)
			require.ErrorContains(t, err, "serve executor: the device can run nothing more in this process: "+tc.fault.Error())
			require.Equal(t, []int{1}, f.batchSizes(), "the request held is not run on the failed device")
			if tc.named {
				require.Equal(t, []uint64{reqs[0].Id}, readRunning(path), "the batch whose kernel faulted, for the daemon")
			} else {
				require.Empty(t, readRunning(path), "not a fault of the run's own")
			}
		})
	}
}

// An executor whose device fails while it runs nothing (under MPS, another
// client's fault) finds it at its next health check, once it has run a
// batch, and ends Serve.
func TestAnIdleExecutorFindsADeviceFaultAtItsHealthCheck(t *testing.T) {
	f := &fakeRuntime{base: time.Millisecond}
	var checks atomic.Int32
	var failed atomic.Bool
	fs := serveFaulting(t, f, Options{DeviceCheck: func() error {
		checks.Add(1)
		if failed.Load() {
			return errors.New("cudaErrorMpsClientTerminated (CUDA error 810): the MPS client has been terminated by the server")
		}
		return nil
	}}, 4)
	c := fs.c
	wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.EqualValues(t, 0, checks.Load(), "no check before a batch ran: the context may not exist yet")

	resp, err := c.Infer(context.Background(), &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(1, 0)}})
	require.NoError(t, err)
	require.Equal(t, pb.Code_OK, resp.Code)
	h, err := c.Health(wctx)
	require.NoError(t, err)
	require.True(t, h.Serving)
	require.EqualValues(t, 1, checks.Load(), "a health check asks an idle device")

	failed.Store(true)
	_, _ = c.Health(wctx) // answered, or cut off as Serve ends: the daemon sees the exit
	err = fs.ended(t)
	require.ErrorIs(t, err, ErrDeviceFault)
	require.ErrorContains(t, err, "cudaErrorMpsClientTerminated (CUDA error 810): the MPS client has been terminated by the server (found while no batch ran)")
}

// A batch that runs far past its planned time, and past the hang floor, is
// a device that no longer finishes its work, or on an executor without a
// device check (the CPU) a run that does not end: the next health check
// answers what the executor holds, naming the batch, and ends Serve; the
// running file still names the batch's request, for the daemon.
func TestAHungBatchEndsServe(t *testing.T) {
	for _, tc := range []struct {
		name  string
		check func() error
		said  string
		hung  bool
		first bool // the batch that hangs is the executor's first
	}{
		{"a GPU", func() error { return nil }, "the device does not finish its work", false, false},
		{"the CPU", nil, "its run does not end (a custom operator that loops or waits for good, a deadlock)", true, false},
		{"the CPU's first batch", nil, "its run does not end", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ex.sock.running")
			rf, err := CreateRunningFile(path)
			require.NoError(t, err)
			t.Cleanup(func() { _ = rf.Close(path) })
			f := &fakeRuntime{base: time.Millisecond}
			fs := serveFaulting(t, f, Options{DeviceCheck: tc.check, HangFloor: 300 * time.Millisecond, Running: rf}, 4)
			c := fs.c
			wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if !tc.first {
				resp, err := c.Infer(context.Background(), &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(1, 0)}})
				require.NoError(t, err)
				require.Equal(t, pb.Code_OK, resp.Code)
			}

			f.mu.Lock()
			f.hangNext = true
			f.mu.Unlock()
			answered := make(chan *pb.InferResponse, 1)
			failed := make(chan error, 1)
			req := &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(1, 0)}}
			go func() {
				r, err := c.Infer(context.Background(), req)
				if err != nil {
					failed <- err
					return
				}
				answered <- r
			}()
			// Health checks, as the daemon makes them, until one finds the
			// batch past its limit (TestHangLimit checks the limit itself);
			// each is answered, or cut off as Serve ends.
			var r *pb.InferResponse
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for r == nil {
				select {
				case r = <-answered:
				case err := <-failed:
					t.Fatalf("the request held was not answered: %v", err)
				case <-wctx.Done():
					t.Fatal("the request held was not answered")
				case <-tick.C:
					_, _ = c.Health(wctx)
				}
			}
			require.Equal(t, pb.Code_INTERNAL, r.Code, "its run failed")
			require.Contains(t, r.Error, "run double batch of 1: the device can run nothing more in this process: ")
			require.Contains(t, r.Error, "a batch of 1 of double has run for")
			require.Contains(t, r.Error, tc.said)
			require.Equal(t, []uint64{req.Id}, readRunning(path), "the hung batch is named still")
			err = fs.ended(t)
			require.ErrorIs(t, err, ErrDeviceFault)
			require.Equal(t, tc.hung, errors.Is(err, ErrRunHung))
		})
	}
}

func TestHangLimit(t *testing.T) {
	l := &loop{s: &Server{opts: Options{HangFloor: 30 * time.Second, DeviceCheck: func() error { return nil }}}}
	j := &job{model: &modelEntry{name: "resnet50"}, slots: make([]slot, 8), start: 0, end: 2 * time.Second}
	require.NoError(t, l.hung(j, 39*time.Second), "under 20 times its 2 s")
	err := l.hung(j, 40*time.Second)
	require.ErrorIs(t, err, ErrDeviceFault)
	require.EqualError(t, err, "the device can run nothing more in this process: a batch of 8 of resnet50 has run for 40s, planned for 2s: the device does not finish its work")
	j.end = 10 * time.Millisecond
	require.NoError(t, l.hung(j, 29*time.Second), "under the floor")
	require.Error(t, l.hung(j, 30*time.Second))
	l.s.opts.DeviceCheck = nil // the CPU: the same limit, another cause
	require.NoError(t, l.hung(j, 29*time.Second))
	err = l.hung(j, 30*time.Second)
	require.ErrorIs(t, err, ErrRunHung)
	require.ErrorIs(t, err, ErrDeviceFault)
}

// faultServer is an executor serving on a socket whose Serve may end by
// itself (a device fault): stop cancels it, served gives its error.
type faultServer struct {
	c      *Client
	stop   context.CancelFunc
	served chan error
}

// serveFaulting serves a fake runtime with policy eager and the device
// check given, on nvidia, loads "double" with the batch cap maxBatch, and
// returns the server running once a client found it ready.
func serveFaulting(t *testing.T, f *fakeRuntime, opts Options, maxBatch int32) *faultServer {
	t.Helper()
	p, err := sched.ParsePolicy("eager")
	require.NoError(t, err)
	opts.Runtime, opts.Policy, opts.Log, opts.Device = f, p, zaptest.NewLogger(t), DeviceInfo{Kind: "nvidia", Size: 100}
	srv, err := NewServer(opts)
	require.NoError(t, err)
	sock := filepath.Join(t.TempDir(), "ex.sock")
	ln, err := ListenUnix(sock)
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	fs := &faultServer{stop: stop, served: make(chan error, 1)}
	go func() { fs.served <- srv.Serve(ctx, ln) }()
	fs.c, err = Dial(sock)
	require.NoError(t, err)
	t.Cleanup(func() {
		stop()
		require.NoError(t, fs.c.Close())
		require.NoError(t, srv.Close())
	})
	wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = fs.c.WaitReady(wctx)
	require.NoError(t, err)
	loadDouble(t, fs.c, "double", time.Minute, maxBatch)
	return fs
}

// ended waits for Serve to end by itself and returns its error.
func (fs *faultServer) ended(t *testing.T) error {
	t.Helper()
	select {
	case err := <-fs.served:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not end after the device fault")
		return nil
	}
}

// A request that runs alone (a suspect) in a batch with others: its part's
// kernel faults the device; no more parts run, the running file names that
// part alone for the daemon, the request is answered with the fault, the
// others, not run, are handed back for another gpu-let, and Serve ends.
func TestAKernelFaultInAPartNamesThatPart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ex.sock.running")
	rf, err := CreateRunningFile(path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = rf.Close(path) })
	f := &fakeRuntime{base: 30 * time.Millisecond}
	var failed atomic.Bool
	fs := serveFaulting(t, f, Options{Running: rf, DeviceCheck: func() error {
		if failed.Load() {
			return &cudart.ContextError{Code: 700, Name: "cudaErrorIllegalAddress", Text: "an illegal memory access was encountered"}
		}
		return nil
	}}, 16)
	c := fs.c

	first := make(chan *pb.InferResponse, 1)
	go func() {
		r, _ := c.Infer(context.Background(), &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(1, 1)}})
		first <- r
	}()
	require.Eventually(t, func() bool { return len(f.batchSizes()) == 1 }, 5*time.Second, time.Millisecond, "the first batch runs")
	f.mu.Lock()
	f.failNext = true // the next run: the part of the request that runs alone
	f.mu.Unlock()
	failed.Store(true)
	reqs := make([]*pb.InferRequest, 4)
	resps := make([]*pb.InferResponse, 4)
	var wg sync.WaitGroup
	for i := range reqs {
		reqs[i] = &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(1, float32(10*i))}, Alone: i == 2}
		wg.Go(func() { resps[i], _ = c.Infer(context.Background(), reqs[i]) })
	}
	wg.Wait()
	require.Equal(t, pb.Code_OK, (<-first).Code)
	require.Equal(t, []int{1, 1}, f.batchSizes(), "the first batch, then the part alone; the others' part did not run")
	for i, r := range resps {
		require.NotNil(t, r, "request %d", i)
		require.Contains(t, r.Error, "an illegal memory access was encountered")
		if i == 2 {
			require.Equal(t, pb.Code_INTERNAL, r.Code, "its run faulted: %s", r.Error)
			require.False(t, r.NotRun)
			require.True(t, r.DeviceFault)
			continue
		}
		require.Equal(t, pb.Code_UNAVAILABLE, r.Code, "request %d: %s", i, r.Error)
		require.True(t, r.NotRun, "request %d did not run: another gpu-let may take it", i)
	}
	require.Equal(t, []uint64{reqs[2].Id}, readRunning(path), "the part that faulted, alone")
	require.ErrorIs(t, fs.ended(t), ErrDeviceFault)
}
