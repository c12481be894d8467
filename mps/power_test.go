package mps

import (
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/gpus"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

// A GPU's power is read at discovery and at each refresh: its draw and
// limit in watts, its energy counted from the daemon's first reading (a
// count that goes back, a driver reloaded, starts again from 0); a GPU
// that measures no draw has none.
func TestPowerIsReadAndEnergyCountsFromTheFirstReading(t *testing.T) {
	s, mocks := newServer(t, gpus.A100_SXM4_40GB, 2)
	draw, energy := uint32(61_500), uint64(9_000_000_000) // mW; mJ since the driver loaded
	mocks[0].GetPowerUsageFunc = func() (uint32, nvml.Return) { return draw, nvml.SUCCESS }
	mocks[0].GetEnforcedPowerLimitFunc = func() (uint32, nvml.Return) { return 400_000, nvml.SUCCESS }
	mocks[0].GetTotalEnergyConsumptionFunc = func() (uint64, nvml.Return) { return energy, nvml.SUCCESS }
	mocks[1].GetPowerUsageFunc = func() (uint32, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }

	devs, err := Discover(s, zaptest.NewLogger(t))
	require.NoError(t, err)
	require.Equal(t, &Power{Watts: 61.5, LimitWatts: 400}, devs[0].Power, "no energy yet at the first reading")
	require.Nil(t, devs[1].Power)

	h, ret := s.DeviceGetHandleByIndex(0)
	require.Equal(t, nvml.SUCCESS, ret)
	d := &devs[0]
	draw, energy = 250_000, energy+1_234_500
	refresh(h, d, zaptest.NewLogger(t))
	require.Equal(t, &Power{Watts: 250, LimitWatts: 400, EnergyJoules: 1234.5}, d.Power)
	require.Equal(t, d.Power, d.clone().Power)
	require.NotSame(t, d.Power, d.clone().Power, "a clone has a copy")

	energy = 2_000 // the driver reloaded
	refresh(h, d, zaptest.NewLogger(t))
	require.Zero(t, d.Power.EnergyJoules)
	energy += 500
	refresh(h, d, zaptest.NewLogger(t))
	require.InDelta(t, 0.5, d.Power.EnergyJoules, 1e-9)
}
