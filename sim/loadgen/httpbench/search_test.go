package httpbench

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/sim/loadgen"
	"github.com/stretchr/testify/require"
)

func TestSearchRate(t *testing.T) {
	// capacity answers every rate up to c within the SLO and misses 2% above.
	capacity := func(c float64) func(float64) (*loadgen.Report, error) {
		return func(r float64) (*loadgen.Report, error) {
			rep := &loadgen.Report{Sent: 100, OK: 100, WithinSLO: 100, Latency: loadgen.Percentiles{P99: time.Millisecond}}
			if r > c {
				rep.WithinSLO = 98
			}
			return rep, nil
		}
	}
	for _, tc := range []struct {
		capacity, want float64
		tried          []float64
	}{
		{1000, 800, []float64{200, 400, 800, 1600}},
		{1e9, 3200, []float64{200, 400, 800, 1600, 3200}},
		{150, 100, []float64{200, 100}},
		{30, 25, []float64{200, 100, 50, 25}},
	} {
		got, probes, err := SearchRate(io.Discard, 3200, capacity(tc.capacity))
		require.NoError(t, err)
		require.Equal(t, tc.want, got)
		var tried []float64
		for _, p := range probes {
			tried = append(tried, p.Rate)
			require.Equal(t, p.Rate <= tc.capacity, p.Kept)
		}
		require.Equal(t, tc.tried, tried)
	}
	_, probes, err := SearchRate(io.Discard, 3200, capacity(1))
	require.ErrorIs(t, err, ErrNoRate)
	require.Len(t, probes, 5, "200, 100, 50, 25, 12.5")

	// Failures count as misses; 1% of them is within the p99; a client
	// drop spoils the measurement.
	for _, tc := range []struct {
		rep  loadgen.Report
		kept bool
	}{
		{loadgen.Report{Sent: 100, OK: 99, WithinSLO: 99}, true},
		{loadgen.Report{Sent: 100, OK: 98, WithinSLO: 98}, false},
		{loadgen.Report{Sent: 100, OK: 100, WithinSLO: 100, Dropped: 1}, false},
		{loadgen.Report{}, false},
	} {
		_, probes, _ := SearchRate(io.Discard, 200, func(float64) (*loadgen.Report, error) { return &tc.rep, nil })
		require.Equal(t, tc.kept, probes[0].Kept, "%+v", tc.rep)
	}
	boom := errors.New("boom")
	_, _, err = SearchRate(io.Discard, 3200, func(float64) (*loadgen.Report, error) { return nil, boom })
	require.ErrorIs(t, err, boom)
}
