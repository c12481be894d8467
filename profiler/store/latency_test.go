package store

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLatencyRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, WithClock(newTestClock().Now))
	sha := shaOf("resnet50")

	_, err := s.Latency(ctx, sha, "cpu")
	require.ErrorIs(t, err, ErrNotFound)

	in := []LatencyPoint{
		{ModelSHA: sha, DeviceType: "cpu", Size: 50, Batch: 2, P50MS: 7.5, P99MS: 9, MeanMS: 7.7, Samples: 200, Complete: true},
		{ModelSHA: sha, DeviceType: "cpu", Size: 50, Batch: 1, P50MS: 4.1, P99MS: math.NaN(), MeanMS: math.NaN(), Samples: 12, Complete: false},
		{ModelSHA: sha, DeviceType: "cpu", Size: 100, Batch: 1, P50MS: 2.2, P99MS: 2.9, MeanMS: 2.3, Samples: 200, Complete: true},
		{ModelSHA: sha, DeviceType: "igniter-v100", Size: 20, Batch: 1, P50MS: 5, P99MS: 5, MeanMS: 5, Samples: 1, Complete: true},
	}
	require.NoError(t, s.PutLatency(ctx, in))

	got, err := s.Latency(ctx, sha, "cpu")
	require.NoError(t, err)
	require.Len(t, got, 3)
	require.Equal(t, []int{1, 2, 1}, []int{got[0].Batch, got[1].Batch, got[2].Batch}, "ordered by size then batch")
	require.Equal(t, []int{50, 50, 100}, []int{got[0].Size, got[1].Size, got[2].Size})
	require.True(t, math.IsNaN(got[0].P99MS) && math.IsNaN(got[0].MeanMS), "unknown p99 and mean stay unknown")
	require.False(t, got[0].Complete)
	require.Equal(t, 12, got[0].Samples)
	require.Equal(t, 7.5, got[1].P50MS)
	require.Equal(t, 9.0, got[1].P99MS)
	require.False(t, got[1].MeasuredAt.IsZero())
}

func TestPutLatencyReplaceRules(t *testing.T) {
	sha := shaOf("m")
	pt := func(p50 float64, complete bool) LatencyPoint {
		return LatencyPoint{ModelSHA: sha, DeviceType: "cpu", Size: 100, Batch: 4, P50MS: p50, P99MS: p50, MeanMS: p50, Samples: 10, Complete: complete}
	}
	tests := []struct {
		name        string
		stored, put LatencyPoint
		want        float64
	}{
		{"complete replaces complete", pt(1, true), pt(2, true), 2},
		{"complete replaces incomplete", pt(1, false), pt(2, true), 2},
		{"incomplete replaces incomplete", pt(1, false), pt(2, false), 2},
		{"incomplete never replaces complete", pt(1, true), pt(2, false), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			s := openTest(t)
			require.NoError(t, s.PutLatency(ctx, []LatencyPoint{tt.stored}))
			require.NoError(t, s.PutLatency(ctx, []LatencyPoint{tt.put}))
			got, err := s.Latency(ctx, sha, "cpu")
			require.NoError(t, err)
			require.Len(t, got, 1)
			require.Equal(t, tt.want, got[0].P50MS)
		})
	}
}

func TestPutLatencyIsAllOrNothing(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	sha := shaOf("m")
	good := LatencyPoint{ModelSHA: sha, DeviceType: "cpu", Size: 100, Batch: 1, P50MS: 1, P99MS: 1, MeanMS: 1, Complete: true}
	tests := []struct {
		name   string
		change func(*LatencyPoint)
	}{
		{"size 0", func(p *LatencyPoint) { p.Size = 0 }},
		{"size 101", func(p *LatencyPoint) { p.Size = 101 }},
		{"batch 0", func(p *LatencyPoint) { p.Batch = 0 }},
		{"p50 unknown", func(p *LatencyPoint) { p.P50MS = math.NaN() }},
		{"p50 infinite", func(p *LatencyPoint) { p.P50MS = math.Inf(1) }},
		{"p99 negative", func(p *LatencyPoint) { p.P99MS = -1 }},
		{"mean zero: unknown is NaN, not 0", func(p *LatencyPoint) { p.MeanMS = 0 }},
		{"no device type", func(p *LatencyPoint) { p.DeviceType = "" }},
		{"negative samples", func(p *LatencyPoint) { p.Samples = -1 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := good
			bad.Batch = 2
			tt.change(&bad)
			err := s.PutLatency(ctx, []LatencyPoint{good, bad})
			require.ErrorIs(t, err, ErrInvalid)
			_, err = s.Latency(ctx, sha, "cpu")
			require.ErrorIs(t, err, ErrNotFound, "the valid point of a rejected batch must not be stored")
		})
	}

	// A run id that does not exist breaks the foreign key inside the
	// transaction: nothing of the batch is kept.
	orphan := good
	orphan.Batch, orphan.RunID = 3, 999
	require.Error(t, s.PutLatency(ctx, []LatencyPoint{good, orphan}))
	_, err := s.Latency(ctx, sha, "cpu")
	require.ErrorIs(t, err, ErrNotFound)
}

func TestHasCompleteProfile(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	sha := shaOf("m")
	var pts []LatencyPoint
	for _, p := range []int{20, 50, 100} {
		for _, b := range []int{1, 2, 4} {
			pts = append(pts, LatencyPoint{ModelSHA: sha, DeviceType: "gpu", Size: p, Batch: b, P50MS: float64(b), P99MS: math.NaN(), MeanMS: math.NaN(),
				Complete: !(p == 100 && b == 4)})
		}
	}
	require.NoError(t, s.PutLatency(ctx, pts))

	tests := []struct {
		name           string
		sha, dev       string
		sizes, batches []int
		want           bool
	}{
		{"all complete", sha, "gpu", []int{20, 50}, []int{1, 2, 4}, true},
		{"duplicates ignored", sha, "gpu", []int{20, 20, 50}, []int{1, 1}, true},
		{"one incomplete", sha, "gpu", []int{20, 100}, []int{1, 4}, false},
		{"one missing batch", sha, "gpu", []int{20}, []int{1, 8}, false},
		{"one missing size", sha, "gpu", []int{20, 60}, []int{1}, false},
		{"other device", sha, "cpu", []int{20}, []int{1}, false},
		{"other model", shaOf("x"), "gpu", []int{20}, []int{1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.HasCompleteProfile(ctx, tt.sha, tt.dev, tt.sizes, tt.batches)
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
	_, err := s.HasCompleteProfile(ctx, sha, "gpu", nil, []int{1})
	require.ErrorIs(t, err, ErrInvalid)
}
