package procfs

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestCPUTimeOf(t *testing.T) {
	// utime 250 and stime 50 ticks: 3 s. The name holds ") (" and spaces.
	line := "4242 (gpu ) (let d) S 1 4242 4242 0 -1 4194560 1234 0 0 0 250 50 0 0 20 0 9 0 100 1000 100 18446744073709551615\n"
	f, err := StatFields([]byte(line))
	require.NoError(t, err)
	got, err := CPUTimeOf(f)
	require.NoError(t, err)
	require.Equal(t, 3*time.Second, got)
	for _, bad := range []string{"4242 (gpuletd) S 1", "1 (x) S 1 2", "1 (x) S 1 2 3 4 5 6 7 8 9 10 ten 12", "1 (x) S 1 2 3 4 5 6 7 8 9 10 -1 12"} {
		f, err := StatFields([]byte(bad))
		require.NoError(t, err, bad)
		_, err = CPUTimeOf(f)
		require.ErrorIs(t, err, ErrShortStat, bad)
	}
}

func TestCPUTime(t *testing.T) {
	before, err := CPUTime(os.Getpid())
	require.NoError(t, err)
	deadline := time.Now().Add(100 * time.Millisecond)
	for x := 0; time.Now().Before(deadline); x++ {
		_ = x * x
	}
	after, err := CPUTime(os.Getpid())
	require.NoError(t, err)
	require.Greater(t, after, before, "spinning 100 ms shows in /proc")
	_, err = CPUTime(1 << 30)
	require.ErrorIs(t, err, os.ErrNotExist)
}
