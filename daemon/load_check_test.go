package daemon

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/mps"
)

// A version a load read is checked against the node alone: one whose SLO
// no batch meets on any gpu-let fails the load (the model serves on as it
// was), one with no profile yet to tell by passes (it is measured first,
// as a new model is). (Only a load of a model served now checks:
// TestModelLoadedThroughRepositoryIsPlaced.)
func TestALoadNoGpuletCouldServeIsRefused(t *testing.T) {
	ctx := context.Background()
	devices, err := mps.New(mps.Options{Spec: mps.Spec{Mode: mps.ModeCPU}, CPUs: []int{0}})
	require.NoError(t, err)
	n, _ := previewNode(t, devices) // mlp: 2 ms a request on the CPU

	withSLO := func(sha string, slo time.Duration) *repository.Model {
		m := mlpFile(sha, 1_000_000)
		m.Version, m.Config.SLO = 1, config.Duration(slo)
		return m
	}
	require.Empty(t, n.unplaceableAlone(ctx, withSLO("a", time.Second)))
	why := n.unplaceableAlone(ctx, withSLO("a", time.Millisecond))
	require.Contains(t, why, "SLO 1 ms: no batch meets it on any gpu-let")
	require.Empty(t, n.unplaceableAlone(ctx, withSLO("b", time.Millisecond)), "no profile of this file to tell by")

	check := n.servableCheck(ctx)
	require.NoError(t, check([]*repository.Model{withSLO("a", time.Second)}))
	err = check([]*repository.Model{withSLO("a", time.Second), withSLO("a", time.Millisecond)})
	require.ErrorIs(t, err, repository.ErrInvalidModel, "failed as a folder that does not read")
	require.ErrorContains(t, err, "mlp as it reads now cannot be served on this node: SLO 1 ms")

}
