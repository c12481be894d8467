package sched

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNewLatency(t *testing.T) {
	pts := []LatencyPoint{{Batch: 4, MS: 8}, {Batch: 1, MS: 5}, {Batch: 8, MS: 10}}
	tests := []struct {
		name     string
		points   []LatencyPoint
		factor   float64
		overhead Overhead
		maxBatch int
		want     []float64 // ℓ(1..) in ms
	}{
		{"interpolates", pts, 1, nil, 0, []float64{5, 6, 7, 8, 8.5, 9, 9.5, 10}},
		{"factor and overhead", pts, 1.5, ConstantOverhead(ms(0.25)), 4, []float64{7.75, 9.25, 10.75, 12.25}},
		{"overhead by batch size", pts, 1, Overhead{{Batch: 8, MS: 1}, {Batch: 2, MS: 0.25}}, 0,
			[]float64{5.25, 6.25, 7.375, 8.5, 9.125, 9.75, 10.375, 11}},
		{"a dip after an overhead's peak is raised to the running max", pts, 1, Overhead{{Batch: 1, MS: 0}, {Batch: 4, MS: 3}, {Batch: 8, MS: 0}}, 0,
			[]float64{5, 7, 9, 11, 11, 11, 11, 11}},
		{"below smallest profiled takes its value", []LatencyPoint{{Batch: 2, MS: 4}, {Batch: 4, MS: 6}}, 1, nil, 0, []float64{4, 4, 5, 6}},
		{"dip raised to running max", []LatencyPoint{{Batch: 1, MS: 5}, {Batch: 2, MS: 4}, {Batch: 3, MS: 7}}, 1, nil, 0, []float64{5, 5, 7}},
		{"single point", []LatencyPoint{{Batch: 1, MS: 2}}, 1, nil, 0, []float64{2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := NewLatency(tc.points, tc.factor, tc.overhead, tc.maxBatch)
			require.NoError(t, err)
			require.Equal(t, len(tc.want), l.MaxBatch())
			for b, w := range tc.want {
				require.Equal(t, ms(w), l.At(b+1), "ℓ(%d)", b+1)
			}
		})
	}
}

// An overhead's points may come in any order.
func TestOverheadAt(t *testing.T) {
	o := Overhead{{Batch: 8, MS: 1}, {Batch: 2, MS: 0.25}, {Batch: 4, MS: 0.5}}
	for b, want := range map[int]float64{1: 0.25, 2: 0.25, 3: 0.375, 4: 0.5, 6: 0.75, 8: 1, 16: 1} {
		require.Equal(t, ms(want), o.At(b), "batch %d", b)
	}
	require.Zero(t, Overhead(nil).At(3))
}

func TestNewLatencyErrors(t *testing.T) {
	ok := []LatencyPoint{{Batch: 1, MS: 5}, {Batch: 8, MS: 10}}
	tests := []struct {
		name     string
		points   []LatencyPoint
		factor   float64
		overhead Overhead
		maxBatch int
	}{
		{"no points", nil, 1, nil, 0},
		{"zero factor", ok, 0, nil, 0},
		{"negative overhead", ok, 1, ConstantOverhead(-1), 0},
		{"overhead at batch 0", ok, 1, Overhead{{Batch: 0, MS: 1}}, 0},
		{"overhead twice at one batch", ok, 1, Overhead{{Batch: 2, MS: 1}, {Batch: 2, MS: 1}}, 0},
		{"overhead not a number", ok, 1, Overhead{{Batch: 2, MS: math.NaN()}}, 0},
		{"batch 0", []LatencyPoint{{Batch: 0, MS: 1}}, 1, nil, 0},
		{"non-positive latency", []LatencyPoint{{Batch: 1, MS: 0}}, 1, nil, 0},
		{"repeated batch", []LatencyPoint{{Batch: 1, MS: 1}, {Batch: 1, MS: 2}}, 1, nil, 0},
		{"beyond largest profiled", ok, 1, nil, 9},
		{"negative max batch", ok, 1, nil, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewLatency(tc.points, tc.factor, tc.overhead, tc.maxBatch)
			require.ErrorIs(t, err, ErrBadLatency)
		})
	}
	_, err := LinearLatency(ms(1), ms(1), 0)
	require.ErrorIs(t, err, ErrBadLatency)
	_, err = LinearLatency(0, 0, 4)
	require.ErrorIs(t, err, ErrBadLatency)
}

func TestLatencyLargest(t *testing.T) {
	l := linear(t, 1, 5, 8) // 6, 7, ..., 13 ms
	tests := []struct {
		budget float64
		limit  int
		want   int
	}{
		{5.9, 8, 0},
		{6, 8, 1},
		{9.5, 8, 4},
		{13, 8, 8},
		{100, 8, 8},
		{100, 3, 3},
		{100, 20, 8},
		{10, 0, 0},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, l.Largest(ms(tc.budget), tc.limit), "budget %v limit %d", tc.budget, tc.limit)
	}
	require.Zero(t, Latency{}.MaxBatch())
	require.Zero(t, Latency{}.Largest(ms(100), 4))
}

func TestTruncated(t *testing.T) {
	l := linear(t, 1, 5, 8)
	c := l.Truncated(3)
	require.Equal(t, 3, c.MaxBatch())
	require.Equal(t, l.At(3), c.At(3))
	require.Equal(t, 1, l.Truncated(0).MaxBatch())
	require.Equal(t, 8, l.Truncated(20).MaxBatch())
}

func TestPadded(t *testing.T) {
	l := linear(t, 1, 5, 8) // ℓ(b) = b + 5 ms
	pow2 := func(b int) int {
		p := 1
		for p < b {
			p *= 2
		}
		return p
	}
	p := l.Padded(pow2)
	require.Equal(t, 8, p.MaxBatch())
	for b, want := range map[int]int{1: 1, 2: 2, 3: 4, 4: 4, 5: 8, 7: 8, 8: 8} {
		require.Equal(t, l.At(want), p.At(b), "batch %d runs as %d", b, want)
	}
	require.Equal(t, l.At(8), l.Padded(func(int) int { return 100 }).At(2), "a pad beyond the largest batch is capped")
	require.Equal(t, l.At(5), l.Padded(func(int) int { return 1 }).At(5), "a batch never runs smaller than it is")
	require.Equal(t, 3, p.Truncated(3).MaxBatch())
	require.Equal(t, l.At(4), p.Truncated(3).At(3), "truncating keeps the padded cost")
}
