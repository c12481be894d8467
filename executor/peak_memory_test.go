package executor

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPeakResident(t *testing.T) {
	for _, tc := range []struct {
		name, status string
		want         int64
	}{
		{"high-water mark", "Name:\tgpuletd\nVmPeak:\t 2000 kB\nVmHWM:\t   79700 kB\nVmRSS:\t   70000 kB\n", 79700 << 10},
		{"no line", "Name:\tgpuletd\nVmRSS:\t 100 kB\n", 0},
		{"another unit", "VmHWM:\t 12 MB\n", 0},
		{"not a number", "VmHWM:\t lots kB\n", 0},
		{"negative", "VmHWM:\t -5 kB\n", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "status")
			require.NoError(t, os.WriteFile(f, []byte(tc.status), 0o600))
			require.Equal(t, tc.want, peakResident(f))
		})
	}
	require.Zero(t, peakResident(filepath.Join(t.TempDir(), "absent")))
	require.Positive(t, peakResident(selfStatusPath), "this test process's own")
}
