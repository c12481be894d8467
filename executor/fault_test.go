package executor

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/executor/sched"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

// A failed run is followed by the device check. A device that still runs
// work fails that batch alone and serving goes on; one that failed for good
// answers the batch and every request held UNAVAILABLE, naming the fault,
// and ends Serve with ErrDeviceFault, for the daemon to start a new
// process.
func TestADeviceFaultAnswersEverythingAndEndsServe(t *testing.T) {
	illegal := errors.New("cudaErrorIllegalAddress (CUDA error 700): an illegal memory access was encountered")
	for _, tc := range []struct {
		name  string
		fault error
	}{
		{name: "the device still runs", fault: nil},
		{name: "the context failed for good", fault: illegal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeRuntime{base: 20 * time.Millisecond, failNext: true}
			var checks atomic.Int32
			p, err := sched.ParsePolicy("eager")
			require.NoError(t, err)
			srv, err := NewServer(Options{Runtime: f, Policy: p, Log: zaptest.NewLogger(t), Device: DeviceInfo{Kind: "nvidia", Size: 100},
				DeviceCheck: func() error { checks.Add(1); return tc.fault }})
			require.NoError(t, err)
			defer func() { require.NoError(t, srv.Close()) }()
			sock := filepath.Join(t.TempDir(), "ex.sock")
			ln, err := ListenUnix(sock)
			require.NoError(t, err)
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			served := make(chan error, 1)
			go func() { served <- srv.Serve(ctx, ln) }()
			c, err := Dial(sock)
			require.NoError(t, err)
			defer func() { require.NoError(t, c.Close()) }()
			wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err = c.WaitReady(wctx)
			require.NoError(t, err)
			loadDouble(t, c, "double", time.Second, 1)

			// The first request's batch fails; the second waits behind
			// it (batches of one).
			resps := make([]*pb.InferResponse, 2)
			errs := make([]error, 2)
			var wg sync.WaitGroup
			for i := range 2 {
				if i == 1 {
					time.Sleep(5 * time.Millisecond)
				}
				wg.Go(func() {
					resps[i], errs[i] = c.Infer(context.Background(), &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(1, 0)}})
				})
			}
			wg.Wait()
			require.NoError(t, errs[0])
			require.NoError(t, errs[1])
			require.EqualValues(t, 1, checks.Load(), "one check, after the failed run")

			if tc.fault == nil {
				require.Equal(t, pb.Code_INTERNAL, resps[0].Code)
				require.Equal(t, pb.Code_OK, resps[1].Code)
				stop()
				require.NoError(t, <-served)
				return
			}
			require.Equal(t, pb.Code_INTERNAL, resps[0].Code, "its run failed")
			require.Equal(t, pb.Code_UNAVAILABLE, resps[1].Code, "held: to be sent again")
			for i, r := range resps {
				require.Contains(t, r.Error, "an illegal memory access was encountered", "request %d", i)
			}
			require.Contains(t, resps[0].Error, "run double batch of 1: the device can run nothing more in this process")
			require.Contains(t, resps[0].Error, "(found when a batch of 1 of double failed: cuda error: illegal memory access); the executor restarts")
			require.Contains(t, resps[1].Error, "executor restarting: ")
			select { // Serve ends by itself
			case err = <-served:
			case <-time.After(10 * time.Second):
				t.Fatal("Serve did not end after the device fault")
			}
			require.ErrorIs(t, err, ErrDeviceFault)
			require.ErrorContains(t, err, "serve executor: the device can run nothing more in this process: cudaErrorIllegalAddress")
			require.Equal(t, []int{1}, f.batchSizes(), "the request held is not run on the failed device")
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
	p, err := sched.ParsePolicy("eager")
	require.NoError(t, err)
	srv, err := NewServer(Options{Runtime: f, Policy: p, Log: zaptest.NewLogger(t), Device: DeviceInfo{Kind: "nvidia", Size: 50},
		DeviceCheck: func() error {
			checks.Add(1)
			if failed.Load() {
				return errors.New("cudaErrorMpsClientTerminated (CUDA error 810): the MPS client has been terminated by the server")
			}
			return nil
		}})
	require.NoError(t, err)
	defer func() { require.NoError(t, srv.Close()) }()
	sock := filepath.Join(t.TempDir(), "ex.sock")
	ln, err := ListenUnix(sock)
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	c, err := Dial(sock)
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()
	wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = c.WaitReady(wctx)
	require.NoError(t, err)
	loadDouble(t, c, "double", time.Second, 4)
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
	select {
	case err = <-served:
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not end after the device fault")
	}
	require.ErrorIs(t, err, ErrDeviceFault)
	require.ErrorContains(t, err, "cudaErrorMpsClientTerminated (CUDA error 810): the MPS client has been terminated by the server (found while no batch ran)")
}

