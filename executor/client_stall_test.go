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
	time.Sleep(100 * time.Millisecond) // the first write is under way, and stuck

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = c.Infer(ctx, &pb.InferRequest{Model: "m"})
	took := time.Since(start)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorIs(t, err, ErrNotSent, "it was never written")
	require.Less(t, took, 5*time.Second, "it gave up at its context's end, not when the stuck write did")
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
