package store

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestUpsertModel(t *testing.T) {
	ctx := context.Background()
	clock := newTestClock()
	s := openTest(t, WithClock(clock.Now))

	m := ModelRecord{Name: "resnet50", Version: 1, SHA256: shaOf("r1"), Path: "/m/resnet50/1/model.onnx", SLOMS: 95, MaxBatchSize: 16, Platform: "onnxruntime_onnx"}
	first, err := s.UpsertModel(ctx, m)
	require.NoError(t, err)
	require.False(t, first.CreatedAt.IsZero())
	require.Equal(t, first.CreatedAt, first.UpdatedAt)

	m.SHA256, m.SLOMS = shaOf("r1-changed"), 50
	second, err := s.UpsertModel(ctx, m)
	require.NoError(t, err)
	require.Equal(t, first.CreatedAt, second.CreatedAt, "an update keeps the creation time")
	require.True(t, second.UpdatedAt.After(first.UpdatedAt))

	got, err := s.Model(ctx, "resnet50", 1)
	require.NoError(t, err)
	require.Equal(t, second, got)

	_, err = s.UpsertModel(ctx, ModelRecord{Name: "lenet", Version: 3, SHA256: shaOf("l"), SLOMS: 5, Platform: "onnxruntime_onnx"})
	require.NoError(t, err)
	all, err := s.Models(ctx)
	require.NoError(t, err)
	require.Len(t, all, 2)
	require.Equal(t, "lenet", all[0].Name)

	require.NoError(t, s.DeleteModel(ctx, "lenet", 3))
	_, err = s.Model(ctx, "lenet", 3)
	require.ErrorIs(t, err, ErrNotFound)
	require.ErrorIs(t, s.DeleteModel(ctx, "lenet", 3), ErrNotFound)
}

func TestTimesRoundTripInUTC(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.FixedZone("x", 3600))
	s := openTest(t, WithClock(func() time.Time { return at }))
	got, err := s.UpsertModel(ctx, ModelRecord{Name: "m", Version: 1, SHA256: shaOf("m"), SLOMS: 1,
		CreatedAt: at.Add(-time.Hour), UpdatedAt: at.Add(-time.Hour)})
	require.NoError(t, err)
	require.Equal(t, at.UTC(), got.CreatedAt, "the store's clock sets the times")
	stored, err := s.Model(ctx, "m", 1)
	require.NoError(t, err)
	require.Equal(t, at.UTC(), stored.UpdatedAt, "times round-trip to the nanosecond, in UTC")
}

func TestUpsertModelValidation(t *testing.T) {
	good := ModelRecord{Name: "m", Version: 1, SHA256: shaOf("m"), SLOMS: 10, MaxBatchSize: 8}
	tests := []struct {
		name   string
		change func(*ModelRecord)
	}{
		{"empty name", func(m *ModelRecord) { m.Name = "" }},
		{"version zero", func(m *ModelRecord) { m.Version = 0 }},
		{"short sha", func(m *ModelRecord) { m.SHA256 = "abc" }},
		{"upper-case sha", func(m *ModelRecord) { m.SHA256 = strings.ToUpper(m.SHA256) }},
		{"non-hex sha", func(m *ModelRecord) { m.SHA256 = strings.Repeat("zz", 32) }},
		{"zero slo", func(m *ModelRecord) { m.SLOMS = 0 }},
		{"negative batch", func(m *ModelRecord) { m.MaxBatchSize = -1 }},
	}
	s := openTest(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := good
			tt.change(&m)
			_, err := s.UpsertModel(context.Background(), m)
			require.ErrorIs(t, err, ErrInvalid)
		})
	}
	all, err := s.Models(context.Background())
	require.NoError(t, err)
	require.Empty(t, all)
}
