package executor

import (
	"bufio"
	"context"
	"errors"
	"net"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/executor/sched"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/internal/monoclock"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

// startFake serves a Server with a fake runtime on a real Unix socket.
func startFake(t *testing.T, f *fakeRuntime, policy string) *Client {
	t.Helper()
	_, c := startFakeServer(t, f, policy)
	return c
}

// startFakeServer is startFake that also returns the server.
func startFakeServer(t *testing.T, f *fakeRuntime, policy string) (*Server, *Client) {
	t.Helper()
	return startServer(t, f, policy)
}

// startServer serves rt with the policy on a socket until the test ends
// and returns the server and a client that found it ready.
func startServer(t testing.TB, rt Runtime, policy string) (*Server, *Client) {
	t.Helper()
	return startServerWith(t, Options{Runtime: rt}, policy)
}

// startServerWith is startServer with more options.
func startServerWith(t testing.TB, opts Options, policy string) (*Server, *Client) {
	t.Helper()
	p, err := sched.ParsePolicy(policy)
	require.NoError(t, err)
	opts.Policy, opts.Log, opts.Device = p, zaptest.NewLogger(t), DeviceInfo{Kind: "cpu", Size: 100}
	srv, err := NewServer(opts)
	require.NoError(t, err)
	sock, stop := serveOnSocket(t, srv)
	c, err := Dial(sock)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, c.Close())
		require.NoError(t, stop())
		require.NoError(t, srv.Close())
	})
	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer wcancel()
	_, err = c.WaitReady(wctx)
	require.NoError(t, err)
	return srv, c
}

// serveOnSocket serves srv on a new Unix socket; stop ends Serve and
// returns its error.
func serveOnSocket(t testing.TB, srv *Server) (sock string, stop func() error) {
	t.Helper()
	sock = filepath.Join(t.TempDir(), "ex.sock")
	ln, err := ListenUnix(sock)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	return sock, func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			return errors.New("serve did not return")
		}
	}
}

func loadDouble(t testing.TB, c *Client, name string, slo time.Duration, maxBatch int32) {
	t.Helper()
	_, err := c.LoadModel(context.Background(), &pb.LoadModelRequest{Name: name, Path: "ok", MaxBatchSize: maxBatch, SloUs: slo.Microseconds()})
	require.NoError(t, err)
}

func xInput(rows int, v float32) *pb.Tensor {
	vals := make([]float32, 4*rows)
	for i := range vals {
		vals[i] = v + float32(i)
	}
	x, _ := tensor.FromFloat32s("x", []int64{int64(rows), 4}, vals)
	return toProto([]tensor.Tensor{x})[0]
}

func outVals(t *testing.T, r *pb.InferResponse, name string) []float32 {
	t.Helper()
	for _, o := range r.Outputs {
		if o.Name == name {
			ts, err := fromProto([]*pb.Tensor{o})
			require.NoError(t, err)
			v, err := ts[0].Float32s()
			require.NoError(t, err)
			return v
		}
	}
	t.Fatalf("no output %s", name)
	return nil
}

// inferConcurrently sends n single-row requests at once, request i with
// input values from i, and returns the answers in order once every one is
// OK (the checks run here, not in the senders' goroutines).
func inferConcurrently(t *testing.T, c *Client, model string, n int) []*pb.InferResponse {
	t.Helper()
	resps := make([]*pb.InferResponse, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			resps[i], errs[i] = c.Infer(context.Background(), &pb.InferRequest{Model: model, Inputs: []*pb.Tensor{xInput(1, float32(i))}})
		})
	}
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i])
		require.Equal(t, pb.Code_OK, resps[i].Code, resps[i].Error)
	}
	return resps
}

func TestConcurrentRequestsAreBatchedAndAnsweredCorrectly(t *testing.T) {
	f := &fakeRuntime{base: 2 * time.Millisecond, perRow: 100 * time.Microsecond}
	c := startFake(t, f, "deferred")
	loadDouble(t, c, "double", 50*time.Millisecond, 16)

	for i, resp := range inferConcurrently(t, c, "double", 64) {
		require.Equal(t, []float32{2 * float32(i), 2*float32(i) + 2, 2*float32(i) + 4, 2*float32(i) + 6}, outVals(t, resp, "y"))
		require.Positive(t, resp.BatchSize)
	}
	sizes := f.batchSizes()
	sum, largest := 0, 0
	for _, b := range sizes {
		sum += b
		largest = max(largest, b)
	}
	require.Equal(t, 64, sum)
	require.Greater(t, largest, 1, "concurrent requests form batches: %v", sizes)

	st, err := c.Stats(context.Background())
	require.NoError(t, err)
	require.Len(t, st.Models, 1)
	require.Equal(t, int64(64), st.Models[0].Succeeded)
	require.Equal(t, int64(len(sizes)), st.Models[0].Batches)
}

