package sim

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// exact: no jitter, ℓ as planned, so the example's arithmetic holds.
var exact = Options{JitterCV: -1, NoCalibration: true}

// TestStaggering is Symphony §3.3 (Figure 4) through the whole simulator:
// the planner puts the model on the 3 GPUs, the router and the deferred
// executors form batches of 4 that start 3 ms apart on the gpu-lets in
// turn, and nothing is lost. The trace's first arrival (R1) comes at
// 0.75 ms, so every time is the paper's + 0.75 ms: R1..R4 start at 3.0 on
// gpu-let 0 (R1's deadline 12.75 − ℓ(4) = 3.75 is its latest moment, the
// frontrun 12.75 − ℓ(5) = 2.75 passed when R4 came), R5..R8 at 6.0 on
// gpu-let 1, and so on, each gpu-let busy from its first batch on.
func TestStaggering(t *testing.T) {
	w := load(t, "stagger.yaml")
	res, rec := run(t, w, exact)
	require.Equal(t, uint64(60), res.Requests)
	require.Equal(t, uint64(60), res.Good)
	require.Len(t, rec.dispatches, 15)
	for k, d := range rec.dispatches {
		require.Equal(t, k%3, d.Let, "batch %d", k)
		require.Equal(t, ms(3.0)+ms(3*float64(k)), d.At, "batch %d", k)
		first := uint64(4*k + 1)
		require.Equal(t, []uint64{first, first + 1, first + 2, first + 3}, d.IDs, "batch %d", k)
	}
	require.InDelta(t, 4.0, res.MeanBatch, 0)
	require.Equal(t, []uint64{0, 0, 0, 0, 15}, res.Models[0].Batches)
}

// TestStaggeringRecovers is Symphony Figure 5 through the whole simulator:
// without R13..R15, deferred executors idle a little and form batches of 4
// again, losing nothing; eager executors behind the same router start
// batches as soon as a gpu-let frees, the batches shrink and requests are
// lost.
func TestStaggeringRecovers(t *testing.T) {
	w := load(t, "stagger.yaml")
	w.Models[0].Arrival = "trace:stagger-missing.csv@1"
	res, rec := run(t, w, exact)
	require.Equal(t, uint64(57), res.Requests)
	require.Equal(t, res.Requests, res.Good, "deferred loses nothing")
	for k, d := range rec.dispatches {
		if k == len(rec.dispatches)-1 {
			break // the last batch takes what is left
		}
		require.Len(t, d.IDs, 4, "batch %d: %v", k, d)
	}
	// R16 arrives at 12.0 (11.25 + 0.75) as gpu-let 0 frees; deferred waits
	// for its frontrun and R16..R19 start together at 14.25 (13.5 + 0.75).
	// The simulator numbers requests as they arrive: R16 is request 13.
	require.Equal(t, dispatch{Let: 0, At: ms(14.25), IDs: []uint64{13, 14, 15, 16}}, rec.dispatches[3])
	require.Equal(t, dispatch{Let: 1, At: ms(17.25), IDs: []uint64{17, 18, 19, 20}}, rec.dispatches[4])

	w.Policy = "eager"
	eres, erec := run(t, w, exact)
	require.Equal(t, []uint64{1}, erec.dispatches[0].IDs, "eager starts R1 alone")
	small := 0
	for _, d := range erec.dispatches {
		if len(d.IDs) < 4 {
			small++
		}
	}
	require.Greater(t, small, len(erec.dispatches)/2)
	require.Less(t, eres.Good, eres.Requests, "eager loses requests")
	require.Less(t, eres.MeanBatch, res.MeanBatch)
}
