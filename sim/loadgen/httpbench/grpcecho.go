package httpbench

import (
	"context"
	"fmt"
	"net"

	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// firstGRPCAnswer sends the request once over gRPC and keeps the answer.
func firstGRPCAnswer(ctx context.Context, addr string, req *pb.ModelInferRequest) (*pb.ModelInferResponse, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("dial grpc %s: %w", addr, err)
	}
	defer conn.Close()
	res, err := pb.NewGRPCInferenceServiceClient(conn).ModelInfer(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("first grpc request: %w", err)
	}
	return res, nil
}

// grpcEcho is the bare gRPC server the daemon's gRPC path is compared with:
// ModelInfer receives and decodes the request and answers the daemon's
// answer.
type grpcEcho struct {
	pb.UnimplementedGRPCInferenceServiceServer
	answer *pb.ModelInferResponse
	srv    *grpc.Server
	addr   string
	done   chan error
}

// ModelInfer answers the kept answer.
func (e *grpcEcho) ModelInfer(context.Context, *pb.ModelInferRequest) (*pb.ModelInferResponse, error) {
	return e.answer, nil
}

// startGRPCEcho serves the answer on a free loopback port.
func startGRPCEcho(answer *pb.ModelInferResponse) (*grpcEcho, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for the grpc echo: %w", err)
	}
	e := &grpcEcho{answer: answer, srv: grpc.NewServer(), addr: ln.Addr().String(), done: make(chan error, 1)}
	pb.RegisterGRPCInferenceServiceServer(e.srv, e)
	go func() { e.done <- e.srv.Serve(ln) }()
	return e, nil
}

// stop ends the server and waits for it.
func (e *grpcEcho) stop() {
	e.srv.Stop()
	<-e.done
}

// freeAddr is a loopback address free a moment ago.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