// TestEveryBatchRunsOnOneThread: with OneRunThread (executors on NVIDIA
// GPUs) the worker runs every batch on one OS thread, however the Go
// scheduler moves goroutines between threads (the CUDA provider keeps state
// per thread that runs a session; see worker).
func TestEveryBatchRunsOnOneThread(t *testing.T) {
	f := &fakeRuntime{base: 200 * time.Microsecond}
	_, c := startServerWith(t, Options{Runtime: f, OneRunThread: true}, "eager")
	loadDouble(t, c, "double", 50*time.Millisecond, 4)
	for range 10 {
		inferConcurrently(t, c, "double", 32)
		time.Sleep(5 * time.Millisecond)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	require.Len(t, f.threads, 1, "batches per thread: %v", f.threads)
}

func TestAnswerSaysHowLongTheExecutorHeldIt(t *testing.T) {
	f := &fakeRuntime{base: 2 * time.Millisecond, input: 300 * time.Microsecond, output: 40 * time.Microsecond}
	c := startFake(t, f, "eager")
	loadDouble(t, c, "double", 50*time.Millisecond, 8)
	start := time.Now()
	resp, err := c.Infer(context.Background(), &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(1, 1)}})
	trip := time.Since(start)
	require.NoError(t, err)
	require.Equal(t, pb.Code_OK, resp.Code, resp.Error)
	require.GreaterOrEqual(t, resp.HeldUs, resp.QueueUs+resp.ComputeUs, "held from the frame's read to the answer's write: queue and compute inside it")
	require.GreaterOrEqual(t, resp.HeldUs, int64(2000), "the batch's 2 ms are inside it")
	require.Equal(t, int64(300_000), resp.ComputeInputNs, "what its batch's run said of its inputs")
	require.Equal(t, int64(40_000), resp.ComputeOutputNs, "and of its outputs")
	require.LessOrEqual(t, resp.HeldUs, trip.Microseconds(), "inside the client's round trip")

	bad, err := c.Infer(context.Background(), &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(9, 1)}})
	require.NoError(t, err)
	require.Equal(t, pb.Code_INVALID_ARGUMENT, bad.Code)
	require.Zero(t, bad.HeldUs, "refused by the connection's reader, not measured")
}

func TestMultiRowRequestAndOutputSelection(t *testing.T) {
	f := &fakeRuntime{base: time.Millisecond}
	c := startFake(t, f, "eager")
	loadDouble(t, c, "double", 50*time.Millisecond, 8)
	resp, err := c.Infer(context.Background(), &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(3, 1)}, Outputs: []string{"y"}})
	require.NoError(t, err)
	require.Equal(t, pb.Code_OK, resp.Code, resp.Error)
	require.Len(t, resp.Outputs, 1)
	require.Equal(t, []int64{3, 4}, resp.Outputs[0].Shape)
	require.Equal(t, []int{3}, f.batchSizes(), "the rows of one request run as one batch, even under eager")
	require.Equal(t, int32(3), resp.BatchSize)
	v := outVals(t, resp, "y")
	for i := range v {
		require.Equal(t, 2*(1+float32(i)), v[i])
	}
}

