package procfs

import (
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStatFields(t *testing.T) {
	// The name holds ") (" and spaces.
	f, err := StatFields([]byte("4242 (gpu ) (let d) S 1 4242\n"))
	require.NoError(t, err)
	require.Equal(t, []string{"S", "1", "4242"}, f)
	_, err = StatFields([]byte("4242 gpuletd S 1"))
	require.ErrorIs(t, err, ErrBadStat)

	f, err = Stat(os.Getpid())
	require.NoError(t, err)
	require.Greater(t, len(f), 19, "this process's stat has its start time (field 22)")
	_, err = Stat(1 << 30)
	require.True(t, errors.Is(err, os.ErrNotExist), "%v", err)
}
