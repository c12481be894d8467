package daemon

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestHopWarning(t *testing.T) {
	hops := func(n int, each time.Duration) *durCount {
		var d durCount
		for range n {
			d.add(each)
		}
		return &d
	}
	tests := []struct {
		name string
		slo  time.Duration
		hops *durCount
		want string
	}{
		{"a tight SLO", 600 * time.Microsecond, hops(200, 300*time.Microsecond),
			"its requests spend 0.3 ms on average going to their executor and back, 50% of its SLO of 0.6 ms, which the plan does not count: " +
				"many miss it however it is placed; a looser SLO leaves room for the hop (gpuletd_executor_hop_duration_seconds)"},
		{"a usual SLO", 5 * time.Millisecond, hops(200, 300*time.Microsecond), ""},
		{"too few answers timed", 600 * time.Microsecond, hops(99, 300*time.Microsecond), ""},
		{"none", 600 * time.Microsecond, hops(0, 0), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, hopWarning(tc.slo, tc.hops))
		})
	}
}