func TestBadRequestsAreAnsweredAloneAndServingGoesOn(t *testing.T) {
	f := &fakeRuntime{base: time.Millisecond}
	c := startFake(t, f, "eager") // the point is bad input, not timing
	loadDouble(t, c, "double", 50*time.Millisecond, 4)
	i64, _ := tensor.Zeros("x", tensor.Int64, []int64{1, 4})
	tests := []struct {
		name string
		req  *pb.InferRequest
		code pb.Code
		msg  string
	}{
		{"unknown model", &pb.InferRequest{Model: "nope", Inputs: []*pb.Tensor{xInput(1, 0)}}, pb.Code_NOT_FOUND, "not loaded"},
		{"wrong dtype", &pb.InferRequest{Model: "double", Inputs: toProto([]tensor.Tensor{i64})}, pb.Code_INVALID_ARGUMENT, "INT64"},
		{"wrong shape", &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{{Name: "x", Datatype: "FP32", Shape: []int64{1, 3}, Data: make([]byte, 12)}}}, pb.Code_INVALID_ARGUMENT, "[1 3]"},
		{"byte length", &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{{Name: "x", Datatype: "FP32", Shape: []int64{1, 4}, Data: make([]byte, 15)}}}, pb.Code_INVALID_ARGUMENT, "needs 16 bytes"},
		{"bad dtype name", &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{{Name: "x", Datatype: "FLOAT", Shape: []int64{1, 4}, Data: make([]byte, 16)}}}, pb.Code_INVALID_ARGUMENT, "FLOAT"},
		{"unknown output", &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(1, 0)}, Outputs: []string{"w"}}, pb.Code_INVALID_ARGUMENT, `"w"`},
		{"too many rows", &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(5, 0)}}, pb.Code_INVALID_ARGUMENT, "exceed max_batch_size"},
		{"zero rows", &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{{Name: "x", Datatype: "FP32", Shape: []int64{0, 4}}}}, pb.Code_INVALID_ARGUMENT, "at least one row"},
		{"deadline passed", &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(1, 0)}, DeadlineMonoNs: monoclock.Of(time.Now().Add(-time.Second))}, pb.Code_DEADLINE, "deadline"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := c.Infer(context.Background(), tc.req)
			require.NoError(t, err)
			require.Equal(t, tc.code, resp.Code, resp.Error)
			require.Contains(t, resp.Error, tc.msg)
			ok, err := c.Infer(context.Background(), &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(1, 1)}})
			require.NoError(t, err)
			require.Equal(t, pb.Code_OK, ok.Code, "the executor keeps serving: %s", ok.Error)
		})
	}
	_, err := c.LoadModel(context.Background(), &pb.LoadModelRequest{Name: "b", Path: "broken", MaxBatchSize: 1, SloUs: 1000})
	require.Equal(t, "load model b from broken: protobuf parsing failed", status.Convert(err).Message(), "the runtime's error, which names the model once")
}

func TestEngineFailureFailsTheBatchOnly(t *testing.T) {
	f := &fakeRuntime{base: time.Millisecond, failNext: true}
	c := startFake(t, f, "eager")
	loadDouble(t, c, "double", 50*time.Millisecond, 4)
	resp, err := c.Infer(context.Background(), &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(1, 0)}})
	require.NoError(t, err)
	require.Equal(t, pb.Code_INTERNAL, resp.Code)
	require.Contains(t, resp.Error, "illegal memory access")
	resp, err = c.Infer(context.Background(), &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(1, 0)}})
	require.NoError(t, err)
	require.Equal(t, pb.Code_OK, resp.Code)
}

// A request whose data the model cannot take fails the run of every
// request batched with it: the batch runs again in halves until the bad
// request runs alone, so that the others are answered and it alone is
// refused as bad input.
func TestARequestTheModelRefusesFailsAlone(t *testing.T) {
	f := &fakeRuntime{base: 2 * time.Millisecond, perRow: 100 * time.Microsecond}
	c := startFake(t, f, "deferred")
	loadDouble(t, c, "double", 500*time.Millisecond, 16) // time for the runs apart: correctness is under test
	const n = 32
	resps := make([]*pb.InferResponse, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			v := float32(i)
			if i%4 == 0 {
				v = -1 - v // poison
			}
			resps[i], errs[i] = c.Infer(context.Background(), &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(1, v)}})
		})
	}
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i])
		if i%4 == 0 {
			require.Equal(t, pb.Code_INVALID_ARGUMENT, resps[i].Code, "refused as bad input: %s", resps[i].Error)
			require.Contains(t, resps[i].Error, "out of range")
			continue
		}
		require.Equal(t, pb.Code_OK, resps[i].Code, "request %d answered though batched with bad ones: %s", i, resps[i].Error)
		require.Equal(t, 2*float32(i), outVals(t, resps[i], "y")[0])
	}
	require.Greater(t, slices.Max(f.batchSizes()), 1, "concurrent requests formed batches: %v", f.batchSizes())
	st, err := c.Stats(context.Background())
	require.NoError(t, err)
	require.Equal(t, int64(n-n/4), st.Models[0].Succeeded)
}

// inferBehindABatch sends f's model "double" (30 ms a batch) a request of
// 1 and, once its batch runs, one request of each value of values at once:
// queued behind it, they run as f's next batch, which it checks. It returns
// their answers in order, the first one's checked answered.
func inferBehindABatch(t *testing.T, c *Client, f *fakeRuntime, values []float32) []*pb.InferResponse {
	t.Helper()
	first := make(chan *pb.InferResponse, 1)
	go func() {
		r, _ := c.Infer(context.Background(), &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(1, 1)}})
		first <- r
	}()
	require.Eventually(t, func() bool { return len(f.batchSizes()) == 1 }, 5*time.Second, time.Millisecond, "the first batch runs")
	resps := make([]*pb.InferResponse, len(values))
	errs := make([]error, len(values))
	var wg sync.WaitGroup
	for i, v := range values {
		wg.Go(func() {
			resps[i], errs[i] = c.Infer(context.Background(), &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(1, v)}})
		})
	}
	wg.Wait()
	require.Equal(t, pb.Code_OK, (<-first).Code)
	require.Equal(t, len(values), f.batchSizes()[1], "the others formed one batch: %v", f.batchSizes())
	for i := range values {
		require.NoError(t, errs[i])
	}
	return resps
}

