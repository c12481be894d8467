package httpbench

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
)

// serveEcho serves spec on a loopback port until the test ends.
func serveEcho(t *testing.T, spec *EchoSpec) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ServeEcho(ctx, spec, ln) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	return ln.Addr().String()
}

func TestServeEchoHTTP(t *testing.T) {
	addr := serveEcho(t, &EchoSpec{Protocol: "http", Body: []byte("the answer"), Header: map[string]string{"Inference-Header-Content-Length": "4"}})
	resp, err := http.Post("http://"+addr+"/v2/models/lenet5/infer", "application/octet-stream", bytes.NewReader(make([]byte, 3000)))
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "the answer", string(body))
	require.Equal(t, "4", resp.Header.Get("Inference-Header-Content-Length"))
}

func TestServeEchoGRPC(t *testing.T) {
	want := &pb.ModelInferResponse{ModelName: "lenet5", Id: "7", RawOutputContents: [][]byte{{1, 2, 3, 4}}}
	raw, err := proto.Marshal(want)
	require.NoError(t, err)
	addr := serveEcho(t, &EchoSpec{Protocol: "grpc", GRPCAnswer: raw})
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	got, err := pb.NewGRPCInferenceServiceClient(conn).ModelInfer(context.Background(), &pb.ModelInferRequest{ModelName: "lenet5"})
	require.NoError(t, err)
	require.True(t, proto.Equal(want, got), "got %v", got)
}

func TestServeEchoBadSpec(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	require.ErrorIs(t, ServeEcho(context.Background(), &EchoSpec{Protocol: "grpc", GRPCAnswer: []byte{0xff}}, ln), ErrEchoSpec)
	require.ErrorIs(t, ServeEcho(context.Background(), &EchoSpec{Protocol: "smtp"}, ln), ErrEchoSpec)
}

func TestReadEchoSpec(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
		return p
	}
	s, err := ReadEchoSpec(write("ok.json", `{"protocol": "http", "body": "YW5zd2Vy", "header": {"Content-Type": "application/json"}}`))
	require.NoError(t, err)
	require.Equal(t, "answer", string(s.Body))
	require.Equal(t, "application/json", s.Header["Content-Type"])
	for name, text := range map[string]string{"garbled.json": `{"protocol": `, "protocol.json": `{"protocol": "smtp"}`} {
		_, err := ReadEchoSpec(write(name, text))
		require.ErrorIs(t, err, ErrEchoSpec, name)
	}
	_, err = ReadEchoSpec(filepath.Join(dir, "missing.json"))
	require.ErrorIs(t, err, os.ErrNotExist)
}
