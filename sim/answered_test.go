package sim

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRouterSeesABatchEnd: the router learns of a batch's end, and of the
// batch that starts then, with the batch's answers, as the daemon's router
// does (the executor attaches its state to them), not an interval later.
//
// Every batch ends 20% before the executors' ℓ says (the margin); eager
// policy, ℓ(b) = b + 5 ms as the hardware runs, SLO 12 ms. R1 (1.0 ms)
// runs on gpu-let 0, R2 (1.1 ms) on gpu-let 1; R3 (6.0) and R4 (6.6) wait
// for gpu-let 0, which the router expects free at 1 + 7.2 = 8.2 ms. It ends
// at 7.0 and starts R3+R4 at once; R5 comes at 7.05, 450 µs after the
// router last looked at gpu-let 0. Told of that end, the router sends R5 to
// gpu-let 1, free at 7.1, where it ends by 13.1 (deadline 19.05). Not told,
// it would add R5 to the batch it believes is still waiting on gpu-let 0;
// R5 would then wait alone behind R3+R4 there and expire.
func TestRouterSeesABatchEnd(t *testing.T) {
	w := load(t, "early-end.yaml")
	res, rec := run(t, w, Options{JitterCV: -1, NoCalibration: true, Margin: 0.2})
	require.Equal(t, uint64(5), res.Requests)
	require.Equal(t, res.Requests, res.Good, "answers: %v", rec.answered)
	require.Equal(t, []dispatch{
		{Let: 0, At: ms(1.0), IDs: []uint64{1}},
		{Let: 1, At: ms(1.1), IDs: []uint64{2}},
		{Let: 0, At: ms(7.0), IDs: []uint64{3, 4}},
		{Let: 1, At: ms(7.1), IDs: []uint64{5}},
	}, rec.dispatches)
}