// A request the model's run fails on otherwise than ONNX Runtime blames on
// inputs, batched with others that then run apart, is refused as bad
// input too: the model ran the others.
func TestARequestTheModelFailsOnAmongOthersIsBadInput(t *testing.T) {
	f := &fakeRuntime{base: 30 * time.Millisecond}
	c := startFake(t, f, "eager")
	loadDouble(t, c, "double", 2*time.Second, 16) // time for the runs apart: correctness is under test
	values := make([]float32, 15)
	for i := range values {
		values[i] = float32(i + 1)
	}
	values[2] = -1000
	resps := inferBehindABatch(t, c, f, values)
	for i, r := range resps {
		if i != 2 {
			require.Equal(t, pb.Code_OK, r.Code, "request %d: %s", i, r.Error)
		}
	}
	require.Equal(t, pb.Code_INVALID_ARGUMENT, resps[2].Code, resps[2].Error)
	require.Contains(t, resps[2].Error, "apart from the others of its batch of 15, which failed and whose other requests then ran: the model cannot take its inputs")
	require.Contains(t, resps[2].Error, "Reshape")
}

// A request the model's run fails on, alone in its batch, is refused as bad
// input when the model then runs a zero-filled request of its own (at most
// one such run a second: within it the last one's outcome stands), and is
// the model's failure, INTERNAL, when that fails too.
func TestARequestTheModelFailsOnAloneIsProbed(t *testing.T) {
	f := &fakeRuntime{base: time.Millisecond}
	c := startFake(t, f, "eager")
	loadDouble(t, c, "double", time.Second, 16)
	infer := func(v float32) *pb.InferResponse {
		t.Helper()
		r, err := c.Infer(context.Background(), &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(1, v)}})
		require.NoError(t, err)
		return r
	}
	bad := infer(-1000)
	require.Equal(t, pb.Code_INVALID_ARGUMENT, bad.Code, bad.Error)
	require.Contains(t, bad.Error, "Reshape node; the model then ran a zero-filled request of its own: it cannot take these inputs")
	require.Equal(t, []int{1, 1}, f.batchSizes(), "the request's run, then the probe's")
	require.Equal(t, pb.Code_INVALID_ARGUMENT, infer(-1000).Code)
	require.Len(t, f.batchSizes(), 3, "not probed again within a second")
	require.Equal(t, pb.Code_OK, infer(1).Code)

	f.mu.Lock()
	f.broken = true
	f.mu.Unlock()
	time.Sleep(probeEvery)
	broken := infer(1)
	require.Equal(t, pb.Code_INTERNAL, broken.Code, "the probe failed too: %s", broken.Error)
	require.NotContains(t, broken.Error, "cannot take these inputs")
}

// A batch of bad requests alone, none of which then runs apart, is told by
// the probe too.
func TestABatchOfBadRequestsAloneIsProbed(t *testing.T) {
	f := &fakeRuntime{base: 30 * time.Millisecond}
	c := startFake(t, f, "eager")
	loadDouble(t, c, "double", 2*time.Second, 16)
	for _, r := range inferBehindABatch(t, c, f, []float32{-1000, -1000, -1000}) {
		require.Equal(t, pb.Code_INVALID_ARGUMENT, r.Code, r.Error)
		require.Contains(t, r.Error, "it cannot take these inputs")
	}
}

func TestCancelAndDeadlineFromContext(t *testing.T) {
	f := &fakeRuntime{base: 200 * time.Millisecond}
	c := startFake(t, f, "eager")
	loadDouble(t, c, "double", time.Second, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := c.Infer(ctx, &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(1, 0)}})
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestDrainAnswersQueuedAndRefusesNew(t *testing.T) {
	f := &fakeRuntime{base: 5 * time.Millisecond}
	c := startFake(t, f, "deferred")
	loadDouble(t, c, "double", 200*time.Millisecond, 4)
	var wg sync.WaitGroup
	codes := make([]pb.Code, 8)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := c.Infer(context.Background(), &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(1, 0)}})
			require.NoError(t, err)
			codes[i] = resp.Code
		}()
	}
	time.Sleep(10 * time.Millisecond) // let them queue: deferred waits for its frontrun moment
	_, err := c.Drain(context.Background())
	require.NoError(t, err)
	wg.Wait()
	for _, code := range codes {
		require.Equal(t, pb.Code_OK, code, "queued requests finish during a drain")
	}
	resp, err := c.Infer(context.Background(), &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(1, 0)}})
	require.NoError(t, err)
	require.Equal(t, pb.Code_UNAVAILABLE, resp.Code)
	require.True(t, resp.NotRun, "not run here: another gpu-let may take it")
	h, err := c.Health(context.Background())
	require.NoError(t, err)
	require.True(t, h.Draining)
}

