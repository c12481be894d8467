package httpbench

import (
	"strings"
	"testing"

	"github.com/gpulet/gpuletd/sim/loadgen"
	"github.com/stretchr/testify/require"
)

func TestUnlabelledValues(t *testing.T) {
	const text = `# HELP go_memstats_mallocs_total Total number of heap objects allocated.
# TYPE go_memstats_mallocs_total counter
go_memstats_mallocs_total 1.234e+06
go_memstats_alloc_bytes_total 5.5e+08
gpuletd_model_request_rate{model="lenet5"} 400
`
	tests := []struct {
		name  string
		names []string
		want  []float64
		err   string
	}{
		{"both", []string{"go_memstats_mallocs_total", "go_memstats_alloc_bytes_total"}, []float64{1.234e6, 5.5e8}, ""},
		{"order follows the names", []string{"go_memstats_alloc_bytes_total", "go_memstats_mallocs_total"}, []float64{5.5e8, 1.234e6}, ""},
		{"missing", []string{"go_memstats_mallocs_total", "go_gc_nothing"}, nil, "no sample of go_gc_nothing"},
		{"labelled samples are not unlabelled ones", []string{"gpuletd_model_request_rate"}, nil, "no sample of gpuletd_model_request_rate"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fams, err := loadgen.ParseMetrics(strings.NewReader(text))
			require.NoError(t, err)
			got, err := unlabelledValues(fams, tc.names...)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestHistogramTotals(t *testing.T) {
	const text = `# TYPE gpuletd_executor_hop_duration_seconds histogram
gpuletd_executor_hop_duration_seconds_bucket{model="a",le="0.001"} 3
gpuletd_executor_hop_duration_seconds_bucket{model="a",le="+Inf"} 4
gpuletd_executor_hop_duration_seconds_sum{model="a"} 0.0005
gpuletd_executor_hop_duration_seconds_count{model="a"} 4
gpuletd_executor_hop_duration_seconds_bucket{model="b",le="0.001"} 1
gpuletd_executor_hop_duration_seconds_bucket{model="b",le="+Inf"} 1
gpuletd_executor_hop_duration_seconds_sum{model="b"} 0.0001
gpuletd_executor_hop_duration_seconds_count{model="b"} 1
`
	fams, err := loadgen.ParseMetrics(strings.NewReader(text))
	require.NoError(t, err)
	sum, count := histogramTotals(fams, hopMetric)
	require.InDelta(t, 0.0006, sum, 1e-12, "summed over the models")
	require.Equal(t, uint64(5), count)
	sum, count = histogramTotals(fams, "gpuletd_absent_seconds")
	require.Zero(t, sum)
	require.Zero(t, count)
}
