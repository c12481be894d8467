package store

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDeviceTypes(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, WithClock(newTestClock().Now))

	_, err := s.DeviceType(ctx, "igniter-v100")
	require.ErrorIs(t, err, ErrNotFound)

	// Sizes of the iGniter V100 table: shared/data/igniter/README.
	v100, err := s.UpsertDeviceType(ctx, DeviceType{Name: "igniter-v100", Source: "shared/data/igniter", Partitioning: PartitionMPS,
		Sizes: []int{10, 20, 40, 50, 60, 80, 100}, MemoryMB: 16384})
	require.NoError(t, err)
	cpu, err := s.UpsertDeviceType(ctx, DeviceType{Name: "cpu", Source: "host", Partitioning: PartitionCores, Sizes: []int{50, 100}, MemoryMB: math.NaN()})
	require.NoError(t, err)

	got, err := s.DeviceType(ctx, "cpu")
	require.NoError(t, err)
	require.True(t, math.IsNaN(got.MemoryMB))
	require.Equal(t, []int{50, 100}, got.Sizes)
	require.Equal(t, cpu.CreatedAt, got.CreatedAt)

	v100.Sizes = []int{20, 40, 60, 80, 100}
	updated, err := s.UpsertDeviceType(ctx, v100)
	require.NoError(t, err)
	require.Equal(t, v100.CreatedAt, updated.CreatedAt)
	require.True(t, updated.UpdatedAt.After(v100.UpdatedAt))

	all, err := s.DeviceTypes(ctx)
	require.NoError(t, err)
	require.Len(t, all, 2)
	require.Equal(t, "cpu", all[0].Name)
	require.Equal(t, []int{20, 40, 60, 80, 100}, all[1].Sizes)
	require.Equal(t, 16384.0, all[1].MemoryMB)

	bad := []DeviceType{
		{Name: "x", Partitioning: "slices", Sizes: []int{100}},
		{Name: "", Partitioning: PartitionNone, Sizes: []int{100}},
		{Name: "x", Partitioning: PartitionNone},
		{Name: "x", Partitioning: PartitionMPS, Sizes: []int{0}},
		{Name: "x", Partitioning: PartitionMPS, Sizes: []int{100}, MemoryMB: -1},
	}
	for _, d := range bad {
		_, err := s.UpsertDeviceType(ctx, d)
		require.ErrorIs(t, err, ErrInvalid)
	}
}