func TestUnloadAnswersQueuedAndClosesModel(t *testing.T) {
	f := &fakeRuntime{base: 30 * time.Millisecond}
	c := startFake(t, f, "eager")
	loadDouble(t, c, "double", time.Second, 1)
	var wg sync.WaitGroup
	results := make([]pb.Code, 4)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := c.Infer(context.Background(), &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(1, 0)}})
			require.NoError(t, err)
			results[i] = resp.Code
		}()
	}
	time.Sleep(10 * time.Millisecond)
	require.NoError(t, c.UnloadModel(context.Background(), "double"))
	wg.Wait()
	ok, unavailable := 0, 0
	for _, r := range results {
		switch r {
		case pb.Code_OK:
			ok++
		case pb.Code_UNAVAILABLE:
			unavailable++
		}
	}
	require.Equal(t, 4, ok+unavailable, "%v", results)
	require.GreaterOrEqual(t, unavailable, 1, "queued requests of an unloaded model are answered UNAVAILABLE")
	require.Eventually(t, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.closed == 1
	}, 5*time.Second, 5*time.Millisecond)
	require.ErrorContains(t, c.UnloadModel(context.Background(), "double"), "not loaded")
}

// TestReloadHandsQueuedRequestsOver: a model loaded again under its name
// takes over the old entry's queue: every request queued at the reload is
// served, none fails. A reload that only retunes the scheduler (a re-plan's
// new batch cap) keeps the runtime, which closes once both entries let it
// go; one that changes the model loads it anew and closes the old runtime.
func TestReloadHandsQueuedRequestsOver(t *testing.T) {
	for _, tc := range []struct {
		name         string
		again        *pb.LoadModelRequest
		loads        int
		closedBefore int // after the reload, before the unload
	}{
		{"retuned", &pb.LoadModelRequest{Name: "double", Path: "ok", MaxBatchSize: 1, SloUs: 900_000, BatchCap: 1, InterferenceFactor: 1.2}, 1, 0},
		{"another file", &pb.LoadModelRequest{Name: "double", Path: "ok-v2", MaxBatchSize: 1, SloUs: time.Second.Microseconds()}, 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeRuntime{base: 30 * time.Millisecond}
			c := startFake(t, f, "eager")
			loadDouble(t, c, "double", time.Second, 1)
			var wg sync.WaitGroup
			results := make([]*pb.InferResponse, 4)
			errs := make([]error, 4)
			for i := range results {
				wg.Go(func() {
					results[i], errs[i] = c.Infer(context.Background(), &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(1, float32(i))}})
				})
			}
			time.Sleep(10 * time.Millisecond) // one batch runs, three wait
			resp, err := c.LoadModel(context.Background(), tc.again)
			require.NoError(t, err)
			wg.Wait()
			for i := range results {
				require.NoError(t, errs[i])
				require.Equal(t, pb.Code_OK, results[i].Code, "request %d: %s", i, results[i].Error)
				require.Equal(t, []float32{2 * float32(i), 2 * float32(i+1), 2 * float32(i+2), 2 * float32(i+3)}, outVals(t, results[i], "y"))
			}
			closed := func() int {
				f.mu.Lock()
				defer f.mu.Unlock()
				return f.closed
			}
			require.Eventually(t, func() bool { return closed() == tc.closedBefore }, 5*time.Second, 5*time.Millisecond)
			f.mu.Lock()
			require.Equal(t, tc.loads, f.loaded)
			f.mu.Unlock()
			if tc.loads == 1 {
				require.Zero(t, resp.LoadUs, "nothing loaded")
			}
			// Still serving after the old entry let go, then closed once on unload.
			r, err := c.Infer(context.Background(), &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(1, 1)}})
			require.NoError(t, err)
			require.Equal(t, pb.Code_OK, r.Code, r.Error)
			// The counts go on across the reload: the requests handed over
			// are counted once, where they were received.
			st, err := c.Stats(context.Background())
			require.NoError(t, err)
			require.Len(t, st.Models, 1)
			require.Equal(t, int64(5), st.Models[0].Requests)
			require.Equal(t, int64(5), st.Models[0].Succeeded)
			err = c.UnloadModel(context.Background(), "double")
			require.NoError(t, err)
			require.Eventually(t, func() bool { return closed() == tc.closedBefore+1 }, 5*time.Second, 5*time.Millisecond)
		})
	}
}

