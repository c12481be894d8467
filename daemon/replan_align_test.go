package daemon

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/control"
	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/mps"
)

// A re-plan's layouts go back to the GPUs where their models run
// (control.Align over what the node runs): a gpu-let being retired, and a
// model its executor has not loaded, do not count as running.
func TestReplanLaysLayoutsOutWhereTheyRun(t *testing.T) {
	let := func(names ...string) gpulet.GPULet {
		l := gpulet.GPULet{Size: 100}
		for _, name := range names {
			l.Models = append(l.Models, gpulet.Placement{Name: name, Batch: 4, Rate: 50, MemoryMB: 100})
		}
		return l
	}
	gpus := []gpulet.GPU{
		{ID: "emu0", Type: "v100", Backend: gpulet.BackendMPS, MemoryMB: 16000},
		{ID: "emu1", Type: "v100", Backend: gpulet.BackendMPS, MemoryMB: 16000},
	}
	// The planner's plan: a on emu0, b on emu1.
	plan := &gpulet.Plan{GPUs: []gpulet.GPUPlan{
		{ID: "emu0", GPULets: []gpulet.GPULet{let("a")}},
		{ID: "emu1", GPULets: []gpulet.GPULet{let("b")}},
	}}
	run := func(device string, l gpulet.GPULet, loaded ...string) *gpuletRun {
		g := &gpuletRun{device: mps.Device{ID: device}, planned: l, models: map[string]*pb.LoadModelRequest{}}
		for _, name := range loaded {
			g.models[name] = &pb.LoadModelRequest{Name: name}
		}
		return g
	}
	retired := func(g *gpuletRun) *gpuletRun { g.draining.Store(true); return g }
	layout := func(p *gpulet.Plan) []string {
		var out []string
		for _, g := range p.GPUs {
			out = append(out, g.ID+":"+g.GPULets[0].Models[0].Name)
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		running map[string]*gpuletRun
		want    []string
	}{
		{"each layout where its model runs", map[string]*gpuletRun{
			"x1": run("emu0", let("b"), "b"), "x2": run("emu1", let("a"), "a"),
		}, []string{"emu0:b", "emu1:a"}},
		// Counted, emu0's a would keep the planner's order.
		{"a retired gpu-let does not count", map[string]*gpuletRun{
			"x1": retired(run("emu0", let("a"), "a")), "x2": run("emu1", let("a"), "a"),
		}, []string{"emu0:b", "emu1:a"}},
		{"a model not loaded does not count", map[string]*gpuletRun{
			"x1": run("emu0", let("a")), "x2": run("emu1", let("a"), "a"),
		}, []string{"emu0:b", "emu1:a"}},
		{"nothing to gain keeps the planner's order", map[string]*gpuletRun{
			"x1": run("emu0", let("a"), "a"), "x2": run("emu1", let("a"), "a"),
		}, []string{"emu0:a", "emu1:b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := &node{log: zap.NewNop(), sup: &supervisor{running: tc.running}}
			require.Equal(t, tc.want, layout(control.Align(n.running(), plan, gpus)))
		})
	}
}
