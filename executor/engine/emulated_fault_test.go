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

	var fault *EmulatedFault
	require.ErrorAs(t, e.CheckDevice(), &fault)
	require.Zero(t, fault.Code, "the text names no CUDA error")
	require.False(t, fault.KernelFault(), "not said to be the run's own")

	// A new process (engine) on the same device runs again.
	again := NewEmulated(EmulatedOptions{Sleeper: &fakeSleeper{}, Fault: file})
	require.NoError(t, again.CheckDevice())

	// A fault file that names a CUDA error, as a context's error says it:
	// a kernel's own fault (an illegal address) or another process's.
	for _, tc := range []struct {
		text   string
		code   int
		kernel bool
	}{
		{"cudaErrorIllegalAddress (CUDA error 700): an illegal memory access was encountered", 700, true},
		{"cudaErrorMpsClientTerminated (CUDA error 810): the MPS client has been terminated by the server", 810, false},
	} {
		require.NoError(t, os.WriteFile(file, []byte(tc.text), 0o600))
		require.ErrorAs(t, NewEmulated(EmulatedOptions{Fault: file}).CheckDevice(), &fault)
		require.Equal(t, tc.code, fault.Code)
		require.Equal(t, tc.kernel, fault.KernelFault())
		require.EqualError(t, fault, "emulated device fault: "+tc.text)
	}
	require.NoError(t, NewEmulated(EmulatedOptions{}).CheckDevice(), "no fault file")
}