// A batch that runs far past its planned time, and past the hang floor, is
// a device that no longer finishes its work: the next health check answers
// what the executor holds UNAVAILABLE, naming the batch, and ends Serve.
func TestAHungBatchIsADeviceFault(t *testing.T) {
	f := &fakeRuntime{base: time.Millisecond}
	p, err := sched.ParsePolicy("eager")
	require.NoError(t, err)
	srv, err := NewServer(Options{Runtime: f, Policy: p, Log: zaptest.NewLogger(t), Device: DeviceInfo{Kind: "nvidia", Size: 100},
		DeviceCheck: func() error { return nil }, HangFloor: 300 * time.Millisecond})
	require.NoError(t, err)
	defer func() { require.NoError(t, srv.Close()) }()
	sock := filepath.Join(t.TempDir(), "ex.sock")
	ln, err := ListenUnix(sock)
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	c, err := Dial(sock)
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()
	wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = c.WaitReady(wctx)
	require.NoError(t, err)
	loadDouble(t, c, "double", time.Minute, 4)
	resp, err := c.Infer(context.Background(), &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(1, 0)}})
	require.NoError(t, err)
	require.Equal(t, pb.Code_OK, resp.Code)

	f.mu.Lock()
	f.hangNext = true
	f.mu.Unlock()
	answered := make(chan *pb.InferResponse, 1)
	failed := make(chan error, 1)
	go func() {
		r, err := c.Infer(context.Background(), &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(1, 0)}})
		if err != nil {
			failed <- err
			return
		}
		answered <- r
	}()
	_, err = c.Health(wctx)
	require.NoError(t, err, "a batch under its limit is no fault")
	time.Sleep(400 * time.Millisecond)
	_, _ = c.Health(wctx) // answered, or cut off as Serve ends
	select {
	case r := <-answered:
		require.Equal(t, pb.Code_INTERNAL, r.Code, "its run failed")
		require.Contains(t, r.Error, "run double batch of 1: the device can run nothing more in this process: a batch of 1 of double has run for")
		require.Contains(t, r.Error, "the device does not finish its work")
	case err := <-failed:
		t.Fatalf("the request held was not answered: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the request held was not answered")
	}
	select {
	case err = <-served:
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not end after the hung batch")
	}
	require.ErrorIs(t, err, ErrDeviceFault)
}

func TestHangLimit(t *testing.T) {
	l := &loop{s: &Server{opts: Options{HangFloor: 30 * time.Second}}}
	j := &job{model: &modelEntry{name: "resnet50"}, slots: make([]slot, 8), start: 0, end: 2 * time.Second}
	require.NoError(t, l.hung(j, 39*time.Second), "under 20 times its 2 s")
	err := l.hung(j, 40*time.Second)
	require.ErrorIs(t, err, ErrDeviceFault)
	require.EqualError(t, err, "the device can run nothing more in this process: a batch of 8 of resnet50 has run for 40s, planned for 2s: the device does not finish its work")
	j.end = 10 * time.Millisecond
	require.NoError(t, l.hung(j, 29*time.Second), "under the floor")
	require.Error(t, l.hung(j, 30*time.Second))
}
