package promnames

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFamilies(t *testing.T) {
	text := `histogram_quantile(0.99, sum by (le) (rate(gpuletd_request_duration_seconds_bucket[5m])))
  / rate(gpuletd_requests_total[5m]) + gpuletd_batch_size_sum / gpuletd_batch_size_count; up{job="gpuletd"} and process_cpu_seconds_total`
	require.Equal(t, []string{"gpuletd_batch_size", "gpuletd_request_duration_seconds", "gpuletd_requests_total"}, Families([]byte(text)))
}

func TestUndocumented(t *testing.T) {
	md := "| family | what |\n| --- | --- |\n" +
		"| `gpuletd_requests_total{model}` | requests, unlike gpuletd_not_a_row |\n" +
		"| `gpuletd_http_connections`, `gpuletd_http_connections_max` | open and cap |\n" +
		"text that names `gpuletd_elsewhere`\n"
	path := filepath.Join(t.TempDir(), "OPERATIONS.md")
	require.NoError(t, os.WriteFile(path, []byte(md), 0o600))
	got, err := Undocumented(path, []string{"gpuletd_requests_total", "gpuletd_not_a_row", "gpuletd_http_connections_max", "gpuletd_elsewhere"})
	require.NoError(t, err)
	require.Equal(t, []string{"gpuletd_not_a_row", "gpuletd_elsewhere"}, got)

	require.NoError(t, os.WriteFile(path, []byte("no table\n"), 0o600))
	_, err = Undocumented(path, nil)
	require.ErrorContains(t, err, "no metrics table")
	_, err = Undocumented(filepath.Join(t.TempDir(), "none.md"), nil)
	require.Error(t, err)
}
