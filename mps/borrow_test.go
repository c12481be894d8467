package mps

import (
	"context"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/gpus"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

// Two managers on one runtime directory, as a serving daemon and `gpuletd
// profile` run beside it: the one that borrows MPS uses the other's
// control daemons and leaves them as they run, and one told to keep MPS
// leaves the daemons it started to the one that took them over.
func TestManagerSharesMPSWithAnotherOnItsRuntimeDir(t *testing.T) {
	ctx := context.Background()
	manager := func(t *testing.T, f fakeMPS, borrow bool) *Manager {
		t.Helper()
		s, _ := newServer(t, gpus.H100_SXM5_80GB, 2)
		ms := testMPSSpec(f)
		ms.SetComputeMode = true
		m, err := New(Options{Spec: Spec{Mode: ModeNVIDIA, RuntimeDir: f.root, MPS: ms}, NVML: s, Logger: zap.NewNop(), BorrowMPS: borrow})
		require.NoError(t, err)
		t.Cleanup(func() { _ = m.Close(ctx) }) // a second Close does nothing
		require.NoError(t, m.Start(ctx))
		return m
	}
	pipesAnswer := func(t *testing.T, m *Manager) {
		t.Helper()
		for _, d := range m.Inventory().Devices {
			require.NoError(t, newTestDaemon(t, fakeMPS{}, d.ID, func(c *ControlConfig) { c.PipeDir = d.MPSPipeDir }).Ping(ctx), d.ID)
		}
	}

	t.Run("borrowed", func(t *testing.T) {
		f := newFakeMPS(t)
		serving := manager(t, f, false)
		profile := manager(t, f, true)
		require.Equal(t, 2, f.count(t, "start"), "the borrower starts no control daemon")
		for _, d := range profile.Inventory().Devices {
			require.True(t, d.MPS.Existing, d.ID)
			require.Equal(t, MPSRunning, d.MPS.State, d.ID)
		}
		l, err := profile.Lease(Gpulet{ID: "p", Device: "gpu1", Size: 30})
		require.NoError(t, err)
		require.Contains(t, l.Env(), "CUDA_MPS_PIPE_DIRECTORY="+serving.Inventory().Devices[1].MPSPipeDir)
		l.Release()

		require.NoError(t, profile.Close(ctx))
		require.Zero(t, f.count(t, "cmd quit"), "the borrower quits none")
		pipesAnswer(t, serving)
		require.NoError(t, serving.Close(ctx))
		require.Equal(t, 2, f.count(t, "cmd quit"))
	})

	t.Run("kept", func(t *testing.T) {
		f := newFakeMPS(t)
		profile := manager(t, f, false)
		serving := manager(t, f, false) // finds them answering: adopts them
		require.Equal(t, 2, f.count(t, "start"))
		profile.KeepMPS()
		require.NoError(t, profile.Close(ctx))
		require.Zero(t, f.count(t, "cmd quit"), "kept for the daemon that took them over")
		pipesAnswer(t, serving)
		require.NoError(t, serving.Close(ctx))
		require.Equal(t, 2, f.count(t, "cmd quit"))
	})
}

// A manager that keeps MPS for another leaves the compute mode it set, which
// the MPS it leaves runs under; one that borrows never sets it.
func TestManagerKeepingMPSKeepsTheComputeMode(t *testing.T) {
	ctx := context.Background()
	for _, borrow := range []bool{false, true} {
		f := newFakeMPS(t)
		var owner *Manager
		if borrow {
			s, _ := newServer(t, gpus.A100_SXM4_40GB, 1)
			var err error
			owner, err = New(Options{Spec: Spec{Mode: ModeNVIDIA, RuntimeDir: f.root, MPS: testMPSSpec(f)}, NVML: s, Logger: zap.NewNop()})
			require.NoError(t, err)
			require.NoError(t, owner.Start(ctx))
		}
		s, mocks := newServer(t, gpus.A100_SXM4_40GB, 1)
		ms := testMPSSpec(f)
		ms.SetComputeMode = true
		m, err := New(Options{Spec: Spec{Mode: ModeNVIDIA, RuntimeDir: f.root, MPS: ms}, NVML: s, Logger: zap.NewNop(), BorrowMPS: borrow})
		require.NoError(t, err)
		require.NoError(t, m.Start(ctx))
		m.KeepMPS()
		require.NoError(t, m.Close(ctx))
		if borrow {
			require.Empty(t, mocks[0].modeSets, "a borrower never sets the mode")
			require.NoError(t, owner.Close(ctx))
		} else {
			require.Equal(t, []nvml.ComputeMode{nvml.COMPUTEMODE_EXCLUSIVE_PROCESS}, mocks[0].modeSets, "set, and left for the MPS that stays")
			require.NoError(t, newTestDaemon(t, f, "gpu0", func(c *ControlConfig) { c.PipeDir = m.Inventory().Devices[0].MPSPipeDir }).Quit(ctx))
		}
	}
}
