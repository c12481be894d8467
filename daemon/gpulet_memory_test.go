package daemon

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/mps"
)

// TestResidentBytes reads a process's resident memory from its statm file:
// this test's own process from the kernel's, and files that say nothing
// usable are errors.
func TestResidentBytes(t *testing.T) {
	own, err := residentBytes(procFS, os.Getpid())
	require.NoError(t, err)
	require.Greater(t, own, int64(1<<20), "a Go test binary holds MiBs")

	root := t.TempDir()
	write := func(pid, statm string) {
		require.NoError(t, os.MkdirAll(filepath.Join(root, pid), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, pid, "statm"), []byte(statm), 0o644))
	}
	write("10", "2048 300 100 1 0 500 0\n")
	write("11", "2048\n")
	write("12", "2048 lots 100\n")
	got, err := residentBytes(root, 10)
	require.NoError(t, err)
	require.Equal(t, 300*int64(os.Getpagesize()), got)
	for _, pid := range []int{11, 12, 13} {
		_, err := residentBytes(root, pid)
		require.Error(t, err, "pid %d", pid)
	}
}

// TestExecutorMemory: an executor's GPU memory is what NVML lists for its
// process on its own device, on the device or on one of its MIG instances;
// another device's list or another process does not count.
func TestExecutorMemory(t *testing.T) {
	root := t.TempDir()
	for _, pid := range []string{"42", "43"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, pid), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, pid, "statm"), []byte("9000 1000 0 0 0 0 0\n"), 0o644))
	}
	host := 1000 * int64(os.Getpagesize())
	inv := mps.Inventory{Devices: []mps.Device{
		{ID: "gpu0", Processes: []mps.GPUProcess{{PID: 7, UsedMemory: 1 << 30}, {PID: 42, UsedMemory: 3 << 30}}},
		{ID: "gpu1", Processes: []mps.GPUProcess{{PID: 42, UsedMemory: 5 << 30}},
			MIG: &mps.MIGState{Enabled: true, Instances: []mps.MIGInstance{{Processes: []mps.GPUProcess{{PID: 43, UsedMemory: 2 << 30}}}}}},
		{ID: "cpu"},
	}}
	for _, tc := range []struct {
		name   string
		device string
		pid    int
		want   *gpuletMemory
	}{
		{"its device's list", "gpu0", 42, &gpuletMemory{HostBytes: host, DeviceBytes: 3 << 30}},
		{"a MIG instance's list", "gpu1", 43, &gpuletMemory{HostBytes: host, DeviceBytes: 2 << 30}},
		{"another device's process", "gpu0", 43, &gpuletMemory{HostBytes: host}},
		{"a CPU device", "cpu", 42, &gpuletMemory{HostBytes: host}},
		{"no process", "gpu0", 0, nil},
		{"a process that is gone", "gpu0", 44, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, executorMemory(root, inv, tc.device, tc.pid))
		})
	}
}
