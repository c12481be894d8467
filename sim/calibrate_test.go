package sim

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCalibrationSeesTheBatchThatEnded: the executor's calibration compares
// each batch's time with what ℓ predicted for that batch, also when the
// next batch starts the moment it ends. With batch times jittered by a
// lognormal of CV 20% the calibrated factor (a high quantile of
// measured/profiled, read off each dispatched batch as its planned length
// over the profile's ℓ(b)) settles well above 1 (about 1.4). Compared with
// the next batch's planned end instead, as the simulator once did, a
// gpu-let whose batches run back to back never raised it.
func TestCalibrationSeesTheBatchThatEnded(t *testing.T) {
	w := load(t, "back-to-back.yaml")
	w.Seed = 1
	_, rec := run(t, w, Options{JitterCV: 0.2})
	require.Greater(t, len(rec.dispatches), 200)
	var factors []float64 // the second half's
	for i := len(rec.dispatches) / 2; i < len(rec.dispatches); i++ {
		profiled := ms(float64(len(rec.dispatches[i].IDs)) + 5) // ℓ(b) = b + 5 ms
		factors = append(factors, float64(rec.planned[i])/float64(profiled))
	}
	slices.Sort(factors)
	require.Greater(t, factors[len(factors)/2], 1.2, "median factor over the second half of the batches")
}
