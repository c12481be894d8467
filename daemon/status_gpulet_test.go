package daemon

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/mps"
)

// A gpu-let's placements in the status say what the plan gave each model
// there and, from the state its executor pushed, what the model's requests
// came to: the requests its batches ran, their mean batch, and the requests
// it answered with an error, which is where an operator finds the gpu-let
// that misses a model's requests, and how much longer than profiled its
// batches ran there.
func TestGpuletStatusSaysWhatFailedThere(t *testing.T) {
	g := &gpuletRun{id: "emu0-100-1", device: mps.Device{ID: "emu0"}, size: 100,
		models:  map[string]*pb.LoadModelRequest{"b": {Name: "b"}, "a": {Name: "a"}},
		planned: gpulet.GPULet{Size: 100, Models: []gpulet.Placement{{Name: "a", Batch: 8, Rate: 46, LatencyMS: 1.75, WorstMS: 8.4, SLOMS: 10.7}}}}

	sg := g.status(mps.Inventory{})
	require.Equal(t, "ready", sg.State)
	require.Equal(t, []statusPlacement{
		{Name: "a", Batch: 8, Rate: 46, LatencyMS: 1.75, WorstMS: 8.4, SLOMS: 10.7},
		{Name: "b"},
	}, sg.Models, "before the executor pushed a state: the plan alone")

	g.pushed.Store(&pb.ExecutorState{Models: []*pb.ModelState{
		{Name: "a", Batches: 4, BatchedRequests: 10, Requests: 12, Failed: 3, LatencyFactor: 2.6},
		{Name: "b", Requests: 2, Failed: 2},
	}})
	sg = g.status(mps.Inventory{})
	require.Equal(t, []statusPlacement{
		{Name: "a", Batch: 8, Rate: 46, LatencyMS: 1.75, WorstMS: 8.4, SLOMS: 10.7, MeanBatch: 2.5, Requests: 10, Received: 12, Failed: 3, BatchTimeFactor: 2.6, SlowBatches: true},
		{Name: "b", Received: 2, Failed: 2, BatchTimeFactor: 1},
	}, sg.Models, "b's executor has not calibrated it: as profiled")
}

// Two gpu-lets of one size on one device may hold the same model at other
// batches and rates (the CPU's two halves, each with a share of a model):
// each says its own, not whichever the plan listed last.
func TestGpuletStatusSaysItsOwnPlacement(t *testing.T) {
	dev := mps.Device{ID: "cpu"}
	one := gpulet.Placement{Name: "resnet50", Batch: 1, Rate: 6}
	three := gpulet.Placement{Name: "resnet50", Batch: 3, Rate: 9.26}
	a := &gpuletRun{id: "cpu-50-1", device: dev, size: 50,
		models:  map[string]*pb.LoadModelRequest{"resnet50": {Name: "resnet50"}, "mobilenet_v2": {Name: "mobilenet_v2"}},
		planned: gpulet.GPULet{Size: 50, Models: []gpulet.Placement{{Name: "mobilenet_v2", Batch: 16, Rate: 135}, one}}}
	b := &gpuletRun{id: "cpu-50-2", device: dev, size: 50,
		models:  map[string]*pb.LoadModelRequest{"resnet50": {Name: "resnet50"}, "googlenet": {Name: "googlenet"}},
		planned: gpulet.GPULet{Size: 50, Models: []gpulet.Placement{{Name: "googlenet", Batch: 14, Rate: 42.8}, three}}}

	require.Equal(t, []statusPlacement{{Name: "mobilenet_v2", Batch: 16, Rate: 135}, {Name: "resnet50", Batch: 1, Rate: 6}},
		a.status(mps.Inventory{}).Models)
	require.Equal(t, []statusPlacement{{Name: "googlenet", Batch: 14, Rate: 42.8}, {Name: "resnet50", Batch: 3, Rate: 9.26}},
		b.status(mps.Inventory{}).Models)

	a.plannedDrop("resnet50") // loaded, no longer planned (a reorganize between its steps)
	require.Equal(t, statusPlacement{Name: "resnet50"}, a.status(mps.Inventory{}).Models[1])
}

// A retired gpu-let's event names the models whose requests failed on it,
// which the status stops showing once it is gone.
func TestFailedThere(t *testing.T) {
	tests := []struct {
		name   string
		served map[string]servedOn
		want   string
	}{
		{"nothing ran", nil, ""},
		{"none failed", map[string]servedOn{"a": {batched: 10, batches: 4}}, ""},
		{"some failed, of the requests received (not the rows batched)", map[string]servedOn{"b": {batched: 5, batches: 5, received: 6, failed: 1}, "a": {batched: 1700, batches: 160, received: 908, failed: 57}, "c": {batched: 3, batches: 3, received: 3}},
			"; requests that failed on it: a 57 of 908, b 1 of 6"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, failedThere(tt.served))
		})
	}
}

// A model a reorganization takes off a gpu-let it keeps loses its counts
// there: the requests that failed on it are said in an event as it goes,
// and nothing is said of one whose requests did not fail.
func TestUnloadSaysWhatFailedThere(t *testing.T) {
	n, st := historyNode(t)
	n.catalog = newCatalog([]string{t.TempDir()}, testRepositoryOptions(0), st, n.events, zap.NewNop())
	g := &gpuletRun{id: "emu0-100-2", models: map[string]*pb.LoadModelRequest{"a": {Name: "a"}, "b": {Name: "b"}}}
	g.pushed.Store(&pb.ExecutorState{Models: []*pb.ModelState{
		{Name: "a", Batches: 20, BatchedRequests: 56, Requests: 92, Failed: 36},
		{Name: "b", Batches: 3, BatchedRequests: 7},
	}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // no drain wait: the unload goes on at once
	x := executors{n: n}
	x.Unload(ctx, g, "b")
	x.Unload(ctx, g, "a")
	require.Empty(t, g.modelNames())

	evs, err := st.Events(context.Background(), 0, 0)
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Equal(t, EventReorganize, evs[0].Kind)
	require.Equal(t, "a unloaded from emu0-100-2, which the plan keeps; requests that failed on it: a 36 of 92", evs[0].Message)
	require.Equal(t, map[string]string{"model": "a", "gpulet": "emu0-100-2"}, evs[0].Attrs)
}
