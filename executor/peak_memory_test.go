package executor

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPeakResident(t *testing.T) {
	f := filepath.Join(t.TempDir(), "status")
	require.NoError(t, os.WriteFile(f, []byte("Name:\tgpuletd\nVmHWM:\t   79700 kB\n"), 0o600))
	require.Equal(t, int64(79700<<10), peakResident(f))
	require.Zero(t, peakResident(filepath.Join(t.TempDir(), "absent")), "unknown: 0")
	require.Positive(t, peakResident(selfStatusPath), "this test process's own")
}