// TestSameEngineLoad: only the scheduler's fields may differ for a load to
// retune a model in place.
func TestSameEngineLoad(t *testing.T) {
	base := &pb.LoadModelRequest{Name: "m", Path: "/m/1/model.onnx", MaxBatchSize: 8, SloUs: 100, BatchCap: 4,
		Latency: []*pb.LatencyPoint{{Batch: 1, Ms: 1}}, WarmupBatches: []int32{1, 4}}
	for _, tc := range []struct {
		name string
		edit func(*pb.LoadModelRequest)
		same bool
	}{
		{"identical", func(*pb.LoadModelRequest) {}, true},
		{"batch cap, factor, slo, queue, warm-up", func(r *pb.LoadModelRequest) {
			r.BatchCap, r.InterferenceFactor, r.SloUs, r.MaxQueue, r.WarmupBatches = 2, 1.3, 200, 64, []int32{1, 2}
		}, true},
		{"file", func(r *pb.LoadModelRequest) { r.Path = "/m/2/model.onnx" }, false},
		{"max batch", func(r *pb.LoadModelRequest) { r.MaxBatchSize = 16 }, false},
		{"latency (an emulated engine's timing)", func(r *pb.LoadModelRequest) { r.Latency[0].Ms = 2 }, false},
		{"emulated contention", func(r *pb.LoadModelRequest) { r.EmulatedContention = 1.5 }, false},
		// New profile_shapes: the model is loaded and warmed up at them anew.
		{"warm-up shapes", func(r *pb.LoadModelRequest) { r.WarmupShapes = map[string]*pb.Dims{"ids": {Dims: []int64{128}}} }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := proto.Clone(base).(*pb.LoadModelRequest)
			tc.edit(b)
			require.Equal(t, tc.same, sameEngineLoad(base, b))
		})
	}
}

// watchedDouble starts a fake executor serving "double" (deferred, 2 ms a
// batch, SLO 500 ms, batches up to 8) and watches its state every
// millisecond: the client and the states as they come.
func watchedDouble(t *testing.T) (*Client, <-chan *pb.ExecutorState) {
	t.Helper()
	f := &fakeRuntime{base: 2 * time.Millisecond}
	c := startFake(t, f, "deferred")
	loadDouble(t, c, "double", 500*time.Millisecond, 8)
	states := make(chan *pb.ExecutorState, 64)
	require.NoError(t, c.WatchState(time.Millisecond, func(st *pb.ExecutorState) {
		select {
		case states <- st:
		default: // the test reads on; a full buffer drops
		}
	}))
	return c, states
}

// awaitState reads states until one satisfies ok and returns it; the test
// fails when none has within ten seconds (a state that never comes).
func awaitState(t *testing.T, states <-chan *pb.ExecutorState, what string, ok func(*pb.ExecutorState) bool) *pb.ExecutorState {
	t.Helper()
	limit := time.After(10 * time.Second)
	for {
		select {
		case st := <-states:
			if ok(st) {
				return st
			}
		case <-limit:
			require.FailNow(t, "no state "+what)
		}
	}
}

func TestWatchStateReportsQueue(t *testing.T) {
	c, states := watchedDouble(t)
	first := awaitState(t, states, "at all", func(*pb.ExecutorState) bool { return true })
	require.Len(t, first.Models, 1, "the first state comes at once")
	require.Zero(t, first.Models[0].Queued)
	done := make(chan error, 1)
	go func() {
		_, err := c.Infer(context.Background(), &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(1, 0)}})
		done <- err
	}()
	st := awaitState(t, states, "with the request queued", func(st *pb.ExecutorState) bool { return st.Models[0].Queued == 1 })
	require.Equal(t, int32(1), st.Models[0].Batch)
	require.GreaterOrEqual(t, st.Models[0].ExecMonoNs, st.AtMonoNs)
	require.GreaterOrEqual(t, st.Models[0].LatestMonoNs, st.Models[0].ExecMonoNs)
	require.Greater(t, st.Models[0].DeadlineMonoNs, st.Models[0].LatestMonoNs)
	// The batch ran: the state says so without being asked.
	awaitState(t, states, "with the batch run", func(st *pb.ExecutorState) bool {
		return st.Models[0].Queued == 0 && st.Models[0].Batches == 1
	})
	require.NoError(t, <-done)
}

