package arrival

import (
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{"poisson", "gamma:0.5", "gamma:cv=2", "gamma:shape=3", "trace:a.csv", "trace:a@b.csv@2", "", "gamma:", "x:y:z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := Parse(in)
		if err != nil {
			require.ErrorIs(t, err, ErrBadSpec)
			return
		}
		again, err := Parse(s.String())
		require.NoError(t, err, "the canonical form %q parses", s.String())
		require.Equal(t, s, again)
	})
}

func FuzzReadTrace(f *testing.F) {
	for _, s := range []string{
		"TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.9799600,4808,10\n2023-11-16 18:17:04.0319600,3180,8\n",
		"0.5\n1.5\n3\n", "time\n1\n1\n", "a,b\n\"x\n", "2024-01-02T03:04:05Z\n2024-01-02T03:04:06.5Z\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) { checkReadTrace(t, ReadTrace, in) })
}

func FuzzReadIntervals(f *testing.F) {
	for _, s := range []string{"1000\n3000\n", "0\n\n5\n", "-1\n", "1e18\n1e18\n", "0\n0\n", "12.5\r\n7\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) { checkReadTrace(t, ReadIntervals, in) })
}

// checkReadTrace: read either fails as a bad trace or gives a trace of two
// arrivals or more over some time, replayed at a rate without a negative
// gap.
func checkReadTrace(t *testing.T, read func(io.Reader) (*Trace, error), in string) {
	tr, err := read(strings.NewReader(in))
	if err != nil {
		require.ErrorIs(t, err, ErrBadTrace)
		return
	}
	require.GreaterOrEqual(t, tr.Len(), 2)
	require.Positive(t, tr.Span())
	rate := tr.Rate()
	require.False(t, math.IsNaN(rate) || math.IsInf(rate, 0) || rate <= 0, "rate %v", rate)
	r, err := tr.Replay(10)
	require.NoError(t, err)
	for range 2 * tr.Len() {
		require.GreaterOrEqual(t, r.Next(), time.Duration(0))
	}
}
