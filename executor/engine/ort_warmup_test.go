package engine

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWarmupAtTheSizesRequestsBring: the frames model's 5x5 convolution
// runs on no image under 5x5, so a warm-up that fills its open height and
// width with 1 fails; at the warm-up shapes the load gives (the model's
// profile_shapes) it runs, and shapes that do not fit the input are
// refused at load.
func TestWarmupAtTheSizesRequestsBring(t *testing.T) {
	e := newCPU(t, 1)
	path := zooModel(t, "frames")
	ctx := context.Background()
	load := func(shapes map[string][]int64) (Loaded, error) {
		m, err := e.Load(ctx, ModelSpec{Name: "frames", Path: path, MaxBatchSize: 8, WarmupShapes: shapes})
		if err == nil {
			t.Cleanup(func() { require.NoError(t, m.Close()) })
		}
		return m, err
	}

	m, err := load(nil)
	require.NoError(t, err)
	_, err = m.Warmup(ctx, []int{1})
	require.ErrorIs(t, err, ErrRejectedInput, "at 1x1 the convolution does not run")

	m, err = load(map[string][]int64{"frames": {3, 32, 32}})
	require.NoError(t, err)
	w, err := m.Warmup(ctx, []int{1, 4})
	require.NoError(t, err)
	require.Len(t, w.Batches, 2)

	for _, bad := range []map[string][]int64{
		{"image": {3, 32, 32}},  // no such input
		{"frames": {32, 32}},    // too few dims
		{"frames": {4, 32, 32}}, // the channels are fixed at 3
		{"frames": {3, 0, 32}},  // not a size
	} {
		_, err := load(bad)
		require.ErrorIs(t, err, ErrInvalidSpec, "%v", bad)
	}
}