// The state counts a model's requests received and failed: one whose
// deadline has passed is refused, and the next state says so; a request of
// three rows is one request received and three rows batched.
func TestWatchStateCountsFailures(t *testing.T) {
	c, states := watchedDouble(t)
	require.Zero(t, awaitState(t, states, "at all", func(*pb.ExecutorState) bool { return true }).Models[0].Failed)
	resp, err := c.Infer(context.Background(), &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(1, 0)},
		DeadlineMonoNs: monoclock.Of(time.Now().Add(-time.Second))})
	require.NoError(t, err)
	require.Equal(t, pb.Code_DEADLINE, resp.Code, resp.Error)
	awaitState(t, states, "with the failure", func(st *pb.ExecutorState) bool { return st.Models[0].Failed == 1 })
	resp, err = c.Infer(context.Background(), &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(3, 0)}})
	require.NoError(t, err)
	require.Equal(t, pb.Code_OK, resp.Code, resp.Error)
	st := awaitState(t, states, "with the batch run", func(st *pb.ExecutorState) bool { return st.Models[0].Batches == 1 })
	require.Equal(t, int64(1), st.Models[0].Failed, "a request served is no failure")
	require.Equal(t, int64(2), st.Models[0].Requests, "both requests received")
	require.Equal(t, int64(3), st.Models[0].BatchedRequests, "the batch ran the second's three rows")
}

// State frames of their own come at most once an interval however often
// the state changes; an answer carries the state whenever it changed, for
// no write of its own; the last change is always written.
func TestWatchStateThrottles(t *testing.T) {
	f := &fakeRuntime{base: 100 * time.Microsecond}
	srv, c := startFakeServer(t, f, "eager")
	loadDouble(t, c, "double", time.Second, 8)
	conn, err := net.Dial("unix", c.socket)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.Write(framePreface)
	require.NoError(t, err)
	require.NoError(t, writeFrame(conn, &pb.InferRequest{WatchStateUs: (200 * time.Millisecond).Microseconds()}))
	r := bufio.NewReader(conn)
	var own []*pb.ExecutorState // state frames of their own
	var withAnswer int
	var last *pb.ExecutorState
	read := func() *pb.InferResponse {
		resp := &pb.InferResponse{}
		require.NoError(t, readFrame(r, resp))
		if resp.State != nil {
			last = resp.State
		}
		if resp.Id == 0 {
			require.NotNil(t, resp.State)
			own = append(own, resp.State)
		} else if resp.State != nil {
			withAnswer++
		}
		return resp
	}
	const requests = 20
	for id := uint64(1); id <= requests; id++ {
		require.NoError(t, writeFrame(conn, &pb.InferRequest{Id: id, Model: "double", Inputs: []*pb.Tensor{xInput(1, 0)}}))
		for read().Id != id {
		}
	}
	require.Positive(t, withAnswer, "answers carry the state")
	// The answers took ~20 ms, within one interval of the first frame:
	// the states they changed came with them, state frames of their own
	// (a request queued and its batch started) at most once an interval.
	require.NotEmpty(t, own, "the first state comes at once")
	_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	for last.Models[0].Batches < requests || last.Models[0].Queued != 0 {
		read()
	}
	require.LessOrEqual(t, len(own), 2, "state frames of their own for %d requests", requests)
	var factor float64
	srv.loop.call(func() { factor = srv.loop.ids[0].calib.Factor() })
	require.Greater(t, factor, 1.0, "the fake runs slower than it says: calibrated")
	require.Equal(t, factor, last.Models[0].LatencyFactor, "the state reports the calibration")
	for i := 1; i < len(own); i++ { // as the executor's clock had them
		gap := time.Duration(own[i].AtMonoNs - own[i-1].AtMonoNs)
		require.GreaterOrEqual(t, gap, 190*time.Millisecond, "frames %d and %d", i-1, i)
	}
}

// A stall of the executor's own loop past a deferred batch's latest start
// makes the answer late, never a refusal: the request would have met its
// deadline had the wake-up come on time.
func TestLoopStallDoesNotRefuseDeferredRequest(t *testing.T) {
	f := &fakeRuntime{base: time.Millisecond}
	srv, c := startFakeServer(t, f, "deferred")
	loadDouble(t, c, "double", 100*time.Millisecond, 4)
	type result struct {
		resp *pb.InferResponse
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := c.Infer(context.Background(), &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(1, 0)}})
		done <- result{resp, err}
	}()
	require.Eventually(t, func() bool {
		var n uint64
		srv.loop.call(func() { n = srv.loop.sc.Stats().Submitted })
		return n == 1
	}, 5*time.Second, time.Millisecond)
	// The deferred batch's latest start is ~99 ms away; block the loop
	// well past it.
	srv.loop.post(func() { time.Sleep(150 * time.Millisecond) })
	r := <-done
	require.NoError(t, r.err)
	require.Equal(t, pb.Code_OK, r.resp.Code, r.resp.Error)
	require.Equal(t, []float32{0, 2, 4, 6}, outVals(t, r.resp, "y"))
}

