package daemon

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/control"
	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/mps"
	"github.com/gpulet/gpuletd/profiler/store"
)

// A model whose batch of one its executor predicts past the SLO (here by a
// dispatch overhead of 6.2 ms on a 0.33 ms model, as a warm-up that counted
// opening sessions gave on an H200) is reported once as an event that names
// the numbers; reported again only after it recovered and broke anew.
func TestSlowStartReported(t *testing.T) {
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "g.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	n := &node{log: zap.NewNop(), events: newEvents(st, zap.NewNop()), router: newRouter()}
	req := &pb.LoadModelRequest{Name: "lenet5", MaxBatchSize: 2, Latency: []*pb.LatencyPoint{{Batch: 1, Ms: 0.33}, {Batch: 2, Ms: 0.4}}}
	g := &gpuletRun{id: "gpu0-20-1", device: mps.Device{Kind: mps.KindCPU},
		models: map[string]*pb.LoadModelRequest{"lenet5": req},
		loaded: map[string]*pb.LoadModelResponse{"lenet5": {}}}
	serving := []control.Serving[*gpuletRun]{{GPU: "gpu0", H: g, Let: gpulet.GPULet{Size: 20,
		Models: []gpulet.Placement{{Name: "lenet5", Batch: 1, SLOMS: 5}}}}}
	messages := func() []string {
		evs, err := st.Events(context.Background(), 0, 10)
		require.NoError(t, err)
		var out []string
		for _, e := range evs {
			require.Equal(t, EventSLOUnreachable, e.Kind)
			require.Equal(t, store.SeverityWarning, e.Severity)
			require.Equal(t, "gpu0-20-1", e.Attrs["gpulet"])
			out = append(out, e.Message)
		}
		return out
	}
	const want = "lenet5 cannot meet its SLO on gpu0-20-1: a batch of one is predicted at 6.53ms there (6.2ms of it the executor's dispatch overhead), over its SLO of 5ms; its requests there are refused"

	steps := []struct {
		overheadUS int64
		events     int
	}{
		{6200, 1}, // reported
		{6200, 1}, // once
		{100, 1},  // recovered: nothing new
		{6200, 2}, // broke again
	}
	for i, s := range steps {
		g.loaded["lenet5"].DispatchOverhead = []*pb.LatencyPoint{{Batch: 1, Ms: float64(s.overheadUS) / 1000}, {Batch: 2, Ms: 9}}
		n.installRoutes(serving)
		got := messages()
		require.Len(t, got, s.events, "step %d", i)
		if s.overheadUS > 1000 {
			require.Equal(t, []string{"refused, ℓ(1) > SLO on gpu0-20-1: 6.53ms > 5ms (overhead 6.2ms)"},
				n.slowStarts.of("lenet5"), "step %d: the status says so while it lasts", i)
		} else {
			require.Empty(t, n.slowStarts.of("lenet5"), "step %d", i)
		}
		for _, m := range got {
			require.Equal(t, want, m)
		}
	}
}
