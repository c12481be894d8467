package httpbench

import (
	"context"
	"fmt"

	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// firstGRPCAnswer sends the request over gRPC and keeps the answer. A
// refusal the daemon marks as passing (UNAVAILABLE) is tried again, up to
// firstTries times.
func firstGRPCAnswer(ctx context.Context, addr string, req *pb.ModelInferRequest) (*pb.ModelInferResponse, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("dial grpc %s: %w", addr, err)
	}
	defer conn.Close()
	client := pb.NewGRPCInferenceServiceClient(conn)
	return tryFirst(ctx, func() (*pb.ModelInferResponse, error) {
		res, err := client.ModelInfer(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("first grpc request: %w", err)
		}
		return res, nil
	}, func(err error) bool { return status.Code(err) == codes.Unavailable })
}

// grpcEcho is the bare gRPC service the daemon's gRPC path is compared
// with (ServeEcho): ModelInfer receives and decodes the request and answers
// the daemon's answer.
type grpcEcho struct {
	pb.UnimplementedGRPCInferenceServiceServer
	answer *pb.ModelInferResponse
}

// ModelInfer answers the kept answer.
func (e *grpcEcho) ModelInfer(context.Context, *pb.ModelInferRequest) (*pb.ModelInferResponse, error) {
	return e.answer, nil
}
