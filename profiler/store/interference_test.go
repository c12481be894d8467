package store

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestInterferenceSamples(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	at := time.Date(2025, 2, 3, 4, 5, 6, 0, time.UTC)
	// Co-locations from shared/data/igniter/v100-mps-profile.jsonl, line 17.
	in := []InterferenceSample{
		{DeviceType: "igniter-v100", ModelA: "alexnet", ModelB: "resnet50", BatchA: 2, BatchB: 2, SizeA: 20, SizeB: 80,
			SoloAMS: math.NaN(), SoloBMS: math.NaN(), ColocAMS: 2.7610640856844304, ColocBMS: 3.5690385860655733, Source: "igniter-v100", MeasuredAt: at},
		{DeviceType: "igniter-v100", ModelA: "alexnet", ModelB: "resnet50", BatchA: 2, BatchB: 2, SizeA: 40, SizeB: 60,
			SoloAMS: 1.5715911884057983, SoloBMS: 4.0, ColocAMS: 1.7371504825396824, ColocBMS: 4.331933422370618, Source: "igniter-v100", MeasuredAt: at},
		{DeviceType: "cpu", ModelA: "a", ModelB: "b", BatchA: 1, BatchB: 1, SizeA: 50, SizeB: 50,
			SoloAMS: 1, SoloBMS: 1, ColocAMS: 1.2, ColocBMS: 1.3, Source: "measured", MeasuredAt: at},
	}
	ids, err := s.AddInterferenceSamples(ctx, in)
	require.NoError(t, err)
	require.Len(t, ids, 3)

	got, err := s.InterferenceSamples(ctx, "igniter-v100")
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.Equal(t, ids[0], got[0].ID)
	require.True(t, math.IsNaN(got[0].SoloAMS) && math.IsNaN(got[0].SoloBMS))
	want := in[1]
	want.ID = ids[1]
	require.Equal(t, want, got[1])

	none, err := s.InterferenceSamples(ctx, "a100")
	require.NoError(t, err)
	require.Empty(t, none)
}

func TestAddInterferenceSamplesValidation(t *testing.T) {
	good := InterferenceSample{DeviceType: "d", ModelA: "a", ModelB: "b", BatchA: 1, BatchB: 1, SizeA: 50, SizeB: 50,
		SoloAMS: 1, SoloBMS: 1, ColocAMS: 1, ColocBMS: 1, Source: "x"}
	tests := []struct {
		name   string
		change func(*InterferenceSample)
	}{
		{"no model", func(x *InterferenceSample) { x.ModelB = "" }},
		{"batch 0", func(x *InterferenceSample) { x.BatchA = 0 }},
		{"size 200", func(x *InterferenceSample) { x.SizeB = 200 }},
		{"unknown co-located latency", func(x *InterferenceSample) { x.ColocAMS = math.NaN() }},
		{"zero solo latency", func(x *InterferenceSample) { x.SoloBMS = 0 }},
		{"no source", func(x *InterferenceSample) { x.Source = "" }},
	}
	s := openTest(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := good
			tt.change(&x)
			_, err := s.AddInterferenceSamples(context.Background(), []InterferenceSample{good, x})
			require.ErrorIs(t, err, ErrInvalid)
		})
	}
	got, err := s.InterferenceSamples(context.Background(), "d")
	require.NoError(t, err)
	require.Empty(t, got)
}
