package daemon

import (
	"testing"

	"github.com/stretchr/testify/require"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
)

func TestSameLoad(t *testing.T) {
	base := func() *pb.LoadModelRequest {
		return &pb.LoadModelRequest{Name: "mlp", Path: "/m/mlp/1/model.onnx", Sha256: "aa", SloUs: 50_000, MaxBatchSize: 8,
			BatchCap: 4, WarmupBatches: []int32{1, 4}, Latency: []*pb.LatencyPoint{{Batch: 1, Ms: 1}, {Batch: 8, Ms: 4}}}
	}
	cases := []struct {
		name   string
		change func(*pb.LoadModelRequest)
		same   bool
	}{
		{"unchanged", func(*pb.LoadModelRequest) {}, true},
		{"other warm-up sizes (the plan's batch moved with the rates)", func(r *pb.LoadModelRequest) { r.WarmupBatches = []int32{1, 2} }, true},
		{"a new file", func(r *pb.LoadModelRequest) { r.Sha256 = "bb" }, false},
		{"another SLO", func(r *pb.LoadModelRequest) { r.SloUs = 20_000 }, false},
		{"another largest batch", func(r *pb.LoadModelRequest) { r.MaxBatchSize = 4 }, false},
		{"another batch cap", func(r *pb.LoadModelRequest) { r.BatchCap = 2 }, false},
		{"a profile measured again", func(r *pb.LoadModelRequest) { r.Latency[1].Ms = 5 }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, b := base(), base()
			tc.change(b)
			require.Equal(t, tc.same, sameLoad(a, b))
			require.Equal(t, []int32{1, 4}, a.WarmupBatches, "the loads compared are left as they were")
		})
	}
}
