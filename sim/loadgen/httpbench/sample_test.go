package httpbench

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseMetricValues(t *testing.T) {
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
			got, err := parseMetricValues(strings.NewReader(text), tc.names...)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}
