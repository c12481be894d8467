package arrival

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestReadIntervals: the gaps come back as written, at their own rate,
// and loop.
func TestReadIntervals(t *testing.T) {
	tr, err := Spec{Kind: KindTrace, Intervals: true}.ReadTrace(strings.NewReader("1000\n\n 3000 \n500.5\n0\n"))
	require.NoError(t, err)
	require.Equal(t, 5, tr.Len(), "four gaps: five arrivals")
	require.Equal(t, 4500500*time.Nanosecond, tr.Span())
	s, err := Parse("intervals:x")
	require.NoError(t, err)
	a, err := s.New(0, 1, tr)
	require.NoError(t, err)
	var got []time.Duration
	for range 5 {
		got = append(got, a.Next())
	}
	require.Equal(t, []time.Duration{time.Millisecond, 3 * time.Millisecond, 500500 * time.Nanosecond, 0, time.Millisecond}, got,
		"as written, then again from the first")
	require.InDelta(t, 4/tr.Span().Seconds(), a.Rate(), 1e-9)
}

func TestReadIntervalsRejects(t *testing.T) {
	for _, tc := range []struct{ in, says string }{
		{"", "no interval in it"},
		{"\n\n", "no interval in it"},
		{"0\n0\n", "every arrival is at the same time"},
		{"100\n-5\n", `line 2: "-5" is not a number of microseconds`},
		{"100\nten\n", `line 2: "ten" is not a number of microseconds`},
		{"1e300\n", "is not a number of microseconds"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			_, err := ReadIntervals(strings.NewReader(tc.in))
			require.ErrorIs(t, err, ErrBadTrace)
			require.ErrorContains(t, err, tc.says)
		})
	}
}
