package executor

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
)

// TestACallBehindAStuckWriteGivesUp: an executor that stopped reading its
// socket (a stopped process) leaves a large request's write blocked; a call
// behind it gives up at its context's end, its request not sent, and says
// nothing was heard, instead of waiting for the write until the executor
// is killed.
func TestACallBehindAStuckWriteGivesUp(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "x.sock")
	ln, err := net.Listen("unix", sock)
	require.NoError(t, err)
	accepted := make(chan net.Conn, 1)
	go func() {
		conn, err := ln.Accept()
		if err == nil {
			accepted <- conn // read by nobody: the executor is stopped
		}
		close(accepted)
	}()
	c, err := Dial(sock)
	require.NoError(t, err)

	// A request larger than the socket's buffers: its write blocks.
	big := &pb.InferRequest{Model: "m", Inputs: []*pb.Tensor{{Name: "x", Datatype: "FP32", Shape: []int64{1, 4 << 20}, Data: make([]byte, 16<<20)}}}
	first := make(chan error, 1)
	go func() {
		_, err := c.Infer(context.Background(), big)
		first <- err
	}()
	peer := <-accepted
	require.NotNil(t, peer)
	require.Eventually(t, func() bool { return len(c.sending) == 1 }, 10*time.Second, time.Millisecond,
		"the first write is under way")

	// It returns at all while the first write is stuck (checked below):
	// it did not wait for that write.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = c.Infer(ctx, &pb.InferRequest{Model: "m"})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorIs(t, err, ErrNotSent, "it was never written")
	require.Zero(t, c.Heard(), "the executor sent nothing")
	select {
	case err := <-first:
		require.Fail(t, "the stuck write returned", "%v", err)
	default:
	}

	// The executor killed: the stuck write fails, and the client with it.
	require.NoError(t, peer.Close())
	require.NoError(t, ln.Close())
	err = <-first
	require.True(t, errors.Is(err, ErrExecutorGone), "%v", err)
	require.NoError(t, c.Close())
}

// TestABrokenConnectionIsOpenedAgain: the framed connection breaks while
// the executor runs on (it closes a connection it could not write to for
// frameWriteTimeout): the calls waiting on it fail, the next call opens
// another and is answered, and the state watch resumes on it. Before, the
// client stayed broken, and its gpu-let answered nothing until the
// executor was restarted, which its health checks never asked for.
func TestABrokenConnectionIsOpenedAgain(t *testing.T) {
	c, states := watchedDouble(t)
	awaitState(t, states, "at all", func(*pb.ExecutorState) bool { return true })
	ask := func() (*pb.InferResponse, error) {
		return c.Infer(context.Background(), &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(1, 0)}})
	}
	resp, err := ask()
	require.NoError(t, err)
	require.Equal(t, pb.Code_OK, resp.Code, resp.Error)

	c.mu.Lock()
	first := c.frames
	c.mu.Unlock()
	require.NoError(t, first.Close())
	require.Eventually(t, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.frames == nil
	}, 10*time.Second, time.Millisecond, "the client saw the connection break")

	resp, err = ask()
	require.NoError(t, err, "the next call opens another connection")
	require.Equal(t, pb.Code_OK, resp.Code, resp.Error)
	require.Equal(t, []float32{0, 2, 4, 6}, outVals(t, resp, "y"))
	awaitState(t, states, "from the new connection", func(st *pb.ExecutorState) bool { return st.Models[0].Batches == 2 })
	c.mu.Lock()
	second := c.frames
	c.mu.Unlock()
	require.NotNil(t, second)
	require.NotSame(t, first, second)
}
