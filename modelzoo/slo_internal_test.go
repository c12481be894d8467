package modelzoo

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestSLOFromBatch8(t *testing.T) {
	tests := []struct {
		latency time.Duration
		want    time.Duration
	}{
		{latency: 0, want: minSLO},
		{latency: 163 * time.Microsecond, want: minSLO}, // 326 µs → 500 µs → floor
		{latency: 2 * time.Millisecond, want: 5 * time.Millisecond},
		{latency: 2500 * time.Microsecond, want: 5 * time.Millisecond},
		{latency: 2501 * time.Microsecond, want: 10 * time.Millisecond},
		{latency: 4 * time.Millisecond, want: 10 * time.Millisecond},
		{latency: 6 * time.Millisecond, want: 20 * time.Millisecond},
		{latency: 326 * time.Millisecond, want: time.Second},
		{latency: 500 * time.Millisecond, want: time.Second},
		{latency: 501 * time.Millisecond, want: 2 * time.Second},
		{latency: 1200 * time.Millisecond, want: 5 * time.Second},
		{latency: 30 * time.Second, want: 100 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.latency.String(), func(t *testing.T) {
			require.Equal(t, tt.want, sloFromBatch8(tt.latency))
		})
	}
}

func TestZooSLOsFollowTheRule(t *testing.T) {
	for _, name := range Names() {
		m, err := Lookup(name)
		require.NoError(t, err)
		require.Positive(t, m.CPULatencyBatch8, m.Name)
		require.Equal(t, sloFromBatch8(m.CPULatencyBatch8), m.SLO, m.Name)
		require.GreaterOrEqual(t, m.SLO, 2*m.CPULatencyBatch8, m.Name)
	}
}
