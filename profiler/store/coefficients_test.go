package store

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestCoefficientsLatest(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	base := Coefficients{DeviceType: "igniter-v100", Model: "paper-linear", Features: []string{"l2", "dram", "const"},
		Values: []float64{0.5, -0.25, 1}, R2: 0.9, RMSE: 0.04, P50Err: 0.02, P90Err: 0.07, P95Err: math.NaN(), Samples: 600}

	_, err := s.LatestCoefficients(ctx, "igniter-v100", "paper-linear")
	require.ErrorIs(t, err, ErrNotFound)

	older := base
	older.FittedAt, older.Values = t0, []float64{9, 9, 9}
	newer := base
	newer.FittedAt = t0.Add(time.Hour)
	sameTime := base
	sameTime.FittedAt, sameTime.Values = t0.Add(time.Hour), []float64{1, 2, 3}
	other := base
	other.Model, other.FittedAt = "quadratic", t0.Add(2*time.Hour)

	// Saved out of time order: the latest is by fit time, then by id.
	for _, c := range []Coefficients{newer, older, sameTime, other} {
		_, err := s.SaveCoefficients(ctx, c)
		require.NoError(t, err)
	}
	got, err := s.LatestCoefficients(ctx, "igniter-v100", "paper-linear")
	require.NoError(t, err)
	require.Equal(t, []float64{1, 2, 3}, got.Values)
	require.Equal(t, []string{"l2", "dram", "const"}, got.Features)
	require.Equal(t, 0.9, got.R2)
	require.True(t, math.IsNaN(got.P95Err), "an uncomputed statistic stays unknown")
	require.Equal(t, 600, got.Samples)
	require.Equal(t, t0.Add(time.Hour), got.FittedAt)

	_, err = s.LatestCoefficients(ctx, "a100", "paper-linear")
	require.ErrorIs(t, err, ErrNotFound)
}

func TestSaveCoefficientsValidation(t *testing.T) {
	good := Coefficients{DeviceType: "d", Model: "m", Features: []string{"a"}, Values: []float64{1}}
	tests := []struct {
		name   string
		change func(*Coefficients)
	}{
		{"no model", func(c *Coefficients) { c.Model = "" }},
		{"length mismatch", func(c *Coefficients) { c.Values = []float64{1, 2} }},
		{"no features", func(c *Coefficients) { c.Features, c.Values = nil, nil }},
		{"NaN coefficient", func(c *Coefficients) { c.Values = []float64{math.NaN()} }},
		{"infinite statistic", func(c *Coefficients) { c.RMSE = math.Inf(1) }},
	}
	s := openTest(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := good
			tt.change(&c)
			_, err := s.SaveCoefficients(context.Background(), c)
			require.ErrorIs(t, err, ErrInvalid)
		})
	}
}
