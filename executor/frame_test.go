package executor

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

func TestFrameRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		msg  proto.Message
		into proto.Message
	}{
		{"request with tensors", &pb.InferRequest{Id: 7, Model: "m", DeadlineMonoNs: 42, Outputs: []string{"y"}, Inputs: []*pb.Tensor{
			{Name: "a", Datatype: "FP32", Shape: []int64{1, 2}, Data: []byte{1, 2, 3, 4, 5, 6, 7, 8}},
			{Name: "empty", Datatype: "FP32", Shape: []int64{0}},
			{Name: "b", Datatype: "UINT8", Shape: []int64{3}, Data: []byte{9, 10, 11}},
		}}, &pb.InferRequest{}},
		{"cancel", &pb.InferRequest{Id: 3, Cancel: true}, &pb.InferRequest{}},
		{"response", &pb.InferResponse{Id: 9, BatchSize: 4, QueueUs: 5, Outputs: []*pb.Tensor{
			{Name: "y", Datatype: "INT64", Shape: []int64{1}, Data: bytes.Repeat([]byte{0xff}, 8)},
		}}, &pb.InferResponse{}},
		{"error", &pb.InferResponse{Id: 1, Code: pb.Code_DEADLINE, Error: "late"}, &pb.InferResponse{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := proto.Clone(tc.msg)
			var buf bytes.Buffer
			require.NoError(t, writeFrame(&buf, tc.msg))
			require.True(t, proto.Equal(want, tc.msg), "writeFrame changed the message")
			// The tensors' bytes follow the header instead of being in it.
			require.Less(t, int(binary.LittleEndian.Uint32(buf.Bytes()[0:4])), proto.Size(want)+1)
			r := bufio.NewReader(&buf)
			require.NoError(t, readFrame(r, tc.into))
			require.True(t, proto.Equal(want, tc.into), "got %v, want %v", tc.into, want)
			require.ErrorIs(t, readFrame(r, tc.into), io.EOF)
		})
	}
}

func TestReadFrameRefusesBrokenFrames(t *testing.T) {
	header := func(m proto.Message) []byte {
		b, err := proto.Marshal(m)
		require.NoError(t, err)
		return b
	}
	frame := func(head []byte, payload []byte) []byte {
		out := binary.LittleEndian.AppendUint32(nil, uint32(len(head)))
		out = binary.LittleEndian.AppendUint32(out, uint32(len(payload)))
		return append(append(out, head...), payload...)
	}
	claims := func(n int64) []byte {
		return header(&pb.InferRequest{Inputs: []*pb.Tensor{{Name: "x", RawSize: n}}})
	}
	tests := []struct {
		name  string
		bytes []byte
		err   string
	}{
		{"tensor claims more than the payload", frame(claims(10), make([]byte, 4)), "claims 10 bytes, 4 are left"},
		{"negative size", frame(claims(-1), nil), "claims -1 bytes"},
		{"payload left over", frame(claims(2), make([]byte, 4)), "2 payload bytes belong to no tensor"},
		{"header too large", binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, maxFrameHeader+1), 0), "header of"},
		{"not a message", frame([]byte{0xff, 0xff, 0xff}, nil), "bad frame"},
		{"cut short", frame(claims(4), make([]byte, 4))[:12], "unexpected EOF"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := readFrame(bufio.NewReader(bytes.NewReader(tc.bytes)), &pb.InferRequest{})
			require.ErrorContains(t, err, tc.err)
		})
	}
}

// TestSocketSortsConnections serves gRPC and framed connections on one
// socket; connections that end early or break the framing are closed
// without harm to the others.
func TestSocketSortsConnections(t *testing.T) {
	c := startFake(t, &fakeRuntime{base: time.Millisecond}, "eager")
	loadDouble(t, c, "double", time.Second, 4)
	sock := c.socket

	// A connection that closes before its preface is let go.
	short, err := net.Dial("unix", sock)
	require.NoError(t, err)
	_, err = short.Write(framePreface[:3])
	require.NoError(t, err)
	require.NoError(t, short.Close())

	resp, err := c.Infer(context.Background(), &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(1, 1)}})
	require.NoError(t, err)
	require.Equal(t, pb.Code_OK, resp.Code, resp.Error)
	_, err = c.Health(context.Background())
	require.NoError(t, err)

	// A framed connection that breaks the framing is closed; the others go on.
	bad, err := net.Dial("unix", sock)
	require.NoError(t, err)
	_, err = bad.Write(append(append([]byte{}, framePreface...), 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0))
	require.NoError(t, err)
	_ = bad.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err = bad.Read(make([]byte, 1))
	require.Error(t, err)
	require.NoError(t, bad.Close())
	resp, err = c.Infer(context.Background(), &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(2, 1)}})
	require.NoError(t, err)
	require.Equal(t, pb.Code_OK, resp.Code, resp.Error)
	require.Equal(t, []float32{2, 4, 6, 8, 10, 12, 14, 16}, outVals(t, resp, "y"))
}

// TestServeEndsWithOpenConnections stops a server while a framed and a
// silent connection are open: Serve returns and both are closed.
func TestServeEndsWithOpenConnections(t *testing.T) {
	srv, err := NewServer(Options{Runtime: &fakeRuntime{}, Device: DeviceInfo{Kind: "cpu", Size: 100}})
	require.NoError(t, err)
	defer func() { require.NoError(t, srv.Close()) }()
	sock, stop := serveOnSocket(t, srv)
	silent, err := net.Dial("unix", sock)
	require.NoError(t, err)
	framed, err := net.Dial("unix", sock)
	require.NoError(t, err)
	_, err = framed.Write(framePreface)
	require.NoError(t, err)
	// A round trip shows the framed connection is being served (the silent
	// one, dialled first, was accepted before it).
	require.NoError(t, writeFrame(framed, &pb.InferRequest{Id: 1, Model: "none"}))
	resp := &pb.InferResponse{}
	require.NoError(t, readFrame(bufio.NewReader(framed), resp))
	require.Equal(t, pb.Code_NOT_FOUND, resp.Code)
	require.NoError(t, stop())
	for _, c := range []net.Conn{framed, silent} {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err := c.Read(make([]byte, 1))
		require.Error(t, err)
		var ne net.Error
		require.False(t, errors.As(err, &ne) && ne.Timeout(), "connection left open")
		require.NoError(t, c.Close())
	}
}
