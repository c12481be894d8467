package config

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDescribe(t *testing.T) {
	got, err := Describe("listen", "log.level", "scheduler.reorganize_period", "devices")
	require.NoError(t, err)
	require.Equal(t, []Setting{
		{Path: "listen", Env: "GPULETD_LISTEN", Default: "127.0.0.1:8700"},
		{Path: "log.level", Env: "GPULETD_LOG_LEVEL", Default: "info"},
		{Path: "scheduler.reorganize_period", Env: "GPULETD_SCHEDULER_REORGANIZE_PERIOD", Default: "20s"},
		{Path: "devices", Env: "GPULETD_DEVICES", Default: "auto"},
	}, got)
	_, err = Describe("listen", "log.levl")
	require.EqualError(t, err, `describe setting "log.levl": the configuration has no such field`)
}
