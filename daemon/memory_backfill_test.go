package daemon

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/profiler/store"
)

// Only a model with a profile of its own on the CPU, no memory measured
// and no memory_mb is measured at start, at the batches its profile has.
func TestMissingMemory(t *testing.T) {
	ctx := context.Background()
	n, st, cpu := lendingNode(t)
	n.catalog = newCatalog([]string{t.TempDir()}, testRepositoryOptions(0), st, n.events, zap.NewNop())
	lacking, measured, configured, unprofiled := mlpFile("a", 1000), mlpFile("b", 1000), mlpFile("c", 1000), mlpFile("d", 1000)
	lacking.Config.MaxBatchSize = 2 // the stored batch 4 is not one it serves
	for i, m := range []*repository.Model{lacking, measured, configured, unprofiled} {
		m.Name, m.Version, m.Config.SLO = []string{"lacking", "measured", "configured", "unprofiled"}[i], 1, config.Duration(time.Second)
		require.NoError(t, n.catalog.add(ctx, m))
		if m != unprofiled {
			putProfile(t, st, m, cpu.Type, 2)
		}
	}
	configured.Config.MemoryMB = 300
	require.NoError(t, st.PutModelMemory(ctx, store.ModelMemory{ModelSHA: measured.SHA256, DeviceType: cpu.Type, ResidentMB: 80}))

	jobs := n.missingMemory(ctx)
	require.Len(t, jobs, 1)
	require.Equal(t, "lacking", jobs[0].m.Name)
	require.Equal(t, cpu.ID, jobs[0].d.ID)
	require.Equal(t, []int{1, 2}, jobs[0].batches)
}
