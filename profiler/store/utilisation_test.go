package store

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestUtilUnknownRoundTrips checks the NaN convention: an unknown value is
// stored as SQL NULL (never 0) and comes back as NaN, while a measured zero
// stays zero.
func TestUtilUnknownRoundTrips(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	sha := shaOf("vgg")
	in := []UtilPoint{
		{ModelSHA: sha, DeviceType: "v100", Size: 40, Batch: 8, Metric: MetricSM, Value: math.NaN(), Source: SourceUnknown},
		{ModelSHA: sha, DeviceType: "v100", Size: 40, Batch: 8, Metric: MetricL2, Value: 0, Source: SourceNCU},
		{ModelSHA: sha, DeviceType: "v100", Size: 40, Batch: 8, Metric: MetricDRAM, Value: 63.25, Source: SourceNVMLGPM},
	}
	require.NoError(t, s.PutUtil(ctx, in))

	var nulls, zeros int
	require.NoError(t, s.reader().QueryRowContext(ctx, `SELECT COUNT(*) FILTER (WHERE value IS NULL), COUNT(*) FILTER (WHERE value = 0) FROM utilisation`).Scan(&nulls, &zeros))
	require.Equal(t, 1, nulls, "unknown is stored as NULL")
	require.Equal(t, 1, zeros, "a measured zero is stored as 0")

	got, err := s.Util(ctx, sha, "v100")
	require.NoError(t, err)
	byMetric := map[Metric]UtilPoint{}
	for _, u := range got {
		byMetric[u.Metric] = u
	}
	tests := []struct {
		metric  Metric
		unknown bool
		value   float64
		source  string
	}{
		{MetricSM, true, 0, SourceUnknown},
		{MetricL2, false, 0, SourceNCU},
		{MetricDRAM, false, 63.25, SourceNVMLGPM},
	}
	for _, tt := range tests {
		t.Run(string(tt.metric), func(t *testing.T) {
			u, ok := byMetric[tt.metric]
			require.True(t, ok)
			require.Equal(t, tt.unknown, math.IsNaN(u.Value))
			if !tt.unknown {
				require.Equal(t, tt.value, u.Value)
			}
			require.Equal(t, tt.source, u.Source)
		})
	}

	// A later measurement replaces an unknown.
	require.NoError(t, s.PutUtil(ctx, []UtilPoint{{ModelSHA: sha, DeviceType: "v100", Size: 40, Batch: 8, Metric: MetricSM, Value: 71, Source: SourceNCU}}))
	got, err = s.Util(ctx, sha, "v100")
	require.NoError(t, err)
	require.Len(t, got, 3)
	for _, u := range got {
		if u.Metric == MetricSM {
			require.Equal(t, 71.0, u.Value)
		}
	}

	none, err := s.Util(ctx, sha, "a100")
	require.NoError(t, err)
	require.Empty(t, none)
}

func TestPutUtilValidation(t *testing.T) {
	good := UtilPoint{ModelSHA: "m", DeviceType: "d", Size: 50, Batch: 1, Metric: MetricL2, Value: 1, Source: SourceNCU}
	tests := []struct {
		name   string
		change func(*UtilPoint)
	}{
		{"unknown metric", func(u *UtilPoint) { u.Metric = "power" }},
		{"negative value", func(u *UtilPoint) { u.Value = -1 }},
		{"infinite value", func(u *UtilPoint) { u.Value = math.Inf(1) }},
		{"no source", func(u *UtilPoint) { u.Source = "" }},
		{"size 0", func(u *UtilPoint) { u.Size = 0 }},
	}
	s := openTest(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := good
			tt.change(&u)
			require.ErrorIs(t, s.PutUtil(context.Background(), []UtilPoint{good, u}), ErrInvalid)
		})
	}
	got, err := s.Util(context.Background(), "m", "d")
	require.NoError(t, err)
	require.Empty(t, got)
}
