package daemon

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/profiler/store"
)

func TestMemoryReport(t *testing.T) {
	db := &DatabaseReport{Summary: &store.Summary{Memory: []store.TypeMemory{
		{DeviceType: "cpu", Models: 2, MB: 1686, WithExecutor: 1}, {DeviceType: "nvidia-h100", Models: 1, MB: 9000}}}}

	r := memoryReport(db, nil)
	require.Positive(t, r.TotalBytes, "this host's")
	require.Equal(t, int64(2), r.CPUModels)
	require.Equal(t, int64(1686<<20), r.CPUModelsBytes, "the CPU's alone")
	require.Equal(t, int64(1), r.CPUModelsWithExecutor)
	require.Empty(t, r.Warning, "fits in this host")

	r = memoryReport(db, cgroupV2(t, "1073741824", 0, 0, 0))
	require.Equal(t, int64(1<<30), r.LimitBytes)
	require.Equal(t, "/system.slice", r.LimitOf)
	require.Equal(t, "the database's CPU models need 1.6 GiB together, more than the 1 GiB gpuletd may use here: the plan will leave some out, and say why", r.Warning)

	r = memoryReport(nil, nil)
	require.Zero(t, r.CPUModels, "no database read")
	require.Empty(t, r.Warning)
}
