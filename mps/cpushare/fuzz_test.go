package cpushare

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParseList feeds ParseList arbitrary core lists: it must never panic,
// and what it accepts is ascending, within a cpu_set_t, and survives
// FormatList and ParseList unchanged.
func FuzzParseList(f *testing.F) {
	for _, s := range []string{"0", "0,1", "0-3,8", " 3, 1 ,1", "1023", "5-2", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cores, err := ParseList(s)
		if err != nil {
			require.ErrorIs(t, err, ErrBadCoreList)
			return
		}
		require.NotEmpty(t, cores)
		require.IsIncreasing(t, cores)
		require.GreaterOrEqual(t, cores[0], 0)
		require.Less(t, cores[len(cores)-1], maxCPU)
		again, err := ParseList(FormatList(cores))
		require.NoError(t, err)
		require.Equal(t, cores, again)
	})
}
