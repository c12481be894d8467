package gpulet

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWithRequestCost(t *testing.T) {
	p := testProfile(t)
	q := p.WithRequestCost(0.5)
	tests := []struct {
		name    string
		b, size int
		want    float64
	}{
		{"batch of one", 1, 100, 5 + 0.5},
		{"batch of eight", 8, 100, 12 + 4},
		{"half the device: the cost does not scale with it", 4, 50, 16 + 2},
		{"between batches", 3, 100, 7 + 1.5},
		{"between sizes", 2, 75, 6*100.0/75 + 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := q.Latency(tc.b, tc.size)
			require.True(t, ok)
			require.InDelta(t, tc.want, got, 1e-9)
			p99, ok := q.P99(tc.b, tc.size)
			require.True(t, ok)
			require.InDelta(t, tc.want, p99, 1e-9, "a P99 of 0 reads as P50")
		})
	}
	require.Equal(t, p.MaxBatch(100), q.MaxBatch(100))
	require.Equal(t, p.MemoryMB, q.MemoryMB)
	orig, _ := p.Latency(8, 100)
	require.InDelta(t, 12.0, orig, 1e-9, "the profile it came from is unchanged")
	for _, none := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		require.Same(t, p, p.WithRequestCost(none), "%v", none)
	}
}

func TestWithRequestCostKeepsMeasuredP99(t *testing.T) {
	p, err := NewProfile("m", "cpu", 10, []Point{{Batch: 1, Size: 100, P50MS: 1, P99MS: 2}, {Batch: 4, Size: 100, P50MS: 2, P99MS: 3}})
	require.NoError(t, err)
	q := p.WithRequestCost(0.25)
	got, _ := q.P99(4, 100)
	require.InDelta(t, 4.0, got, 1e-9)
	got, _ = q.Latency(4, 100)
	require.InDelta(t, 3.0, got, 1e-9)
}
