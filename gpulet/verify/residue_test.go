package verify_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/sim/workload"
	"github.com/stretchr/testify/require"
)

// A model whose batch of one barely meets its SLO alone has its residue
// split off at the smallest size that serves it beside a neighbour, not at
// MINREQUIREDPARTITION's, which counts none: alexnet at a 3 ms SLO on one
// iGniter V100 took the GPU whole, leaving resnet50 and vgg19 (100 ms
// SLOs) unplaced, while at 2.5 ms it took half and all three were served.
func TestAResidueIsSplitWhereItServesBesideANeighbour(t *testing.T) {
	for _, slo := range []string{"3", "2.5"} {
		w, err := workload.Decode(strings.NewReader(fmt.Sprintf(`
devices: [{profiles: igniter-v100, count: 1, partitioning: mps}]
models:
  - {name: alexnet, profile: alexnet, slo_ms: %s, rate: 1}
  - {name: resnet50, profile: resnet50, slo_ms: 100, rate: 1}
  - {name: vgg, profile: vgg19, slo_ms: 100, rate: 1}
duration: 1s
`, slo)), "residue")
		require.NoError(t, err)
		in, opts, err := w.Input()
		require.NoError(t, err)
		plan := runPlan(t, gpulet.AlgoGpuletInt, in, opts)
		require.True(t, plan.Schedulable, "alexnet at %s ms: %v", slo, plan.Reasons)
		require.Len(t, plan.GPUs[0].GPULets, 2, "alexnet at %s ms: a gpu-let of its own, and one for the others", slo)
	}
}
