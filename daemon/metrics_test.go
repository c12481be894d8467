package daemon

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
)

// TestViolationsSeriesFromTheFirstRequest: a model's SLO violations series
// is there at 0 from its first request, so that 1 − violations / requests
// reads 100% rather than nothing while no request was late.
func TestViolationsSeriesFromTheFirstRequest(t *testing.T) {
	m := newMetrics(&node{})
	require.Zero(t, testutil.CollectAndCount(m.violations))
	m.countRequest("mlp")
	m.countRequest("mlp")
	require.NoError(t, testutil.CollectAndCompare(m.violations, strings.NewReader(`
# HELP gpuletd_slo_violations_total Requests not answered successfully within their SLO, per model.
# TYPE gpuletd_slo_violations_total counter
gpuletd_slo_violations_total{model="mlp"} 0
`)))
	require.Equal(t, 2.0, testutil.ToFloat64(m.requests.WithLabelValues("mlp")))
}
