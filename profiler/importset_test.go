package profiler

import (
	"context"
	"math"
	"testing"

	"github.com/gpulet/gpuletd/profiler/refset"
	"github.com/gpulet/gpuletd/profiler/store"
	"github.com/stretchr/testify/require"
)

func TestImportSet(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	igniter, err := refset.Load(refset.SetIgniterV100)
	require.NoError(t, err)
	points := 0
	for _, m := range igniter.Models {
		points += len(m.Profile.Points())
	}

	rep, err := ImportSet(ctx, st, igniter)
	require.NoError(t, err)
	require.Equal(t, ImportReport{Set: "igniter-v100", DeviceType: "igniter-v100", Models: 4, Points: points,
		Derived: 4 * 31, Util: 3 * points, Pairs: 750}, rep)

	dt, err := st.DeviceType(ctx, "igniter-v100")
	require.NoError(t, err)
	require.Equal(t, store.PartitionMPS, dt.Partitioning)
	require.Equal(t, []int{20, 40, 50, 60, 80, 100}, dt.Sizes)
	require.Equal(t, 16384.0, dt.MemoryMB)

	lat, err := st.Latency(ctx, RefKey("igniter-v100", "resnet50"), "igniter-v100")
	require.NoError(t, err)
	ref, _ := igniter.Model("resnet50")
	require.Len(t, lat, len(ref.Profile.Points()))
	for _, p := range lat {
		want, _ := ref.Profile.Latency(p.Batch, p.Size)
		require.Equal(t, want, p.P50MS)
		require.True(t, p.Complete)
		require.True(t, math.IsNaN(p.P99MS), "the set gives no p99")
	}
	ok, err := st.HasCompleteProfile(ctx, RefKey("igniter-v100", "resnet50"), "igniter-v100", igniter.Sizes, []int{1, 8, 32})
	require.NoError(t, err)
	require.True(t, ok)

	util, err := st.Util(ctx, RefKey("igniter-v100", "alexnet"), "igniter-v100")
	require.NoError(t, err)
	known := 0
	for _, u := range util {
		if !math.IsNaN(u.Value) {
			known++
			require.Equal(t, store.SourceIgniterV100, u.Source)
			require.NotEqual(t, store.MetricSM, u.Metric)
		} else {
			require.Equal(t, store.SourceUnknown, u.Source)
		}
	}
	require.Equal(t, 2*5*32, known, "L2 and DRAM at b = 1..32 for sizes 20..80")

	xs, err := st.InterferenceSamples(ctx, "igniter-v100")
	require.NoError(t, err)
	require.Len(t, xs, 750)
	c := igniter.Pairs[0]
	require.Equal(t, RefKey("igniter-v100", c.Model1), xs[0].ModelA)
	require.Equal(t, c.Latency2MS, xs[0].ColocBMS)
	require.False(t, math.IsNaN(xs[0].SoloAMS))

	again, err := ImportSet(ctx, st, igniter)
	require.NoError(t, err)
	require.Equal(t, int64(750), again.ReplacedPairs)
	xs, err = st.InterferenceSamples(ctx, "igniter-v100")
	require.NoError(t, err)
	require.Len(t, xs, 750, "importing twice stores the same rows")

	a100, err := refset.Load(refset.SetSymphonyA100)
	require.NoError(t, err)
	rep, err = ImportSet(ctx, st, a100)
	require.NoError(t, err)
	require.Zero(t, rep.Pairs)
	require.Equal(t, 37*32, rep.Points)
	dt, err = st.DeviceType(ctx, "symphony-a100")
	require.NoError(t, err)
	require.Equal(t, store.PartitionNone, dt.Partitioning)
}
