package procfs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHostCPUTime(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, stat  string
		busy, total uint64
		err         string
	}{
		{"ten fields", "cpu  100 5 50 800 20 3 2 10 7 0\ncpu0 1 1 1 1 1 1 1 1 0 0\n", 170, 990, ""},
		{"an old kernel's four", "cpu 10 0 10 80\n", 20, 100, ""},
		{"no cpu line", "intr 1 2 3\n", 0, 0, "no such field"},
		{"not a count", "cpu 10 x 10 80\n", 0, 0, `field 2 "x" is not a count`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.name)
			require.NoError(t, os.WriteFile(p, []byte(tc.stat), 0o600))
			busy, total, err := HostCPUTime(p)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.busy, busy)
			require.Equal(t, tc.total, total)
		})
	}
	busy, total, err := HostCPUTime("/proc/stat")
	require.NoError(t, err, "this machine's")
	require.Positive(t, total)
	require.LessOrEqual(t, busy, total)
}
