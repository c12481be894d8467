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
	p, err := TrafficAnalysis(SetProfile(set, 100))
	require.NoError(t, err)
	return p
}
