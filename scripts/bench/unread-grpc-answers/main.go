// Command unread-grpc-answers is a gRPC client that reads none of its
// answers: it opens -calls ModelInfer calls to the demo model "tokens",
// each of -ids token ids in raw_input_contents, on one connection with a
// 64 KiB flow-control window, and holds them unread for -hold; with -read
// it then reads every answer and says how many came whole. Used by
// unread-grpc-answers.sh.
package main

import (
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8701", "the daemon's gRPC address")
	calls := flag.Int("calls", 64, "calls to open")
	ids := flag.Int("ids", 1000000, "token ids in each request")
	hold := flag.Duration("hold", 10*time.Second, "how long to leave the answers unread")
	read := flag.Bool("read", false, "read the answers after -hold")
	flag.Parse()
	if err := run(*addr, *calls, *ids, *hold, *read); err != nil {
		fmt.Fprintln(os.Stderr, "unread-grpc-answers:", err)
		os.Exit(1)
	}
}

func run(addr string, calls, ids int, hold time.Duration, read bool) error {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithInitialWindowSize(64<<10), grpc.WithInitialConnWindowSize(64<<10),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(1<<30)))
	if err != nil {
		return err
	}
	defer conn.Close()
	raw := make([]byte, 8*ids)
	for i := range ids {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(i%10))
	}
	req := &pb.ModelInferRequest{ModelName: "tokens",
		Inputs:           []*pb.ModelInferRequest_InferInputTensor{{Name: "ids", Datatype: "INT64", Shape: []int64{1, int64(ids)}}},
		RawInputContents: [][]byte{raw}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var streams []grpc.ClientStream
	for range calls {
		s, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, pb.GRPCInferenceService_ModelInfer_FullMethodName)
		if err != nil {
			return err
		}
		if err := s.SendMsg(req); err != nil {
			return err
		}
		if err := s.CloseSend(); err != nil {
			return err
		}
		streams = append(streams, s)
	}
	time.Sleep(hold)
	if !read {
		return nil
	}
	whole, failed := 0, map[string]int{}
	for _, s := range streams {
		var res pb.ModelInferResponse
		if err := s.RecvMsg(&res); err != nil {
			failed[err.Error()]++
			continue
		}
		whole++
	}
	fmt.Printf("answers read whole: %d of %d; failed: %v\n", whole, calls, failed)
	return nil
}
