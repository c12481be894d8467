package executor

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
)

// The running file names each request of the batch once, and nothing once
// cleared; a batch past what a page holds is named by its first requests.
func TestRunningFileNamesTheBatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ex.sock.running")
	rf, err := CreateRunningFile(path)
	require.NoError(t, err)
	require.Empty(t, readRunning(path), "a new file names nothing")
	rf.set([]uint64{7, 7, 9, 3})
	require.Equal(t, []uint64{7, 9, 3}, readRunning(path), "a request of two rows named once")
	rf.clear()
	require.Empty(t, readRunning(path))
	many := make([]uint64, 600)
	for i := range many {
		many[i] = uint64(i + 1)
	}
	rf.set(many)
	require.Equal(t, many[:runningMost], readRunning(path))
	require.NoError(t, rf.Close(path))
	require.NoFileExists(t, path)
	require.Empty(t, readRunning(path), "no file names nothing")

	var none *RunningFile // without a file, nothing is told
	none.set([]uint64{1})
	none.clear()
	require.NoError(t, none.Close(path))
}

// A request that asks to run alone runs in a part of its own, before the
// others of its batch run together; the running file names each part's
// requests while it runs, and every request is answered.
func TestARequestThatAsksToRunAloneRunsAlone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ex.sock.running")
	rf, err := CreateRunningFile(path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = rf.Close(path) })
	f := &fakeRuntime{base: 30 * time.Millisecond, running: path}
	_, c := startServerWith(t, Options{Runtime: f, Running: rf}, "eager")
	loadDouble(t, c, "double", 2*time.Second, 16)

	first := make(chan *pb.InferResponse, 1)
	go func() {
		r, _ := c.Infer(context.Background(), &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(1, 1)}})
		first <- r
	}()
	require.Eventually(t, func() bool { return len(f.batchSizes()) == 1 }, 5*time.Second, time.Millisecond, "the first batch runs")
	reqs := make([]*pb.InferRequest, 4)
	resps := make([]*pb.InferResponse, 4)
	errs := make([]error, 4)
	var wg sync.WaitGroup
	for i := range reqs {
		reqs[i] = &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(1, float32(10*i))}, Alone: i == 2}
		wg.Go(func() { resps[i], errs[i] = c.Infer(context.Background(), reqs[i]) })
	}
	wg.Wait()
	require.Equal(t, pb.Code_OK, (<-first).Code)
	for i := range reqs {
		require.NoError(t, errs[i])
		require.Equal(t, pb.Code_OK, resps[i].Code, resps[i].Error)
		require.Equal(t, 2*float32(10*i), outVals(t, resps[i], "y")[0])
	}
	require.Equal(t, []int{1, 1, 3}, f.batchSizes(), "the first batch, then the four queued behind it in two parts")
	f.mu.Lock()
	named := f.named
	f.mu.Unlock()
	require.Len(t, named, 3)
	require.Equal(t, []uint64{reqs[2].Id}, named[1], "the one that asked, alone")
	others := []uint64{reqs[0].Id, reqs[1].Id, reqs[3].Id}
	slices.Sort(others)
	slices.Sort(named[2])
	require.Equal(t, others, named[2], "then the others together")
	require.Empty(t, readRunning(path), "nothing runs now")
}
