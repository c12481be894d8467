package daemon

import (
	"fmt"
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
	counted := func(afterDrain, beside, overOld int) string {
		return fmt.Sprintf(`
# HELP gpuletd_gpulet_starts_total %s
# TYPE gpuletd_gpulet_starts_total counter
gpuletd_gpulet_starts_total{how="after_drain"} %d
gpuletd_gpulet_starts_total{how="beside"} %d
gpuletd_gpulet_starts_total{how="over_old"} %d
`, gpuletStartsHelp, afterDrain, beside, overOld)
	}
	require.NoError(t, testutil.CollectAndCompare(startsCollector{&s}, strings.NewReader(counted(0, 0, 0)), "gpuletd_gpulet_starts_total"))
	s.add(control.Outcome[*gpuletRun]{Started: 3, Overlapped: 1, Deferred: 2})
	require.NoError(t, testutil.CollectAndCompare(startsCollector{&s}, strings.NewReader(counted(2, 2, 1)), "gpuletd_gpulet_starts_total"))
}
