package store

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReplaceInterferenceSamples(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	sample := func(dev, a, b, src string, coloc float64) InterferenceSample {
		return InterferenceSample{DeviceType: dev, ModelA: a, ModelB: b, BatchA: 1, BatchB: 2, SizeA: 50, SizeB: 50,
			SoloAMS: 1, SoloBMS: math.NaN(), ColocAMS: coloc, ColocBMS: coloc, Source: src}
	}
	_, err := s.AddInterferenceSamples(ctx, []InterferenceSample{
		sample("cpu", "m1", "m1", "measured", 1.1),
		sample("cpu", "m1", "m1", "measured", 1.2),
		sample("cpu", "m2", "m2", "measured", 1.3),
		sample("igniter-v100", "m1", "m1", "measured", 1.4),
	})
	require.NoError(t, err)

	tests := []struct {
		name        string
		match       SampleMatch
		add         []InterferenceSample
		wantDeleted int64
		wantErr     error
		wantCPU     []float64 // co-located A latencies left on cpu, in id order
	}{
		{name: "replace one model's samples", match: SampleMatch{DeviceType: "cpu", ModelA: "m1", ModelB: "m1"},
			add: []InterferenceSample{sample("cpu", "m1", "m1", "measured", 2.1)}, wantDeleted: 2, wantCPU: []float64{1.3, 2.1}},
		{name: "nothing to delete", match: SampleMatch{DeviceType: "cpu", Source: "other"},
			add: []InterferenceSample{sample("cpu", "m3", "m3", "other", 3.1)}, wantDeleted: 0, wantCPU: []float64{1.3, 2.1, 3.1}},
		{name: "sample outside the match is refused and nothing changes", match: SampleMatch{DeviceType: "cpu", ModelA: "m2"},
			add: []InterferenceSample{sample("cpu", "m9", "m2", "measured", 9)}, wantErr: ErrInvalid, wantCPU: []float64{1.3, 2.1, 3.1}},
		{name: "invalid sample is refused and nothing changes", match: SampleMatch{DeviceType: "cpu"},
			add: []InterferenceSample{sample("cpu", "m2", "m2", "measured", -1)}, wantErr: ErrInvalid, wantCPU: []float64{1.3, 2.1, 3.1}},
		{name: "no device type", match: SampleMatch{}, wantErr: ErrInvalid, wantCPU: []float64{1.3, 2.1, 3.1}},
		{name: "delete only", match: SampleMatch{DeviceType: "cpu", Source: "other"}, wantDeleted: 1, wantCPU: []float64{1.3, 2.1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			deleted, ids, err := s.ReplaceInterferenceSamples(ctx, tt.match, tt.add)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
			} else {
				require.NoError(t, err)
				require.Equal(t, tt.wantDeleted, deleted)
				require.Len(t, ids, len(tt.add))
			}
			got, err := s.InterferenceSamples(ctx, "cpu")
			require.NoError(t, err)
			var coloc []float64
			for _, x := range got {
				coloc = append(coloc, x.ColocAMS)
			}
			require.Equal(t, tt.wantCPU, coloc)
		})
	}
	other, err := s.InterferenceSamples(ctx, "igniter-v100")
	require.NoError(t, err)
	require.Len(t, other, 1, "samples of another device type are never touched")
}
