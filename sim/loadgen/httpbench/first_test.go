package httpbench

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
	"github.com/gpulet/gpuletd/sim/loadgen"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestFirstAnswerRetriesPassingRefusals(t *testing.T) {
	tests := []struct {
		name      string
		refusals  int // answers before the good one
		code      int // status of the refusals
		wantErr   string
		wantCalls int32
	}{
		{name: "two 503s then the answer", refusals: 2, code: http.StatusServiceUnavailable, wantCalls: 3},
		{name: "503 every time", refusals: firstTries, code: http.StatusServiceUnavailable, wantErr: "try 5: first request: 503", wantCalls: firstTries},
		{name: "a 400 is not tried again", refusals: 1, code: http.StatusBadRequest, wantErr: "try 1: first request: 400", wantCalls: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				if int(calls.Add(1)) <= tc.refusals {
					http.Error(w, "lenet5: the deadline cannot be met", tc.code)
					return
				}
				_, _ = w.Write([]byte("the answer"))
			}))
			defer srv.Close()
			a, err := firstAnswer(context.Background(), srv.Client(), srv.URL, "lenet5", &loadgen.Payload{Body: []byte("{}"), JSONLen: -1})
			require.Equal(t, tc.wantCalls, calls.Load())
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, "the answer", string(a.body))
		})
	}
}

// refusingServer refuses its first refusals ModelInfer calls with code.
type refusingServer struct {
	pb.UnimplementedGRPCInferenceServiceServer
	calls    atomic.Int32
	refusals int32
	code     codes.Code
}

func (s *refusingServer) ModelInfer(context.Context, *pb.ModelInferRequest) (*pb.ModelInferResponse, error) {
	if s.calls.Add(1) <= s.refusals {
		return nil, status.Error(s.code, "lenet5: the deadline cannot be met")
	}
	return &pb.ModelInferResponse{ModelName: "lenet5"}, nil
}

func TestFirstGRPCAnswerRetriesUnavailable(t *testing.T) {
	tests := []struct {
		name      string
		refusals  int32
		code      codes.Code
		wantErr   string
		wantCalls int32
	}{
		{name: "one UNAVAILABLE then the answer", refusals: 1, code: codes.Unavailable, wantCalls: 2},
		{name: "UNAVAILABLE every time", refusals: firstTries, code: codes.Unavailable, wantErr: "try 5", wantCalls: firstTries},
		{name: "INVALID_ARGUMENT is not tried again", refusals: 1, code: codes.InvalidArgument, wantErr: "try 1", wantCalls: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			s := &refusingServer{refusals: tc.refusals, code: tc.code}
			g := grpc.NewServer()
			pb.RegisterGRPCInferenceServiceServer(g, s)
			done := make(chan error, 1)
			go func() { done <- g.Serve(ln) }()
			defer func() {
				g.Stop()
				require.NoError(t, <-done)
			}()
			res, err := firstGRPCAnswer(context.Background(), ln.Addr().String(), &pb.ModelInferRequest{ModelName: "lenet5"})
			require.Equal(t, tc.wantCalls, s.calls.Load())
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				require.Equal(t, tc.code, status.Code(err))
				return
			}
			require.NoError(t, err)
			require.Equal(t, "lenet5", res.ModelName)
		})
	}
}
