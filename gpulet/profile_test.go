package gpulet

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func testProfile(t *testing.T) *Profile {
	t.Helper()
	var pts []Point
	for _, s := range []int{50, 100} {
		for _, b := range []int{1, 2, 4, 8} {
			// L(b,p) = (b + 4) * 100/p ms
			l := float64(b+4) * 100 / float64(s)
			pts = append(pts, Point{Batch: b, Size: s, P50MS: l, Util: Util{SM: float64(b), L2: math.NaN(), DRAM: 10}})
		}
	}
	p, err := NewProfile("m", "dev", 100, pts)
	require.NoError(t, err)
	return p
}

func TestProfileLatency(t *testing.T) {
	p := testProfile(t)
	tests := []struct {
		name    string
		b, size int
		want    float64
		ok      bool
	}{
		{"exact", 4, 100, 8, true},
		{"exact half", 2, 50, 12, true},
		{"between batches", 3, 100, 7, true},
		{"between batches 6", 6, 50, 20, true},
		{"between sizes, 1/p", 1, 75, 5 * 100.0 / 75, true},
		{"beyond max batch", 9, 100, 0, false},
		{"below min size", 1, 40, 0, false},
		{"above max size", 1, 100, 5, true},
		{"batch zero", 0, 100, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := p.Latency(tc.b, tc.size)
			require.Equal(t, tc.ok, ok)
			if tc.ok {
				require.InDelta(t, tc.want, got, 1e-9)
			}
		})
	}
}

func TestProfileP99DefaultsToP50(t *testing.T) {
	p := testProfile(t)
	got, ok := p.P99(8, 100)
	require.True(t, ok)
	require.InDelta(t, 12, got, 1e-9)
}

func TestProfileUtilisationKeepsUnknown(t *testing.T) {
	p := testProfile(t)
	u, ok := p.Utilisation(3, 100)
	require.True(t, ok)
	require.InDelta(t, 3, u.SM, 1e-9)
	require.True(t, math.IsNaN(u.L2), "unknown L2 must stay unknown")
	require.InDelta(t, 10, u.DRAM, 1e-9)
}

func TestLargestBatchWithin(t *testing.T) {
	p := testProfile(t)
	b, ms, ok := p.LargestBatchWithin(100, 10.5)
	require.True(t, ok)
	require.Equal(t, 6, b)
	require.InDelta(t, 10, ms, 1e-9)
	_, _, ok = p.LargestBatchWithin(50, 9)
	require.False(t, ok)
	require.Equal(t, 8, p.MaxBatch(75))
	require.Equal(t, 0, p.MaxBatch(30))
}

func TestNewProfileRejectsBadPoints(t *testing.T) {
	tests := []struct {
		name string
		pts  []Point
	}{
		{"empty", nil},
		{"zero batch", []Point{{Batch: 0, Size: 50, P50MS: 1}}},
		{"size over 100", []Point{{Batch: 1, Size: 101, P50MS: 1}}},
		{"zero latency", []Point{{Batch: 1, Size: 50, P50MS: 0}}},
		{"nan latency", []Point{{Batch: 1, Size: 50, P50MS: math.NaN()}}},
		{"negative p99", []Point{{Batch: 1, Size: 50, P50MS: 1, P99MS: -1}}},
		{"duplicate", []Point{{Batch: 1, Size: 50, P50MS: 1}, {Batch: 1, Size: 50, P50MS: 2}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewProfile("m", "dev", 0, tc.pts)
			require.Error(t, err)
		})
	}
}
