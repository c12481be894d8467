package procfs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestKiBField(t *testing.T) {
	for _, tc := range []struct {
		name, content, key string
		want               int64
		err                string
	}{
		{"meminfo", "MemTotal:       24683520 kB\nMemFree:         1000 kB\n", "MemTotal", 24683520 << 10, ""},
		{"status", "Name:\tgpuletd\nVmPeak:\t 2000 kB\nVmHWM:\t   79700 kB\n", "VmHWM", 79700 << 10, ""},
		{"a prefix is not the key", "VmHWMx:\t 5 kB\n", "VmHWM", 0, "no such field"},
		{"no line", "Name:\tgpuletd\n", "VmHWM", 0, "no such field"},
		{"another unit", "VmHWM:\t 12 MB\n", "VmHWM", 0, `"12 MB" is not a count of kB`},
		{"not a number", "VmHWM:\t lots kB\n", "VmHWM", 0, `"lots kB" is not a count of kB`},
		{"negative", "VmHWM:\t -5 kB\n", "VmHWM", 0, `"-5 kB" is not a count of kB`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "file")
			require.NoError(t, os.WriteFile(f, []byte(tc.content), 0o600))
			got, err := KiBField(f, tc.key)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
	_, err := KiBField(filepath.Join(t.TempDir(), "absent"), "MemTotal")
	require.ErrorIs(t, err, os.ErrNotExist)
	got, err := KiBField("/proc/self/status", "VmHWM")
	require.NoError(t, err)
	require.Positive(t, got, "this test process's own")
}
