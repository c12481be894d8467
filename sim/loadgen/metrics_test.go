package loadgen

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// metricsServer answers /metrics with page(i) at its i-th scrape (from 0).
func metricsServer(t *testing.T, page func(i int64) string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, page(n.Add(1)-1))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// The collector reads Triton's names where the server gives them, else
// gpuletd's, and sums its samples per GPU: the mean utilization and
// power, the most memory used, the memory in all.
func TestMetricsCollector(t *testing.T) {
	triton := func(i int64) string {
		util := []float64{0.2, 0.6}[i%2]
		return fmt.Sprintf(`# TYPE nv_gpu_utilization gauge
nv_gpu_utilization{gpu_uuid="GPU-a"} %g
nv_gpu_utilization{gpu_uuid="GPU-b"} 0.5
# TYPE nv_gpu_power_usage gauge
nv_gpu_power_usage{gpu_uuid="GPU-a"} %d
# TYPE nv_gpu_memory_used_bytes gauge
nv_gpu_memory_used_bytes{gpu_uuid="GPU-a"} %d
# TYPE nv_gpu_memory_total_bytes gauge
nv_gpu_memory_total_bytes{gpu_uuid="GPU-a"} 80000
# TYPE gpuletd_device_utilization_ratio gauge
gpuletd_device_utilization_ratio{device="gpu0"} 0.9
`, util, 100+10*i, 1000*(i+1))
	}
	gpuletd := func(i int64) string {
		return fmt.Sprintf(`# TYPE gpuletd_device_utilization_ratio gauge
gpuletd_device_utilization_ratio{device="gpu0"} 0.5
# TYPE gpuletd_device_power_watts gauge
gpuletd_device_power_watts{device="gpu0",state="draw"} 200
gpuletd_device_power_watts{device="gpu0",state="limit"} 700
# TYPE gpuletd_device_memory_bytes gauge
gpuletd_device_memory_bytes{device="gpu0",state="total"} 16000
gpuletd_device_memory_bytes{device="gpu0",state="free"} %d
gpuletd_device_memory_bytes{device="gpu1",state="total"} 16000
`, 15000-1000*i)
	}
	for _, tc := range []struct {
		name string
		page func(int64) string
		// check is given the pages served: a read the stop cancels may
		// reach the server and not count.
		check func(t *testing.T, s MetricsSummary, served int64)
	}{
		{name: "Triton's names", page: triton, check: func(t *testing.T, s MetricsSummary, served int64) {
			require.Len(t, s.GPUs, 2, "gpuletd's names are not read beside Triton's: %+v", s.GPUs)
			a := s.GPUs[0]
			require.Equal(t, "GPU-a", a.GPU)
			require.GreaterOrEqual(t, a.Utilization, 0.2, "the mean of 0.2 and 0.6 in turn")
			require.LessOrEqual(t, a.Utilization, 0.6)
			require.GreaterOrEqual(t, a.PowerWatts, 100.0)
			requireMostUsed(t, a.MaxMemoryUsedBytes, s.Samples, served)
			require.Equal(t, 80000.0, a.MemoryTotalBytes)
			require.Equal(t, GPUMetrics{GPU: "GPU-b", Utilization: 0.5, PowerWatts: -1, MaxMemoryUsedBytes: -1, MemoryTotalBytes: -1}, s.GPUs[1])
		}},
		{name: "gpuletd's names", page: gpuletd, check: func(t *testing.T, s MetricsSummary, served int64) {
			require.Len(t, s.GPUs, 2)
			requireMostUsed(t, s.GPUs[0].MaxMemoryUsedBytes, s.Samples, served)
			s.GPUs[0].MaxMemoryUsedBytes = 0
			require.Equal(t, GPUMetrics{GPU: "gpu0", Utilization: 0.5, PowerWatts: 200, MemoryTotalBytes: 16000}, s.GPUs[0])
			require.Equal(t, GPUMetrics{GPU: "gpu1", Utilization: -1, PowerWatts: -1, MaxMemoryUsedBytes: -1, MemoryTotalBytes: 16000}, s.GPUs[1])
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, scrapes := metricsServer(t, tc.page)
			c := StartMetrics(context.Background(), srv.Client(), srv.URL, 0, 10*time.Millisecond)
			time.Sleep(50 * time.Millisecond)
			s, err := c.Stop()
			require.NoError(t, err)
			require.Equal(t, srv.URL, s.URL)
			served := scrapes.Load()
			require.LessOrEqual(t, int64(s.Samples), served)
			require.GreaterOrEqual(t, s.Samples, 2, "one at the start, one at the stop")
			tc.check(t, s, served)
		})
	}
}

// requireMostUsed checks the most memory the samples saw: page i says
// 1000·(i+1) bytes in use, and the last read, at the stop, is one of the
// last pages served.
func requireMostUsed(t *testing.T, most float64, samples int, served int64) {
	t.Helper()
	require.Zero(t, int64(most)%1000, most)
	require.GreaterOrEqual(t, most, float64(1000*samples))
	require.LessOrEqual(t, most, float64(1000*served))
}

// Reads wait for the warm-up to pass; a collection stopped before then
// reads once, at its stop.
func TestMetricsCollectorWaitsOutTheWarmup(t *testing.T) {
	srv, scrapes := metricsServer(t, func(int64) string { return "" })
	s, err := StartMetrics(context.Background(), srv.Client(), srv.URL, time.Hour, time.Millisecond).Stop()
	require.NoError(t, err)
	require.Equal(t, 1, s.Samples)
	require.Equal(t, int64(1), scrapes.Load())
}

// A server whose metrics cannot be read gives an error, and no GPUs.
func TestMetricsCollectorWithoutMetrics(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	s, err := StartMetrics(context.Background(), srv.Client(), srv.URL+"/metrics", 0, time.Hour).Stop()
	require.ErrorContains(t, err, "404")
	require.Zero(t, s.Samples)
	require.Empty(t, s.GPUs)
}
