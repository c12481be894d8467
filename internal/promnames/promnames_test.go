package promnames

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFamilies(t *testing.T) {
	text := `histogram_quantile(0.99, sum by (le) (rate(gpuletd_request_duration_seconds_bucket[5m])))
  / rate(gpuletd_requests_total[5m]) + gpuletd_batch_size_sum / gpuletd_batch_size_count; up{job="gpuletd"} and process_cpu_seconds_total`
	require.Equal(t, []string{"gpuletd_batch_size", "gpuletd_request_duration_seconds", "gpuletd_requests_total"}, Families([]byte(text)))
}

func TestDocumented(t *testing.T) {
	md := "| family | what |\n| --- | --- |\n" +
		"| `gpuletd_requests_total{model}` | requests, unlike gpuletd_not_a_row |\n" +
		"| `gpuletd_http_connections`, `gpuletd_http_connections_max` | open and cap |\n" +
		"text that names `gpuletd_elsewhere`\n"
	got, err := Documented(strings.NewReader(md))
	require.NoError(t, err)
	require.Equal(t, map[string]bool{"gpuletd_requests_total": true, "gpuletd_http_connections": true, "gpuletd_http_connections_max": true}, got)
}
