package engine

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/tensor"
)

// The fault file faults an emulated device for the rest of the process:
// runs fail and CheckDevice says why, after the file is gone too; a device
// without the file, or without a fault file at all, runs.
func TestEmulatedFault(t *testing.T) {
	file := filepath.Join(t.TempDir(), "fault-emu0")
	e := NewEmulated(EmulatedOptions{Sleeper: &fakeSleeper{}, Fault: file})
	defer func() { require.NoError(t, e.Close()) }()
	m, err := e.Load(context.Background(), emuSpec(4, Timing{Latency: linear}))
	require.NoError(t, err)
	run := func() error {
		_, _, err := m.Run(context.Background(), [][]tensor.Tensor{toyRequest(t, 1, 3)}, nil)
		return err
	}
	require.NoError(t, run())
	require.NoError(t, e.CheckDevice())

	require.NoError(t, os.WriteFile(file, []byte("an illegal memory access was encountered\n"), 0o600))
	err = run()
	require.ErrorIs(t, err, ErrRunFailed)
	require.ErrorIs(t, err, ErrEmulatedFault)
	require.EqualError(t, err, "run model toy: run failed: emulated device fault: an illegal memory access was encountered")
	_, err = m.Warmup(context.Background(), []int{1})
	require.NoError(t, err, "a warm-up runs nothing")

	require.NoError(t, os.Remove(file))
	require.EqualError(t, e.CheckDevice(), "emulated device fault: an illegal memory access was encountered", "for the process's life")
	require.ErrorIs(t, run(), ErrEmulatedFault)

	// A new process (engine) on the same device runs again.
	again := NewEmulated(EmulatedOptions{Sleeper: &fakeSleeper{}, Fault: file})
	require.NoError(t, again.CheckDevice())
	require.NoError(t, NewEmulated(EmulatedOptions{}).CheckDevice(), "no fault file")
}
