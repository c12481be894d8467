package daemon

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/control"
)

// startsCollector exposes a gpuletStarts alone.
type startsCollector struct{ s *gpuletStarts }

func (c startsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- descGpuletStarts }
func (c startsCollector) Collect(ch chan<- prometheus.Metric) { c.s.collect(ch) }

// Every series is there from the start, at 0; a reorganization counts its
// starts by how they went.
func TestGpuletStartsTotal(t *testing.T) {
	var s gpuletStarts
	require.NoError(t, testutil.CollectAndCompare(startsCollector{&s}, strings.NewReader(`
# HELP gpuletd_gpulet_starts_total `+gpuletStartsHelp+`
# TYPE gpuletd_gpulet_starts_total counter
gpuletd_gpulet_starts_total{how="after_drain"} 0
gpuletd_gpulet_starts_total{how="beside"} 0
gpuletd_gpulet_starts_total{how="over_old"} 0
`), "gpuletd_gpulet_starts_total"))
	s.add(control.Outcome[*gpuletRun]{Started: 3, Overlapped: 1, Deferred: 2})
	require.NoError(t, testutil.CollectAndCompare(startsCollector{&s}, strings.NewReader(`
# HELP gpuletd_gpulet_starts_total `+gpuletStartsHelp+`
# TYPE gpuletd_gpulet_starts_total counter
gpuletd_gpulet_starts_total{how="after_drain"} 2
gpuletd_gpulet_starts_total{how="beside"} 2
gpuletd_gpulet_starts_total{how="over_old"} 1
`), "gpuletd_gpulet_starts_total"))
}
