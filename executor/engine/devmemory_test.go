package engine

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Two engines share one device's memory, as the executors of two processes
// do: a load that would take more than is left is refused until the other
// gives its memory back, and a process that died holds none.
func TestEmulatedDeviceMemoryIsShared(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory-emu0")
	memory := func() *DeviceMemory { return &DeviceMemory{Path: path, Device: "emu0", TotalMB: 1000} }
	used := func() float64 {
		mb, err := memory().Used()
		require.NoError(t, err)
		return mb
	}
	require.Zero(t, used(), "no load has made the file: none held")
	a := NewEmulated(EmulatedOptions{Sleeper: &fakeSleeper{}, Memory: memory()})
	b := NewEmulated(EmulatedOptions{Sleeper: &fakeSleeper{}, Memory: memory()})
	t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
	spec := func(mb float64) ModelSpec {
		s := emuSpec(4, Timing{Latency: linear})
		s.MemoryMB = mb
		return s
	}

	big, err := a.Load(context.Background(), spec(600))
	require.NoError(t, err)
	_, err = b.Load(context.Background(), spec(500))
	require.ErrorIs(t, err, ErrOutOfMemory)
	require.EqualError(t, err, "load model toy: out of memory on emu0: toy needs 500 MiB, 400 MiB of 1000 MiB are free (emulated device)")
	small, err := b.Load(context.Background(), spec(400))
	require.NoError(t, err, "what is left fits")
	require.Equal(t, 1000.0, used(), "the daemon reads what both hold")
	_, err = b.Load(context.Background(), spec(0))
	require.NoError(t, err, "a load that counts no memory is not refused")

	require.NoError(t, big.Close())
	_, err = b.Load(context.Background(), spec(500))
	require.NoError(t, err, "closed: its memory is free again")
	require.NoError(t, small.Close())

	// A process that died holds nothing.
	gone := exec.Command("true")
	require.NoError(t, gone.Run())
	held, err := os.ReadFile(path)
	require.NoError(t, err)
	start, ok := processStart(os.Getpid())
	require.True(t, ok)
	held = fmt.Appendf(held, "%d 1 %d/1 900\n", os.Getpid(), os.Getpid()) // this process's ID, another start: reused
	held = fmt.Appendf(held, "%d %s %d/1 900\n", gone.Process.Pid, start, gone.Process.Pid)
	require.NoError(t, os.WriteFile(path, held, 0o600))
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, 500.0, used(), "the dead process's 900 MiB do not count, nor those of a process whose ID was reused")
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, before, after, "reading changes nothing")
	_, err = a.Load(context.Background(), spec(500))
	require.NoError(t, err, "the dead process's 900 MiB do not count, nor those of a process whose ID was reused")
	_, err = a.Load(context.Background(), spec(1))
	require.ErrorIs(t, err, ErrOutOfMemory, "1000 MiB of 1000 are held by this process's loads")
}
