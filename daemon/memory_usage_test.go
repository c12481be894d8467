package daemon

import (
	"testing"

	"github.com/stretchr/testify/require"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/kserve"
	"github.com/gpulet/gpuletd/kserve/inferencepb"
	"github.com/gpulet/gpuletd/mps"
)

// A model's memory_usage sums what the planner counts for each copy the
// running gpu-lets hold, by device: every process of a placement, a MIG
// instance's on its GPU, an emulated GPU apart from a real one of its
// index, nothing for a placement whose model did not load.
func TestMemoryUsageSumsTheLoadedCopiesByDevice(t *testing.T) {
	cpu := mps.Device{ID: "cpu", Kind: mps.KindCPU}
	gpu0 := mps.Device{ID: "gpu0", Index: 0, Kind: mps.KindNVIDIA}
	gpu1 := mps.Device{ID: "gpu1", Index: 1, Kind: mps.KindNVIDIA, Backend: mps.BackendMIG}
	emu := mps.Device{ID: "emu1", Index: 1, Kind: mps.KindEmulated}
	let := func(ps ...gpulet.Placement) gpulet.GPULet { return gpulet.GPULet{Size: 50, Models: ps} }
	loaded := func(names ...string) map[string]*pb.LoadModelRequest {
		out := map[string]*pb.LoadModelRequest{}
		for _, name := range names {
			out[name] = &pb.LoadModelRequest{Name: name}
		}
		return out
	}
	n := &node{sup: &supervisor{running: map[string]*gpuletRun{
		"c": {device: cpu, planned: let(gpulet.Placement{Name: "mlp", MemoryMB: 20}), models: loaded("mlp")},
		"a": {device: gpu1, planned: let(gpulet.Placement{Name: "mlp", MemoryMB: 100, Procs: 2},
			gpulet.Placement{Name: "vgg", MemoryMB: 900}), models: loaded("mlp", "vgg")},
		"b": {device: gpu1, planned: let(gpulet.Placement{Name: "mlp", MemoryMB: 100}), models: loaded("mlp")},
		"d": {device: gpu0, planned: let(gpulet.Placement{Name: "mlp", MemoryMB: 100}), models: loaded()}, // did not load
		"e": {device: emu, planned: let(gpulet.Placement{Name: "mlp", MemoryMB: 0.5}), models: loaded("mlp")},
		"f": {device: gpu0, planned: let(gpulet.Placement{Name: "vgg"}), models: loaded("vgg")}, // no memory counted
	}}}
	tests := []struct {
		model string
		want  []kserve.MemoryUsage
	}{
		{model: "mlp", want: []kserve.MemoryUsage{{Type: "CPU", ByteSize: 20 << 20}, {Type: "GPU", ID: 1, ByteSize: 1 << 19}, {Type: "GPU", ID: 1, ByteSize: 300 << 20}}},
		{model: "vgg", want: []kserve.MemoryUsage{{Type: "GPU", ID: 1, ByteSize: 900 << 20}}},
		{model: "absent", want: []kserve.MemoryUsage{}},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			require.Equal(t, tt.want, n.memoryUsage(tt.model))
		})
	}
	require.Equal(t, []*inferencepb.MemoryUsage{{Type: "GPU", Id: 1, ByteSize: 900 << 20}}, kserve.ModelStatistics{MemoryUsage: n.memoryUsage("vgg")}.Proto().MemoryUsage)
}
