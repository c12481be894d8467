package daemon

import (
	"errors"
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

// A reload that fails is an event once per way it fails, not once per plan
// (syncLoads tries it again at every plan while the old load serves on).
func TestAFailedReloadIsAnEventOnce(t *testing.T) {
	n, _ := historyNode(t)
	g := &gpuletRun{id: "cpu-50-1"}
	broken := errors.New("load model mlp: unsupported operator")
	for range 3 {
		n.retuned(g, "mlp", broken)
	}
	evs := askEventList(t, n, "?kind="+EventModelLoad)
	require.Len(t, evs, 1)
	require.Equal(t, "reloading mlp on cpu-50-1 failed; it keeps serving as it was loaded: load model mlp: unsupported operator", evs[0].Message)
	n.retuned(g, "mlp", errors.New("load model mlp: out of memory"))
	require.Len(t, askEventList(t, n, "?kind="+EventModelLoad), 2, "another failure")
	n.retuned(g, "mlp", nil)
	n.retuned(g, "mlp", broken)
	require.Len(t, askEventList(t, n, "?kind="+EventModelLoad), 3, "failing again after a success")
}
