package sim

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/sim/workload"
)

func TestSpreadOf(t *testing.T) {
	require.Equal(t, Spread{Median: 3, Min: 1, Max: 9, Values: []float64{9, 1, 3}}, SpreadOf([]float64{9, 1, 3}))
	require.Equal(t, 2.5, SpreadOf([]float64{4, 1, 2, 3}).Median)
	require.Equal(t, Spread{}, SpreadOf(nil))
}

// TestServedRate: one model on one GPU whose capacity is known: below it
// the whole top passes, above it bisection lands under the capacity.
func TestServedRate(t *testing.T) {
	w := load(t, "stagger.yaml")
	w.Devices[0].Count = 1
	w.Models[0].Arrival = "poisson"
	w.Duration = workload.Duration(5e9)
	build := func(rate float64) (*workload.Workload, error) {
		c := *w
		c.Models = append([]workload.Model(nil), w.Models...)
		c.Models[0].Rate = rate
		return &c, nil
	}
	got, probes, err := ServedRate(context.Background(), build, exact, 2)
	require.NoError(t, err)
	require.Equal(t, 2.0, got, "a low top passes at once")
	require.Len(t, probes, 1)

	got, probes, err = ServedRate(context.Background(), build, exact, 400)
	require.NoError(t, err)
	require.Greater(t, got, 0.0)
	require.Less(t, got, 400.0)
	require.Len(t, probes, 1+servedSteps)
	for _, p := range probes {
		if p.Rate <= got {
			require.GreaterOrEqual(t, p.Attainment, GoodputTarget, "every rate at or under the answer held: %v", p)
		}
	}
	_, _, err = ServedRate(context.Background(), build, exact, 0)
	require.ErrorIs(t, err, ErrBadOptions)
}

func TestOverSeeds(t *testing.T) {
	require.Equal(t, []uint64{7, 8, 9}, SeedList(7, 3))
	require.Equal(t, []uint64{7}, SeedList(7, 0))
	sp, err := OverSeeds(SeedList(1, 3), func(s uint64) (float64, error) { return float64(10 * s), nil })
	require.NoError(t, err)
	require.Equal(t, Spread{Median: 20, Min: 10, Max: 30, Values: []float64{10, 20, 30}}, sp)
	_, err = OverSeeds([]uint64{1}, func(uint64) (float64, error) { return 0, ErrBadOptions })
	require.ErrorIs(t, err, ErrBadOptions)
}
