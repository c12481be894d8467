package pipeline

import (
	"testing"

	"github.com/gpulet/gpuletd/profiler/refset"
	"github.com/stretchr/testify/require"
)

// lokiTraffic is the traffic pipeline on the loki-1080ti reference set.
func lokiTraffic(t testing.TB) *Pipeline {
	t.Helper()
	set, err := refset.Load(refset.SetLoki1080Ti)
	require.NoError(t, err)
	p, err := TrafficAnalysis(func(name string) (LatencyFunc, int, bool) {
		m, ok := set.Model(name)
		if !ok {
			return nil, 0, false
		}
		return func(b int) (float64, bool) { return m.Profile.Latency(b, 100) }, m.Profile.MaxBatch(100), true
	})
	require.NoError(t, err)
	return p
}
