package mps

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/gpus"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

// TestMPSInsideMIG: an MPS control daemon inside one MIG instance lets two
// executors share it by thread percentage; it stops with the manager.
func TestMPSInsideMIG(t *testing.T) {
	f := newFakeMPS(t)
	s, mocks := newServer(t, gpus.A100_SXM4_40GB, 1)
	mocks[0].enableMIG(t)
	m, err := New(Options{Spec: Spec{Mode: ModeNVIDIA, Backend: BackendMIG, RuntimeDir: f.root, MPS: testMPSSpec(f)},
		NVML: s, Logger: zaptest.NewLogger(t)})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, m.Start(ctx))
	defer func() { require.NoError(t, m.Close(ctx)) }()

	insts, err := m.ApplyMIG("gpu0", []string{"4g", "3g"})
	require.NoError(t, err)
	var fourG MIGInstance
	for _, in := range insts {
		if in.Slices == 4 {
			fourG = in
		}
	}
	require.NotEmpty(t, fourG.UUID)
	free, err := m.FreeMIGInstances("gpu0")
	require.NoError(t, err)
	require.Len(t, free, 2)

	// Without a daemon inside the instance a share is refused.
	_, err = m.Lease(Gpulet{ID: "a", Device: "gpu0", MIGInstance: fourG.UUID, MIGShare: 50})
	require.ErrorIs(t, err, ErrBadGpulet)
	require.ErrorContains(t, err, "no MPS control daemon runs inside MIG instance "+fourG.UUID)

	pipe, err := m.StartMIGMPS(ctx, "gpu0", fourG.UUID)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(f.root, "mps", fourG.UUID, "pipe"), pipe)
	again, err := m.StartMIGMPS(ctx, "gpu0", fourG.UUID)
	require.NoError(t, err)
	require.Equal(t, pipe, again, "once per instance")
	require.Len(t, f.records(t, "start"), 1)
	require.Contains(t, f.records(t, "start")[0], "CUDA_VISIBLE_DEVICES="+fourG.UUID+" CUDA_MPS_PIPE_DIRECTORY="+pipe)

	a, err := m.Lease(Gpulet{ID: "a", Device: "gpu0", MIGInstance: fourG.UUID, MIGShare: 50, MemoryLimitMB: 8000})
	require.NoError(t, err)
	require.Subset(t, a.Env(), []string{"CUDA_VISIBLE_DEVICES=" + fourG.UUID, "CUDA_MPS_PIPE_DIRECTORY=" + pipe,
		"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50", "GPULETD_PARTITION=mig", "GPULETD_GPU_MEMORY_LIMIT_MB=8000"})
	b, err := m.Lease(Gpulet{ID: "b", Device: "gpu0", MIGInstance: fourG.UUID, MIGShare: 50})
	require.NoError(t, err, "two halves share the instance")
	_, err = m.Lease(Gpulet{ID: "c", Device: "gpu0", MIGInstance: fourG.UUID, MIGShare: 10})
	require.ErrorContains(t, err, "100% held, 10% asked")
	_, err = m.Lease(Gpulet{ID: "d", Device: "gpu0", MIGInstance: fourG.UUID})
	require.ErrorIs(t, err, ErrBadGpulet, "a whole-instance lease does not fit beside shares")

	for _, d := range m.Inventory().Devices {
		for _, in := range d.MIG.Instances {
			if in.UUID == fourG.UUID {
				require.Equal(t, 100, in.Leased)
				require.Equal(t, pipe, in.MPSPipeDir)
			}
		}
	}
	free, err = m.FreeMIGInstances("gpu0")
	require.NoError(t, err)
	require.Len(t, free, 1)

	// While held, the layout cannot drop the instance; released, the
	// daemon inside it is stopped before the instance is destroyed.
	_, err = m.ApplyMIG("gpu0", []string{"7g"})
	require.ErrorIs(t, err, ErrMIGInUse)
	a.Release()
	b.Release()
	_, err = m.ApplyMIG("gpu0", []string{"7g"})
	require.NoError(t, err)
	require.Equal(t, 1, f.count(t, "cmd quit"), "the instance's daemon was stopped")
	_, err = m.StartMIGMPS(ctx, "gpu0", fourG.UUID)
	require.ErrorIs(t, err, ErrBadGpulet, "the instance is gone")

	_, err = m.Lease(Gpulet{ID: "e", Device: "gpu0", Size: 100, MIGShare: 50})
	require.ErrorIs(t, err, ErrBadGpulet)
}
