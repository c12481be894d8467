package httpbench

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseStat(t *testing.T) {
	// utime 250 and stime 50 ticks: 3 s. The name holds ") (" and spaces.
	line := "4242 (gpu ) (let d) S 1 4242 4242 0 -1 4194560 1234 0 0 0 250 50 0 0 20 0 9 0 100 1000 100 18446744073709551615\n"
	got, err := parseStat([]byte(line))
	require.NoError(t, err)
	require.Equal(t, 3*time.Second, got)
	for _, bad := range []string{"", "4242 gpuletd S 1", "1 (x) S 1 2", "1 (x) S 1 2 3 4 5 6 7 8 9 10 ten 12"} {
		_, err := parseStat([]byte(bad))
		require.Error(t, err, bad)
	}
}

func TestProcessCPU(t *testing.T) {
	before, err := ProcessCPU(os.Getpid())
	require.NoError(t, err)
	deadline := time.Now().Add(100 * time.Millisecond)
	for x := 0; time.Now().Before(deadline); x++ {
		_ = x * x
	}
	after, err := ProcessCPU(os.Getpid())
	require.NoError(t, err)
	require.Greater(t, after, before, "spinning 100 ms shows in /proc")
	_, err = ProcessCPU(1 << 30)
	require.ErrorIs(t, err, os.ErrNotExist)
}

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
