package mps

import (
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/gpus"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

func TestReadDriver(t *testing.T) {
	s, mocks := newServer(t, gpus.A100_SXM4_40GB, 2)
	mocks[1].enableMIG(t, [2]int{nvml.GPU_INSTANCE_PROFILE_3_SLICE, 4})
	mocks[0].computeMode = nvml.COMPUTEMODE_EXCLUSIVE_PROCESS
	d := ReadDriver(s, zaptest.NewLogger(t))
	require.True(t, d.Loaded, d.Error)
	require.Empty(t, d.Error)
	require.NotEmpty(t, d.Version)
	require.Len(t, d.GPUs, 2)
	require.Equal(t, "exclusive_process", d.GPUs[0].ComputeMode)
	require.Equal(t, "default", d.GPUs[1].ComputeMode)
	require.NotNil(t, d.GPUs[1].MIG)
	require.True(t, d.GPUs[1].MIG.Enabled)
	require.Len(t, d.GPUs[1].MIG.Instances, 1)
	require.Equal(t, "3g.20gb", d.GPUs[1].MIG.Instances[0].Profile)

	none := ReadDriver(&mock.Interface{InitFunc: func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }}, zaptest.NewLogger(t))
	require.False(t, none.Loaded)
	require.Contains(t, none.Error, "is the NVIDIA driver installed?")
	require.Empty(t, none.GPUs)
}