func TestBatchCapBoundsBatchesNotRequests(t *testing.T) {
	f := &fakeRuntime{base: 2 * time.Millisecond, perRow: 100 * time.Microsecond}
	c := startFake(t, f, "deferred")
	_, err := c.LoadModel(context.Background(), &pb.LoadModelRequest{Name: "double", Path: "ok", MaxBatchSize: 16, BatchCap: 4,
		SloUs: (200 * time.Millisecond).Microseconds()})
	require.NoError(t, err)

	// Many concurrent single-row requests never form a batch above the cap.
	inferConcurrently(t, c, "double", 32)
	for _, b := range f.batchSizes() {
		require.LessOrEqual(t, b, 4, "batches stay at the plan's cap: %v", f.batchSizes())
	}

	// A request of more rows than the cap (up to max_batch_size) runs as
	// one batch: the cap rises to the clients' request size.
	before := len(f.batchSizes())
	resp, err := c.Infer(context.Background(), &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(10, 1)}})
	require.NoError(t, err)
	require.Equal(t, pb.Code_OK, resp.Code, resp.Error)
	require.Len(t, outVals(t, resp, "y"), 40)
	require.Equal(t, []int{10}, f.batchSizes()[before:])

	_, err = c.LoadModel(context.Background(), &pb.LoadModelRequest{Name: "bad", Path: "ok", MaxBatchSize: 16, BatchCap: -1, SloUs: 1000})
	require.ErrorContains(t, err, "batch cap -1 is negative")
}

// A batch that ends within the watch interval publishes nothing of its own
// at its start: the router counted the request it routed, and the answer
// carries the state. A batch still running an interval after its start
// gets a state frame of its own, saying the gpu-let is busy.
func TestWatchStateWaitsForTheBatch(t *testing.T) {
	tests := []struct {
		name         string
		batch        time.Duration // the fake's time per batch
		every        time.Duration // the watch interval
		gap          time.Duration // between requests (each past an interval since the last frame)
		requests     int
		wantOwnFrame bool // a state frame of its own before each answer
	}{
		{name: "short batches", batch: time.Millisecond, every: 30 * time.Millisecond, gap: 40 * time.Millisecond, requests: 4},
		{name: "long batch", batch: 300 * time.Millisecond, every: 20 * time.Millisecond, gap: 40 * time.Millisecond, requests: 1, wantOwnFrame: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeRuntime{base: tc.batch}
			_, c := startFakeServer(t, f, "eager")
			loadDouble(t, c, "double", 10*time.Second, 8)
			conn, err := net.Dial("unix", c.socket)
			require.NoError(t, err)
			defer conn.Close()
			_, err = conn.Write(framePreface)
			require.NoError(t, err)
			require.NoError(t, writeFrame(conn, &pb.InferRequest{WatchStateUs: tc.every.Microseconds()}))
			_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			r := bufio.NewReader(conn)
			first := &pb.InferResponse{}
			require.NoError(t, readFrame(r, first))
			require.NotNil(t, first.State, "the first state comes at once")
			for id := uint64(1); id <= uint64(tc.requests); id++ {
				time.Sleep(tc.gap)
				sent := time.Now()
				require.NoError(t, writeFrame(conn, &pb.InferRequest{Id: id, Model: "double", Inputs: []*pb.Tensor{xInput(1, 0)}}))
				var own []*pb.ExecutorState
				for {
					resp := &pb.InferResponse{}
					require.NoError(t, readFrame(r, resp))
					if resp.Id == 0 {
						if resp.State.AtMonoNs >= monoclock.Of(sent) { // not a change from before the request
							own = append(own, resp.State)
						}
						continue
					}
					require.Equal(t, id, resp.Id)
					require.Equal(t, pb.Code_OK, resp.Code, resp.Error)
					require.NotNil(t, resp.State, "the answer carries the state its batch changed")
					require.Equal(t, int64(id), resp.State.Models[0].Batches)
					break
				}
				if !tc.wantOwnFrame {
					require.Empty(t, own, "request %d: a frame of its own for a batch of %s", id, tc.batch)
					continue
				}
				require.Len(t, own, 1, "request %d: one frame while the batch ran", id)
				st := own[0]
				require.GreaterOrEqual(t, monoclock.Time(st.AtMonoNs).Sub(sent), tc.every-5*time.Millisecond, "published an interval into the batch")
				require.Greater(t, st.FreeAtMonoNs, st.AtMonoNs, "busy until the batch ends")
			}
		})
	}
}
